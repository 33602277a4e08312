//! The host's side of a fake cluster: each call a reconciler or webhook
//! makes answered by the store through `rekon_store::calls` (as `rekon
//! reconcile` answers it), the manifest's permissions checked as the host
//! checks them, writes, Events and logs recorded.

use std::cell::{Cell, RefCell};

use rekon_rules::{IndexKeyRef, KindRef};
use rekon_store::calls::{self, CallPatch, TargetRef};
use rekon_store::{Propagation as StorePropagation, ResourceInfo, Status, Store};
use serde_json::Value;

use super::{LogRecord, RecordedEvent, Verb, Write};
use crate::backend::Backend;
use crate::manifest::{IndexKey, Manifest};
use crate::types::{ApiError, EventType, Gvk, Level, ObjectRef, PatchType, Propagation};

/// A fake cluster's state: its store, what it records, and whether a
/// webhook's review is under way.
pub(super) struct Inner {
    pub(super) store: Store,
    pub(super) recording: Cell<bool>,
    /// During a webhook's review: writes and Events are refused.
    pub(super) read_only: Cell<bool>,
    pub(super) manifest: RefCell<Option<Manifest>>,
    pub(super) writes: RefCell<Vec<Write>>,
    pub(super) events: RefCell<Vec<RecordedEvent>>,
    pub(super) logs: RefCell<Vec<LogRecord>>,
}

/// What the host answers a write during a review.
fn read_only_refusal() -> ApiError {
    ApiError::new(
        403,
        "Forbidden",
        "a webhook may only read the cluster: writes and Events are refused during a review",
    )
}

pub(super) fn api_error(s: Status) -> ApiError {
    ApiError::new(s.code, s.reason, s.message)
}

impl Inner {
    pub(super) fn resource(&self, kind: &Gvk) -> Result<ResourceInfo, ApiError> {
        calls::resource(&self.store, kind_ref(kind)).map_err(api_error)
    }

    fn field_manager(&self) -> String {
        match &*self.manifest.borrow() {
            Some(m) => format!("rekon-{}", m.name),
            None => "rekon-test".to_owned(),
        }
    }

    /// Refuses a call outside the manifest's permissions, as the host
    /// does: the same rule, the same 403.
    fn check(&self, kind: &Gvk, verb: &str, namespace: Option<&str>) -> Result<(), ApiError> {
        if self.read_only.get() && !matches!(verb, "get" | "list") {
            return Err(read_only_refusal());
        }
        let manifest = self.manifest.borrow();
        let Some(m) = &*manifest else {
            return Ok(());
        };
        if rekon_rules::is_allowed(&m.permissions, verb, kind_ref(kind), namespace) {
            return Ok(());
        }
        Err(ApiError::new(
            403,
            "Forbidden",
            rekon_rules::denial_message(
                &m.name,
                verb,
                kind_ref(kind),
                namespace,
                "its manifest does not grant it",
            ),
        ))
    }

    fn record(&self, write: Write) -> Result<String, ApiError> {
        let result = write
            .result
            .as_ref()
            .map(Value::to_string)
            .map_err(Clone::clone);
        if self.recording.get() {
            self.writes.borrow_mut().push(write);
        }
        result
    }
}

/// A body as a write records it: JSON (or YAML, as an apply body may be).
fn body_value(body: &str) -> Value {
    serde_json::from_str(body)
        .or_else(|_| serde_yaml_ng::from_str(body))
        .unwrap_or_else(|_| Value::String(body.to_owned()))
}

/// A call's answer as a write records it.
fn answer(result: Result<String, Status>) -> Result<Value, ApiError> {
    result
        .map(|text| serde_json::from_str(&text).unwrap_or(Value::Null))
        .map_err(api_error)
}

fn kind_ref(kind: &Gvk) -> KindRef<'_> {
    KindRef {
        group: &kind.group,
        version: &kind.version,
        kind: &kind.kind,
    }
}

fn target_ref(target: &ObjectRef) -> TargetRef<'_> {
    TargetRef {
        kind: kind_ref(&target.kind),
        namespace: target.namespace.as_deref(),
        name: &target.name,
    }
}

/// Every call goes through `rekon_store::calls`, the adapter the host's
/// offline cluster uses too: the harness answers as `rekon reconcile` does.
impl Backend for Inner {
    fn get(&self, target: &ObjectRef) -> Result<String, ApiError> {
        self.check(&target.kind, "get", target.namespace.as_deref())?;
        calls::get(&self.store, target_ref(target)).map_err(api_error)
    }

    fn list(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<String>, ApiError> {
        self.check(kind, "list", namespace)?;
        calls::list(&self.store, kind_ref(kind), namespace, label_selector).map_err(api_error)
    }

    fn list_by_index(
        &self,
        index: &str,
        value: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<String>, ApiError> {
        let declared = self
            .manifest
            .borrow()
            .as_ref()
            .and_then(|m| m.indexes.iter().find(|i| i.name == index).cloned());
        let Some(declared) = declared else {
            return Err(ApiError::new(
                400,
                "BadRequest",
                format!("the manifest declares no index {index:?}"),
            ));
        };
        self.check(&declared.kind, "list", namespace)?;
        let key = match &declared.key {
            IndexKey::Field(path) => IndexKeyRef::Field(path),
            IndexKey::Label(label) => IndexKeyRef::Label(label),
        };
        calls::list_by_index(&self.store, kind_ref(&declared.kind), key, value, namespace)
            .map_err(api_error)
    }

    fn create(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        object: &str,
    ) -> Result<String, ApiError> {
        self.check(kind, "create", namespace)?;
        let body = body_value(object);
        let name = body
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let manager = self.field_manager();
        let result = calls::create(&self.store, kind_ref(kind), namespace, object, &manager);
        self.record(Write {
            verb: Verb::Create,
            kind: kind.clone(),
            namespace: namespace.map(str::to_owned),
            name,
            status: false,
            body,
            result: answer(result),
        })
    }

    fn replace(&self, target: &ObjectRef, object: &str, status: bool) -> Result<String, ApiError> {
        self.check(&target.kind, "update", target.namespace.as_deref())?;
        let manager = self.field_manager();
        let result = calls::replace(&self.store, target_ref(target), object, status, &manager);
        self.record(Write {
            verb: Verb::Replace,
            kind: target.kind.clone(),
            namespace: target.namespace.clone(),
            name: target.name.clone(),
            status,
            body: body_value(object),
            result: answer(result),
        })
    }

    fn patch(
        &self,
        target: &ObjectRef,
        patch_type: &PatchType,
        body: &str,
        status: bool,
    ) -> Result<String, ApiError> {
        self.check(&target.kind, "patch", target.namespace.as_deref())?;
        let (verb, patch, manager) = match patch_type {
            PatchType::Merge => (Verb::MergePatch, CallPatch::Merge, self.field_manager()),
            PatchType::Json => (Verb::JsonPatch, CallPatch::Json, self.field_manager()),
            PatchType::Apply {
                field_manager,
                force,
            } => {
                let manager = field_manager
                    .clone()
                    .unwrap_or_else(|| self.field_manager());
                (
                    Verb::Apply {
                        field_manager: manager.clone(),
                        force: *force,
                    },
                    CallPatch::Apply { force: *force },
                    manager,
                )
            }
        };
        let result = calls::patch(
            &self.store,
            target_ref(target),
            &patch,
            body,
            status,
            &manager,
        );
        self.record(Write {
            verb,
            kind: target.kind.clone(),
            namespace: target.namespace.clone(),
            name: target.name.clone(),
            status,
            body: body_value(body),
            result: answer(result),
        })
    }

    fn delete(&self, target: &ObjectRef, propagation: Option<Propagation>) -> Result<(), ApiError> {
        self.check(&target.kind, "delete", target.namespace.as_deref())?;
        let propagation = propagation.map(|p| match p {
            Propagation::Background => StorePropagation::Background,
            Propagation::Foreground => StorePropagation::Foreground,
            Propagation::Orphan => StorePropagation::Orphan,
        });
        let result =
            calls::delete(&self.store, target_ref(target), propagation).map(|()| Value::Null);
        self.record(Write {
            verb: Verb::Delete,
            kind: target.kind.clone(),
            namespace: target.namespace.clone(),
            name: target.name.clone(),
            status: false,
            body: Value::Null,
            result: result.map_err(api_error),
        })
        .map(|_| ())
    }

    fn record_event(
        &self,
        regarding: &ObjectRef,
        event_type: EventType,
        reason: &str,
        message: &str,
    ) -> Result<(), ApiError> {
        if self.read_only.get() {
            return Err(read_only_refusal());
        }
        // As the host: only an Event no API server would take is refused.
        calls::check_event_reason(reason).map_err(api_error)?;
        if !self.recording.get() {
            return Ok(());
        }
        self.events.borrow_mut().push(RecordedEvent {
            regarding: regarding.clone(),
            event_type,
            reason: reason.to_owned(),
            message: message.to_owned(),
        });
        Ok(())
    }

    /// Records the line (and prints it, so a failing test shows it).
    fn log(&self, level: Level, message: &str, fields: &[(String, String)]) {
        if !self.recording.get() {
            return;
        }
        eprintln!("[{level:?}] {message} {fields:?}");
        self.logs.borrow_mut().push(LogRecord {
            level,
            message: message.to_owned(),
            fields: fields.to_vec(),
        });
    }
}
