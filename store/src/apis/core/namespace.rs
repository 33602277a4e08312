//! Namespace (v1): its name is a DNS label, it carries the label
//! `kubernetes.io/metadata.name` (`SetDefaults_Namespace`), starts
//! `Active` with the `kubernetes` finalizer (`PrepareForCreate`), keeps
//! its finalizers and status on update (`PrepareForUpdate`), and its
//! finalizers are standard or qualified names (`ValidateNamespace`);
//! namespaces are selected by name and phase.

use serde_json::{Value, json};

use super::finalizers::kube_finalizer_name;
use crate::apis::strategy::{Rules, Selectable, nothing_on_update};
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::{is_qualified_name, name_is_dns_label};
use crate::machinery::object::text_at;
use crate::meta::selector::{Refusal, object_meta_fields};

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_label,
    default,
    validate,
    validate_update: nothing_on_update,
    validate_status: Some(validate_status),
};

/// The label every namespace carries, its name.
const NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// `SetDefaults_Namespace`: the name label (once the name is known).
fn default(obj: &mut Value) {
    let Some(name) = obj.pointer("/metadata/name").and_then(Value::as_str) else {
        return;
    };
    let name = json!(name);
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        let labels = meta.entry("labels").or_insert_with(|| json!({}));
        if labels.is_null() {
            *labels = json!({});
        }
        if let Some(labels) = labels.as_object_mut() {
            labels.insert(NAME_LABEL.into(), name);
        }
    }
}

/// `PrepareForCreate`: `Active`, with the `kubernetes` finalizer.
pub(crate) fn prepare_create(obj: &mut Value) {
    default(obj);
    let Some(ns) = obj.as_object_mut() else {
        return;
    };
    ns.insert("status".into(), json!({"phase": "Active"}));
    let spec = ns.entry("spec").or_insert_with(|| json!({}));
    if !spec.is_object() {
        *spec = json!({});
    }
    if let Some(spec) = spec.as_object_mut() {
        let finalizers = spec.entry("finalizers").or_insert_with(|| json!([]));
        if !finalizers.is_array() {
            *finalizers = json!([]);
        }
        if let Some(list) = finalizers.as_array_mut()
            && !list.iter().any(|f| f == "kubernetes")
        {
            list.push(json!("kubernetes"));
        }
    }
}

/// `PrepareForUpdate`: the finalizers and the status stay as they were.
pub(crate) fn prepare_update(new: &mut Value, old: &Value) {
    default(new);
    let Some(ns) = new.as_object_mut() else {
        return;
    };
    let spec = ns.entry("spec").or_insert_with(|| json!({}));
    if !spec.is_object() {
        *spec = json!({});
    }
    if let Some(spec) = spec.as_object_mut() {
        match old.pointer("/spec/finalizers") {
            Some(finalizers) => spec.insert("finalizers".into(), finalizers.clone()),
            None => spec.remove("finalizers"),
        };
    }
    if let Some(status) = old.get("status") {
        ns.insert("status".into(), status.clone());
    }
}

/// `validateFinalizerName` of a namespace's `spec.finalizers`.
fn validate(obj: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let path = Path::new(["spec", "finalizers"]);
    let finalizers = obj.pointer("/spec/finalizers").and_then(Value::as_array);
    for name in finalizers.into_iter().flatten().filter_map(Value::as_str) {
        for message in is_qualified_name(name) {
            errors.push(FieldError::invalid(&path, name, message));
        }
        errors.extend(kube_finalizer_name(&path, name));
    }
    errors
}

/// `ValidateNamespaceFinalizeUpdate`: each of `spec.finalizers` a
/// standard or qualified name, said at its index.
pub(crate) fn validate_finalize(obj: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let path = Path::new(["spec", "finalizers"]);
    let finalizers = obj.pointer("/spec/finalizers").and_then(Value::as_array);
    for (i, name) in finalizers.into_iter().flatten().enumerate() {
        let Some(name) = name.as_str() else {
            continue;
        };
        for message in is_qualified_name(name) {
            errors.push(FieldError::invalid(&path.index(i), name, message));
        }
        errors.extend(kube_finalizer_name(&path.index(i), name));
    }
    errors
}

/// `ValidateNamespaceStatusUpdate`: `Active` unless being deleted.
fn validate_status(new: &Value, _old: &Value) -> ErrorList {
    let phase = new
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let deleting = new
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null());
    let path = Path::new(["status", "Phase"]);
    match (deleting, phase) {
        (false, "Active") | (true, "Terminating") => ErrorList::new(),
        (false, _) => vec![FieldError::invalid(
            &path,
            phase,
            "may only be 'Active' if `deletionTimestamp` is empty",
        )],
        (true, _) => vec![FieldError::invalid(
            &path,
            phase,
            "may only be 'Terminating' if `deletionTimestamp` is not empty",
        )],
    }
}

/// core/v1's Namespace labels (`AddFieldLabelConversionsForNamespace` in
/// `pkg/apis/core/v1/conversion.go`: no `metadata.namespace`) and the
/// Namespace's field set (`NamespaceToSelectableFields` in
/// `pkg/registry/core/namespace/strategy.go`; its `name` field no label
/// reaches).
pub(crate) static SELECTABLE: Selectable = Selectable {
    labels: &[
        ("status.phase", "status.phase"),
        ("metadata.name", "metadata.name"),
    ],
    refusal: Refusal::NotSupported,
    fields: |namespace| {
        let mut set = object_meta_fields(namespace);
        set.insert(
            "status.phase".into(),
            text_at(namespace, "/status/phase").to_string(),
        );
        set
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_keeps_finalizers_and_status() {
        let old = json!({"metadata": {"name": "n"}, "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"}});
        let mut new = json!({"metadata": {"name": "n", "labels": {NAME_LABEL: "x"}}, "spec": {}});
        prepare_update(&mut new, &old);
        assert_eq!(new["spec"], json!({"finalizers": ["kubernetes"]}));
        assert_eq!(new["status"], json!({"phase": "Active"}));
        assert_eq!(new["metadata"]["labels"][NAME_LABEL], "n");
    }

    #[test]
    fn finalizers_are_standard_or_qualified() {
        let ns = |f: &str| json!({"spec": {"finalizers": [f]}});
        assert!(validate(&ns("kubernetes")).is_empty());
        assert!(validate(&ns("example.com/x")).is_empty());
        assert_eq!(validate(&ns("cleanup")).len(), 1);
    }
}
