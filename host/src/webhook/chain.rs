//! The admission chain, as kube-apiserver runs it: every matching mutating
//! webhook of every module (by module name, then declaration order), each
//! seeing the object as the previous one left it, then every matching
//! validating webhook; the first denial ends it. `rekon admit` runs it on
//! one AdmissionReview, and `rekon dev` runs it in the embedded API server
//! for every write.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use serde_json::{Value, json};

use super::registry::WebhookModules;
use super::review;
use crate::cluster::Cluster;
use crate::contract::{Operation, Webhook};
use crate::runtime::webhooks::operation_name;
use crate::runtime::{Phase, operations};
use crate::telemetry::Metrics;

/// The name of a module's webhook in the cluster's webhook configurations
/// (and in the API server's messages): `<webhook>.<module>.rekon.dev`.
pub fn configuration_name(module: &str, webhook: &str) -> String {
    format!("{webhook}.{module}.rekon.dev")
}

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

/// Where the chain ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Every webhook allowed it: the object as the mutating webhooks left
    /// it (`None` when none changed it).
    Allowed {
        /// The mutated object.
        object: Option<Value>,
    },
    /// A webhook refused it.
    Denied {
        /// The webhook's configuration name.
        webhook: String,
        /// HTTP status code.
        code: u16,
        /// Status reason (`Forbidden`, `Invalid`, `InternalError`...).
        reason: String,
        /// The message as kube-apiserver words it:
        /// `admission webhook "<name>" denied the request: <message>`.
        message: String,
    },
}

/// The chain's answer: where it ended, the warnings of every webhook
/// called, and each webhook's AdmissionReview answer (for `rekon admit`).
#[derive(Clone, Debug)]
pub struct ChainAnswer {
    /// Allowed (with the mutated object) or denied.
    pub outcome: Outcome,
    /// Every webhook's warnings, in order.
    pub warnings: Vec<String>,
    /// `(webhook configuration name, AdmissionReview answer)` per call.
    pub answers: Vec<(String, Value)>,
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

/// The chain over a set of modules: what `rekon dev` installs in its API
/// server and `rekon admit` runs once.
#[derive(Clone)]
pub struct Chain {
    modules: WebhookModules,
    cluster: Arc<dyn Cluster>,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chain")
            .field("modules", &self.modules)
            .finish_non_exhaustive()
    }
}

impl Chain {
    /// A chain over `modules`, whose guests read through `cluster`.
    pub fn new(modules: WebhookModules, cluster: Arc<dyn Cluster>, metrics: Arc<Metrics>) -> Chain {
        Chain {
            modules,
            cluster,
            metrics,
        }
    }

    /// Whether any module's webhook is for `kind` in `group`.
    pub fn reviews(&self, group: &str, kind: &str) -> bool {
        self.modules.all().iter().any(|m| {
            let webhooks = m.webhooks();
            webhooks
                .mutating
                .iter()
                .chain(&webhooks.validating)
                .any(|w| w.kinds.iter().any(|k| k.group == group && k.kind == kind))
        })
    }

    /// Runs the chain for one request.
    pub async fn run(&self, mut attributes: Attributes) -> ChainAnswer {
        let modules = self.modules.all();
        let mut warnings = Vec::new();
        let mut answers = Vec::new();
        let mut mutated = None;
        for phase in [Phase::Mutating, Phase::Validating] {
            for module in &modules {
                let webhooks = match phase {
                    Phase::Mutating => &module.webhooks().mutating,
                    Phase::Validating => &module.webhooks().validating,
                };
                for webhook in webhooks {
                    // matchPolicy Equivalent: a webhook for another version
                    // of the kind sees the request in its version.
                    let (seen, back) = if matches(webhook, &attributes) {
                        (attributes.clone(), None)
                    } else if let Some(version) = equivalent_version(webhook, &attributes)
                        && let Some(converted) = self.in_version(&attributes, &version).await
                    {
                        (converted, Some(attributes.version.clone()))
                    } else {
                        continue;
                    };
                    let name = configuration_name(module.name(), &webhook.name);
                    let review = admission_review(&seen, &uid());
                    let answer = review::admit_counted(
                        &self.metrics,
                        module,
                        self.cluster.clone(),
                        phase,
                        &webhook.name,
                        &review,
                    )
                    .await;
                    let response = answer["response"].clone();
                    answers.push((name.clone(), answer));
                    collect_warnings(&response, &mut warnings);
                    if response["allowed"] != json!(true) {
                        return ChainAnswer {
                            outcome: denial(&name, &response),
                            warnings,
                            answers,
                        };
                    }
                    let Some(object) = patched(&response, seen.object.as_ref()) else {
                        continue;
                    };
                    let object = match back {
                        None => Some(object),
                        Some(version) => {
                            let api_version = format!("{}/{version}", attributes.group);
                            self.convert_object(&object, &api_version).await
                        }
                    };
                    if let Some(object) = object {
                        attributes.object = Some(object.clone());
                        mutated = Some(object);
                    }
                }
            }
        }
        ChainAnswer {
            outcome: Outcome::Allowed { object: mutated },
            warnings,
            answers,
        }
    }
}

impl Chain {
    /// The request in another version of its kind, converted by the
    /// module that converts the kind; `None` when none does.
    async fn in_version(&self, attributes: &Attributes, version: &str) -> Option<Attributes> {
        let api_version = format!("{}/{version}", attributes.group);
        let mut seen = attributes.clone();
        seen.version = version.to_string();
        if let Some(object) = &attributes.object {
            seen.object = Some(self.convert_object(object, &api_version).await?);
        }
        if let Some(old) = &attributes.old_object {
            seen.old_object = Some(self.convert_object(old, &api_version).await?);
        }
        Some(seen)
    }

    /// `object` converted to `api_version` by the module converting its kind.
    async fn convert_object(&self, object: &Value, api_version: &str) -> Option<Value> {
        let (group, kind) = (
            crate::names::split_api_version(api_version).0,
            object["kind"].as_str()?,
        );
        let module = self.modules.converting(group, kind)?;
        let review = review::conversion_review(object, api_version, &uid());
        let answer =
            review::convert_counted(&self.metrics, &module, self.cluster.clone(), &review).await;
        review::converted_object(&answer).ok()
    }
}

/// The version of the request's kind `webhook` is for, when it is for
/// another version than the request's (matchPolicy Equivalent).
fn equivalent_version(webhook: &Webhook, attributes: &Attributes) -> Option<String> {
    let mut other = attributes.clone();
    let version = webhook.kinds.iter().find_map(|k| {
        (k.group == attributes.group && k.kind == attributes.kind && k.version != "*")
            .then(|| k.version.clone())
    })?;
    other.version.clone_from(&version);
    matches(webhook, &other).then_some(version)
}

/// A fresh request uid.
fn uid() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!(
        "rekon-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

fn collect_warnings(response: &Value, warnings: &mut Vec<String>) {
    if let Some(list) = response["warnings"].as_array() {
        warnings.extend(list.iter().filter_map(Value::as_str).map(str::to_string));
    }
}

/// The object after a response's JSON patch, if it has one that applies.
fn patched(response: &Value, object: Option<&Value>) -> Option<Value> {
    let encoded = response["patch"].as_str()?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    let patch: json_patch::Patch = serde_json::from_slice(&bytes).ok()?;
    let mut object = object?.clone();
    json_patch::patch(&mut object, &patch).ok()?;
    Some(object)
}

/// A refusal as kube-apiserver words it.
fn denial(webhook: &str, response: &Value) -> Outcome {
    let status = &response["status"];
    let code = status["code"]
        .as_u64()
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| *c >= 400)
        .unwrap_or(400);
    let denied_by = format!("admission webhook {webhook:?} denied the request");
    let message = match (status["message"].as_str(), status["reason"].as_str()) {
        (Some(m), _) if !m.is_empty() => format!("{denied_by}: {m}"),
        (_, Some(r)) if !r.is_empty() => format!("{denied_by}: {r}"),
        _ => format!("{denied_by} without explanation"),
    };
    Outcome::Denied {
        webhook: webhook.to_string(),
        code,
        reason: status["reason"]
            .as_str()
            .unwrap_or("BadRequest")
            .to_string(),
        message,
    }
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

    #[test]
    fn a_denial_reads_as_kube_apiserver_words_it() {
        let response = json!({"allowed": false, "status": {"code": 422, "reason": "Invalid", "message": "spec.image is required"}});
        assert_eq!(
            denial("v.app.rekon.dev", &response),
            Outcome::Denied {
                webhook: "v.app.rekon.dev".into(),
                code: 422,
                reason: "Invalid".into(),
                message: "admission webhook \"v.app.rekon.dev\" denied the request: spec.image is required".into(),
            }
        );
        let bare = denial("v", &json!({"allowed": false}));
        assert!(
            matches!(bare, Outcome::Denied { code: 400, ref message, .. } if message.ends_with("without explanation"))
        );
    }
}
