//! The calls of rekon's contract (`wit/reconciler.wit`) over a store: the
//! one adapter between a module's host calls and the objects, behind the
//! host's `MemoryCluster` (`rekon reconcile`, benchmarks) and the SDK's
//! native test harness. Objects travel as JSON text, as they do between a
//! guest and the host; errors are the [`Status`] a real API server would
//! answer, worded as it words them.
//!
//! The permission rule of modules is here too ([`is_allowed`]), shared by
//! the host and the SDK's harness: a grant covers a group and kind (every
//! version, like RBAC), some verbs, and every namespace or a list of them.

use crate::prelude::*;

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

/// One object, by kind, namespace and name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetRef<'a> {
    /// Its kind.
    pub kind: KindRef<'a>,
    /// Its namespace; `None` for cluster-scoped kinds.
    pub namespace: Option<&'a str>,
    /// Its name.
    pub name: &'a str,
}

/// A patch as a module asks for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallPatch {
    /// JSON merge patch.
    Merge,
    /// JSON patch.
    Json,
    /// Server-side apply: the body is YAML (or JSON), as for a real server.
    Apply {
        /// Take ownership of fields other managers own.
        force: bool,
    },
}

/// The resource of `kind`, or the 404 a real server gives for a kind it
/// does not serve.
pub fn resource(store: &Store, kind: KindRef<'_>) -> Result<ResourceInfo, Status> {
    store
        .resource_for_kind(kind.group, kind.version, kind.kind)
        .ok_or_else(Status::resource_not_found)
}

/// The resource of `kind` if it serves `verb`, else 404 or 405.
fn serving(store: &Store, kind: KindRef<'_>, verb: &str) -> Result<ResourceInfo, Status> {
    let res = resource(store, kind)?;
    if res.serves(verb) {
        Ok(res)
    } else {
        Err(method_not_allowed())
    }
}

/// 405: the resource does not serve this verb.
pub fn method_not_allowed() -> Status {
    Status::new(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )
}

/// An object body (JSON, or YAML as a real server also takes), or the 400
/// a real server answers for one it cannot read.
pub fn decode_object(body: &[u8], res: &ResourceInfo) -> Result<Value, Status> {
    let json_error = match serde_json::from_slice(body) {
        Ok(value) => return Ok(value),
        Err(e) => e,
    };
    let unrecognized = |why: String| {
        Status::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): couldn't get version/kind; json parse error: {why}",
            res.kind
        ))
    };
    if body.first() == Some(&b'{') {
        // A JSON body: Go's words, and the start of the body.
        let why = if json_error.is_eof() {
            "unexpected end of JSON input".to_string()
        } else {
            let text = String::from_utf8_lossy(body);
            let line = text
                .lines()
                .nth(json_error.line().saturating_sub(1))
                .unwrap_or_default();
            let c = line
                .chars()
                .nth(json_error.column().saturating_sub(1))
                .unwrap_or(' ');
            format!(
                "invalid character {} looking for beginning of value",
                go_char(c)
            )
        };
        let summary = if body.len() > 30 {
            format!("{} ...", String::from_utf8_lossy(&body[..30]))
        } else {
            String::from_utf8_lossy(body).into_owned()
        };
        return Err(unrecognized(format!("{why} ({summary})")));
    }
    serde_yaml::from_slice(body).map_err(|e: serde_yaml::Error| unrecognized(e.to_string()))
}

/// A character as Go's JSON errors quote it (`'x'`, `'\n'`).
fn go_char(c: char) -> String {
    match c {
        '\n' => "'\\n'".into(),
        '\t' => "'\\t'".into(),
        '\'' => "'\\''".into(),
        c => format!("'{c}'"),
    }
}

fn write_options(field_manager: &str, status: bool) -> WriteOptions {
    WriteOptions {
        field_manager: Some(field_manager.to_string()),
        subresource: status.then(|| "status".to_string()),
        ..WriteOptions::default()
    }
}

/// Reads one object.
pub fn get(store: &Store, target: TargetRef<'_>) -> Result<String, Status> {
    let res = serving(store, target.kind, "get")?;
    Ok(store.get(&res, target.namespace, target.name)?.to_string())
}

/// Lists objects of a kind (in one namespace), by label selector.
pub fn list(
    store: &Store,
    kind: KindRef<'_>,
    namespace: Option<&str>,
    label_selector: Option<&str>,
) -> Result<Vec<String>, Status> {
    let res = serving(store, kind, "list")?;
    let options = ListOptions {
        namespace: namespace.map(str::to_string),
        label_selector: label_selector.map(str::to_string),
        ..ListOptions::default()
    };
    Ok(store
        .list(&res, &options)?
        .items
        .iter()
        .map(Value::to_string)
        .collect())
}

/// What a cache index keys an object by (the contract's `index-key`).
#[derive(Clone, Copy, Debug)]
pub enum IndexKeyRef<'a> {
    /// The value at a dotted field path (`spec.nodeName`); each scalar
    /// item of a list is a key.
    Field(&'a str),
    /// The value of the label with this key.
    Label(&'a str),
}

/// The keys `object` is indexed under: the value at the field path (each
/// scalar item of a list), or the label's value; none when it has neither.
pub fn index_keys(object: &Value, key: IndexKeyRef<'_>) -> Vec<String> {
    fn scalar(value: &Value) -> Option<String> {
        match value {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }
    match key {
        IndexKeyRef::Label(label) => object
            .pointer("/metadata/labels")
            .and_then(|labels| labels.get(label))
            .and_then(Value::as_str)
            .map(|v| vec![v.to_string()])
            .unwrap_or_default(),
        IndexKeyRef::Field(path) => {
            let mut at = object;
            for part in path.trim_start_matches('.').split('.') {
                match at.get(part) {
                    Some(next) => at = next,
                    None => return Vec::new(),
                }
            }
            match at {
                Value::Array(items) => items.iter().filter_map(scalar).collect(),
                other => scalar(other).into_iter().collect(),
            }
        }
    }
}

/// Whether an index field path is well formed: dotted names, none empty.
pub fn valid_field_path(path: &str) -> bool {
    let path = path.trim_start_matches('.');
    !path.is_empty() && path.split('.').all(|p| !p.is_empty())
}

/// Lists the objects of `kind` whose `key` is `value` (ordered as
/// [`list`]): what `list-by-index` answers, found by a scan.
pub fn list_by_index(
    store: &Store,
    kind: KindRef<'_>,
    key: IndexKeyRef<'_>,
    value: &str,
    namespace: Option<&str>,
) -> Result<Vec<String>, Status> {
    let res = serving(store, kind, "list")?;
    let options = ListOptions {
        namespace: namespace.map(str::to_string),
        ..ListOptions::default()
    };
    Ok(store
        .list(&res, &options)?
        .items
        .iter()
        .filter(|object| index_keys(object, key).iter().any(|k| k == value))
        .map(Value::to_string)
        .collect())
}

/// Creates an object; a kind a real server answers without storing (a
/// review, a binding) is answered the same way.
pub fn create(
    store: &Store,
    kind: KindRef<'_>,
    namespace: Option<&str>,
    body: &str,
    field_manager: &str,
) -> Result<String, Status> {
    let res = serving(store, kind, "create")?;
    if !res.is_stored() {
        return Ok(crate::kinds::review::answer(&res, namespace, body.as_bytes())?.to_string());
    }
    let object = decode_object(body.as_bytes(), &res)?;
    let created = store.create(
        &res,
        namespace,
        object,
        &write_options(field_manager, false),
    )?;
    Ok(created.to_string())
}

/// Replaces an object, or its status subresource.
pub fn replace(
    store: &Store,
    target: TargetRef<'_>,
    body: &str,
    status: bool,
    field_manager: &str,
) -> Result<String, Status> {
    let res = serving(store, target.kind, "update")?;
    let object = decode_object(body.as_bytes(), &res)?;
    let options = write_options(field_manager, status);
    Ok(store
        .replace(&res, target.namespace, target.name, object, &options)?
        .to_string())
}

/// Patches an object, or its status subresource.
pub fn patch(
    store: &Store,
    target: TargetRef<'_>,
    patch: &CallPatch,
    body: &str,
    status: bool,
    field_manager: &str,
) -> Result<String, Status> {
    let res = serving(store, target.kind, "patch")?;
    let kind = match patch {
        CallPatch::Merge => PatchType::Merge,
        CallPatch::Json => PatchType::Json,
        CallPatch::Apply { force } => PatchType::Apply { force: *force },
    };
    let options = write_options(field_manager, status);
    Ok(store
        .patch(
            &res,
            target.namespace,
            target.name,
            &kind,
            body.as_bytes(),
            &options,
        )?
        .to_string())
}

/// Deletes an object.
pub fn delete(
    store: &Store,
    target: TargetRef<'_>,
    propagation: Option<Propagation>,
) -> Result<(), Status> {
    let res = serving(store, target.kind, "delete")?;
    store.delete(&res, target.namespace, target.name, propagation)?;
    Ok(())
}

/// Longest Event reason a real server takes.
pub const MAX_EVENT_REASON: usize = 128;

/// Whether an Event's reason is one a real server takes; if not, the 422
/// every rekon backend answers `record-event` with.
pub fn check_event_reason(reason: &str) -> Result<(), Status> {
    if reason.is_empty() || reason.len() > MAX_EVENT_REASON {
        return Err(Status::new(
            422,
            "Invalid",
            format!(
                "the Event's reason must be 1 to {MAX_EVENT_REASON} characters, not {}",
                reason.len()
            ),
        ));
    }
    Ok(())
}

/// Adds (or replaces) a fixture object, registering its kind when the
/// store does not serve it (namespaced if the object has a namespace), so
/// fixtures need no CustomResourceDefinition. Namespaces it names are
/// created; a `status` given is kept (written through the subresource), so
/// are a `creationTimestamp` and, on an object with finalizers, a
/// `deletionTimestamp` (see [`Store::seed_object`]).
pub fn seed(store: &Store, object: Value) -> Result<Value, Status> {
    let api_version = object["apiVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let kind = object["kind"].as_str().unwrap_or_default().to_string();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", &api_version));
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .map(str::to_string);
    if kind.is_empty() {
        return Err(Status::bad_request("the object has no kind"));
    }
    let res = match store.resource_for_kind(group, version, &kind) {
        Some(res) => res,
        None if kind == "CustomResourceDefinition" => {
            return Err(Status::resource_not_found());
        }
        None => {
            let plural = format!("{}s", kind.to_lowercase());
            let mut info = ResourceInfo::new(group, version, &kind, &plural, namespace.is_some());
            info.status_subresource = true;
            store.register(info.clone());
            info
        }
    };
    if res.namespaced {
        ensure_namespace(store, namespace.as_deref().unwrap_or("default"))?;
    }
    let stored = store.seed_object(object.clone())?;
    match object.get("status").filter(|s| !s.is_null()) {
        Some(status) if res.status_subresource => {
            // Written over what was just stored (its resourceVersion).
            let mut with_status = stored;
            with_status["status"] = status.clone();
            let name = meta(&with_status, "name").unwrap_or_default();
            let ns = res
                .namespaced
                .then(|| namespace.as_deref().unwrap_or("default"));
            store.replace(
                &res,
                ns,
                &name,
                with_status,
                &write_options("fixture", true),
            )
        }
        _ => Ok(stored),
    }
}

/// Creates the namespace `name` if it does not exist.
pub fn ensure_namespace(store: &Store, name: &str) -> Result<(), Status> {
    let res = store
        .resource_for_kind("", "v1", "Namespace")
        .expect("the store serves namespaces");
    if store.get(&res, None, name).is_err() {
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        store.apply_object(ns)?;
    }
    Ok(())
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
    use super::*;

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

    fn kind(group: &'static str, version: &'static str, kind: &'static str) -> KindRef<'static> {
        KindRef {
            group,
            version,
            kind,
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
                kind("apps", "v1beta1", "Deployment"),
                Some("x"),
                true,
            ),
            (
                "a verb not granted",
                "delete",
                kind("apps", "v1", "Deployment"),
                Some("x"),
                false,
            ),
            (
                "another group",
                "get",
                kind("extensions", "v1", "Deployment"),
                Some("x"),
                false,
            ),
            (
                "a listed namespace",
                "get",
                kind("", "v1", "Secret"),
                Some("team-a"),
                true,
            ),
            (
                "another namespace",
                "get",
                kind("", "v1", "Secret"),
                Some("team-b"),
                false,
            ),
            (
                "cluster-wide from a namespaced grant",
                "get",
                kind("", "v1", "Secret"),
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
                kind("", "v1", "Secret"),
                Some("default"),
                "its manifest does not grant it"
            ),
            "module \"app\" may not delete Secret/v1 in namespace \"default\": its manifest does not grant it"
        );
    }

    #[test]
    fn calls_answer_as_the_api_server_does() {
        let store = Store::new(StoreConfig::default());
        let cm = kind("", "v1", "ConfigMap");
        let target = TargetRef {
            kind: cm,
            namespace: Some("default"),
            name: "c",
        };
        assert_eq!(get(&store, target).unwrap_err().code, 404);
        assert_eq!(
            list(&store, kind("example.com", "v1", "Widget"), None, None)
                .unwrap_err()
                .reason,
            "NotFound"
        );
        // An apply body is YAML, as for a real server: a trailing comma is fine.
        let applied = patch(
            &store,
            target,
            &CallPatch::Apply { force: false },
            r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1",}}"#,
            false,
            "rekon-test",
        )
        .unwrap();
        assert!(applied.contains(r#""a":"1""#), "{applied}");
        let again = create(
            &store,
            cm,
            Some("default"),
            r#"{"metadata": {"name": "c"}}"#,
            "m",
        )
        .unwrap_err();
        assert_eq!((again.code, again.reason.as_str()), (409, "AlreadyExists"));
        let broken = create(&store, cm, Some("default"), "{not json", "m").unwrap_err();
        assert_eq!(broken.code, 400);
        let cs = kind("", "v1", "ComponentStatus");
        let refused = create(&store, cs, None, r#"{"metadata": {"name": "x"}}"#, "m").unwrap_err();
        assert_eq!(refused.code, 405);
        let review = create(
            &store,
            kind("authorization.k8s.io", "v1", "SelfSubjectAccessReview"),
            None,
            r#"{"spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}}"#,
            "m",
        )
        .unwrap();
        assert!(review.contains(r#""allowed":true"#), "{review}");
        assert_eq!(check_event_reason("").unwrap_err().code, 422);
    }
}
