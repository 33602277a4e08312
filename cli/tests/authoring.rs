//! Tools for module authors, with the real `rekon` binary. One file per
//! tool under `authoring/`.

// Tests may unwrap: a panic is a failed test with its message.
#![allow(clippy::unwrap_used)]

mod support;

#[path = "authoring/cases.rs"]
mod cases;

#[path = "authoring/new.rs"]
mod new;

#[path = "authoring/crds.rs"]
mod crds;

#[path = "authoring/real.rs"]
mod real;
