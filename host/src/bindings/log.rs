//! The host side of the `log` import: a guest's log records in the host's
//! log, tagged with the module; the SDK's panic message kept for the
//! failure report.

use serde_json::{Value, json};

use super::MAX_MESSAGE;
use super::state::HostState;
use crate::contract::{Level, wit};
use crate::names::truncate;

/// The prefix the SDK's panic hook puts before a panic message it logs.
pub const PANIC_LOG_PREFIX: &str = "panic: ";

impl wit::reconciler::log::Host for HostState {
    async fn log(&mut self, level: Level, message: String, fields: Vec<(String, String)>) {
        let message = truncate(message, MAX_MESSAGE);
        if level == Level::Error
            && let Some(panic) = message.strip_prefix(PANIC_LOG_PREFIX)
        {
            self.panic_message = Some(panic.to_string());
        }
        let (module, version) = self
            .context
            .as_ref()
            .map(|c| (c.caller.name.as_str(), c.caller.version.as_str()))
            .unwrap_or(("", ""));
        let rendered: String = fields
            .iter()
            .take(32)
            .map(|(k, v)| format!(" {k}={v:?}"))
            .collect();
        match level {
            Level::Trace => {
                tracing::trace!(target: "rekon::guest", module, version, fields = %rendered, "{message}")
            }
            Level::Debug => {
                tracing::debug!(target: "rekon::guest", module, version, fields = %rendered, "{message}")
            }
            Level::Info => {
                tracing::info!(target: "rekon::guest", module, version, fields = %rendered, "{message}")
            }
            Level::Warn => {
                tracing::warn!(target: "rekon::guest", module, version, fields = %rendered, "{message}")
            }
            Level::Error => {
                tracing::error!(target: "rekon::guest", module, version, fields = %rendered, "{message}")
            }
        }
        self.record(
            "log",
            || {
                json!({ "level": format!("{level:?}").to_lowercase(), "message": message,
                    "fields": Value::Object(fields.iter()
                        .map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect()) })
            },
            json!({ "ok": null }),
        );
    }
}
