//! Admission and conversion webhooks served by modules, with the real
//! `rekon` binary: `rekon dev` runs the admission chain in its API server
//! (kubectl, a client none of us wrote, sees the verdicts), `rekon admit`
//! answers reviews offline.

// Tests may unwrap: a panic is a failed test with its message.
#![allow(clippy::unwrap_used)]

mod support;

#[path = "webhooks/dev.rs"]
mod dev;

#[path = "webhooks/admit.rs"]
mod admit;

#[path = "webhooks/https.rs"]
mod https;

#[path = "webhooks/languages.rs"]
mod languages;

#[path = "webhooks/lifecycle.rs"]
mod lifecycle;
