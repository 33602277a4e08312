//! The HTTP server: discovery, REST, watch and OpenAPI over hyper, serving a
//! [`Store`], with fault injection and a request log.
//!
//! Start one with [`ApiServer::builder`]; see the crate README for the control
//! endpoints under `/_rekon/`.

mod control;
mod discovery;
mod protobuf;
mod table;

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt as _;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, StreamBody, combinators::UnsyncBoxBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Map, Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinSet;
use tokio::time::Instant;

pub use control::{FailRule, Faults, RequestRecord};

use rekon_store::{
    DeleteOutcome, ListOptions, PatchType, Propagation, ResourceInfo, Status, Store, StoreConfig,
    WatchEvent, WatchId, WriteOptions,
};

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The listening socket could not be bound.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The state file could not be read, parsed or written.
    #[error("cannot use state file {path}")]
    Persist {
        /// The file.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The kubeconfig could not be written.
    #[error("cannot write kubeconfig {path}")]
    Kubeconfig {
        /// The file asked for.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// Entry point: `ApiServer::builder().port(0).start().await`.
#[derive(Debug)]
pub struct ApiServer;

impl ApiServer {
    /// A builder with defaults: loopback, a free port, the default history.
    pub fn builder() -> ApiServerBuilder {
        ApiServerBuilder::default()
    }
}

/// Settings of a server to start.
#[derive(Clone, Debug)]
pub struct ApiServerBuilder {
    host: IpAddr,
    port: u16,
    store_config: StoreConfig,
    store: Option<Store>,
    bookmark_interval: Duration,
    persist: Option<std::path::PathBuf>,
}

impl Default for ApiServerBuilder {
    fn default() -> Self {
        ApiServerBuilder {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            store_config: StoreConfig::default(),
            store: None,
            bookmark_interval: Duration::from_secs(60),
            persist: None,
        }
    }
}

impl ApiServerBuilder {
    /// The TCP port; 0 (the default) picks a free one.
    #[must_use]
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// The address to listen on (default 127.0.0.1).
    #[must_use]
    pub fn host(mut self, host: IpAddr) -> Self {
        self.host = host;
        self
    }

    /// How many watch events are kept for resuming watches (ignored when
    /// [`ApiServerBuilder::store`] is given).
    #[must_use]
    pub fn history_limit(mut self, n: usize) -> Self {
        self.store_config.history_limit = n;
        self
    }

    /// Serve an existing store instead of a new one.
    #[must_use]
    pub fn store(mut self, store: Store) -> Self {
        self.store = Some(store);
        self
    }

    /// How often watches with `allowWatchBookmarks` get a BOOKMARK (default
    /// 60 s, like the real server; one is also sent 2 s before `timeoutSeconds`).
    #[must_use]
    pub fn bookmark_interval(mut self, every: Duration) -> Self {
        self.bookmark_interval = every;
        self
    }

    /// Keep the state in `path`: loaded at start when the file exists, and
    /// written at [`RunningServer::shutdown`] and
    /// [`RunningServer::run_until_signal`] (and by [`RunningServer::save`]).
    #[must_use]
    pub fn persist(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.persist = Some(path.into());
        self
    }

    /// Binds the port and starts serving in the background.
    pub async fn start(self) -> Result<RunningServer, ServerError> {
        let addr = SocketAddr::new(self.host, self.port);
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServerError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| ServerError::Bind { addr, source })?;
        let store = match (self.store, &self.persist) {
            (Some(s), _) => s,
            (None, Some(path)) if path.exists() => {
                let text = std::fs::read(path).map_err(|source| ServerError::Persist {
                    path: path.display().to_string(),
                    source,
                })?;
                let snapshot: Value =
                    serde_json::from_slice(&text).map_err(|e| ServerError::Persist {
                        path: path.display().to_string(),
                        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
                    })?;
                Store::restore(self.store_config, &snapshot).map_err(|e| ServerError::Persist {
                    path: path.display().to_string(),
                    source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
                })?
            }
            (None, _) => Store::new(self.store_config),
        };
        let faults = Faults::new(store.clone());
        let state = Arc::new(State {
            store: store.clone(),
            faults: faults.clone(),
            addr: addr.to_string(),
            bookmark_interval: self.bookmark_interval,
        });
        let (shutdown_tx, shutdown_rx) = oneshot::channel();
        let task = tokio::spawn(accept_loop(listener, state, shutdown_rx));
        Ok(RunningServer {
            addr,
            store,
            faults,
            shutdown: Some(shutdown_tx),
            task: Some(task),
            persist: self.persist,
        })
    }
}

/// A started server. Dropping it stops the server.
pub struct RunningServer {
    addr: SocketAddr,
    store: Store,
    faults: Faults,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    persist: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for RunningServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl RunningServer {
    /// The base URL, such as `http://127.0.0.1:41234`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The store being served (writes through it are seen by clients and watches).
    pub fn store(&self) -> Store {
        self.store.clone()
    }

    /// Fault injection and the request log.
    #[cfg(feature = "faults")]
    pub fn faults(&self) -> Faults {
        self.faults.clone()
    }

    /// The requests answered so far (shortcut for `faults().requests()`).
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.faults.requests()
    }

    /// A kubeconfig (YAML) pointing at this server, context `rekon`,
    /// namespace `default`, no credentials.
    pub fn kubeconfig(&self) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: rekon\n  cluster:\n    server: {}\ncontexts:\n- name: rekon\n  context:\n    cluster: rekon\n    namespace: default\n    user: rekon\ncurrent-context: rekon\npreferences: {{}}\nusers:\n- name: rekon\n  user: {{}}\n",
            self.url()
        )
    }

    /// Writes [`RunningServer::kubeconfig`] to `path`.
    pub fn write_kubeconfig(&self, path: impl AsRef<Path>) -> Result<(), ServerError> {
        let path = path.as_ref();
        std::fs::write(path, self.kubeconfig()).map_err(|source| ServerError::Kubeconfig {
            path: path.display().to_string(),
            source,
        })
    }

    /// Writes the state to the file given to [`ApiServerBuilder::persist`]
    /// (nothing to do without one).
    pub fn save(&self) -> Result<(), ServerError> {
        let Some(path) = &self.persist else {
            return Ok(());
        };
        let err = |source| ServerError::Persist {
            path: path.display().to_string(),
            source,
        };
        let bytes = serde_json::to_vec(&self.store.snapshot())
            .map_err(|e| err(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, bytes).map_err(err)?;
        std::fs::rename(&tmp, path).map_err(err)
    }

    /// Stops accepting, closes every connection (and watch), saves the state
    /// when persisting, and waits.
    pub async fn shutdown(mut self) {
        self.stop().await;
    }

    /// Stops serving, as [`shutdown`](Self::shutdown) does, but keeps the
    /// handle: its store stays readable and writable, and a new server can
    /// serve it again (on the same port, to look like a restart).
    pub async fn stop(&mut self) {
        if let Err(e) = self.save() {
            tracing::warn!(error = %e, "could not save the API server state");
        }
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        self.store.drop_watches();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// Serves until SIGINT or SIGTERM, then shuts down (what
    /// `rekon dev --api-only` runs).
    pub async fn run_until_signal(mut self) -> std::io::Result<()> {
        #[cfg(unix)]
        {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
            tokio::select! {
                r = tokio::signal::ctrl_c() => r?,
                _ = term.recv() => {}
            }
        }
        #[cfg(not(unix))]
        tokio::signal::ctrl_c().await?;
        self.stop().await;
        Ok(())
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        self.store.drop_watches();
    }
}

struct State {
    store: Store,
    faults: Faults,
    addr: String,
    bookmark_interval: Duration,
}

type Body = UnsyncBoxBody<Bytes, Infallible>;

async fn accept_loop(
    listener: TcpListener,
    state: Arc<State>,
    mut shutdown: oneshot::Receiver<()>,
) {
    let mut conns: JoinSet<()> = JoinSet::new();
    let restart = state.faults.restart_notify();
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            _ = restart.notified() => {
                conns.abort_all();
            }
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let state = state.clone();
                conns.spawn(async move {
                    let svc = hyper::service::service_fn(move |req| {
                        let state = state.clone();
                        async move { Ok::<_, Infallible>(handle(state, req).await) }
                    });
                    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                    let _ = builder.serve_connection(TokioIo::new(stream), svc).await;
                });
            }
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    conns.abort_all();
    while conns.join_next().await.is_some() {}
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match u8::from_str_radix(&s[i + 1..i + 3], 16) {
                Ok(b) => {
                    out.push(b);
                    i += 2;
                }
                Err(_) => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

struct Query(Vec<(String, String)>);

impl Query {
    fn parse(q: &str) -> Query {
        Query(
            q.split('&')
                .filter(|p| !p.is_empty())
                .map(|p| match p.split_once('=') {
                    Some((k, v)) => (percent_decode(k), percent_decode(v)),
                    None => (percent_decode(p), String::new()),
                })
                .collect(),
        )
    }

    fn get(&self, k: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    }

    fn flag(&self, k: &str) -> bool {
        matches!(self.get(k), Some("true" | "1" | ""))
    }
}

struct Ctx {
    pretty: bool,
    yaml: bool,
    table: bool,
    /// `as=PartialObjectMetadata`: metadata-only objects (kube-rs metadata watches).
    metadata_only: bool,
}

fn audit_headers(resp: &mut Response<Body>) {
    let h = resp.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&uuid::Uuid::new_v4().to_string()) {
        h.insert("audit-id", v);
    }
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
}

fn body_of(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed_unsync()
}

fn json_response(code: u16, v: &Value, ctx: &Ctx) -> Response<Body> {
    let (bytes, ctype) = if ctx.yaml {
        (
            serde_yaml::to_string(v).unwrap_or_default().into_bytes(),
            "application/yaml",
        )
    } else if ctx.pretty {
        (
            serde_json::to_vec_pretty(v).unwrap_or_default(),
            "application/json",
        )
    } else {
        (
            serde_json::to_vec(v).unwrap_or_default(),
            "application/json",
        )
    };
    let mut resp = Response::new(body_of(bytes));
    *resp.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    audit_headers(&mut resp);
    resp
}

fn status_response(st: &Status, ctx: &Ctx) -> Response<Body> {
    let mut resp = json_response(st.code, &st.to_json(), ctx);
    if st.code == 429 || st.code == 504 {
        let secs = st
            .details
            .as_ref()
            .and_then(|d| d.get("retryAfterSeconds"))
            .and_then(Value::as_u64)
            .unwrap_or(1);
        if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
            resp.headers_mut().insert(header::RETRY_AFTER, v);
        }
    }
    resp
}

fn text_404() -> Response<Body> {
    let mut resp = Response::new(body_of("404 page not found\n"));
    *resp.status_mut() = StatusCode::NOT_FOUND;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    audit_headers(&mut resp);
    resp
}

/// What a request addresses.
enum Route {
    Version,
    Api,
    Apis,
    Group(String),
    ResourceList(String, String),
    OpenApiRoot,
    OpenApiDoc(String, String),
    Health,
    Resource {
        res: ResourceInfo,
        namespace: Option<String>,
        name: Option<String>,
        sub: Option<String>,
    },
    UnknownResource,
    NotFound,
}

fn route(store: &Store, path: &str) -> Route {
    let segs: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    match segs.as_slice() {
        ["version"] => Route::Version,
        ["healthz" | "readyz" | "livez", ..] => Route::Health,
        ["api"] => Route::Api,
        ["apis"] => Route::Apis,
        ["openapi", "v3"] => Route::OpenApiRoot,
        ["openapi", "v3", "api", v] => Route::OpenApiDoc(String::new(), (*v).to_string()),
        ["openapi", "v3", "apis", g, v] => Route::OpenApiDoc((*g).to_string(), (*v).to_string()),
        ["apis", g] => Route::Group((*g).to_string()),
        ["api", v, rest @ ..] => resource_route(store, "", v, rest),
        ["apis", g, v, rest @ ..] => resource_route(store, g, v, rest),
        _ => Route::NotFound,
    }
}

fn resource_route(store: &Store, group: &str, version: &str, rest: &[&str]) -> Route {
    let served = store
        .resources()
        .iter()
        .any(|r| r.group == group && r.version == version);
    if !served {
        return Route::NotFound;
    }
    let find = |plural: &str| store.resource_for_plural(group, version, plural);
    let (ns, plural, name, sub) = match rest {
        [] => return Route::ResourceList(group.into(), version.into()),
        ["namespaces", ns, plural, tail @ ..]
            if group.is_empty() && !matches!(*plural, "status" | "finalize")
                || !group.is_empty() =>
        {
            match tail {
                [] => (Some(*ns), *plural, None, None),
                [name] => (Some(*ns), *plural, Some(*name), None),
                [name, sub] => (Some(*ns), *plural, Some(*name), Some(*sub)),
                _ => return Route::UnknownResource,
            }
        }
        [plural] => (None, *plural, None, None),
        [plural, name] => (None, *plural, Some(*name), None),
        [plural, name, sub] => (None, *plural, Some(*name), Some(*sub)),
        _ => return Route::UnknownResource,
    };
    let Some(res) = find(plural) else {
        return Route::UnknownResource;
    };
    if ns.is_some() && !res.namespaced {
        return Route::UnknownResource;
    }
    if let Some(s) = sub
        && !(s == "status" && res.status_subresource)
        && !(s == "finalize" && res.plural == "namespaces")
    {
        return Route::UnknownResource;
    }
    Route::Resource {
        res,
        namespace: ns.map(str::to_string),
        name: name.map(str::to_string),
        sub: sub.map(str::to_string),
    }
}

fn verb_of(method: &Method, has_name: bool, query: &Query) -> &'static str {
    match (method.as_str(), has_name) {
        ("GET", false) if query.flag("watch") => "watch",
        ("GET", false) => "list",
        ("GET", true) if query.flag("watch") => "watch",
        ("GET", true) => "get",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", false) => "deletecollection",
        ("DELETE", true) => "delete",
        _ => "unknown",
    }
}

async fn handle(state: Arc<State>, req: Request<Incoming>) -> Response<Body> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let raw_query = req.uri().query().unwrap_or("").to_string();
    let query = Query::parse(&raw_query);
    let user_agent = req
        .headers()
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let ctx = Ctx {
        pretty: query.get("pretty") == Some("true")
            || ["curl", "Wget", "Mozilla/5.0"]
                .iter()
                .any(|p| user_agent.starts_with(p)),
        yaml: accept.starts_with("application/yaml"),
        table: accept.contains("as=Table"),
        metadata_only: accept.contains("as=PartialObjectMetadata"),
    };
    #[cfg(feature = "faults")]
    if path.starts_with("/_rekon/") {
        let body = read_body(req).await;
        return control(&state, &method, &path, &body, &ctx);
    }
    #[cfg(feature = "faults")]
    {
        let latency = state.faults.latency();
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
    }
    let r = route(&state.store, &path);
    let (verb, resource) = match &r {
        Route::Resource { res, name, sub, .. } => (
            verb_of(&method, name.is_some(), &query),
            match sub {
                Some(s) => format!("{}/{s}", res.plural),
                None => res.plural.clone(),
            },
        ),
        _ => ("", String::new()),
    };
    #[cfg(feature = "faults")]
    let resp = match inject(&state, verb, &resource).await {
        Some((code, retry)) => status_response(&injected(code, retry, &resource), &ctx),
        None => dispatch(&state, r, req, &query, &user_agent, &ctx).await,
    };
    #[cfg(not(feature = "faults"))]
    let resp = dispatch(&state, r, req, &query, &user_agent, &ctx).await;
    state.faults.record(RequestRecord {
        method: method.to_string(),
        path,
        query: raw_query,
        user_agent,
        verb: verb.to_string(),
        resource,
        status: resp.status().as_u16(),
    });
    resp
}

/// The fault to inject for this request, after the delay to add, if any.
#[cfg(feature = "faults")]
async fn inject(state: &State, verb: &str, resource: &str) -> Option<(u16, u64)> {
    if verb.is_empty() {
        return None;
    }
    if let Some(delay) = state.faults.take_stall(verb, resource) {
        tokio::time::sleep(delay).await;
    }
    state.faults.take_failure(verb, resource)
}

#[cfg(feature = "faults")]
fn injected(code: u16, retry: u64, resource: &str) -> Status {
    match code {
        429 => Status::too_many_requests(retry),
        500 => Status::internal("injected fault"),
        409 => Status::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {resource}: injected conflict"),
        ),
        503 => Status::new(
            503,
            "ServiceUnavailable",
            "injected fault: service unavailable",
        ),
        504 => Status::new(504, "Timeout", "injected fault: timeout"),
        403 => Status::new(403, "Forbidden", "injected fault: forbidden"),
        404 => Status::new(404, "NotFound", "injected fault: not found"),
        c => Status::new(c, "", format!("injected fault {c}")),
    }
}

#[cfg_attr(not(feature = "faults"), allow(dead_code))]
async fn read_body(req: Request<Incoming>) -> Bytes {
    match req.into_body().collect().await {
        Ok(c) => c.to_bytes(),
        Err(_) => Bytes::new(),
    }
}

#[cfg(feature = "faults")]
fn control(state: &State, method: &Method, path: &str, body: &[u8], ctx: &Ctx) -> Response<Body> {
    let f = &state.faults;
    let arg: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let ok = || json_response(200, &json!({"ok": true}), ctx);
    match (method.as_str(), path) {
        ("GET", "/_rekon/requests") => json_response(200, &json!(f.requests()), ctx),
        ("DELETE", "/_rekon/requests") => {
            f.clear_requests();
            ok()
        }
        ("GET", "/_rekon/watches") => {
            json_response(200, &json!({"open": state.store.watch_count()}), ctx)
        }
        ("POST", "/_rekon/drop-watches") => {
            f.drop_watches();
            ok()
        }
        ("POST", "/_rekon/fail") => match serde_json::from_value::<FailRule>(arg) {
            Ok(rule) => {
                f.fail(rule);
                ok()
            }
            Err(e) => status_response(&Status::bad_request(format!("bad fail rule: {e}")), ctx),
        },
        ("POST", "/_rekon/latency") => {
            let ms = arg.get("millis").and_then(Value::as_u64).unwrap_or(0);
            f.set_latency(Duration::from_millis(ms));
            ok()
        }
        ("POST", "/_rekon/compact") => {
            f.compact();
            ok()
        }
        ("POST", "/_rekon/restart") => {
            let keep = arg.get("keepData").and_then(Value::as_bool).unwrap_or(true);
            // The restart closes this very connection: answer first.
            let f = f.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                f.restart(keep);
            });
            ok()
        }
        ("DELETE", "/_rekon/faults") => {
            f.clear();
            ok()
        }
        _ => text_404(),
    }
}

fn is_builtin(r: &ResourceInfo) -> bool {
    rekon_store::builtin_resources()
        .iter()
        .any(|b| b.group == r.group && b.plural == r.plural)
}

fn openapi_docs(store: &Store) -> Vec<(String, String, Vec<u8>)> {
    let resources = store.resources();
    discovery::group_versions(&resources)
        .into_iter()
        .map(|(g, v)| {
            let doc = discovery::openapi_group_version(&resources, &g, &v, is_builtin);
            let bytes = serde_json::to_vec(&doc).unwrap_or_default();
            (g, v, bytes)
        })
        .collect()
}

async fn dispatch(
    state: &State,
    r: Route,
    req: Request<Incoming>,
    query: &Query,
    ua: &str,
    ctx: &Ctx,
) -> Response<Body> {
    let store = &state.store;
    match r {
        Route::Version => json_response(200, &discovery::version(), ctx),
        Route::Health => {
            let mut resp = Response::new(body_of("ok"));
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            resp
        }
        Route::Api => json_response(200, &discovery::core_versions(&state.addr), ctx),
        Route::Apis => json_response(200, &discovery::group_list(&store.resources()), ctx),
        Route::Group(g) => match discovery::group(&store.resources(), &g) {
            Some(doc) => json_response(200, &doc, ctx),
            None => text_404(),
        },
        Route::ResourceList(g, v) => match discovery::resource_list(&store.resources(), &g, &v) {
            Some(doc) => json_response(200, &doc, ctx),
            None => text_404(),
        },
        Route::OpenApiRoot => {
            let mut paths = Map::new();
            for (g, v, bytes) in openapi_docs(store) {
                let p = discovery::openapi_path(&g, &v);
                paths.insert(
                    p.clone(),
                    json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={}", discovery::hash(&bytes))}),
                );
            }
            let mut resp = Response::new(body_of(
                serde_json::to_vec(&json!({"paths": paths})).unwrap_or_default(),
            ));
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            audit_headers(&mut resp);
            resp
        }
        Route::OpenApiDoc(g, v) => {
            let Some((_, _, bytes)) = openapi_docs(store)
                .into_iter()
                .find(|(dg, dv, _)| *dg == g && *dv == v)
            else {
                return text_404();
            };
            let want = discovery::hash(&bytes);
            let mut resp = match query.get("hash") {
                Some(h) if h != want => {
                    let mut resp = Response::new(body_of(Bytes::new()));
                    *resp.status_mut() = StatusCode::MOVED_PERMANENTLY;
                    let loc = format!(
                        "/openapi/v3/{}?hash={want}",
                        discovery::openapi_path(&g, &v)
                    );
                    if let Ok(l) = HeaderValue::from_str(&loc) {
                        resp.headers_mut().insert(header::LOCATION, l);
                    }
                    return resp;
                }
                Some(_) => {
                    let mut resp = Response::new(body_of(bytes));
                    resp.headers_mut().insert(
                        header::CACHE_CONTROL,
                        HeaderValue::from_static("public, immutable"),
                    );
                    resp
                }
                None => {
                    let mut resp = Response::new(body_of(bytes));
                    resp.headers_mut().insert(
                        header::CACHE_CONTROL,
                        HeaderValue::from_static("no-cache, private"),
                    );
                    resp
                }
            };
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            resp
        }
        Route::NotFound => text_404(),
        Route::UnknownResource => status_response(&Status::resource_not_found(), ctx),
        Route::Resource {
            res,
            namespace,
            name,
            sub,
        } => {
            let method = req.method().clone();
            let ct = req
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let mut body = read_body(req).await;
            let mut ct = ct;
            // kubectl's imperative creates send protobuf: the kinds decoded
            // here go on as JSON.
            if ct.contains("protobuf")
                && let Ok(object) = protobuf::to_json(&body)
            {
                body = object.to_string().into_bytes().into();
                ct = "application/json".to_string();
            }
            if ct.contains("protobuf") || ct.contains("cbor") {
                return status_response(
                    &Status {
                        code: 415,
                        reason: "UnsupportedMediaType".into(),
                        message: "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml".into(),
                        details: None,
                    },
                    ctx,
                );
            }
            let result = rest(
                state,
                &res,
                namespace.as_deref(),
                name.as_deref(),
                sub,
                &method,
                &ct,
                &body,
                query,
                ua,
                ctx,
            );
            match result {
                Ok(resp) => resp,
                Err(st) => status_response(&st, ctx),
            }
        }
    }
}

fn default_manager(query: &Query, ua: &str) -> String {
    match query.get("fieldManager").filter(|m| !m.is_empty()) {
        Some(m) => m.to_string(),
        None => ua
            .split('/')
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or("unknown")
            .to_string(),
    }
}

fn parse_json(body: &[u8], res: &ResourceInfo) -> Result<Value, Status> {
    serde_json::from_slice(body)
        .or_else(|_| serde_yaml::from_slice(body))
        .map_err(|e: serde_yaml::Error| {
            Status::bad_request(format!(
                "the object provided is unrecognized (must be of type {}): couldn't get version/kind; json parse error: {e}",
                res.kind
            ))
        })
}

/// List items of built-in kinds carry no kind and apiVersion (custom ones do).
fn strip_kind(builtin: bool, mut o: Value) -> Value {
    if builtin && let Some(m) = o.as_object_mut() {
        m.remove("kind");
        m.remove("apiVersion");
    }
    o
}

#[allow(clippy::too_many_arguments)]
fn rest(
    state: &State,
    res: &ResourceInfo,
    namespace: Option<&str>,
    name: Option<&str>,
    sub: Option<String>,
    method: &Method,
    content_type: &str,
    body: &[u8],
    query: &Query,
    ua: &str,
    ctx: &Ctx,
) -> Result<Response<Body>, Status> {
    let store = &state.store;
    let dry_run = query.get("dryRun") == Some("All");
    if let Some(v) = query.get("dryRun").filter(|v| *v != "All") {
        let kind = match method.as_str() {
            "POST" => "CreateOptions",
            "PUT" => "UpdateOptions",
            "PATCH" => "PatchOptions",
            "DELETE" => "DeleteOptions",
            _ => "ListOptions",
        };
        return Err(options_invalid(
            kind,
            &[(
                "dryRun",
                "FieldValueNotSupported",
                &format!("Unsupported value: [\"{v}\"]: supported values: \"All\""),
            )],
        ));
    }
    if method == Method::GET && name.is_none() {
        validate_list_options(query)?;
    }
    let opts = WriteOptions {
        field_manager: Some(default_manager(query, ua)),
        subresource: sub.clone().filter(|s| s == "status"),
        dry_run,
    };
    let list_opts = || ListOptions {
        namespace: namespace.map(str::to_string),
        label_selector: query.get("labelSelector").map(str::to_string),
        field_selector: query.get("fieldSelector").map(str::to_string),
        limit: query.get("limit").and_then(|l| l.parse().ok()),
        continue_token: query.get("continue").map(str::to_string),
    };
    match (method.as_str(), name) {
        ("GET", None) if query.flag("watch") => Ok(watch(state, res, list_opts(), query, ctx)),
        ("GET", Some(n)) if query.flag("watch") => {
            let mut o = list_opts();
            o.field_selector = Some(format!("metadata.name={n}"));
            Ok(watch(state, res, o, query, ctx))
        }
        ("GET", None) => {
            let mut o = list_opts();
            let rv = query.get("resourceVersion");
            if rv == Some("0") {
                o.limit = None;
            }
            if let Some(rv) = rv.filter(|v| !v.is_empty() && *v != "0") {
                let n: u64 = rv.parse().map_err(|_| {
                    Status::internal(format!(
                        "strconv.ParseUint: parsing \"{rv}\": invalid syntax"
                    ))
                })?;
                let oldest: u64 = store.oldest_resource_version().parse().unwrap_or(0);
                if query.get("resourceVersionMatch") == Some("Exact") && n < oldest {
                    return Err(Status::expired(
                        "The resourceVersion for the provided list is too old.",
                    ));
                }
            }
            let list = store.list(res, &o)?;
            // Built-in lists write ListMeta in field order and omit an empty
            // continue; custom resource lists sort keys and end with "".
            let builtin = is_builtin(res);
            let mut md = Map::new();
            if !builtin {
                md.insert(
                    "continue".into(),
                    json!(list.continue_token.clone().unwrap_or_default()),
                );
                if let Some(n) = list.remaining_item_count {
                    md.insert("remainingItemCount".into(), json!(n));
                }
            }
            md.insert("resourceVersion".into(), json!(list.resource_version));
            if builtin {
                if let Some(c) = &list.continue_token {
                    md.insert("continue".into(), json!(c));
                }
                if let Some(n) = list.remaining_item_count {
                    md.insert("remainingItemCount".into(), json!(n));
                }
            }
            if ctx.table {
                let cols = table::columns(store, res);
                let mut doc = table::table(&cols, &list.resource_version, &list.items, true);
                if let Some(m) = doc.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.extend(md);
                }
                return Ok(json_response(200, &doc, ctx));
            }
            let (kind, api_version, items): (String, String, Vec<Value>) = if ctx.metadata_only {
                (
                    "PartialObjectMetadataList".into(),
                    "meta.k8s.io/v1".into(),
                    list.items.iter().map(table::partial).collect(),
                )
            } else {
                (
                    format!("{}List", res.kind),
                    res.api_version(),
                    list.items
                        .into_iter()
                        .map(|o| strip_kind(builtin, o))
                        .collect(),
                )
            };
            let doc = json!({
                "kind": kind,
                "apiVersion": api_version,
                "metadata": md,
                "items": items,
            });
            Ok(json_response(200, &doc, ctx))
        }
        ("GET", Some(n)) => {
            let o = store.get(res, namespace, n)?;
            if ctx.table {
                let cols = table::columns(store, res);
                let rv = o
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                return Ok(json_response(
                    200,
                    &table::table(&cols, rv, std::slice::from_ref(&o), true),
                    ctx,
                ));
            }
            if ctx.metadata_only {
                return Ok(json_response(200, &table::partial(&o), ctx));
            }
            Ok(json_response(200, &o, ctx))
        }
        ("POST", None) => {
            if res.namespaced && namespace.is_none() {
                return Err(Status::resource_not_found());
            }
            let obj = parse_json(body, res)?;
            let out = store.create(res, namespace, obj, &opts)?;
            Ok(json_response(201, &out, ctx))
        }
        ("POST", Some(_)) => Err(Status::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )),
        ("PUT", Some(n)) => {
            let obj = parse_json(body, res)?;
            let out = store.replace(res, namespace, n, obj, &opts)?;
            Ok(json_response(200, &out, ctx))
        }
        ("PATCH", Some(n)) => {
            let ct = content_type.split(';').next().unwrap_or("").trim();
            let ptype = match ct {
                "application/merge-patch+json" => PatchType::Merge,
                "application/json-patch+json" => PatchType::Json,
                "application/strategic-merge-patch+json" => PatchType::StrategicMerge,
                "application/apply-patch+yaml" => PatchType::Apply {
                    force: query.flag("force"),
                },
                _ => {
                    return Err(Status {
                        code: 415,
                        reason: "UnsupportedMediaType".into(),
                        message: "415: Unsupported Media Type".into(),
                        details: Some(json!({})),
                    });
                }
            };
            let mut opts = opts;
            if matches!(ptype, PatchType::Apply { .. }) {
                opts.field_manager = query.get("fieldManager").map(str::to_string);
            }
            let (out, created) = store.patch_created(res, namespace, n, &ptype, body, &opts)?;
            Ok(json_response(if created { 201 } else { 200 }, &out, ctx))
        }
        ("DELETE", Some(n)) => {
            let opts_body: Value = if body.is_empty() {
                Value::Null
            } else {
                serde_json::from_slice(body).map_err(|e| {
                    Status::bad_request(format!("error decoding DeleteOptions: {e}"))
                })?
            };
            let policy = opts_body
                .get("propagationPolicy")
                .and_then(Value::as_str)
                .or_else(|| query.get("propagationPolicy"));
            let propagation = match policy {
                Some("Foreground") => Some(Propagation::Foreground),
                Some("Orphan") => Some(Propagation::Orphan),
                Some("Background") => Some(Propagation::Background),
                _ if opts_body.get("orphanDependents").and_then(Value::as_bool) == Some(true) => {
                    Some(Propagation::Orphan)
                }
                _ => None,
            };
            let current = store.get(res, namespace, n)?;
            if let Some(pre) = opts_body.get("preconditions") {
                let uid = current
                    .pointer("/metadata/uid")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if let Some(want) = pre.get("uid").and_then(Value::as_str)
                    && want != uid
                {
                    let mut st = Status::conflict(res, n);
                    st.message = format!(
                        "Operation cannot be fulfilled on {} \"{n}\": Precondition failed: UID in precondition: {want}, UID in object meta: {uid}",
                        res.qualified_plural()
                    );
                    return Err(st);
                }
                let rv = current
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if let Some(want) = pre.get("resourceVersion").and_then(Value::as_str)
                    && want != rv
                {
                    let mut st = Status::conflict(res, n);
                    st.message = format!(
                        "Operation cannot be fulfilled on {} \"{n}\": Precondition failed: ResourceVersion in precondition: {want}, ResourceVersion in object meta: {rv}",
                        res.qualified_plural()
                    );
                    return Err(st);
                }
            }
            let dry = dry_run
                || opts_body
                    .get("dryRun")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|v| v == "All"));
            let outcome = if dry {
                DeleteOutcome::Deleted(current)
            } else {
                store.delete(res, namespace, n, propagation)?
            };
            match outcome {
                DeleteOutcome::Deleted(o) => {
                    Ok(json_response(200, &success_status(res, n, &o), ctx))
                }
                DeleteOutcome::Pending(o) => Ok(json_response(200, &o, ctx)),
            }
        }
        ("DELETE", None) => {
            let list = store.list(res, &list_opts())?;
            let mut items = Vec::new();
            for o in list.items {
                let n = o
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let ns = o
                    .pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                match store.delete(res, ns.as_deref(), &n, None) {
                    Ok(DeleteOutcome::Deleted(o) | DeleteOutcome::Pending(o)) => {
                        items.push(strip_kind(is_builtin(res), o))
                    }
                    Err(e) if e.code == 404 => {}
                    Err(e) => return Err(e),
                }
            }
            let doc = json!({
                "kind": format!("{}List", res.kind),
                "apiVersion": res.api_version(),
                "metadata": {"resourceVersion": store.resource_version()},
                "items": items,
            });
            Ok(json_response(200, &doc, ctx))
        }
        _ => Err(Status::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )),
    }
}

/// 422 for invalid request options, as `ListOptions.meta.k8s.io "" is invalid: ...`.
fn options_invalid(kind: &str, causes: &[(&str, &str, &str)]) -> Status {
    let msgs: Vec<String> = causes.iter().map(|(f, _, m)| format!("{f}: {m}")).collect();
    let joined = if msgs.len() == 1 {
        msgs[0].clone()
    } else {
        format!("[{}]", msgs.join(", "))
    };
    Status {
        code: 422,
        reason: "Invalid".into(),
        message: format!("{kind}.meta.k8s.io \"\" is invalid: {joined}"),
        details: Some(json!({
            "group": "meta.k8s.io",
            "kind": kind,
            "causes": causes.iter().map(|(f, r, m)| json!({"reason": r, "message": m, "field": f})).collect::<Vec<_>>(),
        })),
    }
}

/// The real server's checks of list and watch options.
fn validate_list_options(query: &Query) -> Result<(), Status> {
    let watch = query.flag("watch");
    let rv = query.get("resourceVersion").filter(|v| !v.is_empty());
    let rvm = query.get("resourceVersionMatch").filter(|v| !v.is_empty());
    let initial = query.get("sendInitialEvents").is_some();
    let mut causes: Vec<(&str, &str, String)> = Vec::new();
    if watch {
        if initial && rvm != Some("NotOlderThan") {
            causes.push((
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan".into(),
            ));
        }
        if !initial && let Some(m) = rvm {
            causes.push((
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided".into(),
            ));
            if m != "NotOlderThan" {
                causes.push((
                    "resourceVersionMatch",
                    "FieldValueNotSupported",
                    format!("Unsupported value: \"{m}\": supported values: \"NotOlderThan\""),
                ));
            }
        }
    } else {
        if rvm.is_some() && rv.is_none() {
            causes.push((
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
                    .into(),
            ));
        }
        if initial {
            causes.push((
                "sendInitialEvents",
                "FieldValueForbidden",
                "Forbidden: sendInitialEvents is forbidden for list".into(),
            ));
        }
        if rv.is_some() && query.get("continue").is_some_and(|c| !c.is_empty()) {
            return Err(Status::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
    }
    if causes.is_empty() {
        return Ok(());
    }
    let borrowed: Vec<(&str, &str, &str)> = causes
        .iter()
        .map(|(f, r, m)| (*f, *r, m.as_str()))
        .collect();
    Err(options_invalid("ListOptions", &borrowed))
}

fn success_status(res: &ResourceInfo, name: &str, obj: &Value) -> Value {
    let mut d = Map::new();
    d.insert("name".into(), json!(name));
    if !res.group.is_empty() {
        d.insert("group".into(), json!(res.group));
    }
    d.insert("kind".into(), json!(res.plural));
    if let Some(uid) = obj.pointer("/metadata/uid") {
        d.insert("uid".into(), uid.clone());
    }
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": d})
}

fn event_line(event_type: &str, object: &Value) -> Bytes {
    let mut v =
        serde_json::to_vec(&json!({"type": event_type, "object": object})).unwrap_or_default();
    v.push(b'\n');
    Bytes::from(v)
}

struct WatchGuard {
    store: Store,
    id: Option<WatchId>,
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.store.unwatch(id);
        }
    }
}

struct WatchState {
    rx: tokio::sync::mpsc::UnboundedReceiver<Bytes>,
    guard: WatchGuard,
    deadline: Instant,
    next_bookmark: Instant,
    final_bookmark: Option<Instant>,
    bookmarks: bool,
    interval: Duration,
}

fn watch(
    state: &State,
    res: &ResourceInfo,
    opts: ListOptions,
    query: &Query,
    shape: &Ctx,
) -> Response<Body> {
    let store = state.store.clone();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
    let bookmarks = query.flag("allowWatchBookmarks");
    let send_initial = query.flag("sendInitialEvents");
    let rv = query.get("resourceVersion").filter(|v| !v.is_empty());
    let legacy = rv.is_none() || rv == Some("0");
    let start_rv = if send_initial { None } else { rv };
    let sink_tx = tx.clone();
    let cols = shape.table.then(|| table::columns(&store, res));
    let metadata_only = shape.metadata_only;
    let mut first = true;
    let sink = Box::new(move |ev: WatchEvent| {
        let object = match &cols {
            Some(cols) if ev.event_type != rekon_store::EventType::Bookmark => {
                let rv = ev
                    .object
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let t = table::table(cols, rv, std::slice::from_ref(&ev.object), first);
                first = false;
                t
            }
            _ if metadata_only && ev.event_type != rekon_store::EventType::Bookmark => {
                table::partial(&ev.object)
            }
            _ => ev.object,
        };
        sink_tx
            .send(event_line(ev.event_type.as_str(), &object))
            .is_ok()
    });
    let timeout = query
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or(Duration::from_secs(1800));
    let ctx = Ctx {
        pretty: false,
        yaml: false,
        table: false,
        metadata_only: false,
    };
    let id = match store.watch(res, &opts, start_rv, sink) {
        Ok(id) => id,
        Err(st) if st.code == 410 => {
            let _ = tx.send(event_line("ERROR", &st.to_json()));
            drop(tx);
            return stream_response(WatchState {
                rx,
                guard: WatchGuard { store, id: None },
                deadline: Instant::now() + timeout,
                next_bookmark: Instant::now() + timeout,
                final_bookmark: None,
                bookmarks: false,
                interval: timeout,
            });
        }
        Err(st) => return status_response(&st, &ctx),
    };
    drop(tx);
    if bookmarks && (legacy || send_initial) {
        store.watch_bookmark(id, true);
    }
    let now = Instant::now();
    let deadline = now + timeout;
    stream_response(WatchState {
        rx,
        guard: WatchGuard {
            store,
            id: Some(id),
        },
        deadline,
        next_bookmark: now + state.bookmark_interval,
        final_bookmark: timeout
            .checked_sub(Duration::from_secs(2))
            .filter(|d| !d.is_zero())
            .map(|d| now + d),
        bookmarks,
        interval: state.bookmark_interval,
    })
}

fn stream_response(st: WatchState) -> Response<Body> {
    let stream = futures::stream::unfold(st, |mut st| async move {
        loop {
            let bookmark_at = match st.final_bookmark {
                Some(f) => f.min(st.next_bookmark),
                None => st.next_bookmark,
            };
            tokio::select! {
                biased;
                msg = st.rx.recv() => {
                    return msg.map(|b| (Ok::<_, Infallible>(Frame::data(b)), st));
                }
                _ = tokio::time::sleep_until(st.deadline) => return None,
                _ = tokio::time::sleep_until(bookmark_at), if st.bookmarks => {
                    if let Some(id) = st.guard.id {
                        st.guard.store.watch_bookmark(id, false);
                    }
                    if st.final_bookmark.is_some_and(|f| f <= Instant::now()) {
                        st.final_bookmark = None;
                    } else {
                        st.next_bookmark = Instant::now() + st.interval;
                    }
                }
            }
        }
    });
    let mut resp = Response::new(BodyExt::boxed_unsync(StreamBody::new(stream.boxed())));
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    audit_headers(&mut resp);
    resp
}
