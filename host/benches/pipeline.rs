//! `cargo bench --bench pipeline`: the whole controller pipeline — shared
//! informers, the work queue, dispatch, host calls over HTTP — against the
//! in-memory API server, with the `app` module, next to the same pipeline
//! running the same reconciler compiled natively; then what the informer
//! cache costs in memory. Prints one JSON object per line:
//! `{"bench":"pipeline","metric":...,"value":...,"unit":...}`.
//!
//! Run without `--bench` (as `cargo test --all-targets` does) it makes one
//! quick pass with small numbers, to check it still works.
//!
//! - `wasm_reconciles_per_s`, `native_reconciles_per_s`: N Apps are created
//!   in the server's store, then a `Host` starts in this process (a kube
//!   client from the server's kubeconfig); the figure is N divided by the
//!   time from the host's start to the moment every App's status shows
//!   its generation as `observedGeneration` (counted from a store watch,
//!   looked at every 50 ms). Each App takes several reconciles (its own
//!   events and those of the Deployment and Service it owns): the figure
//!   counts Apps brought in line, not guest calls. Both pipelines run
//!   against a fresh server, with the same concurrency.
//! - `queue_latency_p50_ms`, `queue_latency_p99_ms` (wasm pipeline): from a
//!   key becoming due to its reconcile starting, over every reconcile of the
//!   run. The N Apps arrive at once, so this is mostly time spent behind the
//!   backlog.
//! - `host_rss_mb`: resident memory of this process after the wasm pipeline
//!   minus before the host started (the server and its N Apps were already
//!   there); it includes what the in-process server grew by (the N
//!   Deployments and Services the host created, status writes, history).
//! - `cache_rss_over_json`: a child process (this binary again) runs the API
//!   server with M ConfigMaps of about 1 KB; this process syncs one informer
//!   on them; its growth in resident memory during the sync, divided by the
//!   size of the ConfigMaps' JSON as the server lists them.

use std::collections::HashSet;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Command, Stdio};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rekon_apiserver::{ApiServer, ListOptions, Store, WriteOptions};
use rekon_host::{EngineConfig, Host, NativeReconciler, SyncedInformer};
use rekon_sdk::Reconciler as _;
use serde_json::{Value, json};

/// Set in the environment of the child that serves the ConfigMaps:
/// `<count>:<kubeconfig path>`.
const SERVE_ENV: &str = "REKON_PIPELINE_BENCH_APISERVER";

fn emit(metric: &str, value: f64, unit: &str) {
    println!(
        "{}",
        json!({ "bench": "pipeline", "metric": metric, "value": (value * 1000.0).round() / 1000.0, "unit": unit })
    );
}

/// Resident memory of this process, MiB (`/proc/self/statm`).
fn rss_mb() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0.0);
    pages * 4096.0 / (1024.0 * 1024.0)
}

async fn client_for(kubeconfig: &str) -> kube::Client {
    let kubeconfig = kube::config::Kubeconfig::from_yaml(kubeconfig).expect("a valid kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .expect("a client configuration");
    kube::Client::try_from(config).expect("a kube client")
}

fn apply_file(store: &Store, path: &str) {
    let text = std::fs::read_to_string(path).expect("the CRD manifest");
    for document in serde_yaml::Deserializer::from_str(&text) {
        let value: Value = serde::Deserialize::deserialize(document).expect("YAML");
        if !value.is_null() {
            store.apply_object(value).expect("applying the CRD");
        }
    }
}

fn app(index: usize) -> Value {
    json!({
        "apiVersion": "demo.rekon.dev/v1", "kind": "App",
        "metadata": { "name": format!("app-{index:05}"), "namespace": "default",
            "labels": { "app.kubernetes.io/part-of": "bench" } },
        "spec": { "image": "registry.example/shop/web:1.27.3", "replicas": 2, "port": 8080 },
    })
}

/// Whether an App's status describes its current generation.
fn observed(app: &Value) -> bool {
    let generation = &app["metadata"]["generation"];
    !generation.is_null() && app["status"]["observedGeneration"] == *generation
}

struct Run {
    per_second: f64,
    seconds: f64,
    rss_mb: f64,
    queue_p50_ms: f64,
    queue_p99_ms: f64,
}

#[derive(Clone, Copy, PartialEq)]
enum Logic {
    Wasm,
    Native,
}

/// Runs the pipeline once against a fresh server.
async fn pipeline(logic: Logic, apps: usize, concurrency: usize, deadline: Duration) -> Run {
    let server = ApiServer::builder()
        .start()
        .await
        .expect("the API server starts");
    let store = server.store();
    apply_file(
        &store,
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../guests/app/manifests/crd.yaml"
        ),
    );
    let resource = store
        .resource_for_kind("demo.rekon.dev", "v1", "App")
        .expect("the CRD serves App");
    let done = Arc::new(Mutex::new(HashSet::new()));
    {
        let done = done.clone();
        store
            .watch(
                &resource,
                &ListOptions::default(),
                None,
                Box::new(move |event| {
                    if observed(&event.object)
                        && let Some(name) = event.object["metadata"]["name"].as_str()
                    {
                        done.lock().expect("done lock").insert(name.to_string());
                    }
                    true
                }),
            )
            .expect("watching Apps");
    }
    let writes = WriteOptions {
        field_manager: Some("bench".to_string()),
        ..WriteOptions::default()
    };
    for index in 0..apps {
        store
            .create(&resource, Some("default"), app(index), &writes)
            .expect("creating an App");
    }
    let client = client_for(&server.kubeconfig()).await;
    let cache = tempfile::tempdir().expect("a cache directory");
    let builder = Host::builder()
        .client(client)
        .concurrency(concurrency)
        .engine_config(EngineConfig::default().cache_dir(Some(cache.path().to_path_buf())));
    let builder = match logic {
        Logic::Wasm => builder.module(
            "app.wasm",
            std::fs::read(rekon_test_artifacts::APP).expect("the app guest is built"),
        ),
        Logic::Native => builder.native(native::app()),
    };
    let baseline = rss_mb();
    let host = builder.start().await.expect("the host starts");
    assert!(host.failures().is_empty(), "{:?}", host.failures());
    let started = Instant::now();
    loop {
        let count = done.lock().expect("done lock").len();
        if count >= apps {
            break;
        }
        assert!(
            started.elapsed() < deadline,
            "only {count} of {apps} Apps reconciled after {deadline:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let rss = rss_mb() - baseline;
    let ms = |q| {
        host.stats()
            .queue_latency_quantile(q)
            .map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
    };
    let run = Run {
        per_second: apps as f64 / elapsed,
        seconds: elapsed,
        rss_mb: rss,
        queue_p50_ms: ms(0.5),
        queue_p99_ms: ms(0.99),
    };
    host.shutdown().await;
    server.shutdown().await;
    run
}

/// The same `app` reconciler, compiled natively, behind the host's queue
/// and host calls: the SDK's calls go to the host's `Cluster` backend.
mod native {
    use super::*;
    use rekon_host as host;
    use rekon_sdk as sdk;

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
        cluster: Arc<dyn host::Cluster>,
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

    fn manifest(m: sdk::Manifest) -> host::Manifest {
        host::Manifest {
            name: m.name,
            version: m.version,
            primary: gvk(&m.primary),
            owns: m.owns.iter().map(gvk).collect(),
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
}

/// A ConfigMap of about 1 KB of JSON as the server lists it.
fn config_map(index: usize) -> Value {
    let data: serde_json::Map<String, Value> = (0..6)
        .map(|k| {
            (
                format!("setting-{k}.properties"),
                json!(format!("key{k}={}", "v".repeat(64))),
            )
        })
        .collect();
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": { "name": format!("settings-{index:05}"), "namespace": "default",
            "labels": { "app.kubernetes.io/name": "shop", "app.kubernetes.io/part-of": "bench" } },
        "data": data,
    })
}

/// The child: an API server with `count` ConfigMaps, until stdin closes.
fn serve(spec: &str) {
    let (count, kubeconfig) = spec.split_once(':').expect("<count>:<kubeconfig path>");
    let count: usize = count.parse().expect("a ConfigMap count");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let server = ApiServer::builder()
            .start()
            .await
            .expect("the API server starts");
        let store = server.store();
        let resource = store
            .resource_for_kind("", "v1", "ConfigMap")
            .expect("ConfigMaps are served");
        let writes = WriteOptions {
            field_manager: Some("bench".to_string()),
            ..WriteOptions::default()
        };
        for index in 0..count {
            store
                .create(&resource, Some("default"), config_map(index), &writes)
                .expect("creating a ConfigMap");
        }
        server
            .write_kubeconfig(kubeconfig)
            .expect("writing the kubeconfig");
        println!("ready");
        std::io::stdout().flush().expect("stdout");
        tokio::task::spawn_blocking(|| {
            let _ = std::io::stdin().read_to_end(&mut Vec::new());
        })
        .await
        .expect("waiting for stdin to close");
        server.shutdown().await;
    });
}

struct CacheCost {
    rss_mb: f64,
    listed_json_mb: f64,
    cached_json_mb: f64,
}

/// Syncs an informer on `count` ConfigMaps served by a child process.
fn cache_cost(runtime: &tokio::runtime::Runtime, count: usize) -> CacheCost {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kubeconfig = dir.path().join("kubeconfig");
    let mut child = Command::new(std::env::current_exe().expect("this executable"))
        .env(
            SERVE_ENV,
            format!("{count}:{}", kubeconfig.to_str().expect("a UTF-8 path")),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("starting the API server process");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("the child's stdout"))
        .read_line(&mut line)
        .expect("reading the child's stdout");
    assert_eq!(line.trim(), "ready", "the API server process did not start");
    let kubeconfig = std::fs::read_to_string(&kubeconfig).expect("the kubeconfig");
    let cost = runtime.block_on(async {
        let client = client_for(&kubeconfig).await;
        // Warm the client, discovery and the informer code on a small kind,
        // so the measure is the cache and not the first use of the stack.
        let namespaces = rekon_host::Gvk {
            group: String::new(),
            version: "v1".into(),
            kind: "Namespace".into(),
        };
        let warm = SyncedInformer::start(client.clone(), &namespaces)
            .await
            .expect("syncing Namespaces");
        let config_maps = rekon_host::Gvk {
            group: String::new(),
            version: "v1".into(),
            kind: "ConfigMap".into(),
        };
        let before = rss_mb();
        let informer = SyncedInformer::start(client.clone(), &config_maps)
            .await
            .expect("syncing ConfigMaps");
        let rss = rss_mb() - before;
        assert_eq!(informer.len(), count);
        let cached = informer.json_bytes();
        let request = http::Request::get("/api/v1/configmaps")
            .body(Vec::new())
            .expect("a list request");
        let list: Value = serde_json::from_str(
            &client
                .request_text(request)
                .await
                .expect("listing ConfigMaps"),
        )
        .expect("a JSON list");
        let listed: usize = list["items"]
            .as_array()
            .expect("a list of items")
            .iter()
            .map(|item| item.to_string().len())
            .sum();
        drop((warm, informer));
        CacheCost {
            rss_mb: rss,
            listed_json_mb: listed as f64 / (1024.0 * 1024.0),
            cached_json_mb: cached as f64 / (1024.0 * 1024.0),
        }
    });
    drop(child.stdin.take());
    let _ = child.wait();
    cost
}

fn main() {
    if let Ok(spec) = std::env::var(SERVE_ENV) {
        serve(&spec);
        return;
    }
    let full = std::env::args().any(|a| a == "--bench");
    let (apps, config_maps, deadline) = if full {
        (10_000, 10_000, Duration::from_secs(600))
    } else {
        (20, 50, Duration::from_secs(60))
    };
    let concurrency = 16;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");

    let wasm = runtime.block_on(pipeline(Logic::Wasm, apps, concurrency, deadline));
    let native = runtime.block_on(pipeline(Logic::Native, apps, concurrency, deadline));
    emit("apps", apps as f64, "count");
    emit("concurrency", concurrency as f64, "count");
    emit("wasm_seconds", wasm.seconds, "s");
    emit("native_seconds", native.seconds, "s");
    emit("wasm_reconciles_per_s", wasm.per_second, "1/s");
    emit("native_reconciles_per_s", native.per_second, "1/s");
    emit(
        "wasm_over_native",
        wasm.per_second / native.per_second,
        "ratio",
    );
    emit("queue_latency_p50_ms", wasm.queue_p50_ms, "ms");
    emit("queue_latency_p99_ms", wasm.queue_p99_ms, "ms");
    emit("native_queue_latency_p50_ms", native.queue_p50_ms, "ms");
    emit("native_queue_latency_p99_ms", native.queue_p99_ms, "ms");
    emit("host_rss_mb", wasm.rss_mb, "MiB");

    let cache = cache_cost(&runtime, config_maps);
    emit("config_maps", config_maps as f64, "count");
    emit("cache_rss_mb", cache.rss_mb, "MiB");
    emit("listed_json_mb", cache.listed_json_mb, "MiB");
    emit("cached_json_mb", cache.cached_json_mb, "MiB");
    emit(
        "cache_rss_over_json",
        cache.rss_mb / cache.listed_json_mb,
        "ratio",
    );
}
