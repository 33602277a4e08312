//! A cluster that answers from a recording.

use std::sync::Mutex;

use serde_json::{Value, json};

use crate::cluster::Cluster;
use crate::contract::{
    ApiError, EventType, Gvk, Index, ObjectRef, PatchType, Propagation, api_error,
};
use crate::names::{api_version, object_ref_json};

/// A cluster that answers from a recording: each call gets the answer the
/// recording has for the first unused call with the same key.
pub(super) struct ReplayCluster {
    answers: Mutex<Vec<(String, Option<Value>)>>,
    unanswered: Mutex<Vec<String>>,
}

impl ReplayCluster {
    pub(super) fn new(calls: &[Value]) -> ReplayCluster {
        ReplayCluster {
            answers: Mutex::new(
                calls
                    .iter()
                    .filter(|c| c["call"] != "log")
                    .map(|c| {
                        (
                            call_key(c["call"].as_str().unwrap_or_default(), &c["args"]),
                            Some(c["result"].clone()),
                        )
                    })
                    .collect(),
            ),
            unanswered: Mutex::new(Vec::new()),
        }
    }

    pub(super) fn unanswered(&self) -> Vec<String> {
        self.unanswered.lock().expect("replay lock").clone()
    }

    /// The recorded answer to the call `key`: its `ok` value, or its error.
    fn answer(&self, key: String) -> Result<Value, ApiError> {
        let mut answers = self.answers.lock().expect("replay lock");
        let found = answers
            .iter_mut()
            .find(|(k, answer)| *k == key && answer.is_some())
            .and_then(|(_, answer)| answer.take());
        let Some(answer) = found else {
            drop(answers);
            let message = format!("the recording has no answer to {key}");
            self.unanswered.lock().expect("replay lock").push(key);
            return Err(api_error(404, "NotRecorded", &message));
        };
        match answer.get("error") {
            Some(error) => Err(api_error(
                error["code"].as_u64().unwrap_or(500) as u16,
                error["reason"].as_str().unwrap_or_default(),
                error["message"].as_str().unwrap_or_default(),
            )),
            None => Ok(answer.get("ok").cloned().unwrap_or(Value::Null)),
        }
    }

    fn text(&self, key: String) -> Result<String, ApiError> {
        self.answer(key).map(|v| v.to_string())
    }
}

/// [`call_key`] of a call about one object.
fn target_key(call: &str, target: &ObjectRef) -> String {
    call_key(call, &object_ref_json(target))
}

#[async_trait::async_trait]
impl Cluster for ReplayCluster {
    async fn get(&self, target: &ObjectRef) -> Result<String, ApiError> {
        self.text(target_key("get", target))
    }

    async fn list(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<String>, ApiError> {
        let args = json!({ "apiVersion": api_version(kind), "kind": kind.kind,
            "namespace": namespace, "labelSelector": label_selector });
        items(self.answer(call_key("list", &args))?)
    }

    async fn list_by_index(
        &self,
        index: &Index,
        value: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<String>, ApiError> {
        let args = json!({ "index": index.name, "value": value, "namespace": namespace });
        items(self.answer(call_key("list-by-index", &args))?)
    }

    async fn create(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        object: &str,
        _field_manager: &str,
    ) -> Result<String, ApiError> {
        let object: Value = serde_json::from_str(object).unwrap_or_default();
        let args = json!({ "apiVersion": api_version(kind), "kind": kind.kind,
            "namespace": namespace, "object": object });
        self.text(call_key("create", &args))
    }

    async fn replace(
        &self,
        target: &ObjectRef,
        _object: &str,
        status: bool,
        _field_manager: &str,
    ) -> Result<String, ApiError> {
        let call = if status { "replace-status" } else { "replace" };
        self.text(target_key(call, target))
    }

    async fn patch(
        &self,
        target: &ObjectRef,
        _patch_type: &PatchType,
        _body: &str,
        status: bool,
        _field_manager: &str,
    ) -> Result<String, ApiError> {
        let call = if status { "patch-status" } else { "patch" };
        self.text(target_key(call, target))
    }

    async fn delete(
        &self,
        target: &ObjectRef,
        _propagation: Option<Propagation>,
    ) -> Result<(), ApiError> {
        self.answer(target_key("delete", target)).map(|_| ())
    }

    async fn record_event(
        &self,
        regarding: &ObjectRef,
        _event_type: EventType,
        reason: &str,
        _message: &str,
        _component: &str,
    ) -> Result<(), ApiError> {
        let args = json!({ "regarding": object_ref_json(regarding), "reason": reason });
        self.answer(call_key("record-event", &args)).map(|_| ())
    }
}

/// A list's recorded items, each as JSON text.
fn items(answer: Value) -> Result<Vec<String>, ApiError> {
    match answer {
        Value::Array(items) => Ok(items.iter().map(Value::to_string).collect()),
        other => Err(api_error(
            500,
            "InternalError",
            &format!("the recorded answer to a list is not a list: {other}"),
        )),
    }
}

/// What identifies a call to the cluster for replay: the call and what it
/// is about (kind, namespace, name; a list's selector; an index and value;
/// an Event's object and reason).
fn call_key(call: &str, args: &Value) -> String {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let about = match call {
        "list" => format!(
            "{} {} {} {}",
            text(&args["apiVersion"]),
            text(&args["kind"]),
            text(&args["namespace"]),
            text(&args["labelSelector"])
        ),
        "list-by-index" => format!(
            "{} {} {}",
            text(&args["index"]),
            text(&args["value"]),
            text(&args["namespace"])
        ),
        "create" => format!(
            "{} {} {} {}",
            text(&args["apiVersion"]),
            text(&args["kind"]),
            text(&args["namespace"]),
            text(&args["object"]["metadata"]["name"])
        ),
        "record-event" => format!(
            "{} {} {} {} {}",
            text(&args["regarding"]["apiVersion"]),
            text(&args["regarding"]["kind"]),
            text(&args["regarding"]["namespace"]),
            text(&args["regarding"]["name"]),
            text(&args["reason"])
        ),
        _ => format!(
            "{} {} {} {}",
            text(&args["apiVersion"]),
            text(&args["kind"]),
            text(&args["namespace"]),
            text(&args["name"])
        ),
    };
    format!("{call} {about}")
}
