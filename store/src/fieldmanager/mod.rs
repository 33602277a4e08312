//! managedFields, as the API server's field manager and
//! `sigs.k8s.io/structured-merge-diff` keep them: who owns which fields,
//! tracked on every write ([`managed`]), and server-side apply's field sets
//! and merges beneath it. Paths are made of field names, the keys of
//! `x-kubernetes-list-type: map` items and the values of `set` items
//! (`f:name`, `k:{"name":"x"}`, `v:"x"`, as `fieldsV1` writes them,
//! [`fieldpath`]); what a list is comes from a [`typed::Ty`]: a custom
//! resource's structural schema (its list types; a list without one is
//! atomic), the object's metadata (`finalizers` a set, `ownerReferences` a
//! map by `uid`), the built-in kinds' list types ([`builtin`]), and no
//! schema elsewhere. An object's field set ([`set`]), two objects merged or
//! items removed ([`merge`]), and compared ([`compare`]); kubectl's
//! client-side apply annotation under server-side apply ([`lastapplied`]);
//! Go's `omitempty` on zero scalars ([`omitempty`]); what a write changed as
//! a manager of another version of the kind sees it ([`versions`]).

pub(crate) mod builtin;
pub(crate) mod compare;
pub(crate) mod fieldpath;
pub(crate) mod lastapplied;
pub(crate) mod managed;
pub(crate) mod merge;
pub(crate) mod omitempty;
pub(crate) mod scale;
pub(crate) mod set;
#[cfg(test)]
mod tests;
pub(crate) mod typed;
pub(crate) mod versions;
