//! The autoscaling group (`pkg/apis/autoscaling`): one file per kind, and
//! the autoscaler's metrics apart (`metrics.rs`), and its two versions
//! converted (`conversion.rs`).

pub(crate) mod conversion;
pub(crate) mod horizontalpodautoscaler;
mod metrics;
