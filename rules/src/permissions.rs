//! The permission rule of modules: a grant covers a group and kind (every
//! version, like RBAC), some verbs, and every namespace or a list of them.

/// A kind: group (`""` for core), version, kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindRef<'a> {
    /// API group; empty for the core group.
    pub group: &'a str,
    /// API version.
    pub version: &'a str,
    /// Kind.
    pub kind: &'a str,
}

impl<'a> KindRef<'a> {
    /// The kind `kind` of `group` (`""` for core) at `version`.
    pub const fn new(group: &'a str, version: &'a str, kind: &'a str) -> KindRef<'a> {
        KindRef {
            group,
            version,
            kind,
        }
    }
}

/// One grant of a module's permissions, as the host's and the SDK's
/// manifests hold it.
pub trait Grant {
    /// The group of the kind it covers (every version).
    fn group(&self) -> &str;
    /// The kind it covers.
    fn kind(&self) -> &str;
    /// Whether it grants `verb` (`get`, `list`, `watch`, `create`,
    /// `update`, `patch`, `delete`).
    fn grants(&self, verb: &str) -> bool;
    /// The namespaces it covers; every namespace when empty.
    fn namespaces(&self) -> &[String];
}

/// Whether `grants` allow `verb` on `kind` in `namespace`: the permission
/// rule of modules. Versions are not compared (like RBAC); a namespaced
/// grant never covers a cluster-wide call.
pub fn is_allowed<G: Grant>(
    grants: &[G],
    verb: &str,
    kind: KindRef<'_>,
    namespace: Option<&str>,
) -> bool {
    grants.iter().any(|g| {
        g.group() == kind.group
            && g.kind() == kind.kind
            && g.grants(verb)
            && (g.namespaces().is_empty()
                || namespace.is_some_and(|ns| g.namespaces().iter().any(|n| n == ns)))
    })
}

/// The message of a call refused for lack of permission: `module "app" may
/// not delete Secret/v1 in namespace "default": its manifest does not grant
/// it`.
pub fn denial_message(
    module: &str,
    verb: &str,
    kind: KindRef<'_>,
    namespace: Option<&str>,
    why: &str,
) -> String {
    let kind = if kind.group.is_empty() {
        format!("{}/{}", kind.kind, kind.version)
    } else {
        format!("{}.{}/{}", kind.kind, kind.group, kind.version)
    };
    let scope = namespace.map_or("the cluster scope".to_string(), |ns| {
        format!("namespace {ns:?}")
    });
    format!("module {module:?} may not {verb} {kind} in {scope}: {why}")
}

#[cfg(test)]
mod tests {
    use super::{Grant, KindRef, denial_message, is_allowed};

    struct G(
        &'static str,
        &'static str,
        &'static [&'static str],
        Vec<String>,
    );

    impl Grant for G {
        fn group(&self) -> &str {
            self.0
        }
        fn kind(&self) -> &str {
            self.1
        }
        fn grants(&self, verb: &str) -> bool {
            self.2.contains(&verb)
        }
        fn namespaces(&self) -> &[String] {
            &self.3
        }
    }

    #[test]
    fn the_permission_rule_is_by_group_kind_verb_and_namespace_not_version() {
        let grants = [
            G("apps", "Deployment", &["get", "patch"], vec![]),
            G("", "Secret", &["get"], vec!["team-a".into()]),
        ];
        let cases = [
            (
                "any version of the kind",
                "get",
                KindRef::new("apps", "v1beta1", "Deployment"),
                Some("x"),
                true,
            ),
            (
                "a verb not granted",
                "delete",
                KindRef::new("apps", "v1", "Deployment"),
                Some("x"),
                false,
            ),
            (
                "another group",
                "get",
                KindRef::new("extensions", "v1", "Deployment"),
                Some("x"),
                false,
            ),
            (
                "a listed namespace",
                "get",
                KindRef::new("", "v1", "Secret"),
                Some("team-a"),
                true,
            ),
            (
                "another namespace",
                "get",
                KindRef::new("", "v1", "Secret"),
                Some("team-b"),
                false,
            ),
            (
                "cluster-wide from a namespaced grant",
                "get",
                KindRef::new("", "v1", "Secret"),
                None,
                false,
            ),
        ];
        for (case, verb, kind, namespace, allowed) in cases {
            assert_eq!(
                is_allowed(&grants, verb, kind, namespace),
                allowed,
                "{case}"
            );
        }
        assert_eq!(
            denial_message(
                "app",
                "delete",
                KindRef::new("", "v1", "Secret"),
                Some("default"),
                "its manifest does not grant it"
            ),
            "module \"app\" may not delete Secret/v1 in namespace \"default\": its manifest does not grant it"
        );
    }
}
