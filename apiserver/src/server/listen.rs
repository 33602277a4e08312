//! The accept loop: one task per connection, each request handled by the
//! endpoints, until shutdown (a restart fault drops every connection).

use std::convert::Infallible;
use std::sync::Arc;

use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinSet;

use crate::endpoints::handle::handle;
use crate::endpoints::state::State;

/// Accepts connections and serves them until `shutdown`.
pub(crate) async fn accept_loop(
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
