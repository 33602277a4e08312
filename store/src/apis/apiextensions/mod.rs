//! apiextensions.k8s.io: what a CustomResourceDefinition is defaulted to
//! ([`defaults`]) and its own validation ([`validation`]).

pub(crate) mod defaults;
pub(crate) mod validation;
