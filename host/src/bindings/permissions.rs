//! Who may do what: a module's declared permissions, narrowed by the
//! operator, checked before any call reaches the cluster.

use crate::contract::{Gvk, Permission, Verbs};

/// Whether `permissions` allow `verb` on `kind` in `namespace`. Versions are
/// not compared (like RBAC): a grant covers every version of a group/kind.
pub fn is_allowed(
    permissions: &[Permission],
    verb: Verbs,
    kind: &Gvk,
    namespace: Option<&str>,
) -> bool {
    permissions.iter().any(|p| {
        p.kind.group == kind.group
            && p.kind.kind == kind.kind
            && p.verbs.contains(verb)
            && (p.namespaces.is_empty()
                || namespace.is_some_and(|ns| p.namespaces.iter().any(|n| n == ns)))
    })
}

/// Who is calling: the module's identity and permissions.
#[derive(Clone, Debug)]
pub(crate) struct Caller {
    pub name: String,
    pub version: String,
    /// What the manifest declares.
    pub permissions: Vec<Permission>,
    /// What the operator allows this module, if they narrowed it: a call
    /// must then be allowed by both.
    pub operator_limit: Option<Vec<Permission>>,
}

impl Caller {
    pub(crate) fn allows(&self, verb: Verbs, kind: &Gvk, namespace: Option<&str>) -> bool {
        is_allowed(&self.permissions, verb, kind, namespace)
            && self
                .operator_limit
                .as_ref()
                .is_none_or(|limit| is_allowed(limit, verb, kind, namespace))
    }
}

impl Caller {
    pub(crate) fn field_manager(&self) -> String {
        format!("rekon-{}", self.name)
    }
}
