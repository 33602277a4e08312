//! The REST handlers of a resource, one file per verb, as Kubernetes'
//! `apiserver/pkg/endpoints/handlers` has them: [`rest::serve`] reads a
//! request's options and calls [`get`] (get and list), [`create`],
//! [`update`], [`patch`], [`delete`] (delete and deletecollection, with
//! their [`deleteoptions`]),
//! [`watch`], [`scale`] (the scale subresource), [`eviction`] (a Pod's
//! eviction) or [`binding`] (a Pod's binding and log).

pub(crate) mod binding;
pub(crate) mod body;
pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod deleteoptions;
pub(crate) mod eviction;
pub(crate) mod get;
pub(crate) mod options;
pub(crate) mod patch;
pub(crate) mod request;
pub(crate) mod rest;
pub(crate) mod scale;
pub(crate) mod update;
pub(crate) mod watch;
