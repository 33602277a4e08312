//! Why a server could not start, or could not save its state.

use std::net::SocketAddr;

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
