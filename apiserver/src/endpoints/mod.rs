//! The HTTP endpoints, as Kubernetes' `apiserver/pkg/endpoints`: one
//! request is [`handle::handle`]d (the request log and injected faults,
//! the `/_rekon/` [`control`] endpoints), its path [`routes::route`]d,
//! and the route [`dispatch::dispatch`]ed to discovery, OpenAPI, or a
//! resource's REST handlers (after the admission chain).

#[cfg(feature = "faults")]
pub(crate) mod control;
pub(crate) mod dispatch;
pub(crate) mod handle;
pub(crate) mod routes;
pub(crate) mod state;
