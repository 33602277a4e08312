//! The autoscaling group (`pkg/apis/autoscaling`): one file per kind, and
//! the autoscaler's metrics apart (`metrics.rs`).

pub(crate) mod horizontalpodautoscaler;
mod metrics;
