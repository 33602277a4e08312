//! [`KubeCluster`]: the [`Cluster`] backend of a real (or in-memory) API
//! server: reads from the shared informer caches, writes through the API.

use std::sync::Arc;
use std::time::Duration;

use kube::api::{DeleteParams, PostParams, PropagationPolicy};

use super::Cluster;
use super::events::{EventRecord, Recorder};
use crate::contract::{
    ApiError, EventType, Gvk, Index, ObjectRef, PatchType, Propagation, api_error,
};
use crate::discovery::Discovery;
use crate::informer::{Informer, Informers};
use crate::shared::{Resolved, display_kind};

/// How long a read waits for an informer's first list.
const SYNC_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves host calls from the informer caches and the API server; Events
/// go to the background [`Recorder`]. (Each module's controller fences its
/// writes by its leadership.)
pub(crate) struct KubeCluster {
    discovery: Arc<Discovery>,
    informers: Arc<Informers>,
    recorder: Recorder,
    /// Writes are server-side dry runs, Events are not recorded.
    dry_run: bool,
}

impl KubeCluster {
    pub fn new(
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
            informers,
            recorder,
            dry_run: false,
        }
    }

    /// The informer serving a read of `kind` in `namespace` (all with
    /// none), synced.
    async fn informer(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
    ) -> Result<Arc<Informer>, ApiError> {
        let informer = self
            .informers
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

    async fn resolve(&self, kind: &Gvk) -> Result<Resolved, ApiError> {
        self.discovery
            .resolve(kind)
            .await
            .map_err(|e| api_error(404, "NotFound", &format!("{e}")))
    }

    async fn send(&self, request: http::Request<Vec<u8>>) -> Result<String, ApiError> {
        self.discovery
            .client()
            .request_text(request)
            .await
            .map_err(from_kube)
    }
}

/// A kube client error as the guest sees it.
pub fn from_kube(error: kube::Error) -> ApiError {
    match error {
        kube::Error::Api(status) => api_error(
            status.code,
            if status.reason.is_empty() {
                "Unknown"
            } else {
                &status.reason
            },
            &status.message,
        ),
        kube::Error::BuildRequest(e) => api_error(400, "BadRequest", &e.to_string()),
        kube::Error::SerdeError(e) => api_error(400, "BadRequest", &e.to_string()),
        other => api_error(
            503,
            "ServiceUnavailable",
            &format!("the API server cannot be reached: {other}"),
        ),
    }
}

/// `text` escaped for a URL query value.
pub fn query_value(text: &str) -> String {
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
        let informer = self
            .informer(&target.kind, target.namespace.as_deref())
            .await?;
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
        let informer = self.informer(&index.kind, namespace).await?;
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
        let informer = self.informer(kind, namespace).await?;
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
        self.send(build(request.create(
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
        self.send(build(http)?).await
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
        self.send(request).await
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
            discovery: self.discovery.clone(),
            informers: self.informers.clone(),
            recorder: self.recorder.clone(),
            dry_run: true,
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
        let uid = self
            .informers
            .cached(
                &regarding.kind,
                regarding.namespace.as_deref(),
                &regarding.name,
            )
            .map(|c| c.uid().to_string());
        self.recorder.record(EventRecord {
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
