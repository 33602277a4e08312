//! The host side of the `cluster` import: each function checked and
//! passed to the [`Cluster`](crate::cluster::Cluster) backend through
//! [`HostState::call`](super::call).

use std::time::Instant;

use serde_json::{Value, json};
use tracing::Instrument as _;

use super::call::{call_span, value_of};
use super::state::HostState;
use super::{MAX_CALL_PAYLOAD, MAX_EVENT_REASON, MAX_MESSAGE};
use crate::contract::wit;
use crate::contract::{
    ApiError, EventType, Gvk, ObjectRef, PatchType, Propagation, Verbs, api_error, api_error_json,
};
use crate::names::{api_version, object_ref_json, truncate};

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

impl wit::reconciler::types::Host for HostState {}

impl wit::reconciler::webhook_types::Host for HostState {}

impl wit::reconciler::cluster::Host for HostState {
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

    async fn list_by_index(
        &mut self,
        index: String,
        value: String,
        namespace: Option<String>,
    ) -> Result<Vec<String>, ApiError> {
        let declared = self
            .context
            .as_ref()
            .and_then(|c| c.caller.indexes.iter().find(|i| i.name == index).cloned());
        let Some(declared) = declared else {
            let error = api_error(
                400,
                "BadRequest",
                &format!("the manifest declares no index {index:?}"),
            );
            self.call_results
                .push(("list-by-index", error.reason.clone()));
            return Err(error);
        };
        let kind = declared.kind.clone();
        let args = {
            let (index, value, namespace) = (index.clone(), value.clone(), namespace.clone());
            move || json!({ "index": index, "value": value, "namespace": namespace })
        };
        let ns = namespace.clone();
        self.call(
            "list-by-index",
            Verbs::LIST,
            &kind,
            ns.as_deref(),
            None,
            args,
            |cluster, _| async move {
                cluster
                    .list_by_index(&declared, &value, namespace.as_deref())
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
            // A copy of the payload only when the call is recorded.
            let object = self.recording().then(|| object.clone());
            move || {
                json!({ "apiVersion": api_version(&kind), "kind": kind.kind,
                    "namespace": namespace, "object": value_of(&object.unwrap_or_default()) })
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
            Some(ctx) if ctx.read_only => Err(super::call::read_only_refusal()),
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
                    .instrument(call_span(
                        "record-event",
                        &regarding.kind,
                        regarding.namespace.as_deref(),
                    ))
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
            let object = self.recording().then(|| object.clone());
            move || {
                let mut args = object_ref_json(&target);
                args["object"] = value_of(&object.unwrap_or_default());
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
            let patch = self.recording().then(|| body.clone());
            let patch_type = self.recording().then(|| patch_type_json(&patch_type));
            move || {
                let mut args = object_ref_json(&target);
                args["patchType"] = patch_type.unwrap_or_default();
                args["patch"] = value_of(&patch.unwrap_or_default());
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
