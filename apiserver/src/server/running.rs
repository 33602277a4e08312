//! A started server: its address, store and kubeconfig, its admission
//! chain and faults, saving its state, and stopping it.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use rekon_store::Store;
use tokio::sync::oneshot;

use super::error::ServerError;
use crate::admission::{Admission, Chain};
use crate::faults::{Faults, RequestRecord};

/// A started server. Dropping it stops the server.
pub struct RunningServer {
    pub(super) addr: SocketAddr,
    pub(super) store: Store,
    pub(super) faults: Faults,
    pub(super) admission: Arc<Chain>,
    pub(super) shutdown: Option<oneshot::Sender<()>>,
    pub(super) task: Option<tokio::task::JoinHandle<()>>,
    pub(super) persist: Option<std::path::PathBuf>,
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

    /// Writes the state to the file given to
    /// [`ApiServerBuilder::persist`](super::ApiServerBuilder::persist)
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
