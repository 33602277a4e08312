//! Integration tests of the in-memory API server over real HTTP: through
//! kube-rs, through the installed kubectl, and through the control endpoints.

// Tests may unwrap (tokio tests too): a panic is a failed test with its message.
#![allow(clippy::unwrap_used)]

mod common;
mod custom;
mod discovery;
mod faults;
mod kube_client;
mod kubectl;
mod tables;
