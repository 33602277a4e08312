//! Uninstalling: what rekon leaves in a cluster, and taking it back.
//! May call: the API server, webhook (the names of what it publishes).
//!
//! What rekon publishes outlives its processes on purpose (see
//! [`crate::webhook::publish`]): webhook configurations, CRD conversions,
//! Leases. When rekon itself is deleted (`kubectl delete -k deploy/`),
//! they must go too, or every write of the kinds its modules reviewed
//! fails (`failed calling webhook ... service "rekon-webhooks" not found`)
//! and every read of a CRD it converted in another version. Taking them
//! back needs rekon's own permissions and ServiceAccount, which that same
//! `kubectl delete` removes while the pods still run. So rekon learns of
//! its uninstall before anything is deleted: it publishes one more
//! validating webhook, `uninstall.rekon.dev`, called for the deletion of
//! the objects named as [`Triggers`] (its namespace, its ServiceAccount,
//! its ClusterRoleBinding). The first such deletion reaches a replica
//! while every permission still holds; the replica withdraws everything
//! pointing at its webhook endpoint ([`Uninstall::run`]), stops
//! publishing, and lets the deletion through. The webhook ignores
//! failures (a rekon that is down never blocks a deletion) and dry runs;
//! `rekon uninstall` runs the same clean-up where rekon is already gone.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::ApiResource;
use serde_json::{Value, json};

use crate::runtime::Phase;
use crate::webhook::publish::{
    self, CONVERTED_BY, Endpoint, MANAGED_BY, configurations, crds, delete_quietly,
};

/// The name of the uninstall webhook's configuration (a module's are
/// `rekon-<module>`, and a module name has no dot).
pub const CONFIGURATION: &str = "rekon.uninstall";

/// The name of the uninstall webhook, as the API server reports it.
pub const WEBHOOK: &str = "uninstall.rekon.dev";

/// The path the uninstall webhook is served at.
pub const PATH: &str = "/uninstall";

/// Why a trigger or an uninstall failed.
#[derive(Debug, thiserror::Error)]
pub enum UninstallError {
    /// A trigger is not `KIND/NAME` of a kind rekon can watch for.
    #[error(
        "uninstall trigger {0:?}: expected KIND/NAME with KIND one of namespace, serviceaccount, role, rolebinding, clusterrole, clusterrolebinding"
    )]
    Trigger(String),
    /// A request to the API server failed.
    #[error("{what}")]
    Api {
        /// What was being done.
        what: String,
        /// Why it failed.
        #[source]
        source: kube::Error,
    },
}

impl UninstallError {
    /// A short, bounded label for metrics and logs.
    pub fn metric_label(&self) -> &'static str {
        match self {
            UninstallError::Trigger(_) => "trigger",
            UninstallError::Api { .. } => "api",
        }
    }
}

/// An object whose deletion means rekon is being uninstalled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trigger {
    resource: &'static str,
    group: &'static str,
    kind: &'static str,
    namespaced: bool,
    /// The object's name.
    pub name: String,
}

impl std::str::FromStr for Trigger {
    type Err = UninstallError;

    /// `namespace/rekon-system`, `serviceaccount/rekon`,
    /// `clusterrolebinding/rekon-host`, ... (kinds as kubectl names them,
    /// singular or plural, any case).
    fn from_str(text: &str) -> Result<Trigger, UninstallError> {
        let bad = || UninstallError::Trigger(text.to_string());
        let (kind, name) = text.split_once('/').ok_or_else(bad)?;
        let kind = kind.to_ascii_lowercase();
        let kind = kind
            .strip_suffix("es")
            .filter(|k| *k == "namespac")
            .map_or_else(
                || kind.trim_end_matches('s').to_string(),
                |_| "namespace".to_string(),
            );
        let (resource, group, kind, namespaced) = match kind.as_str() {
            "namespace" | "n" => ("namespaces", "", "Namespace", false),
            "serviceaccount" | "sa" => ("serviceaccounts", "", "ServiceAccount", true),
            "role" => ("roles", "rbac.authorization.k8s.io", "Role", true),
            "rolebinding" => (
                "rolebindings",
                "rbac.authorization.k8s.io",
                "RoleBinding",
                true,
            ),
            "clusterrole" => (
                "clusterroles",
                "rbac.authorization.k8s.io",
                "ClusterRole",
                false,
            ),
            "clusterrolebinding" => (
                "clusterrolebindings",
                "rbac.authorization.k8s.io",
                "ClusterRoleBinding",
                false,
            ),
            _ => return Err(bad()),
        };
        if name.is_empty() || name.contains('/') {
            return Err(bad());
        }
        Ok(Trigger {
            resource,
            group,
            kind,
            namespaced,
            name: name.to_string(),
        })
    }
}

impl std::fmt::Display for Trigger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.kind.to_ascii_lowercase(), self.name)
    }
}

impl Trigger {
    fn api(&self, client: &kube::Client, namespace: &str) -> Api<DynamicObject> {
        let api_version = if self.group.is_empty() {
            "v1".to_string()
        } else {
            format!("{}/v1", self.group)
        };
        let resource = ApiResource {
            group: self.group.to_string(),
            version: "v1".to_string(),
            api_version,
            kind: self.kind.to_string(),
            plural: self.resource.to_string(),
        };
        if self.namespaced {
            Api::namespaced_with(client.clone(), namespace, &resource)
        } else {
            Api::all_with(client.clone(), &resource)
        }
    }
}

/// The uninstall triggers of one installation, and whether this replica
/// has seen its uninstall. Cheap to clone: clones share what they saw.
#[derive(Clone)]
pub struct Triggers {
    client: Option<kube::Client>,
    namespace: String,
    triggers: Vec<Trigger>,
    uninstalled: Arc<AtomicBool>,
    /// Each trigger by name: whether it was seen to exist (one that never
    /// did is no sign of anything).
    seen: Arc<std::sync::Mutex<std::collections::BTreeMap<String, bool>>>,
}

impl std::fmt::Debug for Triggers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.triggers).finish()
    }
}

impl Triggers {
    /// No triggers: rekon never sees itself uninstalled.
    pub fn none() -> Triggers {
        Triggers {
            client: None,
            namespace: String::new(),
            triggers: Vec::new(),
            uninstalled: Arc::default(),
            seen: Arc::default(),
        }
    }

    /// These triggers, the namespaced ones in `namespace` (rekon's own).
    pub fn new(client: kube::Client, namespace: &str, triggers: Vec<Trigger>) -> Triggers {
        Triggers {
            client: Some(client),
            namespace: namespace.to_string(),
            triggers,
            uninstalled: Arc::default(),
            seen: Arc::default(),
        }
    }

    /// Whether there are any.
    pub fn is_empty(&self) -> bool {
        self.triggers.is_empty()
    }

    /// rekon's own namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The client the triggers are read with.
    pub(crate) fn client(&self) -> Option<kube::Client> {
        self.client.clone()
    }

    /// Whether rekon is being uninstalled: this replica took it back
    /// already, or a trigger is being deleted, or is gone after it was
    /// seen. A trigger that cannot be read now (the API server is
    /// unreachable) says nothing; one that never existed is reported once.
    pub async fn uninstalling(&self) -> bool {
        if self.uninstalled.load(Ordering::Relaxed) {
            return true;
        }
        let Some(client) = &self.client else {
            return false;
        };
        for trigger in &self.triggers {
            let found = trigger
                .api(client, &self.namespace)
                .get_opt(&trigger.name)
                .await;
            let mut seen = self.seen.lock().expect("triggers lock");
            let key = trigger.to_string();
            match found {
                Ok(Some(object)) => {
                    seen.insert(key, true);
                    if object.metadata.deletion_timestamp.is_some() {
                        return true;
                    }
                }
                Ok(None) if seen.get(&key) == Some(&true) => return true,
                Ok(None) => {
                    if seen.insert(key, false).is_none() {
                        tracing::warn!(%trigger, namespace = %self.namespace, "the uninstall trigger does not exist: its deletion cannot be seen");
                    }
                }
                Err(_) => {}
            }
        }
        false
    }

    /// Whether an AdmissionReview asks to delete a trigger for real (not
    /// a dry run).
    pub fn matches(&self, review: &Value) -> bool {
        let request = &review["request"];
        if request["operation"] != "DELETE" || request["dryRun"] == true {
            return false;
        }
        self.triggers.iter().any(|t| {
            request["resource"]["group"] == t.group
                && request["resource"]["resource"] == t.resource
                && request["name"] == t.name.as_str()
                && (!t.namespaced || request["namespace"] == self.namespace.as_str())
        })
    }

    /// This replica took rekon's publications back: it publishes nothing
    /// more.
    pub fn set_uninstalled(&self) {
        self.uninstalled.store(true, Ordering::Relaxed);
    }

    /// The ValidatingWebhookConfiguration of the uninstall webhook, called
    /// at `endpoint` (trusting `ca`) for the deletion of every trigger.
    pub fn configuration(&self, endpoint: &Endpoint, ca: &publish::CaSource) -> Value {
        let mut rules: Vec<Value> = Vec::new();
        let mut conditions: Vec<String> = Vec::new();
        for trigger in &self.triggers {
            let rule = json!({
                "apiGroups": [trigger.group], "apiVersions": ["v1"], "operations": ["DELETE"],
                "resources": [trigger.resource],
                "scope": if trigger.namespaced { "Namespaced" } else { "Cluster" },
            });
            if !rules.contains(&rule) {
                rules.push(rule);
            }
            let mut condition = format!(
                "(request.resource.resource == '{}' && request.name == '{}'",
                trigger.resource, trigger.name
            );
            if trigger.namespaced {
                condition.push_str(&format!(" && request.namespace == '{}'", self.namespace));
            }
            condition.push(')');
            conditions.push(condition);
        }
        let mut metadata = json!({
            "name": CONFIGURATION,
            "labels": {MANAGED_BY.0: MANAGED_BY.1},
        });
        if let publish::CaSource::CertManager(certificate) = ca {
            metadata["annotations"] = json!({"cert-manager.io/inject-ca-from": certificate});
        }
        json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": metadata,
            "webhooks": [{
                "name": WEBHOOK,
                "admissionReviewVersions": ["v1"],
                // It takes rekon's publications back, never on a dry run.
                "sideEffects": "NoneOnDryRun",
                "matchPolicy": "Equivalent",
                // A rekon that is down never blocks a deletion.
                "failurePolicy": "Ignore",
                "timeoutSeconds": 30,
                "clientConfig": publish::client_config(endpoint, ca, PATH),
                "rules": rules,
                "matchConditions": [{"name": "rekon-itself", "expression": conditions.join(" || ")}],
                "namespaceSelector": {},
                "objectSelector": {},
            }],
        })
    }
}

/// What an uninstall removed.
#[derive(Debug, Default, serde::Serialize)]
pub struct Report {
    /// Webhook configurations deleted (`Kind/name`).
    pub configurations: Vec<String>,
    /// CRDs whose conversion was turned back to `None`.
    pub conversions: Vec<String>,
    /// Leases deleted.
    pub leases: Vec<String>,
}

/// Takes back what an installation of rekon published: every webhook
/// configuration rekon manages that calls `endpoint` (the uninstall
/// webhook's too), the conversion of every CRD that converts through it,
/// and rekon's Leases in `namespace`.
pub struct Uninstall {
    client: kube::Client,
    namespace: String,
    endpoint: Endpoint,
}

impl std::fmt::Debug for Uninstall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Uninstall")
            .field("namespace", &self.namespace)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl Uninstall {
    /// The clean-up of the installation in `namespace` whose webhooks
    /// are reached at `endpoint`.
    pub fn new(client: kube::Client, namespace: &str, endpoint: Endpoint) -> Self {
        Uninstall {
            client,
            namespace: namespace.to_string(),
            endpoint,
        }
    }

    /// Does it all. Every step runs even when an earlier one failed; the
    /// first failure is returned once all have run.
    pub async fn run(&self) -> Result<Report, UninstallError> {
        let mut report = Report::default();
        let mut failure = None;
        let mut fail = |what: String, source: kube::Error| {
            tracing::warn!(error = %source, "{what}");
            failure.get_or_insert(UninstallError::Api { what, source });
        };
        let managed = ListParams::default().labels(&format!("{}={}", MANAGED_BY.0, MANAGED_BY.1));
        for phase in [Phase::Mutating, Phase::Validating] {
            let kind = publish::configuration_kind(phase);
            let api = configurations(&self.client, phase);
            let listed = match api.list(&managed).await {
                Ok(list) => list.items,
                Err(source) => {
                    fail(format!("cannot list the {kind}s"), source);
                    continue;
                }
            };
            for object in listed {
                let ours = object.data["webhooks"].as_array().is_some_and(|w| {
                    w.iter()
                        .any(|w| self.endpoint.is_target_of(&w["clientConfig"]))
                });
                let Some(name) = object.metadata.name.filter(|_| ours) else {
                    continue;
                };
                match delete_quietly(&api, &name).await {
                    Ok(()) => report.configurations.push(format!("{kind}/{name}")),
                    Err(source) => fail(format!("cannot delete {kind} {name}"), source),
                }
            }
        }
        match crds(&self.client).list(&ListParams::default()).await {
            Ok(list) => {
                for crd in list.items {
                    let conversion = &crd.data["spec"]["conversion"];
                    let name = crd.metadata.name.clone().unwrap_or_default();
                    let ours = conversion["strategy"] == "Webhook"
                        && self
                            .endpoint
                            .is_target_of(&conversion["webhook"]["clientConfig"]);
                    let labelled = crd
                        .metadata
                        .labels
                        .as_ref()
                        .is_some_and(|l| l.contains_key(CONVERTED_BY));
                    if !ours && !labelled {
                        continue;
                    }
                    let patch = if ours {
                        publish::no_conversion_patch()
                    } else {
                        // Converted elsewhere now: only our label goes.
                        json!({"metadata": {"labels": {CONVERTED_BY: null}}})
                    };
                    match crds(&self.client)
                        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                        .await
                    {
                        Ok(_) if ours => report.conversions.push(name),
                        Ok(_) => {}
                        Err(kube::Error::Api(status)) if status.code == 404 => {}
                        Err(source) => {
                            fail(format!("cannot turn off the conversion of {name}"), source)
                        }
                    }
                }
            }
            Err(source) => fail(
                "cannot list the CustomResourceDefinitions".to_string(),
                source,
            ),
        }
        let leases: Api<DynamicObject> = Api::namespaced_with(
            self.client.clone(),
            &self.namespace,
            &crate::ha::lease_resource(),
        );
        match leases.list(&managed).await {
            Ok(list) => {
                for lease in list.items {
                    let name = lease.metadata.name.unwrap_or_default();
                    match delete_quietly(&leases, &name).await {
                        Ok(()) => report.leases.push(name),
                        Err(source) => fail(format!("cannot delete the Lease {name}"), source),
                    }
                }
            }
            Err(source) => fail(
                format!("cannot list the Leases in {}", self.namespace),
                source,
            ),
        }
        failure.map_or(Ok(report), Err)
    }
}

/// The triggers `deploy/` names (besides its namespace): its
/// ServiceAccount and ClusterRoleBinding.
pub const DEFAULT_TRIGGERS: [&str; 2] = ["serviceaccount/rekon", "clusterrolebinding/rekon-host"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triggers_parse_as_kubectl_names_kinds() {
        let trigger: Trigger = "ServiceAccount/rekon".parse().unwrap();
        assert_eq!(trigger.to_string(), "serviceaccount/rekon");
        assert!(trigger.namespaced);
        let trigger: Trigger = "clusterrolebindings/rekon-host".parse().unwrap();
        assert_eq!(trigger.kind, "ClusterRoleBinding");
        assert!(!trigger.namespaced);
        let trigger: Trigger = "namespaces/rekon-system".parse().unwrap();
        assert_eq!((trigger.kind, trigger.namespaced), ("Namespace", false));
        for bad in ["rekon", "secret/x", "role/", "role/a/b"] {
            let error = bad.parse::<Trigger>().unwrap_err();
            assert!(error.to_string().contains(bad), "{error}");
        }
        for default in DEFAULT_TRIGGERS {
            default.parse::<Trigger>().unwrap();
        }
    }

    fn triggers() -> Triggers {
        let mut triggers = Triggers::none();
        triggers.namespace = "rekon-system".into();
        triggers.triggers = ["namespace/rekon-system", "serviceaccount/rekon"]
            .map(|t| t.parse().unwrap())
            .to_vec();
        triggers
    }

    fn review(resource: &str, name: &str, namespace: Option<&str>, dry_run: bool) -> Value {
        json!({"request": {
            "operation": "DELETE", "dryRun": dry_run, "name": name, "namespace": namespace,
            "resource": {"group": "", "version": "v1", "resource": resource},
        }})
    }

    #[test]
    fn only_the_real_deletion_of_a_trigger_is_an_uninstall() {
        let triggers = triggers();
        assert!(triggers.matches(&review("namespaces", "rekon-system", None, false)));
        assert!(triggers.matches(&review(
            "serviceaccounts",
            "rekon",
            Some("rekon-system"),
            false
        )));
        assert!(!triggers.matches(&review("namespaces", "rekon-system", None, true)));
        assert!(!triggers.matches(&review("namespaces", "team-a", None, false)));
        assert!(!triggers.matches(&review("serviceaccounts", "rekon", Some("team-a"), false)));
        let mut update = review("namespaces", "rekon-system", None, false);
        update["request"]["operation"] = json!("UPDATE");
        assert!(!triggers.matches(&update));
    }

    #[test]
    fn the_uninstall_webhook_is_called_only_for_the_triggers_and_never_blocks() {
        let endpoint = Endpoint::Service {
            namespace: "rekon-system".into(),
            name: "rekon-webhooks".into(),
            port: 443,
        };
        let config = triggers().configuration(&endpoint, &publish::CaSource::Bundle("Q0E=".into()));
        let webhook = &config["webhooks"][0];
        assert_eq!(webhook["failurePolicy"], "Ignore");
        assert_eq!(webhook["sideEffects"], "NoneOnDryRun");
        assert_eq!(webhook["clientConfig"]["service"]["path"], PATH);
        assert_eq!(
            webhook["rules"],
            json!([
                {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["namespaces"], "scope": "Cluster"},
                {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["serviceaccounts"], "scope": "Namespaced"},
            ])
        );
        assert_eq!(
            webhook["matchConditions"][0]["expression"],
            "(request.resource.resource == 'namespaces' && request.name == 'rekon-system') || \
             (request.resource.resource == 'serviceaccounts' && request.name == 'rekon' && request.namespace == 'rekon-system')"
        );
        assert!(endpoint.is_target_of(&webhook["clientConfig"]));
    }
}
