//! What `rekon dev` and `rekon test` need of a real API server besides
//! the library's cluster: discovery for fixtures, the manifests applied,
//! fixtures created as given, and what a case left cleaned up.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use rekon_host::Cluster;
use rekon_host::cluster::KubeCluster;
use rekon_host::contract::{ApiError, Gvk, ObjectRef, api_error, from_kube};
use rekon_host::names::object_ref_of;
use serde_json::{Value, json};

/// One resource the server serves.
#[derive(Clone, Debug)]
pub(in crate::commands) struct Served {
    /// Its plural name.
    pub plural: String,
    /// Whether its objects live in namespaces.
    pub namespaced: bool,
    /// Whether it has a status subresource.
    pub status: bool,
}

/// The namespaces of the system, never cleaned.
pub(super) const SYSTEM_NAMESPACES: [&str; 3] = ["kube-system", "kube-public", "kube-node-lease"];

/// How long a cleaned-up CRD or namespace may take to go.
pub(super) const GONE: Duration = Duration::from_secs(30);

/// What a command needs of a real API server: the library's cluster
/// reading straight from it (no cache), and on top discovery, apply,
/// fixtures, cleaning up after a case.
pub(in crate::commands) struct Direct {
    client: kube::Client,
    /// The cluster a guest's calls reach.
    cluster: Arc<KubeCluster>,
    /// Discovery per group-version: kind -> resource.
    served: Mutex<HashMap<String, HashMap<String, Served>>>,
    /// The objects that stay when a case is cleaned up (by uid): what
    /// the server held at start, and the CRDs of the modules.
    pub(super) keep: Mutex<HashSet<String>>,
}

fn api_version_of(kind: &Gvk) -> String {
    if kind.group.is_empty() {
        kind.version.clone()
    } else {
        format!("{}/{}", kind.group, kind.version)
    }
}

pub(super) fn gvk_of(api_version: &str, kind: &str) -> Gvk {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    Gvk {
        group: group.to_string(),
        version: version.to_string(),
        kind: kind.to_string(),
    }
}

pub(super) fn base_path(api_version: &str) -> String {
    if api_version.contains('/') {
        format!("/apis/{api_version}")
    } else {
        format!("/api/{api_version}")
    }
}

impl Direct {
    /// Serves from `client`'s API server.
    pub(in crate::commands) fn new(client: kube::Client) -> Direct {
        Direct {
            cluster: Arc::new(KubeCluster::direct(client.clone())),
            client,
            served: Mutex::new(HashMap::new()),
            keep: Mutex::new(HashSet::new()),
        }
    }

    /// The cluster a guest's calls reach: the API server's answers,
    /// straight.
    pub(in crate::commands) fn cluster(&self) -> Arc<dyn Cluster> {
        self.cluster.clone()
    }

    /// Sends one request; the answer's body, or the server's refusal.
    pub(super) async fn send(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> Result<String, ApiError> {
        let mut builder = http::Request::builder().method(method).uri(path);
        if let Some(content_type) = content_type {
            builder = builder.header(http::header::CONTENT_TYPE, content_type);
        }
        let request = builder
            .body(body)
            .map_err(|e| api_error(400, "BadRequest", &e.to_string()))?;
        self.client.request_text(request).await.map_err(from_kube)
    }

    pub(super) async fn get_json(&self, path: &str) -> Result<Value, ApiError> {
        let text = self.send("GET", path, None, Vec::new()).await?;
        serde_json::from_str(&text).map_err(|e| api_error(500, "InternalError", &e.to_string()))
    }

    /// Forgets what discovery found (the CRDs changed).
    pub(in crate::commands) fn forget(&self) {
        self.served.lock().expect("discovery lock").clear();
    }

    /// The resource serving `kind` (discovery asked again on a miss).
    pub(in crate::commands) async fn resource(&self, kind: &Gvk) -> Result<Served, ApiError> {
        let api_version = api_version_of(kind);
        if let Some(found) = self
            .served
            .lock()
            .expect("discovery lock")
            .get(&api_version)
            .and_then(|kinds| kinds.get(&kind.kind))
        {
            return Ok(found.clone());
        }
        let list = match self.get_json(&base_path(&api_version)).await {
            Ok(list) => list,
            Err(error) if error.code == 404 => Value::Null,
            Err(error) => return Err(error),
        };
        let resources = list["resources"].as_array().cloned().unwrap_or_default();
        let mut kinds = HashMap::new();
        for r in &resources {
            let name = r["name"].as_str().unwrap_or_default();
            if name.contains('/') {
                continue;
            }
            kinds.insert(
                r["kind"].as_str().unwrap_or_default().to_string(),
                Served {
                    plural: name.to_string(),
                    namespaced: r["namespaced"].as_bool().unwrap_or(false),
                    status: resources
                        .iter()
                        .any(|s| s["name"] == format!("{name}/status")),
                },
            );
        }
        let found = kinds.get(&kind.kind).cloned();
        self.served
            .lock()
            .expect("discovery lock")
            .insert(api_version.clone(), kinds);
        found.ok_or_else(|| {
            api_error(
                404,
                "NotFound",
                &format!("the server does not serve {} in {api_version}", kind.kind),
            )
        })
    }

    /// The path of a collection (`name` None) or an object.
    pub(super) fn path(
        kind: &Gvk,
        served: &Served,
        namespace: Option<&str>,
        name: Option<&str>,
    ) -> String {
        let mut path = base_path(&api_version_of(kind));
        if served.namespaced
            && let Some(namespace) = namespace
        {
            path.push_str("/namespaces/");
            path.push_str(namespace);
        }
        path.push('/');
        path.push_str(&served.plural);
        if let Some(name) = name {
            path.push('/');
            path.push_str(name);
        }
        path
    }

    /// The reference of `document`, its namespace settled as the server
    /// does: a namespaced kind given none is in `default` (written into
    /// the document too), a cluster-scoped kind has none. A kind the
    /// server does not serve counts as namespaced.
    pub(in crate::commands) async fn settle(&self, document: &mut Value) -> Option<ObjectRef> {
        let target = object_ref_of(document)?;
        let namespaced = self
            .resource(&target.kind)
            .await
            .map_or(true, |r| r.namespaced);
        Some(crate::commands::reconcile::settled(
            document, target, namespaced,
        ))
    }

    /// Creates the namespace `name` unless it exists; one still being
    /// deleted (a case's, cleaned up) is waited for first, as the server
    /// refuses new objects in it.
    async fn ensure_namespace(&self, name: &str) -> anyhow::Result<()> {
        let path = format!("/api/v1/namespaces/{name}");
        if let Ok(now) = self.get_json(&path).await {
            if now["metadata"]["deletionTimestamp"].is_null() {
                return Ok(());
            }
            self.wait_gone(&path).await?;
        }
        let namespace =
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        match self
            .send(
                "POST",
                "/api/v1/namespaces",
                Some("application/json"),
                namespace.to_string().into_bytes(),
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(error) if error.code == 409 => Ok(()),
            Err(error) => bail!("cannot create the namespace {name}: {}", error.message),
        }
    }

    /// Applies `document` (server-side, forced, as `field_manager`), as
    /// `kubectl apply --server-side --force-conflicts` does; a CRD is
    /// waited for until it is established.
    pub(in crate::commands) async fn apply(
        &self,
        document: &Value,
        field_manager: &str,
    ) -> anyhow::Result<Value> {
        let mut document = document.clone();
        let target = self
            .settle(&mut document)
            .await
            .context("an object needs apiVersion, kind and metadata.name")?;
        let served = self
            .resource(&target.kind)
            .await
            .map_err(|e| anyhow!("{}", e.message))?;
        if let Some(namespace) = &target.namespace {
            self.ensure_namespace(namespace).await?;
        }
        let path = Self::path(
            &target.kind,
            &served,
            target.namespace.as_deref(),
            Some(&target.name),
        );
        let answer = self
            .send(
                "PATCH",
                // Field managers are rekon's own names: nothing to escape.
                &format!("{path}?fieldManager={field_manager}&force=true"),
                Some("application/apply-patch+yaml"),
                document.to_string().into_bytes(),
            )
            .await
            .map_err(|e| anyhow!("{}", e.message))?;
        let stored: Value = serde_json::from_str(&answer)?;
        if target.kind.kind == "CustomResourceDefinition" {
            self.wait_established(&stored).await?;
        }
        Ok(stored)
    }

    /// Waits until the CRD `crd` is established and its kind discovered.
    async fn wait_established(&self, crd: &Value) -> anyhow::Result<()> {
        let name = crd["metadata"]["name"].as_str().unwrap_or_default();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let now = self
                .get_json(&format!(
                    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
                ))
                .await
                .unwrap_or(Value::Null);
            let established = now["status"]["conditions"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["type"] == "Established" && c["status"] == "True")
            });
            if established {
                self.forget();
                let kind = now["spec"]["names"]["kind"].as_str().unwrap_or_default();
                let group = now["spec"]["group"].as_str().unwrap_or_default();
                let versions = now["spec"]["versions"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let mut discovered = true;
                for version in versions.iter().filter(|v| v["served"] == true) {
                    let gvk = Gvk {
                        group: group.to_string(),
                        version: version["name"].as_str().unwrap_or_default().to_string(),
                        kind: kind.to_string(),
                    };
                    discovered &= self.resource(&gvk).await.is_ok();
                }
                if discovered {
                    return Ok(());
                }
                self.forget();
            }
            if Instant::now() > deadline {
                bail!("the CustomResourceDefinition {name} is not established after 30 s");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Installs `crds` (a module's), kept when cases are cleaned up.
    pub(in crate::commands) async fn install_crds(
        &self,
        crds: &[Value],
        field_manager: &str,
    ) -> anyhow::Result<()> {
        for crd in crds {
            let stored = self
                .apply(crd, field_manager)
                .await
                .with_context(|| format!("cannot install the CRD {}", crd["metadata"]["name"]))?;
            if let Some(uid) = stored["metadata"]["uid"].as_str() {
                self.keep.lock().expect("keep lock").insert(uid.to_string());
            }
        }
        Ok(())
    }

    /// Creates `object` as given, as a test fixture: its namespace
    /// created if missing, its `status` written through the status
    /// subresource, and, when it carries a `deletionTimestamp` (and
    /// finalizers), deleted right after, so the server marks it as being
    /// deleted (at its own time). An object that exists is replaced.
    pub(in crate::commands) async fn seed(&self, object: Value) -> anyhow::Result<Value> {
        let mut object = object;
        let target = self
            .settle(&mut object)
            .await
            .context("an object needs apiVersion, kind and metadata.name")?;
        let served = self.resource(&target.kind).await.map_err(|e| {
            anyhow!(
                "{} (the real API server serves only built-in kinds and installed CRDs: list the CustomResourceDefinition in `objects`)",
                e.message
            )
        })?;
        let deleting = !object["metadata"]["deletionTimestamp"].is_null();
        if let Some(metadata) = object["metadata"].as_object_mut() {
            for field in [
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "resourceVersion",
                "uid",
                "creationTimestamp",
                "generation",
                "managedFields",
            ] {
                metadata.remove(field);
            }
        }
        if let Some(namespace) = &target.namespace {
            self.ensure_namespace(namespace).await?;
        }
        let collection = Self::path(&target.kind, &served, target.namespace.as_deref(), None);
        let path = format!("{collection}/{}", target.name);
        let manager = "?fieldManager=rekon-test";
        let created = match self
            .send(
                "POST",
                &format!("{collection}{manager}"),
                Some("application/json"),
                object.to_string().into_bytes(),
            )
            .await
        {
            Err(error) if error.code == 409 && error.reason == "AlreadyExists" => {
                let current = self
                    .get_json(&path)
                    .await
                    .map_err(|e| anyhow!("{}", e.message))?;
                object["metadata"]["resourceVersion"] =
                    current["metadata"]["resourceVersion"].clone();
                self.send(
                    "PUT",
                    &format!("{path}{manager}"),
                    Some("application/json"),
                    object.to_string().into_bytes(),
                )
                .await
            }
            other => other,
        }
        .map_err(|e| anyhow!("{}", e.message))?;
        let mut stored: Value = serde_json::from_str(&created)?;
        if target.kind.kind == "CustomResourceDefinition" {
            self.wait_established(&stored).await?;
        }
        if served.status
            && let Some(status) = object.get("status").filter(|s| !s.is_null())
        {
            let answer = self
                .send(
                    "PATCH",
                    &format!("{path}/status{manager}"),
                    Some("application/merge-patch+json"),
                    json!({"status": status}).to_string().into_bytes(),
                )
                .await
                .map_err(|e| anyhow!("cannot write the status: {}", e.message))?;
            stored = serde_json::from_str(&answer)?;
        }
        if deleting {
            self.send("DELETE", &path, None, Vec::new())
                .await
                .map_err(|e| anyhow!("cannot mark it as being deleted: {}", e.message))?;
            stored = match self.get_json(&path).await {
                Ok(now) => now,
                Err(error) if error.code == 404 => Value::Null,
                Err(error) => bail!("{}", error.message),
            };
        }
        Ok(stored)
    }
}
