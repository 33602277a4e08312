//! Starting a server: its address, its store (new, given, or restored
//! from a state file), and its settings.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use rekon_store::{Store, StoreConfig};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::error::ServerError;
use super::listen::accept_loop;
use super::running::RunningServer;
use crate::admission::Chain;
use crate::endpoints::state::State;
use crate::faults::Faults;

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

    /// Turns a feature gate on or off, as kube-apiserver's
    /// `--feature-gates`; the one known is `ShardedListAndWatch` (alpha,
    /// off by default: lists and watches honour `shardSelector`). Ignored
    /// when [`ApiServerBuilder::store`] is given (its own config says).
    pub fn feature_gate(mut self, name: &str, on: bool) -> Result<Self, String> {
        match name {
            "ShardedListAndWatch" => self.store_config.sharded_list_and_watch = on,
            other => return Err(format!("unrecognized feature gate: {other}")),
        }
        Ok(self)
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
        let admission = Arc::new(Chain::default());
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
