//! Webhooks: admission and conversion reviews answered by modules.
//! May call: runtime, cluster, telemetry (and contract, shared).
//!
//! One review ([`review`]): an AdmissionReview or ConversionReview read into
//! the contract's request, run on a fresh instance of the module, and
//! answered as the API server expects, with the webhook's failure policy
//! applied when the guest fails. The chain ([`chain`]) runs every matching
//! mutating, then validating, webhook of the modules serving webhooks
//! ([`WebhookModules`]), as kube-apiserver does.

pub mod chain;
mod registry;
pub mod review;

pub use chain::{Chain, configuration_name};
pub use registry::WebhookModules;
pub use review::{admit, convert};
