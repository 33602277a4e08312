//! The controller machinery end to end: the real `rekon run` binary against
//! the in-memory API server over HTTP, with the example guests.

// Tests may unwrap (tokio tests too): a panic is a failed test with its message.
#![allow(clippy::unwrap_used)]

mod support;

#[path = "controller/app.rs"]
mod app;

#[path = "controller/options.rs"]
mod options;

#[path = "controller/record.rs"]
mod record;

#[path = "controller/configmap_sync.rs"]
mod configmap_sync;

#[path = "controller/sharing.rs"]
mod sharing;

#[path = "controller/failures.rs"]
mod failures;

#[path = "controller/resilience.rs"]
mod resilience;

#[path = "controller/operator.rs"]
mod operator;

#[path = "controller/concurrency.rs"]
mod concurrency;

#[path = "controller/embedded.rs"]
mod embedded;

#[path = "controller/lifecycle.rs"]
mod lifecycle;

#[path = "controller/one_adapter.rs"]
mod one_adapter;
