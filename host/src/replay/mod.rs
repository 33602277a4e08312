//! Recording live reconciles and replaying them against another version of
//! a module.
//!
//! A **trace** is one reconcile as it happened: the module and its version,
//! the request (target, reason, attempt, the object), every host call with
//! its answer, and the result. Written as JSON lines, it is the trace
//! `rekon reconcile` prints (one line per call, then `{"result": ...}`)
//! after a `{"reconcile": {...}}` line that says what was asked of which
//! module; several traces follow each other in one file.
//!
//! - [`Trace`] (`trace`): one reconcile, written and read as JSON lines.
//!   Secrets' `data` and `stringData` are redacted before anything is kept.
//! - [`Recording`] (`recording`): a module's reconciles kept while it runs,
//!   the last N in memory (served at `/recordings/<module>` on the metrics
//!   port) and, when asked, every one appended to a file; [`Recordings`],
//!   each module's, kept across its versions.
//! - [`replay()`] (`run`): runs a trace's request against a module offline,
//!   its host calls answered from the recording (`cluster`), and says where
//!   the module's calls or result differ, and which calls the recording
//!   cannot answer.
//!
//! May call: runtime, cluster (the trait) (and contract, names).

mod cluster;
mod recording;
mod run;
mod trace;

pub use recording::{Recording, Recordings};
pub use run::{Replayed, replay};
pub(crate) use trace::calls_json;
pub use trace::{REDACTED, TRACE_FORMAT, Trace, redact, result_json};
