//! Discovery and OpenAPI, as Kubernetes' `apiserver/pkg/endpoints/discovery`
//! and its OpenAPI v3 handler: the documents kubectl and kube-rs read to
//! find the groups, versions and resources served, and their schemas.

pub(crate) mod groups;
pub(crate) mod openapi;
