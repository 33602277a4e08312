//! The same `app` reconciler, compiled natively, behind the host's queue
//! and host calls: the SDK's calls go to the host's `Cluster` backend.

use std::rc::Rc;
use std::sync::Arc;

use rekon_host::bench::NativeReconciler;
use rekon_host::contract as host;
use rekon_sdk as sdk;
use rekon_sdk::Reconciler as _;

const FIELD_MANAGER: &str = "rekon-app";

pub fn app() -> NativeReconciler {
    NativeReconciler::new(
        manifest(app::AppReconciler::manifest()),
        |cluster, request| {
            let runtime = tokio::runtime::Handle::current();
            async move {
                // The SDK's calls are synchronous: run the reconcile on a
                // blocking thread, each call waiting on the runtime.
                let result = tokio::task::spawn_blocking(move || {
                    let bridge: Rc<dyn sdk::testing::Backend> =
                        Rc::new(Bridge { cluster, runtime });
                    sdk::testing::with_backend(bridge, || {
                        app::AppReconciler::reconcile(sdk_request(request))
                    })
                })
                .await
                .map_err(|e| host::GuestError {
                    message: format!("the native reconcile panicked: {e}"),
                    retry: true,
                })?;
                match result {
                    Ok(sdk::Action::Done) => Ok(host::Action::Done),
                    Ok(sdk::Action::RequeueAfter(ms)) => Ok(host::Action::RequeueAfter(ms)),
                    Err(e) => Err(host::GuestError {
                        message: e.message,
                        retry: e.retry,
                    }),
                }
            }
        },
    )
}

struct Bridge {
    cluster: Arc<dyn rekon_host::Cluster>,
    runtime: tokio::runtime::Handle,
}

fn api_error(e: host::ApiError) -> sdk::ApiError {
    sdk::ApiError::new(e.code, e.reason, e.message)
}

fn gvk(g: &sdk::Gvk) -> host::Gvk {
    host::Gvk {
        group: g.group.clone(),
        version: g.version.clone(),
        kind: g.kind.clone(),
    }
}

fn object_ref(r: &sdk::ObjectRef) -> host::ObjectRef {
    host::ObjectRef {
        kind: gvk(&r.kind),
        namespace: r.namespace.clone(),
        name: r.name.clone(),
    }
}

fn sdk_request(r: host::Request) -> sdk::Request {
    let k = r.target.kind;
    sdk::Request {
        target: sdk::ObjectRef {
            kind: sdk::Gvk::new(k.group, k.version, k.kind),
            namespace: r.target.namespace,
            name: r.target.name,
        },
        object: r.object,
        reason: match r.reason {
            host::Reason::Added => sdk::Reason::Added,
            host::Reason::Updated => sdk::Reason::Updated,
            host::Reason::Deleted => sdk::Reason::Deleted,
            host::Reason::Finalizing => sdk::Reason::Finalizing,
            host::Reason::OwnedChanged => sdk::Reason::OwnedChanged,
            host::Reason::WatchedChanged => sdk::Reason::WatchedChanged,
            host::Reason::Requeued => sdk::Reason::Requeued,
            host::Reason::Retry => sdk::Reason::Retry,
            host::Reason::Resync => sdk::Reason::Resync,
            host::Reason::ModuleReloaded => sdk::Reason::ModuleReloaded,
            host::Reason::Manual => sdk::Reason::Manual,
        },
        attempt: r.attempt,
    }
}

fn verbs(v: sdk::Verbs) -> host::Verbs {
    [
        (sdk::Verbs::GET, host::Verbs::GET),
        (sdk::Verbs::LIST, host::Verbs::LIST),
        (sdk::Verbs::WATCH, host::Verbs::WATCH),
        (sdk::Verbs::CREATE, host::Verbs::CREATE),
        (sdk::Verbs::UPDATE, host::Verbs::UPDATE),
        (sdk::Verbs::PATCH, host::Verbs::PATCH),
        (sdk::Verbs::DELETE, host::Verbs::DELETE),
    ]
    .into_iter()
    .filter(|(s, _)| v.contains(*s))
    .fold(host::Verbs::empty(), |all, (_, h)| all | h)
}

fn predicates(p: &[sdk::Predicate]) -> Vec<host::Predicate> {
    p.iter()
        .map(|p| match p {
            sdk::Predicate::GenerationChanged => host::Predicate::GenerationChanged,
            sdk::Predicate::LabelsChanged => host::Predicate::LabelsChanged,
            sdk::Predicate::AnnotationsChanged => host::Predicate::AnnotationsChanged,
            sdk::Predicate::ResourceVersionChanged => host::Predicate::ResourceVersionChanged,
        })
        .collect()
}

fn manifest(m: sdk::Manifest) -> host::Manifest {
    host::Manifest {
        name: m.name,
        version: m.version,
        primary: gvk(&m.primary),
        owns: m
            .owns
            .iter()
            .map(|o| host::Owned {
                kind: gvk(&o.kind),
                predicates: predicates(&o.predicates),
            })
            .collect(),
        watches: m
            .watches
            .iter()
            .map(|w| host::Watch {
                kind: gvk(&w.kind),
                mapping: match &w.mapping {
                    sdk::Mapping::OwnerReference => host::Mapping::OwnerReference,
                    sdk::Mapping::Label(key) => host::Mapping::Label(key.clone()),
                    sdk::Mapping::SameName => host::Mapping::SameName,
                    sdk::Mapping::AllPrimaries => host::Mapping::AllPrimaries,
                },
                label_selector: w.label_selector.clone(),
                predicates: predicates(&w.predicates),
            })
            .collect(),
        finalizer: m.finalizer,
        permissions: m
            .permissions
            .iter()
            .map(|p| host::Permission {
                kind: gvk(&p.kind),
                verbs: verbs(p.verbs),
                namespaces: p.namespaces.clone(),
            })
            .collect(),
        max_concurrency: m.max_concurrency,
        timeout_ms: m.timeout_ms,
        primary_selector: m.primary_selector,
        primary_namespaces: m.primary_namespaces,
        primary_predicates: predicates(&m.primary_predicates),
        resync_period_ms: m.resync_period_ms,
        indexes: m
            .indexes
            .iter()
            .map(|i| host::Index {
                name: i.name.clone(),
                kind: gvk(&i.kind),
                key: match &i.key {
                    sdk::IndexKey::Field(path) => host::IndexKey::Field(path.clone()),
                    sdk::IndexKey::Label(key) => host::IndexKey::Label(key.clone()),
                },
            })
            .collect(),
    }
}

impl sdk::testing::Backend for Bridge {
    fn get(&self, target: &sdk::ObjectRef) -> Result<String, sdk::ApiError> {
        self.runtime
            .block_on(self.cluster.get(&object_ref(target)))
            .map_err(api_error)
    }

    fn list(
        &self,
        kind: &sdk::Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<String>, sdk::ApiError> {
        self.runtime
            .block_on(self.cluster.list(&gvk(kind), namespace, label_selector))
            .map_err(api_error)
    }

    fn create(
        &self,
        kind: &sdk::Gvk,
        namespace: Option<&str>,
        object: &str,
    ) -> Result<String, sdk::ApiError> {
        self.runtime
            .block_on(
                self.cluster
                    .create(&gvk(kind), namespace, object, FIELD_MANAGER),
            )
            .map_err(api_error)
    }

    fn replace(
        &self,
        target: &sdk::ObjectRef,
        object: &str,
        status: bool,
    ) -> Result<String, sdk::ApiError> {
        self.runtime
            .block_on(
                self.cluster
                    .replace(&object_ref(target), object, status, FIELD_MANAGER),
            )
            .map_err(api_error)
    }

    fn patch(
        &self,
        target: &sdk::ObjectRef,
        patch_type: &sdk::PatchType,
        body: &str,
        status: bool,
    ) -> Result<String, sdk::ApiError> {
        let patch_type = match patch_type {
            sdk::PatchType::Merge => host::PatchType::Merge,
            sdk::PatchType::Json => host::PatchType::Json,
            sdk::PatchType::Apply {
                field_manager,
                force,
            } => host::PatchType::Apply(host::ApplyOptions {
                field_manager: field_manager.clone(),
                force: *force,
            }),
        };
        self.runtime
            .block_on(self.cluster.patch(
                &object_ref(target),
                &patch_type,
                body,
                status,
                FIELD_MANAGER,
            ))
            .map_err(api_error)
    }

    fn delete(
        &self,
        target: &sdk::ObjectRef,
        propagation: Option<sdk::Propagation>,
    ) -> Result<(), sdk::ApiError> {
        let propagation = propagation.map(|p| match p {
            sdk::Propagation::Background => host::Propagation::Background,
            sdk::Propagation::Foreground => host::Propagation::Foreground,
            sdk::Propagation::Orphan => host::Propagation::Orphan,
        });
        self.runtime
            .block_on(self.cluster.delete(&object_ref(target), propagation))
            .map_err(api_error)
    }

    fn record_event(
        &self,
        regarding: &sdk::ObjectRef,
        event_type: sdk::EventType,
        reason: &str,
        message: &str,
    ) -> Result<(), sdk::ApiError> {
        let event_type = match event_type {
            sdk::EventType::Normal => host::EventType::Normal,
            sdk::EventType::Warning => host::EventType::Warning,
        };
        self.runtime
            .block_on(self.cluster.record_event(
                &object_ref(regarding),
                event_type,
                reason,
                message,
                FIELD_MANAGER,
            ))
            .map_err(api_error)
    }

    fn log(&self, level: sdk::Level, message: &str, fields: &[(String, String)]) {
        let fields = format!("{fields:?}");
        match level {
            sdk::Level::Trace => tracing::trace!(target: "rekon::guest", %fields, "{message}"),
            sdk::Level::Debug => tracing::debug!(target: "rekon::guest", %fields, "{message}"),
            sdk::Level::Info => tracing::info!(target: "rekon::guest", %fields, "{message}"),
            sdk::Level::Warn => tracing::warn!(target: "rekon::guest", %fields, "{message}"),
            sdk::Level::Error => tracing::error!(target: "rekon::guest", %fields, "{message}"),
        }
    }
}
