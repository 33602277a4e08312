//! [`KubeCluster`]: the [`Cluster`] backend of a real (or in-memory) API
//! server: reads from the shared informer caches (or, made
//! [`direct`](KubeCluster::direct), from the API server itself), writes
//! through the API.

use std::sync::Arc;
use std::time::Duration;

use kube::api::{DeleteParams, PostParams, PropagationPolicy};

use super::Cluster;
use super::direct::get_request;
use crate::contract::{
    ApiError, EventType, Gvk, Index, ObjectRef, PatchType, Propagation, api_error, from_kube,
};
use crate::discovery::Discovery;
use crate::events::{EventRecord, Recorder};
use crate::informer::{Informer, Informers};
use crate::names::{Resolved, display_kind};

/// How long a read waits for an informer's first list.
const SYNC_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves host calls from the informer caches and the API server; Events
/// go to the background `Recorder`. (Each module's controller fences its
/// writes by its leadership.)
#[derive(Clone)]
pub struct KubeCluster {
    discovery: Arc<Discovery>,
    reads: Reads,
    /// Writes are server-side dry runs, Events are not recorded.
    dry_run: bool,
}

/// Where reads are served from, and where Events go.
#[derive(Clone)]
enum Reads {
    /// The shared informer caches; Events through the background recorder.
    Cached {
        informers: Arc<Informers>,
        recorder: Recorder,
    },
    /// The API server itself; Events written at once.
    Direct,
}

impl std::fmt::Debug for KubeCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeCluster")
            .field("direct", &matches!(self.reads, Reads::Direct))
            .field("dry_run", &self.dry_run)
            .finish_non_exhaustive()
    }
}

impl KubeCluster {
    /// A cluster that reads straight from the API server (no informer
    /// cache: a read sees the last write at once) and writes each Event at
    /// once, for a tool that runs one reconcile at a time against a
    /// cluster (`rekon test` on a real API server).
    pub fn direct(client: kube::Client) -> KubeCluster {
        KubeCluster {
            discovery: Arc::new(Discovery::new(client)),
            reads: Reads::Direct,
            dry_run: false,
        }
    }

    pub(crate) fn new(
        discovery: Arc<Discovery>,
        informers: Arc<Informers>,
        recorder: Recorder,
    ) -> KubeCluster {
        // Informers started for guests' reads go once idle, read or not.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let weak = Arc::downgrade(&informers);
            runtime.spawn(async move {
                loop {
                    tokio::time::sleep(crate::informer::READ_IDLE / 5).await;
                    match weak.upgrade() {
                        Some(informers) => informers.release_idle_reads(),
                        None => return,
                    }
                }
            });
        }
        KubeCluster {
            discovery,
            reads: Reads::Cached {
                informers,
                recorder,
            },
            dry_run: false,
        }
    }

    /// The informer serving a read of `kind` in `namespace` (all with
    /// none), synced.
    async fn informer(
        informers: &Informers,
        kind: &Gvk,
        namespace: Option<&str>,
    ) -> Result<Arc<Informer>, ApiError> {
        let informer = informers
            .for_read(kind, namespace)
            .await
            .map_err(|e| api_error(404, "NotFound", &format!("{e}")))?;
        if !informer.is_ready()
            && tokio::time::timeout(SYNC_TIMEOUT, informer.wait_ready())
                .await
                .is_err()
        {
            return Err(api_error(
                504,
                "Timeout",
                &format!("the cache of {} has not synced yet", display_kind(kind)),
            ));
        }
        Ok(informer)
    }

    pub(super) async fn resolve(&self, kind: &Gvk) -> Result<Resolved, ApiError> {
        self.discovery
            .resolve(kind)
            .await
            .map_err(|e| api_error(404, "NotFound", &format!("{e}")))
    }

    pub(super) async fn send(&self, request: http::Request<Vec<u8>>) -> Result<String, ApiError> {
        self.discovery
            .client()
            .request_text(request)
            .await
            .map_err(from_kube)
    }

    /// Sends a write; its answer is noted as ours (the informers' change
    /// that only echoes it is told apart).
    async fn write(&self, request: http::Request<Vec<u8>>) -> Result<String, ApiError> {
        let answer = self.send(request).await?;
        if let Reads::Cached { informers, .. } = &self.reads
            && !self.dry_run
        {
            informers.own_writes().note_answer(&answer);
        }
        Ok(answer)
    }
}

/// `text` escaped for a URL query value.
pub(crate) fn query_value(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn build(
    result: Result<http::Request<Vec<u8>>, kube::core::request::Error>,
) -> Result<http::Request<Vec<u8>>, ApiError> {
    result.map_err(|e| api_error(400, "BadRequest", &e.to_string()))
}

fn post_params(field_manager: &str, dry_run: bool) -> PostParams {
    PostParams {
        dry_run,
        field_manager: Some(field_manager.to_string()),
    }
}

#[async_trait::async_trait]
impl Cluster for KubeCluster {
    async fn get(&self, target: &ObjectRef) -> Result<String, ApiError> {
        let Reads::Cached { informers, .. } = &self.reads else {
            let resolved = self.resolve(&target.kind).await?;
            let url = format!(
                "{}/{}",
                resolved.url_path(target.namespace.as_deref()),
                target.name
            );
            return self.send(get_request(url)?).await;
        };
        let informer = Self::informer(informers, &target.kind, target.namespace.as_deref()).await?;
        let namespace = target
            .namespace
            .as_deref()
            .filter(|_| informer.resolved.namespaced);
        informer
            .get(namespace, &target.name)
            .map(|o| o.json.to_string())
            .ok_or_else(|| {
                let plural = informer.resolved.qualified_plural();
                api_error(
                    404,
                    "NotFound",
                    &format!("{plural} \"{}\" not found", target.name),
                )
            })
    }

    async fn list_by_index(
        &self,
        index: &Index,
        value: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<String>, ApiError> {
        let Reads::Cached { informers, .. } = &self.reads else {
            let mut found = Vec::new();
            for text in self.list(&index.kind, namespace, None).await? {
                let object: serde_json::Value = serde_json::from_str(&text)
                    .map_err(|e| api_error(500, "InternalError", &e.to_string()))?;
                if crate::informer::index::keys(&object, &index.key)
                    .iter()
                    .any(|k| k == value)
                {
                    found.push(text);
                }
            }
            return Ok(found);
        };
        let informer = Self::informer(informers, &index.kind, namespace).await?;
        let namespace = namespace.filter(|_| informer.resolved.namespaced);
        let spec = crate::informer::index::spec(&index.key);
        Ok(informer
            .by_index(&spec, value, namespace)
            .iter()
            .map(|o| o.json.to_string())
            .collect())
    }

    async fn list(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<String>, ApiError> {
        let selector = label_selector
            .map(rekon_rules::LabelSelector::parse)
            .transpose()
            .map_err(|e| api_error(400, "BadRequest", &e.0))?;
        let Reads::Cached { informers, .. } = &self.reads else {
            return self.list_direct(kind, namespace, label_selector).await;
        };
        let informer = Self::informer(informers, kind, namespace).await?;
        let namespace = namespace.filter(|_| informer.resolved.namespaced);
        Ok(informer
            .list(namespace)
            .into_iter()
            .filter(|o| {
                selector
                    .as_ref()
                    .is_none_or(|s| s.matches_with(|key| o.label(key)))
            })
            .map(|o| o.json.to_string())
            .collect())
    }

    async fn create(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        object: &str,
        field_manager: &str,
    ) -> Result<String, ApiError> {
        let resolved = self.resolve(kind).await?;
        let request = kube::core::Request::new(resolved.url_path(namespace));
        self.write(build(request.create(
            &post_params(field_manager, self.dry_run),
            object.as_bytes().to_vec(),
        ))?)
        .await
    }

    async fn replace(
        &self,
        target: &ObjectRef,
        object: &str,
        status: bool,
        field_manager: &str,
    ) -> Result<String, ApiError> {
        let resolved = self.resolve(&target.kind).await?;
        let request = kube::core::Request::new(resolved.url_path(target.namespace.as_deref()));
        let params = post_params(field_manager, self.dry_run);
        let body = object.as_bytes().to_vec();
        let http = if status {
            request.replace_subresource("status", &target.name, &params, body)
        } else {
            request.replace(&target.name, &params, body)
        };
        self.write(build(http)?).await
    }

    async fn patch(
        &self,
        target: &ObjectRef,
        patch_type: &PatchType,
        body: &str,
        status: bool,
        field_manager: &str,
    ) -> Result<String, ApiError> {
        let resolved = self.resolve(&target.kind).await?;
        // The body goes as the guest wrote it: the API server reads an
        // apply body as YAML, and answers for a malformed patch itself.
        let (content_type, manager, force) = super::patch_request(patch_type, field_manager);
        let mut url = format!(
            "{}/{}{}?fieldManager={}",
            resolved.url_path(target.namespace.as_deref()),
            target.name,
            if status { "/status" } else { "" },
            query_value(manager),
        );
        if force {
            url.push_str("&force=true");
        }
        if self.dry_run {
            url.push_str("&dryRun=All");
        }
        let request = http::Request::patch(url)
            .header(http::header::CONTENT_TYPE, content_type)
            .body(body.as_bytes().to_vec())
            .map_err(|e| api_error(400, "BadRequest", &e.to_string()))?;
        self.write(request).await
    }

    async fn delete(
        &self,
        target: &ObjectRef,
        propagation: Option<Propagation>,
    ) -> Result<(), ApiError> {
        let resolved = self.resolve(&target.kind).await?;
        let request = kube::core::Request::new(resolved.url_path(target.namespace.as_deref()));
        let params = DeleteParams {
            propagation_policy: propagation.map(|p| match p {
                Propagation::Background => PropagationPolicy::Background,
                Propagation::Foreground => PropagationPolicy::Foreground,
                Propagation::Orphan => PropagationPolicy::Orphan,
            }),
            dry_run: self.dry_run,
            ..DeleteParams::default()
        };
        self.send(build(request.delete(&target.name, &params))?)
            .await
            .map(|_| ())
    }

    fn dry_run(&self) -> Option<Arc<dyn Cluster>> {
        Some(Arc::new(KubeCluster {
            dry_run: true,
            ..self.clone()
        }))
    }

    async fn record_event(
        &self,
        regarding: &ObjectRef,
        event_type: EventType,
        reason: &str,
        message: &str,
        component: &str,
    ) -> Result<(), ApiError> {
        if self.dry_run {
            return Ok(());
        }
        let Reads::Cached {
            informers,
            recorder,
        } = &self.reads
        else {
            return self
                .record_event_now(regarding, event_type, reason, message, component)
                .await;
        };
        let uid = informers
            .cached(
                &regarding.kind,
                regarding.namespace.as_deref(),
                &regarding.name,
            )
            .map(|c| c.uid().to_string());
        recorder.record(EventRecord {
            regarding: regarding.clone(),
            uid,
            event_type,
            reason: reason.to_string(),
            message: message.to_string(),
            component: component.to_string(),
        });
        Ok(())
    }
}
