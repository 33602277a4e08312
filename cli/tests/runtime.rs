//! The runtime, end to end: the `rekon` binary's `check` and `reconcile`
//! commands, the compile cache, the sandbox limits (against the `misbehave`
//! guest) and permissions.

// Tests may unwrap (tokio tests too): a panic is a failed test with its message.
#![allow(clippy::unwrap_used)]

mod support;

#[path = "runtime/check.rs"]
mod check;

#[path = "runtime/cache.rs"]
mod cache;

#[path = "runtime/tiers.rs"]
mod tiers;

#[path = "runtime/app.rs"]
mod app;

#[path = "runtime/limits.rs"]
mod limits;

#[path = "runtime/dev.rs"]
mod dev;

#[path = "runtime/api_only.rs"]
mod api_only;

#[path = "runtime/logs.rs"]
mod logs;
