//! Uninstalling: what rekon leaves in a cluster, and taking it back.
//! May call: the API server, webhook (the names of what it publishes).
//!
//! What rekon publishes outlives its processes on purpose (see
//! [`crate::webhook::publish`]): webhook configurations, CRD conversions,
//! Leases. When rekon itself is deleted (`kubectl delete -k deploy/`),
//! they must go too, or every write of the kinds its modules reviewed
//! fails (`failed calling webhook ... service "rekon-webhooks" not found`).
//! Deleting them needs rekon's own permissions, which `kubectl delete`
//! removes at the same time as the pods. So rekon holds the objects its
//! permissions hang on — its ServiceAccount, roles and bindings, the
//! [`Guards`] — with the finalizer [`FINALIZER`]: when one of them is
//! deleted, rekon is being uninstalled; a stopping replica then withdraws
//! everything pointing at its webhook endpoint ([`Uninstall::run`]) while
//! its permissions still hold, and lets the guards go. `rekon uninstall`
//! runs the same clean-up for a cluster where rekon is already gone.

use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::ApiResource;
use serde_json::{Value, json};

use crate::runtime::Phase;
use crate::webhook::publish::{
    self, CONVERTED_BY, Endpoint, MANAGED_BY, configurations, crds, delete_quietly,
};

/// The finalizer rekon holds its guards with.
pub const FINALIZER: &str = "rekon.dev/uninstall";

/// Why a guard or an uninstall failed.
#[derive(Debug, thiserror::Error)]
pub enum UninstallError {
    /// A guard is not `KIND/NAME` of a kind rekon can hold.
    #[error(
        "guard {0:?}: expected KIND/NAME with KIND one of serviceaccount, role, rolebinding, clusterrole, clusterrolebinding"
    )]
    Guard(String),
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
            UninstallError::Guard(_) => "guard",
            UninstallError::Api { .. } => "api",
        }
    }
}

/// An object rekon's permissions hang on, held with [`FINALIZER`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Guard {
    resource: &'static str,
    group: &'static str,
    kind: &'static str,
    namespaced: bool,
    /// The object's name.
    pub name: String,
}

impl std::str::FromStr for Guard {
    type Err = UninstallError;

    /// `serviceaccount/rekon`, `clusterrole/rekon-host`, ... (kinds as
    /// kubectl names them, singular or plural, any case).
    fn from_str(text: &str) -> Result<Guard, UninstallError> {
        let bad = || UninstallError::Guard(text.to_string());
        let (kind, name) = text.split_once('/').ok_or_else(bad)?;
        let kind = kind.to_ascii_lowercase();
        let kind = kind.trim_end_matches('s');
        let (resource, group, kind, namespaced) = match kind {
            "serviceaccount" | "sa" => ("serviceaccounts", "", "ServiceAccount", true),
            "role" => ("roles", "rbac.authorization.k8s.io", "Role", true),
            "rolebinding" => ("rolebindings", "rbac.authorization.k8s.io", "RoleBinding", true),
            "clusterrole" => ("clusterroles", "rbac.authorization.k8s.io", "ClusterRole", false),
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
        Ok(Guard {
            resource,
            group,
            kind,
            namespaced,
            name: name.to_string(),
        })
    }
}

impl std::fmt::Display for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.kind.to_ascii_lowercase(), self.name)
    }
}

impl Guard {
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

/// The guards of one installation: what this replica holds.
#[derive(Clone)]
pub struct Guards {
    client: Option<kube::Client>,
    namespace: String,
    guards: Vec<Guard>,
}

impl std::fmt::Debug for Guards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.guards).finish()
    }
}

impl Guards {
    /// No guards: rekon is never seen as being uninstalled.
    pub fn none() -> Guards {
        Guards {
            client: None,
            namespace: String::new(),
            guards: Vec::new(),
        }
    }

    /// These guards, the namespaced ones in `namespace`.
    pub fn new(client: kube::Client, namespace: &str, guards: Vec<Guard>) -> Guards {
        Guards {
            client: Some(client),
            namespace: namespace.to_string(),
            guards,
        }
    }

    /// Whether there are any.
    pub fn is_empty(&self) -> bool {
        self.guards.is_empty()
    }

    /// Puts [`FINALIZER`] on every guard that lacks it; a guard that
    /// cannot be held is reported (rekon then cannot clean up after
    /// itself when uninstalled; `rekon uninstall` can).
    pub async fn hold(&self) {
        let Some(client) = &self.client else { return };
        for guard in &self.guards {
            let api = guard.api(client, &self.namespace);
            if let Err(error) = change_finalizers(&api, &guard.name, |list| {
                if !list.iter().any(|f| f == FINALIZER) {
                    list.push(FINALIZER.to_string());
                }
            })
            .await
            {
                tracing::warn!(%guard, error = %error, "cannot hold the guard: rekon will not clean up after itself when uninstalled");
            }
        }
    }

    /// Whether rekon is being uninstalled: a guard is being deleted, or
    /// is gone. A guard that cannot be read now (the API server is
    /// unreachable) says nothing.
    pub async fn uninstalling(&self) -> bool {
        let Some(client) = &self.client else {
            return false;
        };
        for guard in &self.guards {
            match guard.api(client, &self.namespace).get_opt(&guard.name).await {
                Ok(Some(object)) if object.metadata.deletion_timestamp.is_some() => return true,
                Ok(Some(_)) => {}
                Ok(None) => return true,
                // Forbidden: the permissions are going (or were never given).
                Err(kube::Error::Api(status)) if status.code == 403 => return true,
                Err(_) => {}
            }
        }
        false
    }

    /// Takes [`FINALIZER`] off every guard; returns the guards let go.
    async fn release(&self) -> Result<Vec<String>, UninstallError> {
        let Some(client) = &self.client else {
            return Ok(Vec::new());
        };
        let mut released = Vec::new();
        let mut failed = None;
        for guard in &self.guards {
            let api = guard.api(client, &self.namespace);
            match change_finalizers(&api, &guard.name, |list| list.retain(|f| f != FINALIZER)).await
            {
                Ok(true) => released.push(guard.to_string()),
                Ok(false) => {}
                Err(source) => {
                    failed = Some(UninstallError::Api {
                        what: format!("cannot release {guard}"),
                        source,
                    })
                }
            }
        }
        failed.map_or(Ok(released), Err)
    }
}

/// Changes an object's finalizers with `change` (optimistically: the write
/// names the resourceVersion read, and is tried again on a conflict);
/// whether the list changed. A missing object changes nothing.
async fn change_finalizers(
    api: &Api<DynamicObject>,
    name: &str,
    change: impl Fn(&mut Vec<String>),
) -> Result<bool, kube::Error> {
    let mut attempts = 0;
    loop {
        let Some(object) = api.get_opt(name).await? else {
            return Ok(false);
        };
        let before = object.metadata.finalizers.clone().unwrap_or_default();
        let mut after = before.clone();
        change(&mut after);
        if after == before {
            return Ok(false);
        }
        let patch = json!({"metadata": {
            "finalizers": after,
            "resourceVersion": object.metadata.resource_version,
        }});
        match api
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => return Ok(true),
            Err(kube::Error::Api(status)) if status.code == 409 && attempts < 5 => attempts += 1,
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(false),
            Err(error) => return Err(error),
        }
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
    /// Guards let go.
    pub released: Vec<String>,
}

/// Takes back what an installation of rekon published: every webhook
/// configuration rekon manages that calls `endpoint`, the conversion of
/// every CRD that converts through it, rekon's Leases in `namespace`, and
/// the hold on its guards.
pub struct Uninstall {
    client: kube::Client,
    namespace: String,
    endpoint: Endpoint,
    guards: Guards,
}

impl std::fmt::Debug for Uninstall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Uninstall")
            .field("namespace", &self.namespace)
            .field("endpoint", &self.endpoint)
            .field("guards", &self.guards)
            .finish_non_exhaustive()
    }
}

impl Uninstall {
    /// The clean-up of the installation in `namespace` whose webhooks
    /// are reached at `endpoint`.
    pub fn new(client: kube::Client, namespace: &str, endpoint: Endpoint, guards: Vec<Guard>) -> Self {
        Uninstall {
            guards: Guards::new(client.clone(), namespace, guards),
            client,
            namespace: namespace.to_string(),
            endpoint,
        }
    }

    /// The clean-up of the installation whose guards these are (a host's
    /// own, at shutdown); none without guards.
    pub(crate) fn from_guards(guards: Guards, namespace: &str, endpoint: Endpoint) -> Option<Self> {
        Some(Uninstall {
            client: guards.client.clone()?,
            namespace: namespace.to_string(),
            endpoint,
            guards,
        })
    }

    /// Does it all. Every step runs even when an earlier one failed; the
    /// first failure is returned once all have run, and the guards are let
    /// go only when everything else is done.
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
                let ours = object.data["webhooks"]
                    .as_array()
                    .is_some_and(|w| w.iter().any(|w| self.endpoint.is_target_of(&w["clientConfig"])));
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
                    let labelled = crd.metadata.labels.as_ref().is_some_and(|l| l.contains_key(CONVERTED_BY));
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
                        Err(source) => fail(format!("cannot turn off the conversion of {name}"), source),
                    }
                }
            }
            Err(source) => fail("cannot list the CustomResourceDefinitions".to_string(), source),
        }
        let leases: Api<DynamicObject> = Api::namespaced_with(
            self.client.clone(),
            &self.namespace,
            &ApiResource {
                group: "coordination.k8s.io".into(),
                version: "v1".into(),
                api_version: "coordination.k8s.io/v1".into(),
                kind: "Lease".into(),
                plural: "leases".into(),
            },
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
            Err(source) => fail(format!("cannot list the Leases in {}", self.namespace), source),
        }
        if let Some(failure) = failure {
            return Err(failure);
        }
        report.released = self.guards.release().await?;
        Ok(report)
    }
}

/// The guards `deploy/` installs (its ServiceAccount, roles and bindings).
pub const DEFAULT_GUARDS: [&str; 5] = [
    "serviceaccount/rekon",
    "role/rekon",
    "rolebinding/rekon",
    "clusterrole/rekon-host",
    "clusterrolebinding/rekon-host",
];

/// The value of a JSON object's finalizers (for tests and reports).
pub fn finalizers(object: &Value) -> Vec<String> {
    object["metadata"]["finalizers"]
        .as_array()
        .map(|l| l.iter().filter_map(|f| f.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_parse_as_kubectl_names_kinds() {
        let guard: Guard = "ServiceAccount/rekon".parse().unwrap();
        assert_eq!(guard.to_string(), "serviceaccount/rekon");
        assert!(guard.namespaced);
        let guard: Guard = "clusterrolebindings/rekon-host".parse().unwrap();
        assert_eq!(guard.kind, "ClusterRoleBinding");
        assert!(!guard.namespaced);
        for bad in ["rekon", "secret/x", "role/", "role/a/b"] {
            let error = bad.parse::<Guard>().unwrap_err();
            assert!(error.to_string().contains(bad), "{error}");
        }
        for default in DEFAULT_GUARDS {
            default.parse::<Guard>().unwrap();
        }
    }
}
