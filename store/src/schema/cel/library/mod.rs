//! The functions rules may call beyond the `cel` crate's standard library,
//! one file per library as `apiserver/pkg/cel/library` keeps them:
//! Kubernetes' [`lists`], [`regex`], [`quantity`], [`ip`], [`cidr`],
//! [`urls`], [`format`] and [`semver`] libraries, cel-go's
//! [`comprehensions`] (two-variable) and its other extensions ([`ext`]),
//! all over the opaque values of [`opaque`].

pub(crate) mod cidr;
pub(crate) mod comprehensions;
pub(crate) mod ext;
pub(crate) mod format;
pub(crate) mod ip;
pub(crate) mod lists;
pub(crate) mod opaque;
pub(crate) mod quantity;
pub(crate) mod regex;
pub(crate) mod semver;
pub(crate) mod urls;
