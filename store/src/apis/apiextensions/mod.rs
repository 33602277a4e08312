//! apiextensions.k8s.io: the CustomResourceDefinition's defaults
//! ([`defaults`]), its own validation ([`validation`]) and its strategy
//! ([`customresourcedefinition`]); and the strategy of the custom resources
//! a CRD serves ([`customresource`]).

pub(crate) mod customresource;
pub(crate) mod customresourcedefinition;
pub(crate) mod defaults;
pub(crate) mod validation;
