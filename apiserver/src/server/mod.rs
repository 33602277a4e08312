//! The HTTP server: discovery, REST, watch and OpenAPI over hyper, serving a
//! [`Store`], with fault injection and a request log.
//!
//! Start one with [`ApiServer::builder`]; see the crate README for the control
//! endpoints under `/_rekon/`.

pub(crate) mod admission;
pub(crate) mod control;
pub(crate) mod discovery;
pub(crate) mod handle;
pub(crate) mod protobuf;
pub(crate) mod respond;
pub(crate) mod rest;
pub(crate) mod routes;
pub(crate) mod special;
pub(crate) mod table;
pub(crate) mod watch;

pub use admission::{Admission, AdmissionAttributes, AdmitFuture, Admitted};

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinSet;

pub use control::{FailRule, Faults, RequestRecord};

use rekon_store::{Store, StoreConfig};

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
        let admission = Arc::new(admission::Chain::default());
        let state = Arc::new(State {
            store: store.clone(),
            faults: faults.clone(),
            addr: addr.to_string(),
            bookmark_interval: self.bookmark_interval,
            admission: admission.clone(),
        });
        let (shutdown_tx, shutdown_rx) = oneshot::channel();
        let task = tokio::spawn(accept_loop(listener, state, shutdown_rx));
        Ok(RunningServer {
            addr,
            store,
            faults,
            admission,
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
    admission: Arc<admission::Chain>,
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

    /// Installs (or, with `None`, removes) the admission chain every write
    /// of a resource it reviews goes through: mutating, then validating,
    /// as kube-apiserver's admission webhooks.
    pub fn set_admission(&self, admission: Option<Arc<dyn Admission>>) {
        self.admission.set(admission);
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

pub(crate) struct State {
    pub(crate) store: Store,
    pub(crate) faults: Faults,
    pub(crate) addr: String,
    pub(crate) bookmark_interval: Duration,
    pub(crate) admission: Arc<admission::Chain>,
}

pub(crate) type Body = UnsyncBoxBody<Bytes, Infallible>;

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
                        async move { Ok::<_, Infallible>(handle::handle(state, req).await) }
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
