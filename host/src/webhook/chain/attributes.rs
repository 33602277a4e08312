//! What the chain sees of one request, and which webhooks it calls: by
//! kind, operation, subresource, namespace and object selectors, as
//! kube-apiserver matches them.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::contract::{Operation, Webhook};
use crate::runtime::operations;
use crate::runtime::webhooks::operation_name;
use crate::webhook::review;

/// What the chain sees of one request.
#[derive(Clone, Debug)]
pub struct Attributes {
    /// The kind's group.
    pub group: String,
    /// The version the object is in.
    pub version: String,
    /// The kind.
    pub kind: String,
    /// The resource (plural).
    pub resource: String,
    /// The subresource, if any.
    pub sub_resource: Option<String>,
    /// The namespace, for namespaced objects.
    pub namespace: Option<String>,
    /// The namespace's labels.
    pub namespace_labels: BTreeMap<String, String>,
    /// The object's name.
    pub name: String,
    /// The operation.
    pub operation: Operation,
    /// The new object (create, update).
    pub object: Option<Value>,
    /// The object before (update, delete).
    pub old_object: Option<Value>,
    /// Nothing will be stored.
    pub dry_run: bool,
    /// Who asks.
    pub username: String,
}

impl Attributes {
    /// The attributes of the request of an AdmissionReview v1 (the
    /// namespace's labels are left empty).
    pub fn from_review(review: &Value) -> Result<Attributes, review::BadReview> {
        let request = review::admission_request(review, "")?;
        let json = |text: Option<String>| text.and_then(|t| serde_json::from_str(&t).ok());
        Ok(Attributes {
            group: request.kind.group,
            version: request.kind.version,
            kind: request.kind.kind,
            resource: request.resource,
            sub_resource: request.sub_resource,
            namespace: request.namespace,
            namespace_labels: BTreeMap::new(),
            name: request.name,
            operation: request.operation,
            object: json(request.object),
            old_object: json(request.old_object),
            dry_run: request.dry_run,
            username: request.user_info.username,
        })
    }
}

fn labels_of(object: Option<&Value>) -> BTreeMap<String, String> {
    object
        .and_then(|o| o.pointer("/metadata/labels"))
        .and_then(|l| serde_json::from_value(l.clone()).ok())
        .unwrap_or_default()
}

fn selects(selector: Option<&str>, labels: &BTreeMap<String, String>) -> bool {
    let Some(selector) = selector else {
        return true;
    };
    rekon_rules::LabelSelector::parse(selector)
        .is_ok_and(|s| s.matches_with(|key| labels.get(key).map(String::as_str)))
}

/// Whether `webhook` is called for the request `attributes` describe.
pub fn matches(webhook: &Webhook, attributes: &Attributes) -> bool {
    let kind = webhook.kinds.iter().any(|k| {
        k.group == attributes.group
            && k.kind == attributes.kind
            && (k.version == attributes.version || k.version == "*")
    });
    let sub = match &attributes.sub_resource {
        None => true,
        Some(sub) => webhook.sub_resources.iter().any(|s| s == sub || s == "*"),
    };
    let object = attributes
        .object
        .as_ref()
        .or(attributes.old_object.as_ref());
    kind && sub
        && operations(webhook).contains(&attributes.operation)
        && selects(webhook.object_selector.as_deref(), &labels_of(object))
        && selects_namespace(webhook, attributes)
}

/// The namespace selector, as kube-apiserver applies it: never to a
/// cluster-scoped object other than a Namespace; to a Namespace itself,
/// with its own labels (the new object's on create and update, the
/// existing one's otherwise); else with its namespace's labels.
fn selects_namespace(webhook: &Webhook, attributes: &Attributes) -> bool {
    let is_namespace = attributes.group.is_empty() && attributes.resource == "namespaces";
    if !is_namespace {
        return attributes.namespace.is_none()
            || selects(
                webhook.namespace_selector.as_deref(),
                &attributes.namespace_labels,
            );
    }
    let own = match (&attributes.sub_resource, attributes.operation) {
        (None, Operation::Create | Operation::Update) => attributes.object.as_ref(),
        _ => attributes
            .old_object
            .as_ref()
            .or(attributes.object.as_ref()),
    };
    let mut labels = labels_of(own);
    if labels.is_empty() {
        labels.clone_from(&attributes.namespace_labels);
    }
    selects(webhook.namespace_selector.as_deref(), &labels)
}

/// The AdmissionReview kube-apiserver would send for `attributes`.
pub fn admission_review(attributes: &Attributes, uid: &str) -> Value {
    let mut request = json!({
        "uid": uid,
        "kind": {"group": attributes.group, "version": attributes.version, "kind": attributes.kind},
        "resource": {"group": attributes.group, "version": attributes.version, "resource": attributes.resource},
        "requestKind": {"group": attributes.group, "version": attributes.version, "kind": attributes.kind},
        "requestResource": {"group": attributes.group, "version": attributes.version, "resource": attributes.resource},
        "name": attributes.name,
        "operation": operation_name(attributes.operation),
        "userInfo": {"username": attributes.username},
        "object": attributes.object,
        "oldObject": attributes.old_object,
        "dryRun": attributes.dry_run,
    });
    if let Some(sub) = &attributes.sub_resource {
        request["subResource"] = json!(sub);
    }
    if let Some(namespace) = &attributes.namespace {
        request["namespace"] = json!(namespace);
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
}

pub(super) fn equivalent_version(webhook: &Webhook, attributes: &Attributes) -> Option<String> {
    let mut other = attributes.clone();
    let version = webhook.kinds.iter().find_map(|k| {
        (k.group == attributes.group && k.kind == attributes.kind && k.version != "*")
            .then(|| k.version.clone())
    })?;
    other.version.clone_from(&version);
    matches(webhook, &other).then_some(version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{FailurePolicy, Gvk};

    fn attributes() -> Attributes {
        Attributes {
            group: "demo.rekon.dev".into(),
            version: "v1".into(),
            kind: "App".into(),
            resource: "apps".into(),
            sub_resource: None,
            namespace: Some("default".into()),
            namespace_labels: BTreeMap::from([("env".into(), "dev".into())]),
            name: "web".into(),
            operation: Operation::Create,
            object: Some(json!({"metadata": {"labels": {"tier": "fe"}}})),
            old_object: None,
            dry_run: false,
            username: "alice".into(),
        }
    }

    fn webhook() -> Webhook {
        Webhook {
            name: "w".into(),
            kinds: vec![Gvk {
                group: "demo.rekon.dev".into(),
                version: "*".into(),
                kind: "App".into(),
            }],
            operations: Vec::new(),
            sub_resources: Vec::new(),
            namespace_selector: None,
            object_selector: None,
            failure_policy: FailurePolicy::Fail,
            timeout_seconds: None,
        }
    }

    #[test]
    fn webhooks_match_by_kind_operation_subresource_and_selectors() {
        let a = attributes();
        assert!(matches(&webhook(), &a));
        let mut delete = a.clone();
        delete.operation = Operation::Delete;
        assert!(
            !matches(&webhook(), &delete),
            "create and update by default"
        );
        let mut status = a.clone();
        status.sub_resource = Some("status".into());
        assert!(!matches(&webhook(), &status));
        let mut with_status = webhook();
        with_status.sub_resources = vec!["status".into()];
        assert!(matches(&with_status, &status));
        let mut selected = webhook();
        selected.object_selector = Some("tier=fe".into());
        selected.namespace_selector = Some("env in (dev)".into());
        assert!(matches(&selected, &a));
        selected.namespace_selector = Some("env=prod".into());
        assert!(!matches(&selected, &a));
        let mut other = webhook();
        other.kinds[0].kind = "Other".into();
        assert!(!matches(&other, &a));
    }

    #[test]
    fn namespace_selectors_apply_as_kube_apiserver_applies_them() {
        let excluding = |kind: &str| {
            let mut w = webhook();
            w.kinds[0] = Gvk {
                group: String::new(),
                version: "v1".into(),
                kind: kind.into(),
            };
            w.namespace_selector =
                Some("kubernetes.io/metadata.name notin (kube-system,rekon-system)".into());
            w
        };
        let in_namespace = |name: &str| Attributes {
            group: String::new(),
            kind: "ConfigMap".into(),
            resource: "configmaps".into(),
            namespace: Some(name.into()),
            namespace_labels: BTreeMap::from([("kubernetes.io/metadata.name".into(), name.into())]),
            object: Some(json!({"metadata": {"name": "c"}})),
            ..attributes()
        };
        assert!(matches(&excluding("ConfigMap"), &in_namespace("team-a")));
        assert!(!matches(
            &excluding("ConfigMap"),
            &in_namespace("kube-system")
        ));
        // A Namespace is selected by its own labels.
        let namespace = |name: &str, operation: Operation| {
            let object = json!({"metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}});
            Attributes {
                group: String::new(),
                kind: "Namespace".into(),
                resource: "namespaces".into(),
                namespace: None,
                namespace_labels: BTreeMap::new(),
                name: name.into(),
                operation,
                object: (operation != Operation::Delete).then(|| object.clone()),
                old_object: (operation == Operation::Delete).then_some(object),
                ..attributes()
            }
        };
        let mut all = excluding("Namespace");
        all.operations = vec![Operation::Create, Operation::Delete];
        assert!(matches(&all, &namespace("team-a", Operation::Create)));
        assert!(!matches(&all, &namespace("kube-system", Operation::Create)));
        assert!(!matches(
            &all,
            &namespace("rekon-system", Operation::Delete)
        ));
        // Other cluster-scoped kinds never look at namespaces.
        let mut cluster = excluding("PersistentVolume");
        cluster.namespace_selector = Some("env=prod".into());
        let volume = Attributes {
            group: String::new(),
            kind: "PersistentVolume".into(),
            resource: "persistentvolumes".into(),
            namespace: None,
            ..attributes()
        };
        assert!(matches(&cluster, &volume));
    }
}
