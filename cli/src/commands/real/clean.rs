//! Cleaning up after a case on a real API server: what the case made is
//! taken away (finalizers removed first), what was there at start stays.

use std::collections::{BTreeSet, HashSet};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use serde_json::{Value, json};

use super::direct::{Direct, GONE, SYSTEM_NAMESPACES, base_path, gvk_of};

impl Direct {
    /// Remembers every object the server holds now (its uid), so that
    /// cleaning up after a case leaves them.
    pub(in crate::commands) async fn remember_what_is_there(&self) -> anyhow::Result<()> {
        let mut group_versions = vec!["v1".to_string()];
        let groups = self
            .get_json("/apis")
            .await
            .map_err(|e| anyhow!("discovery: {}", e.message))?;
        for group in groups["groups"].as_array().into_iter().flatten() {
            for version in group["versions"].as_array().into_iter().flatten() {
                if let Some(gv) = version["groupVersion"].as_str() {
                    group_versions.push(gv.to_string());
                }
            }
        }
        let mut uids = HashSet::new();
        for gv in group_versions {
            let Ok(list) = self.get_json(&base_path(&gv)).await else {
                continue;
            };
            for r in list["resources"].as_array().into_iter().flatten() {
                let name = r["name"].as_str().unwrap_or_default();
                let listable = r["verbs"]
                    .as_array()
                    .is_some_and(|v| v.iter().any(|v| v == "list"));
                if name.contains('/') || !listable {
                    continue;
                }
                let Ok(items) = self.get_json(&format!("{}/{name}", base_path(&gv))).await else {
                    continue;
                };
                for item in items["items"].as_array().into_iter().flatten() {
                    if let Some(uid) = item["metadata"]["uid"].as_str() {
                        uids.insert(uid.to_string());
                    }
                }
            }
        }
        self.keep.lock().expect("keep lock").extend(uids);
        Ok(())
    }

    /// Takes away what a case left of the kinds it touched (`apiVersion`,
    /// `kind`): the objects made since the server started (finalizers
    /// removed first), then the namespaces and CRDs made since, so the
    /// next case finds the server as the first one did.
    pub(in crate::commands) async fn clean(
        &self,
        kinds: &BTreeSet<(String, String)>,
    ) -> anyhow::Result<()> {
        let mut kinds = kinds.clone();
        kinds.insert(("v1".to_string(), "Event".to_string()));
        kinds.insert(("events.k8s.io/v1".to_string(), "Event".to_string()));
        let keep = self.keep.lock().expect("keep lock").clone();
        let fresh = |item: &Value| {
            let uid = item["metadata"]["uid"].as_str().unwrap_or_default();
            let namespace = item["metadata"]["namespace"].as_str().unwrap_or_default();
            !keep.contains(uid) && !SYSTEM_NAMESPACES.contains(&namespace)
        };
        let special = ["Namespace", "CustomResourceDefinition"];
        for (api_version, kind) in kinds.iter().filter(|(_, k)| !special.contains(&k.as_str())) {
            let gvk = gvk_of(api_version, kind);
            let Ok(served) = self.resource(&gvk).await else {
                continue;
            };
            let Ok(list) = self.get_json(&Self::path(&gvk, &served, None, None)).await else {
                continue;
            };
            for item in list["items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|i| fresh(i))
            {
                let name = item["metadata"]["name"].as_str().unwrap_or_default();
                let namespace = item["metadata"]["namespace"].as_str();
                let path = Self::path(&gvk, &served, namespace, Some(name));
                self.let_go(&path, item).await;
                let _ = self.send("DELETE", &path, None, Vec::new()).await;
            }
        }
        // The CRDs a case made, and their objects (the server removes
        // them before the CRD goes).
        let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
        if let Ok(list) = self.get_json(crds).await {
            let made: Vec<String> = list["items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|i| fresh(i))
                .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_string))
                .collect();
            for name in &made {
                let _ = self
                    .send("DELETE", &format!("{crds}/{name}"), None, Vec::new())
                    .await;
            }
            for name in &made {
                self.wait_gone(&format!("{crds}/{name}")).await?;
            }
            if !made.is_empty() {
                self.forget();
            }
        }
        // The namespaces a case made: what is left in them, then the
        // namespace itself, finalized at once (which removes it) rather
        // than waiting for the namespace controller, and waited for: the
        // next case may use the same name.
        let mut deleted = Vec::new();
        if let Ok(list) = self.get_json("/api/v1/namespaces").await {
            for namespace in list["items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|i| fresh(i))
            {
                let name = namespace["metadata"]["name"].as_str().unwrap_or_default();
                for collection in ["configmaps", "secrets", "serviceaccounts", "events"] {
                    let _ = self
                        .send(
                            "DELETE",
                            &format!("/api/v1/namespaces/{name}/{collection}"),
                            None,
                            Vec::new(),
                        )
                        .await;
                }
                let path = format!("/api/v1/namespaces/{name}");
                self.let_go(&path, namespace).await;
                let _ = self.send("DELETE", &path, None, Vec::new()).await;
                // The namespace controller writes the namespace's
                // conditions meanwhile: a conflict is tried again.
                for _ in 0..5 {
                    let Ok(mut now) = self.get_json(&path).await else {
                        break;
                    };
                    now["spec"]["finalizers"] = json!([]);
                    let finalized = self
                        .send(
                            "PUT",
                            &format!("{path}/finalize"),
                            Some("application/json"),
                            now.to_string().into_bytes(),
                        )
                        .await;
                    if !matches!(finalized, Err(e) if e.code == 409) {
                        break;
                    }
                }
                deleted.push(path);
            }
        }
        for path in &deleted {
            self.wait_gone(path).await?;
        }
        Ok(())
    }

    /// Waits until the object at `path` is gone, at most [`GONE`].
    pub(super) async fn wait_gone(&self, path: &str) -> anyhow::Result<()> {
        let deadline = Instant::now() + GONE;
        while !matches!(self.get_json(path).await, Err(e) if e.code == 404) {
            if Instant::now() > deadline {
                bail!("{path} is still there after {GONE:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    /// Removes the finalizers of the object at `path`, if it has any.
    async fn let_go(&self, path: &str, item: &Value) {
        let held = item["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty());
        if held {
            let _ = self
                .send(
                    "PATCH",
                    path,
                    Some("application/merge-patch+json"),
                    br#"{"metadata":{"finalizers":null}}"#.to_vec(),
                )
                .await;
        }
    }
}
