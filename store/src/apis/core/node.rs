//! Node (v1): the fields nodes are selected by. core/v1's Node labels
//! (`pkg/apis/core/v1/conversion.go`: its name and `spec.unschedulable`,
//! no `metadata.namespace`) and the Node's field set
//! (`NodeToSelectableFields` in `pkg/registry/core/node/strategy.go`:
//! `spec.unschedulable` printed as Go prints a bool, `false` when unset);
//! its status's allocatable taken from its capacity by default
//! (`SetDefaults_NodeStatus`), and the `node.kubernetes.io/not-ready`
//! taint of the `TaintNodesByCondition` admission plugin (`nodetaint`) on
//! a new Node. Its status is kept on create (its strategy does not clear
//! it), though the creator does not own it.
//!
//! Left out: the Node's validation.

use serde_json::{Value, json};

use crate::apis::strategy::{Rules, Selectable, nothing, nothing_on_update};
use crate::machinery::names::name_is_dns_subdomain;
use crate::meta::selector::{Refusal, object_meta_fields};

/// The Node's field selectors.
pub(crate) static SELECTABLE: Selectable = Selectable {
    labels: &[
        ("metadata.name", "metadata.name"),
        ("spec.unschedulable", "spec.unschedulable"),
    ],
    refusal: Refusal::NotSupported,
    fields: |node| {
        let mut set = object_meta_fields(node);
        let unschedulable = node
            .pointer("/spec/unschedulable")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        set.insert("spec.unschedulable".into(), unschedulable.to_string());
        set
    },
};

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate: nothing,
    validate_update: nothing_on_update,
    validate_status: None,
};

fn default(node: &mut Value) {
    let Some(status) = node.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    if status.get("allocatable").is_none_or(Value::is_null)
        && let Some(capacity) = status.get("capacity").filter(|c| c.is_object()).cloned()
    {
        status.insert("allocatable".into(), capacity);
    }
}

/// The `TaintNodesByCondition` admission plugin (`addNotReadyTaint`): a
/// new Node is not ready until its controller says so.
pub(crate) fn prepare_create(node: &mut Value) {
    let Some(node) = node.as_object_mut() else {
        return;
    };
    let spec = node.entry("spec").or_insert_with(|| json!({}));
    if !spec.is_object() {
        *spec = json!({});
    }
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    let taints = spec.entry("taints").or_insert_with(|| json!([]));
    if !taints.is_array() {
        *taints = json!([]);
    }
    let Some(taints) = taints.as_array_mut() else {
        return;
    };
    let key = "node.kubernetes.io/not-ready";
    let tainted = taints.iter().any(|t| {
        t.get("key").and_then(Value::as_str) == Some(key)
            && t.get("effect").and_then(Value::as_str) == Some("NoSchedule")
    });
    if !tainted {
        taints.push(json!({"key": key, "effect": "NoSchedule"}));
    }
}
