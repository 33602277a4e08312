//! The host side of the WIT imports: every `cluster` call checked,
//! timed, recorded and passed to the [`Cluster`](crate::cluster::Cluster)
//! backend in a `host.cluster.<call>` span; `log` into the host's log.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use tracing::Instrument as _;

use super::permissions::is_allowed;
use super::state::{FailedCall, HostState, describe_target};
use super::{MAX_CALL_PAYLOAD, MAX_EVENT_REASON, MAX_MESSAGE};
use crate::cluster::Cluster;
use crate::contract::rekon;
use crate::contract::{
    ApiError, EventType, Gvk, Level, ObjectRef, PatchType, Propagation, Verbs, api_error,
    api_error_json,
};
use crate::shared::{api_version, display_kind, object_ref_json, truncate, verb_name};

impl HostState {
    /// Checks the caller's permissions and runs `op` against the cluster,
    /// timing it as host time, recording it, inside a `host.cluster.<op>` span.
    /// A failure is remembered with `name` (the object's, when the call
    /// names one) for the reconcile's error report.
    #[allow(clippy::too_many_arguments)]
    async fn call<T, F, Fut>(
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
            Some(ctx) if !ctx.caller.allows(verb, kind, namespace) => {
                let by = if is_allowed(&ctx.caller.permissions, verb, kind, namespace) {
                    "the operator's configuration does not grant it"
                } else {
                    "its manifest does not grant it"
                };
                let message = format!(
                    "module {:?} may not {} {} in {}: {by}",
                    ctx.caller.name,
                    verb_name(verb),
                    display_kind(kind),
                    namespace.map_or("the cluster scope".to_string(), |ns| format!(
                        "namespace {ns:?}"
                    )),
                );
                tracing::warn!(
                    module = %ctx.caller.name,
                    verb = verb_name(verb),
                    kind = %display_kind(kind),
                    namespace,
                    "host call denied: outside the module's permissions"
                );
                self.denied.push(message.clone());
                Err(api_error(403, "Forbidden", &message))
            }
            Some(ctx) => {
                let span = tracing::debug_span!(
                    "host.cluster",
                    op = call,
                    kind = %kind.kind,
                    namespace,
                );
                op(ctx.cluster.clone(), ctx.caller.field_manager())
                    .instrument(span)
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
        if self.context.as_ref().is_some_and(|c| c.record) {
            let recorded = match &result {
                Ok(value) => json!({ "ok": value_of(value) }),
                Err(error) => json!({ "error": api_error_json(error) }),
            };
            self.record(call, args, recorded);
        }
        result
    }
}

/// Objects travel as JSON text; in call records they appear as JSON.
fn value_of<T: serde::Serialize>(value: &T) -> Value {
    match serde_json::to_value(value).unwrap_or(Value::Null) {
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

/// `metadata.name` of an object's JSON, if it has one.
fn object_name(object: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Meta {
        name: Option<String>,
    }
    #[derive(serde::Deserialize)]
    struct Named {
        metadata: Option<Meta>,
    }
    serde_json::from_str::<Named>(object).ok()?.metadata?.name
}

fn patch_type_json(patch_type: &PatchType) -> Value {
    match patch_type {
        PatchType::Merge => json!("merge"),
        PatchType::Json => json!("json"),
        PatchType::Apply(options) => {
            json!({ "apply": { "fieldManager": options.field_manager, "force": options.force } })
        }
    }
}

fn too_large(body: &str) -> Option<ApiError> {
    (body.len() > MAX_CALL_PAYLOAD).then(|| {
        api_error(
            413,
            "RequestEntityTooLarge",
            &format!(
                "request body of {} bytes exceeds the limit of {MAX_CALL_PAYLOAD} bytes",
                body.len()
            ),
        )
    })
}

impl rekon::reconciler::types::Host for HostState {}

impl rekon::reconciler::cluster::Host for HostState {
    async fn get(&mut self, target: ObjectRef) -> Result<String, ApiError> {
        let (kind, ns, name) = (
            target.kind.clone(),
            target.namespace.clone(),
            target.name.clone(),
        );
        let args = object_ref_json(&target);
        self.call(
            "get",
            Verbs::GET,
            &kind,
            ns.as_deref(),
            Some(&name),
            || args,
            |cluster, _| async move { cluster.get(&target).await },
        )
        .await
    }

    async fn list(
        &mut self,
        kind: Gvk,
        namespace: Option<String>,
        label_selector: Option<String>,
    ) -> Result<Vec<String>, ApiError> {
        let args = {
            let (kind, namespace, label_selector) =
                (kind.clone(), namespace.clone(), label_selector.clone());
            move || {
                json!({ "apiVersion": api_version(&kind), "kind": kind.kind,
                    "namespace": namespace, "labelSelector": label_selector })
            }
        };
        let ns = namespace.clone();
        self.call(
            "list",
            Verbs::LIST,
            &kind.clone(),
            ns.as_deref(),
            None,
            args,
            |cluster, _| async move {
                cluster
                    .list(&kind, namespace.as_deref(), label_selector.as_deref())
                    .await
            },
        )
        .await
    }

    async fn create(
        &mut self,
        kind: Gvk,
        namespace: Option<String>,
        object: String,
    ) -> Result<String, ApiError> {
        if let Some(error) = too_large(&object) {
            return Err(error);
        }
        let args = {
            let (kind, namespace) = (kind.clone(), namespace.clone());
            let object = object.clone();
            move || {
                json!({ "apiVersion": api_version(&kind), "kind": kind.kind,
                    "namespace": namespace, "object": value_of(&object) })
            }
        };
        let ns = namespace.clone();
        let name = object_name(&object);
        self.call(
            "create",
            Verbs::CREATE,
            &kind.clone(),
            ns.as_deref(),
            name.as_deref(),
            args,
            |cluster, manager| async move {
                cluster
                    .create(&kind, namespace.as_deref(), &object, &manager)
                    .await
            },
        )
        .await
    }

    async fn replace(&mut self, target: ObjectRef, object: String) -> Result<String, ApiError> {
        self.replace_impl("replace", target, object, false).await
    }

    async fn patch(
        &mut self,
        target: ObjectRef,
        patch_type: PatchType,
        body: String,
    ) -> Result<String, ApiError> {
        self.patch_impl("patch", target, patch_type, body, false)
            .await
    }

    async fn replace_status(
        &mut self,
        target: ObjectRef,
        object: String,
    ) -> Result<String, ApiError> {
        self.replace_impl("replace-status", target, object, true)
            .await
    }

    async fn patch_status(
        &mut self,
        target: ObjectRef,
        patch_type: PatchType,
        body: String,
    ) -> Result<String, ApiError> {
        self.patch_impl("patch-status", target, patch_type, body, true)
            .await
    }

    async fn delete(
        &mut self,
        target: ObjectRef,
        propagation: Option<Propagation>,
    ) -> Result<(), ApiError> {
        let (kind, ns, name) = (
            target.kind.clone(),
            target.namespace.clone(),
            target.name.clone(),
        );
        let args = {
            let target = target.clone();
            move || {
                let mut args = object_ref_json(&target);
                args["propagation"] = json!(propagation.map(|p| format!("{p:?}")));
                args
            }
        };
        self.call(
            "delete",
            Verbs::DELETE,
            &kind,
            ns.as_deref(),
            Some(&name),
            args,
            |cluster, _| async move { cluster.delete(&target, propagation).await },
        )
        .await
    }

    async fn record_event(
        &mut self,
        regarding: ObjectRef,
        event_type: EventType,
        reason: String,
        message: String,
    ) -> Result<(), ApiError> {
        // Events are the host's business: every module may record them,
        // about any object it can name. They are best effort: the host
        // refuses only what no API server would take, and never waits for
        // the write (see `crate::events`).
        let started = Instant::now();
        let message = truncate(message, MAX_MESSAGE);
        let result = match &self.context {
            None => Err(api_error(
                403,
                "Forbidden",
                "events cannot be recorded while a module describes itself (manifest)",
            )),
            Some(_) if reason.is_empty() || reason.len() > MAX_EVENT_REASON => Err(api_error(
                422,
                "Invalid",
                &format!(
                    "the Event's reason must be 1 to {MAX_EVENT_REASON} characters, not {}",
                    reason.len()
                ),
            )),
            Some(ctx) => {
                let component = ctx.caller.field_manager();
                ctx.cluster
                    .record_event(&regarding, event_type, &reason, &message, &component)
                    .await
            }
        };
        self.host_time += started.elapsed();
        self.call_results.push((
            "record-event",
            match &result {
                Ok(()) => "ok".to_string(),
                Err(error) => error.reason.clone(),
            },
        ));
        let recorded = match &result {
            Ok(()) => json!({ "ok": null }),
            Err(error) => json!({ "error": api_error_json(error) }),
        };
        self.record(
            "record-event",
            || {
                json!({ "regarding": object_ref_json(&regarding),
                    "type": format!("{event_type:?}"), "reason": reason, "message": message })
            },
            recorded,
        );
        result
    }
}

impl HostState {
    async fn replace_impl(
        &mut self,
        call: &'static str,
        target: ObjectRef,
        object: String,
        status: bool,
    ) -> Result<String, ApiError> {
        if let Some(error) = too_large(&object) {
            return Err(error);
        }
        let (kind, ns, name) = (
            target.kind.clone(),
            target.namespace.clone(),
            target.name.clone(),
        );
        let args = {
            let target = target.clone();
            let object = object.clone();
            move || {
                let mut args = object_ref_json(&target);
                args["object"] = value_of(&object);
                args
            }
        };
        self.call(
            call,
            Verbs::UPDATE,
            &kind,
            ns.as_deref(),
            Some(&name),
            args,
            |cluster, manager| async move {
                cluster.replace(&target, &object, status, &manager).await
            },
        )
        .await
    }

    async fn patch_impl(
        &mut self,
        call: &'static str,
        target: ObjectRef,
        patch_type: PatchType,
        body: String,
        status: bool,
    ) -> Result<String, ApiError> {
        if let Some(error) = too_large(&body) {
            return Err(error);
        }
        let (kind, ns, name) = (
            target.kind.clone(),
            target.namespace.clone(),
            target.name.clone(),
        );
        let args = {
            let target = target.clone();
            let patch = body.clone();
            let patch_type = patch_type_json(&patch_type);
            move || {
                let mut args = object_ref_json(&target);
                args["patchType"] = patch_type;
                args["patch"] = value_of(&patch);
                args
            }
        };
        self.call(
            call,
            Verbs::PATCH,
            &kind,
            ns.as_deref(),
            Some(&name),
            args,
            |cluster, manager| async move {
                cluster
                    .patch(&target, &patch_type, &body, status, &manager)
                    .await
            },
        )
        .await
    }
}

/// The prefix the SDK's panic hook puts before a panic message it logs.
pub const PANIC_LOG_PREFIX: &str = "panic: ";

impl rekon::reconciler::log::Host for HostState {
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
