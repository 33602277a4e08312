//! Integration tests of the in-memory API server over real HTTP: through
//! kube-rs, through the installed kubectl, and through the control endpoints.

mod common;
mod faults;
mod kube_client;
mod kubectl;
