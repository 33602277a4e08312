//! rekon-offline: modules run without a cluster, on rekon's embedded
//! Kubernetes (`rekon-store`, `rekon-apiserver`) — what `rekon dev`,
//! `rekon test`, `rekon reconcile`, `rekon admit` and the benchmarks run
//! on. The host library knows nothing of the embedded Kubernetes; this
//! crate joins them.
//!
//! Where to start: [`MemoryCluster`], the library's
//! [`Cluster`](rekon_host::Cluster) over an in-memory store, for one
//! reconcile with [`Module::reconcile`](rekon_host::Module::reconcile);
//! [`ModuleConversions`], the modules' CRD conversions run by the store as
//! kube-apiserver runs a conversion webhook; [`ModuleAdmission`], the
//! modules' admission chain installed in the embedded API server.
#![deny(missing_docs)]

mod admission;
mod conversions;
mod memory;

pub use admission::ModuleAdmission;
pub use conversions::ModuleConversions;
pub use memory::MemoryCluster;
