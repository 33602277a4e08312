//! Who may do what: a module's declared permissions, narrowed by the
//! operator, checked before any call reaches the cluster.

use rekon_rules::{Grant, KindRef};

use crate::contract::{Gvk, Index, Permission, Verbs};
use crate::contract::{verb_name, verb_named};

/// A manifest's permission under the permission rule modules share with
/// the SDK's harness (`rekon_rules::is_allowed`).
impl Grant for Permission {
    fn group(&self) -> &str {
        &self.kind.group
    }

    fn kind(&self) -> &str {
        &self.kind.kind
    }

    fn grants(&self, verb: &str) -> bool {
        verb_named(verb).is_some_and(|flag| self.verbs.contains(flag))
    }

    fn namespaces(&self) -> &[String] {
        &self.namespaces
    }
}

/// Whether `permissions` allow `verb` on `kind` in `namespace`. Versions are
/// not compared (like RBAC): a grant covers every version of a group/kind.
pub(crate) fn is_allowed(
    permissions: &[Permission],
    verb: Verbs,
    kind: &Gvk,
    namespace: Option<&str>,
) -> bool {
    rekon_rules::is_allowed(permissions, verb_name(verb), kind_ref(kind), namespace)
}

/// A kind as the shared rules take it.
pub(crate) fn kind_ref(kind: &Gvk) -> KindRef<'_> {
    KindRef {
        group: &kind.group,
        version: &kind.version,
        kind: &kind.kind,
    }
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
    /// The indexes the manifest declares (for `list-by-index`).
    pub indexes: Vec<Index>,
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
