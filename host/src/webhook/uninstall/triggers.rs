//! The objects whose deletion means rekon is being uninstalled, and the
//! uninstall webhook's configuration that is called for them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use k8s_openapi::api::admissionregistration::v1::{
    MatchCondition, RuleWithOperations, ValidatingWebhook, ValidatingWebhookConfiguration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::{Api, DynamicObject};
use kube::core::ApiResource;
use serde_json::Value;

use super::{CONFIGURATION, PATH, UninstallError, WEBHOOK};
use crate::names::MANAGED_BY;
use crate::webhook::objects::{CaSource, Endpoint, client_config, configuration_metadata};

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
    pub fn configuration(&self, endpoint: &Endpoint, ca: &CaSource) -> Value {
        let mut rules: Vec<RuleWithOperations> = Vec::new();
        let mut conditions: Vec<String> = Vec::new();
        for trigger in &self.triggers {
            let rule = RuleWithOperations {
                api_groups: Some(vec![trigger.group.to_string()]),
                api_versions: Some(vec!["v1".to_string()]),
                operations: Some(vec!["DELETE".to_string()]),
                resources: Some(vec![trigger.resource.to_string()]),
                scope: Some(
                    if trigger.namespaced {
                        "Namespaced"
                    } else {
                        "Cluster"
                    }
                    .to_string(),
                ),
            };
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
        let configuration = ValidatingWebhookConfiguration {
            metadata: configuration_metadata(
                CONFIGURATION.to_string(),
                &[(MANAGED_BY.0, MANAGED_BY.1)],
                ca,
            ),
            webhooks: Some(vec![ValidatingWebhook {
                name: WEBHOOK.to_string(),
                admission_review_versions: vec!["v1".to_string()],
                // It takes rekon's publications back, never on a dry run.
                side_effects: "NoneOnDryRun".to_string(),
                match_policy: Some("Equivalent".to_string()),
                // A rekon that is down never blocks a deletion.
                failure_policy: Some("Ignore".to_string()),
                timeout_seconds: Some(30),
                client_config: client_config(endpoint, ca, PATH),
                rules: Some(rules),
                match_conditions: Some(vec![MatchCondition {
                    name: "rekon-itself".to_string(),
                    expression: conditions.join(" || "),
                }]),
                namespace_selector: Some(LabelSelector::default()),
                object_selector: Some(LabelSelector::default()),
            }]),
        };
        serde_json::to_value(configuration).expect("a webhook configuration serialises")
    }
}

/// The triggers `deploy/` names (besides its namespace): its
/// ServiceAccount and ClusterRoleBinding.
pub const DEFAULT_TRIGGERS: [&str; 2] = ["serviceaccount/rekon", "clusterrolebinding/rekon-host"];

#[cfg(test)]
mod tests {
    use serde_json::json;

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
        let config = triggers().configuration(&endpoint, &CaSource::Bundle("Q0E=".into()));
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
