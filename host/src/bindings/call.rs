//! One host call: the permission check, the timing (host time is not the
//! guest's CPU time), the record of failures and of the call itself, and
//! its `host.cluster.<call>` span.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use tracing::Instrument as _;

use super::permissions::{is_allowed, kind_ref};
use super::state::{FailedCall, HostState, describe_target};
use crate::cluster::Cluster;
use crate::contract::verb_name;
use crate::contract::{ApiError, Gvk, Verbs, api_error, api_error_json};
use crate::names::display_kind;

impl HostState {
    /// Checks the caller's permissions and runs `op` against the cluster,
    /// timing it as host time, recording it, inside a `host.cluster.<op>` span.
    /// A failure is remembered with `name` (the object's, when the call
    /// names one) for the reconcile's error report.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn call<T, F, Fut>(
        &mut self,
        call: &'static str,
        verb: Verbs,
        kind: &Gvk,
        namespace: Option<&str>,
        name: Option<&str>,
        args: impl FnOnce() -> Value,
        op: F,
    ) -> Result<T, ApiError>
    where
        T: serde::Serialize,
        F: FnOnce(Arc<dyn Cluster>, String) -> Fut,
        Fut: std::future::Future<Output = Result<T, ApiError>>,
    {
        let started = Instant::now();
        let result = match &self.context {
            None => Err(api_error(
                403,
                "Forbidden",
                "the cluster cannot be reached while a module describes itself (manifest)",
            )),
            Some(ctx) if ctx.read_only && !(Verbs::GET | Verbs::LIST).contains(verb) => {
                Err(read_only_refusal())
            }
            Some(ctx) if !ctx.caller.allows(verb, kind, namespace) => {
                Err(self.deny(verb, kind, namespace))
            }
            Some(ctx) => {
                op(ctx.cluster.clone(), ctx.caller.field_manager())
                    .instrument(call_span(call, kind, namespace))
                    .await
            }
        };
        self.host_time += started.elapsed();
        self.call_results.push((
            call,
            match &result {
                Ok(_) => "ok".to_string(),
                Err(error) => error.reason.clone(),
            },
        ));
        if let Err(error) = &result {
            self.remember_failure(FailedCall {
                call,
                target: describe_target(kind, namespace, name),
                error: error.clone(),
            });
        }
        // Parsing the answer back into JSON costs as much as the call's own
        // JSON work: only when recording.
        if self.recording() {
            let recorded = match &result {
                Ok(value) if self.answers_as_text() => {
                    json!({ "ok": serde_json::to_value(value).unwrap_or(Value::Null) })
                }
                Ok(value) => json!({ "ok": value_of(value) }),
                Err(error) => json!({ "error": api_error_json(error) }),
            };
            self.record(call, args, recorded);
        }
        result
    }
}

/// The answer to a write during an admission or conversion review.
pub(super) fn read_only_refusal() -> ApiError {
    api_error(
        403,
        "Forbidden",
        "a webhook may only read the cluster: writes and Events are refused during a review",
    )
}

impl HostState {
    /// Refuses a call outside the module's permissions: a warning, a
    /// message kept for the `PermissionDenied` Event, a 403 for the guest.
    fn deny(&mut self, verb: Verbs, kind: &Gvk, namespace: Option<&str>) -> ApiError {
        let Some(ctx) = &self.context else {
            return api_error(403, "Forbidden", "no caller");
        };
        let by = if is_allowed(&ctx.caller.permissions, verb, kind, namespace) {
            "the operator's configuration does not grant it"
        } else {
            "its manifest does not grant it"
        };
        let message = rekon_rules::denial_message(
            &ctx.caller.name,
            verb_name(verb),
            kind_ref(kind),
            namespace,
            by,
        );
        tracing::warn!(
            module = %ctx.caller.name,
            verb = verb_name(verb),
            kind = %display_kind(kind),
            namespace,
            "host call denied: outside the module's permissions"
        );
        self.denied.push(message.clone());
        api_error(403, "Forbidden", &message)
    }
}

/// The span of one host call: `host.cluster.<call>`.
pub(super) fn call_span(call: &str, kind: &Gvk, namespace: Option<&str>) -> tracing::Span {
    macro_rules! span {
        ($name:literal) => {
            tracing::debug_span!($name, kind = %kind.kind, namespace)
        };
    }
    match call {
        "get" => span!("host.cluster.get"),
        "list" => span!("host.cluster.list"),
        "list-by-index" => span!("host.cluster.list_by_index"),
        "create" => span!("host.cluster.create"),
        "replace" => span!("host.cluster.replace"),
        "patch" => span!("host.cluster.patch"),
        "replace-status" => span!("host.cluster.replace_status"),
        "patch-status" => span!("host.cluster.patch_status"),
        "delete" => span!("host.cluster.delete"),
        "record-event" => span!("host.cluster.record_event"),
        _ => span!("host.cluster"),
    }
}

/// Objects travel as JSON text; in call records they appear as JSON.
pub(super) fn value_of<T: serde::Serialize>(value: &T) -> Value {
    parsed(serde_json::to_value(value).unwrap_or(Value::Null))
}

/// JSON text (a string, or strings in an array) as JSON.
pub(super) fn parsed(value: Value) -> Value {
    match value {
        Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| match item {
                    Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
                    other => other,
                })
                .collect(),
        ),
        other => other,
    }
}
