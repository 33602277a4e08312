//! The object store: Kubernetes semantics without HTTP.
//!
//! [`Store`] keeps objects in memory with one resourceVersion counter for the
//! whole store, uid and creationTimestamp, generation (bumped by spec changes
//! only), the status subresource, finalizers and deletionTimestamp,
//! ownerReference garbage collection, namespace deletion, label and field
//! selectors, paginated lists, server-side apply with managedFields, and a
//! history of watch events so watches resume from a resourceVersion (or get a
//! 410 Gone when it is too old).
//!
//! It is the single implementation behind the HTTP server, the offline
//! `rekon reconcile` command and the SDK's native test harness.

mod patch;
pub mod selector;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::ops::Bound;
use std::sync::{Arc, Mutex, MutexGuard};

use base64::Engine as _;
use serde_json::{Map, Value, json};

use patch::FieldPath;
pub use selector::{FieldSelector, LabelSelector};

/// Settings of a [`Store`].
#[derive(Clone, Debug)]
pub struct StoreConfig {
    /// How many watch events are kept so that watches can resume from an
    /// older resourceVersion. A watch from a version older than the oldest
    /// kept event gets 410 Gone ("too old resource version").
    pub history_limit: usize,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            history_limit: 10_000,
        }
    }
}

impl StoreConfig {
    /// Sets [`StoreConfig::history_limit`].
    #[must_use]
    pub fn history_limit(mut self, n: usize) -> Self {
        self.history_limit = n;
        self
    }
}

/// A served resource: what discovery lists and what the store keys objects by.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceInfo {
    /// API group; empty for the core group.
    pub group: String,
    /// API version, such as `v1`.
    pub version: String,
    /// Kind, such as `ConfigMap`.
    pub kind: String,
    /// Plural resource name used in URLs, such as `configmaps`.
    pub plural: String,
    /// Singular name, such as `configmap`.
    pub singular: String,
    /// Short names kubectl accepts, such as `cm`.
    pub short_names: Vec<String>,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Whether the `status` subresource is enabled.
    pub status_subresource: bool,
}

impl ResourceInfo {
    /// The `apiVersion` of objects of this resource: `v1` or `apps/v1`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The group-qualified resource name used in messages: `configmaps`,
    /// `deployments.apps`.
    pub fn qualified_plural(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    fn builtin(
        group: &str,
        version: &str,
        kind: &str,
        plural: &str,
        short: &[&str],
        namespaced: bool,
        status: bool,
    ) -> ResourceInfo {
        ResourceInfo {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.into(),
            singular: kind.to_ascii_lowercase(),
            short_names: short.iter().map(|s| s.to_string()).collect(),
            namespaced,
            status_subresource: status,
        }
    }

    /// Whether objects of this kind carry `metadata.generation`.
    fn has_generation(&self) -> bool {
        let no_generation_core = [
            "ConfigMap",
            "Secret",
            "Event",
            "ServiceAccount",
            "Namespace",
            "Service",
            "Endpoints",
        ];
        !((self.group.is_empty() && no_generation_core.contains(&self.kind.as_str()))
            || matches!(
                self.group.as_str(),
                "coordination.k8s.io" | "events.k8s.io" | "rbac.authorization.k8s.io"
            ))
    }

    /// Where its objects are stored: events.k8s.io/v1 Events are core/v1
    /// Events, as upstream (see [`event_view`]).
    fn key(&self) -> (String, String) {
        if self.is_events_api() {
            return (String::new(), self.plural.clone());
        }
        (self.group.clone(), self.plural.clone())
    }

    /// events.k8s.io Events: a view of core/v1 Events.
    fn is_events_api(&self) -> bool {
        self.group == "events.k8s.io" && self.plural == "events"
    }

    /// `o` (as stored) as this resource's clients see its fields.
    fn view<'a>(&self, o: &'a Value) -> std::borrow::Cow<'a, Value> {
        if self.is_events_api() {
            std::borrow::Cow::Owned(event_view(o))
        } else {
            std::borrow::Cow::Borrowed(o)
        }
    }
}

/// The built-in resources every store serves.
pub fn builtin_resources() -> Vec<ResourceInfo> {
    let b = ResourceInfo::builtin;
    vec![
        b("", "v1", "Namespace", "namespaces", &["ns"], false, true),
        b("", "v1", "ConfigMap", "configmaps", &["cm"], true, false),
        b("", "v1", "Secret", "secrets", &[], true, false),
        b("", "v1", "Event", "events", &["ev"], true, false),
        b(
            "",
            "v1",
            "ServiceAccount",
            "serviceaccounts",
            &["sa"],
            true,
            false,
        ),
        b("", "v1", "Pod", "pods", &["po"], true, true),
        b("", "v1", "Service", "services", &["svc"], true, true),
        b(
            "apps",
            "v1",
            "Deployment",
            "deployments",
            &["deploy"],
            true,
            true,
        ),
        b(
            "coordination.k8s.io",
            "v1",
            "Lease",
            "leases",
            &[],
            true,
            false,
        ),
        b(
            "events.k8s.io",
            "v1",
            "Event",
            "events",
            &["ev"],
            true,
            false,
        ),
        b(
            "rbac.authorization.k8s.io",
            "v1",
            "Role",
            "roles",
            &[],
            true,
            false,
        ),
        b(
            "rbac.authorization.k8s.io",
            "v1",
            "RoleBinding",
            "rolebindings",
            &[],
            true,
            false,
        ),
        b(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole",
            "clusterroles",
            &[],
            false,
            false,
        ),
        b(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
            &[],
            false,
            false,
        ),
        b(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            &["crd", "crds"],
            false,
            true,
        ),
    ]
}

/// An API error, shaped like `metav1.Status`.
#[derive(Clone, Debug, PartialEq)]
pub struct Status {
    /// HTTP status code.
    pub code: u16,
    /// Machine-readable reason, such as `NotFound`.
    pub reason: String,
    /// Human-readable message, as the real server words it.
    pub message: String,
    /// `details` (name, group, kind, causes), when the real server sends them.
    pub details: Option<Value>,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.reason, self.code, self.message)
    }
}

impl std::error::Error for Status {}

impl Status {
    /// A status with the given code, reason and message and no details.
    pub fn new(code: u16, reason: &str, message: impl Into<String>) -> Status {
        Status {
            code,
            reason: reason.into(),
            message: message.into(),
            details: None,
        }
    }

    /// This status as the JSON `metav1.Status` the real server writes.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("kind".into(), json!("Status"));
        m.insert("apiVersion".into(), json!("v1"));
        m.insert("metadata".into(), json!({}));
        m.insert("status".into(), json!("Failure"));
        m.insert("message".into(), json!(self.message));
        if !self.reason.is_empty() {
            m.insert("reason".into(), json!(self.reason));
        }
        if let Some(d) = &self.details {
            m.insert("details".into(), d.clone());
        }
        m.insert("code".into(), json!(self.code));
        Value::Object(m)
    }

    fn details_for(res: &ResourceInfo, name: &str) -> Value {
        let mut d = Map::new();
        d.insert("name".into(), json!(name));
        if !res.group.is_empty() {
            d.insert("group".into(), json!(res.group));
        }
        d.insert("kind".into(), json!(res.plural));
        Value::Object(d)
    }

    /// 404 NotFound for `name` of `res`.
    pub fn not_found(res: &ResourceInfo, name: &str) -> Status {
        Status {
            code: 404,
            reason: "NotFound".into(),
            message: format!("{} \"{}\" not found", res.qualified_plural(), name),
            details: Some(Status::details_for(res, name)),
        }
    }

    /// 404 for a resource the server does not serve.
    pub fn resource_not_found() -> Status {
        Status {
            code: 404,
            reason: "NotFound".into(),
            message: "the server could not find the requested resource".into(),
            details: Some(json!({})),
        }
    }

    /// 409 AlreadyExists.
    pub fn already_exists(res: &ResourceInfo, name: &str) -> Status {
        Status {
            code: 409,
            reason: "AlreadyExists".into(),
            message: format!("{} \"{}\" already exists", res.qualified_plural(), name),
            details: Some(Status::details_for(res, name)),
        }
    }

    /// 409 Conflict on a stale resourceVersion.
    pub fn conflict(res: &ResourceInfo, name: &str) -> Status {
        Status {
            code: 409,
            reason: "Conflict".into(),
            message: format!(
                "Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply your changes to the latest version and try again",
                res.qualified_plural(),
                name
            ),
            details: Some(Status::details_for(res, name)),
        }
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Status {
        Status::new(400, "BadRequest", message)
    }

    /// 422 Invalid with one cause.
    pub fn invalid(
        res: &ResourceInfo,
        name: &str,
        field: &str,
        cause_reason: &str,
        detail: &str,
    ) -> Status {
        Status::invalid_causes(res, name, &[(field, cause_reason, detail)])
    }

    /// 422 Invalid with several causes `(field, reason, message)`.
    pub fn invalid_causes(res: &ResourceInfo, name: &str, causes: &[(&str, &str, &str)]) -> Status {
        let msgs: Vec<String> = causes.iter().map(|(f, _, m)| format!("{f}: {m}")).collect();
        let joined = if msgs.len() == 1 {
            msgs[0].clone()
        } else {
            format!("[{}]", msgs.join(", "))
        };
        let mut d = Map::new();
        d.insert("name".into(), json!(name));
        if !res.group.is_empty() {
            d.insert("group".into(), json!(res.group));
        }
        d.insert("kind".into(), json!(res.kind));
        d.insert(
            "causes".into(),
            Value::Array(
                causes
                    .iter()
                    .map(|(f, r, m)| json!({"reason": r, "message": m, "field": f}))
                    .collect(),
            ),
        );
        Status {
            code: 422,
            reason: "Invalid".into(),
            message: format!("{} \"{}\" is invalid: {}", res.kind, name, joined),
            details: Some(Value::Object(d)),
        }
    }

    /// 410 Expired for a watch or list from a version older than the history.
    pub fn expired(message: impl Into<String>) -> Status {
        Status::new(410, "Expired", message)
    }

    /// 500 InternalError.
    pub fn internal(message: impl Into<String>) -> Status {
        Status {
            code: 500,
            reason: "InternalError".into(),
            message: format!("Internal error occurred: {}", message.into()),
            details: None,
        }
    }

    /// 429 TooManyRequests, as sent with a `Retry-After` header.
    pub fn too_many_requests(retry_after_seconds: u64) -> Status {
        Status {
            code: 429,
            reason: "TooManyRequests".into(),
            message: "Too many requests, please try again later.".into(),
            details: Some(json!({"retryAfterSeconds": retry_after_seconds})),
        }
    }

    /// 415 for a strategic merge patch on a custom resource.
    pub fn unsupported_patch() -> Status {
        Status::new(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
        )
    }

    fn json_patch_failed() -> Status {
        Status {
            code: 422,
            reason: "Invalid".into(),
            message: "the server rejected our request due to an error in our request".into(),
            details: Some(json!({})),
        }
    }
}

/// The kind of patch in a [`Store::patch`] call, from the request's Content-Type.
#[derive(Clone, Debug, PartialEq)]
pub enum PatchType {
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/strategic-merge-patch+json`; built-in kinds only.
    StrategicMerge,
    /// `application/apply-patch+yaml`: server-side apply.
    Apply {
        /// Take ownership of conflicting fields instead of failing with 409.
        force: bool,
    },
}

/// How dependents (by ownerReferences) are handled when their owner is deleted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Propagation {
    /// Delete the owner now; dependents are collected right after.
    Background,
    /// Delete dependents first; the owner waits with the `foregroundDeletion` finalizer.
    Foreground,
    /// Keep dependents and remove their ownerReferences to the owner.
    Orphan,
}

/// What a list selects and how it pages.
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    /// Only objects in this namespace; all namespaces when `None`.
    pub namespace: Option<String>,
    /// A label selector: `=`, `==`, `!=`, `in`, `notin`, exists, `!`exists.
    pub label_selector: Option<String>,
    /// A field selector on `metadata.name` and `metadata.namespace`.
    pub field_selector: Option<String>,
    /// The page size.
    pub limit: Option<usize>,
    /// The `continue` token of the previous page.
    pub continue_token: Option<String>,
}

/// One page of a list.
#[derive(Clone, Debug)]
pub struct ObjectList {
    /// The objects, sorted by namespace then name, each with apiVersion and kind.
    pub items: Vec<Value>,
    /// The resourceVersion the list was read at.
    pub resource_version: String,
    /// Token for the next page, if any.
    pub continue_token: Option<String>,
    /// How many objects remain after this page (only without selectors).
    pub remaining_item_count: Option<u64>,
}

/// Options of a write.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    /// The field manager recorded in managedFields; required for apply.
    pub field_manager: Option<String>,
    /// `Some("status")` to write the status subresource.
    pub subresource: Option<String>,
    /// Validate and compute the result without storing it.
    pub dry_run: bool,
}

/// The result of [`Store::delete`].
#[derive(Clone, Debug)]
pub enum DeleteOutcome {
    /// The object is gone; this is its last state.
    Deleted(Value),
    /// The object stays until its finalizers are removed; `deletionTimestamp` is set.
    Pending(Value),
}

/// The type of a watch event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// The object was created (or entered the selection).
    Added,
    /// The object changed.
    Modified,
    /// The object was deleted (or left the selection).
    Deleted,
    /// A progress marker: the object carries only the kind, apiVersion and
    /// the current resourceVersion (sent by [`Store::watch_bookmark`]).
    Bookmark,
}

impl EventType {
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub fn as_str(&self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
            EventType::Bookmark => "BOOKMARK",
        }
    }
}

/// One watch event, delivered to a watch's sink.
#[derive(Clone, Debug)]
pub struct WatchEvent {
    /// ADDED, MODIFIED or DELETED.
    pub event_type: EventType,
    /// The object, with apiVersion and kind.
    pub object: Value,
}

/// Identifies an open watch, for [`Store::unwatch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WatchId(u64);

/// Where a watch delivers events; returning `false` closes the watch.
pub type WatchSink = Box<dyn FnMut(WatchEvent) -> bool + Send>;

struct HistEvent {
    rv: u64,
    key: (String, String),
    event_type: EventType,
    object: Value,
    old: Option<Value>,
}

struct Subscription {
    id: u64,
    res: ResourceInfo,
    namespace: Option<String>,
    labels: LabelSelector,
    fields: FieldSelector,
    min_rv: u64,
    sink: WatchSink,
}

impl Subscription {
    fn deliver(&mut self, ev: &HistEvent) -> bool {
        if ev.key != self.res.key() || ev.rv <= self.min_rv {
            return true;
        }
        let matches = |o: &Value| {
            let ns_ok = match &self.namespace {
                Some(ns) => {
                    o.pointer("/metadata/namespace").and_then(Value::as_str) == Some(ns.as_str())
                }
                None => true,
            };
            ns_ok && self.labels.matches(o) && self.fields.matches(o)
        };
        let object = self.res.view(&ev.object);
        let now = matches(&object);
        let before = ev
            .old
            .as_ref()
            .is_some_and(|old| matches(&self.res.view(old)));
        let event_type = match (ev.event_type, before, now) {
            (EventType::Deleted, _, true) => EventType::Deleted,
            (EventType::Deleted, _, false) => return true,
            (EventType::Added, _, true) => EventType::Added,
            (EventType::Modified, true, true) => EventType::Modified,
            (EventType::Modified, false, true) => EventType::Added,
            (_, true, false) => EventType::Deleted,
            _ => return true,
        };
        (self.sink)(WatchEvent {
            event_type,
            object: arrange(&self.res, &object),
        })
    }
}

type ObjKey = (String, String);

struct Inner {
    config: StoreConfig,
    rv: u64,
    resources: Vec<ResourceInfo>,
    objects: HashMap<(String, String), BTreeMap<ObjKey, Value>>,
    history: VecDeque<HistEvent>,
    history_start: u64,
    subs: Vec<Subscription>,
    next_watch: u64,
    deleted_uids: HashSet<String>,
}

/// The in-memory object store. Cheap to clone (an `Arc` inside) and thread-safe.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn meta(o: &Value, field: &str) -> Option<String> {
    o.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn meta_mut(o: &mut Value) -> &mut Map<String, Value> {
    if !o.is_object() {
        *o = json!({});
    }
    let obj = o.as_object_mut().expect("made an object above");
    let md = obj.entry("metadata").or_insert_with(|| json!({}));
    if !md.is_object() {
        *md = json!({});
    }
    md.as_object_mut().expect("made an object above")
}

fn finalizers(o: &Value) -> Vec<String> {
    o.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn is_deleting(o: &Value) -> bool {
    o.pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

fn owner_uids(o: &Value) -> Vec<String> {
    o.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|r| r.get("uid").and_then(Value::as_str))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

const META_ORDER: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// Fields core/v1 Events and events.k8s.io/v1 Events name differently:
/// (core/v1, events.k8s.io/v1). The others are the same.
const EVENT_FIELDS: [(&str, &str); 7] = [
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

/// A stored (core/v1) Event as events.k8s.io/v1 shows it: fields renamed,
/// empty optional ones left out, and the deprecated ones as upstream writes
/// them (`deprecatedSource: {}`, timestamps `null`).
fn event_view(core: &Value) -> Value {
    let Some(fields) = core.as_object() else {
        return core.clone();
    };
    let mut out = Map::new();
    for (key, value) in fields {
        let key = EVENT_FIELDS
            .iter()
            .find(|(c, _)| c == key)
            .map_or(key.as_str(), |(_, e)| e);
        let empty = match key {
            "reportingController" | "reportingInstance" => value == "",
            "deprecatedCount" => value == 0 || value.is_null(),
            _ => false,
        };
        if !empty {
            out.insert(key.to_string(), value.clone());
        }
    }
    for (key, default) in [
        ("eventTime", Value::Null),
        ("deprecatedSource", json!({})),
        ("deprecatedFirstTimestamp", Value::Null),
        ("deprecatedLastTimestamp", Value::Null),
    ] {
        out.entry(key).or_insert(default);
    }
    Value::Object(out)
}

/// An events.k8s.io/v1 Event as it is stored (core/v1 field names). A core
/// one is left as it is.
fn event_stored(view: Value) -> Value {
    let Value::Object(fields) = view else {
        return view;
    };
    Value::Object(
        fields
            .into_iter()
            .map(|(key, value)| {
                let key = EVENT_FIELDS
                    .iter()
                    .find(|(_, e)| *e == key)
                    .map_or(key, |(c, _)| c.to_string());
                (key, value)
            })
            .collect(),
    )
}

/// The object as clients see it: `kind`, `apiVersion`, `metadata` first.
fn present(res: &ResourceInfo, o: &Value) -> Value {
    arrange(res, &res.view(o))
}

/// An object already in `res`'s field names ([`ResourceInfo::view`]), in
/// the order clients see: `kind`, `apiVersion`, `metadata` first.
fn arrange(res: &ResourceInfo, o: &Value) -> Value {
    let mut out = Map::new();
    out.insert("kind".into(), json!(res.kind));
    out.insert("apiVersion".into(), json!(res.api_version()));
    if let Some(Value::Object(md)) = o.get("metadata") {
        let mut m = Map::new();
        for k in META_ORDER {
            if let Some(v) = md.get(*k) {
                m.insert((*k).into(), v.clone());
            }
        }
        for (k, v) in md {
            if !m.contains_key(k) {
                m.insert(k.clone(), v.clone());
            }
        }
        out.insert("metadata".into(), Value::Object(m));
    }
    if let Some(map) = o.as_object() {
        for (k, v) in map {
            if k != "kind" && k != "apiVersion" && k != "metadata" {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

const RFC1123_SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const RFC1123_LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

fn is_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

fn is_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_label)
}

fn random_suffix() -> String {
    const CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let bytes = uuid::Uuid::new_v4().into_bytes();
    bytes[..5]
        .iter()
        .map(|b| CHARS[*b as usize % CHARS.len()] as char)
        .collect()
}

fn parse_rv(s: &str) -> Result<u64, Status> {
    s.parse::<u64>()
        .map_err(|_| Status::bad_request(format!("invalid resource version \"{s}\"")))
}

fn encode_continue(rv: u64, start: &str) -> String {
    let tok = json!({"v": "meta.k8s.io/v1", "rv": rv, "start": format!("{start}\u{0}")});
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(tok.to_string())
}

fn decode_continue(s: &str) -> Result<(i64, String), Status> {
    let bad = || Status::bad_request("invalid continue token: continue key is not valid");
    let trimmed = s.trim_end_matches('=');
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(trimmed)
        .map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    let rv = v.get("rv").and_then(Value::as_i64).ok_or_else(bad)?;
    let start = v
        .get("start")
        .and_then(Value::as_str)
        .ok_or_else(bad)?
        .trim_end_matches('\u{0}')
        .to_string();
    Ok((rv, start))
}

fn list_key(ns: &str, name: &str) -> String {
    if ns.is_empty() {
        name.to_string()
    } else {
        format!("{ns}/{name}")
    }
}

/// Everything but metadata and status: what bumps generation.
fn spec_part(o: &Value) -> Value {
    match o {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| {
                    !matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind")
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The object without resourceVersion and managedFields times, to detect no-ops.
fn comparable(o: &Value) -> Value {
    let mut c = o.clone();
    if let Some(md) = c.get_mut("metadata").and_then(Value::as_object_mut) {
        md.remove("resourceVersion");
        if let Some(Value::Array(entries)) = md.get_mut("managedFields") {
            for e in entries.iter_mut() {
                if let Some(m) = e.as_object_mut() {
                    m.remove("time");
                }
            }
        }
    }
    if let Some(m) = c.as_object_mut() {
        m.remove("apiVersion");
        m.remove("kind");
    }
    c
}

struct ManagedEntry {
    manager: String,
    operation: String,
    api_version: String,
    time: String,
    subresource: Option<String>,
    fields: BTreeSet<FieldPath>,
}

fn read_managed(o: &Value) -> Vec<ManagedEntry> {
    o.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|e| ManagedEntry {
                    manager: e
                        .get("manager")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .into(),
                    operation: e
                        .get("operation")
                        .and_then(Value::as_str)
                        .unwrap_or("Update")
                        .into(),
                    api_version: e
                        .get("apiVersion")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .into(),
                    time: e.get("time").and_then(Value::as_str).unwrap_or("").into(),
                    subresource: e
                        .get("subresource")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    fields: e
                        .get("fieldsV1")
                        .map(patch::parse_fields_v1)
                        .unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn write_managed(o: &mut Value, entries: &[ManagedEntry]) {
    let arr: Vec<Value> = entries
        .iter()
        .filter(|e| !e.fields.is_empty())
        .map(|e| {
            let mut m = Map::new();
            m.insert("manager".into(), json!(e.manager));
            m.insert("operation".into(), json!(e.operation));
            m.insert("apiVersion".into(), json!(e.api_version));
            m.insert("time".into(), json!(e.time));
            m.insert("fieldsType".into(), json!("FieldsV1"));
            m.insert("fieldsV1".into(), patch::fields_v1(&e.fields));
            if let Some(s) = &e.subresource {
                m.insert("subresource".into(), json!(s));
            }
            Value::Object(m)
        })
        .collect();
    let md = meta_mut(o);
    if arr.is_empty() {
        md.remove("managedFields");
    } else {
        md.insert("managedFields".into(), Value::Array(arr));
    }
}

/// The fields a write through the main resource or through `/status` may own.
fn ownable(res: &ResourceInfo, o: &Value, subresource: Option<&str>) -> BTreeSet<FieldPath> {
    patch::leaf_paths(o)
        .into_iter()
        .filter(|p| {
            let is_status = p.first().map(String::as_str) == Some("status");
            if subresource == Some("status") {
                is_status
            } else {
                !(res.status_subresource && is_status)
            }
        })
        .collect()
}

/// Records an Update by `manager` from `old` to `new` in `new`'s managedFields.
fn track_update(
    res: &ResourceInfo,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
) {
    let mut entries = read_managed(old.unwrap_or(&Value::Null));
    let new_set = patch::leaf_paths(new);
    let changed: BTreeSet<FieldPath> = ownable(res, new, subresource)
        .into_iter()
        .filter(|p| old.and_then(|o| patch::get_path(o, p)) != patch::get_path(new, p))
        .collect();
    for e in entries.iter_mut() {
        e.fields
            .retain(|p| new_set.contains(p) && !changed.contains(p));
    }
    if !changed.is_empty() {
        let sub = subresource.map(str::to_string);
        let api_version = res.api_version();
        if let Some(e) = entries.iter_mut().find(|e| {
            e.manager == manager
                && e.operation == "Update"
                && e.subresource == sub
                && e.api_version == api_version
        }) {
            e.fields.extend(changed);
            e.time = now();
        } else {
            entries.push(ManagedEntry {
                manager: manager.into(),
                operation: "Update".into(),
                api_version,
                time: now(),
                subresource: sub,
                fields: changed,
            });
        }
    }
    write_managed(new, &entries);
}

fn path_display(p: &FieldPath) -> String {
    p.iter().map(|s| format!(".{s}")).collect()
}

impl Store {
    /// A store with the built-in kinds registered and the namespaces
    /// `default`, `kube-system`, `kube-public` and `kube-node-lease`.
    pub fn new(config: StoreConfig) -> Store {
        let store = Store {
            inner: Arc::new(Mutex::new(Inner {
                config,
                rv: 0,
                resources: builtin_resources(),
                objects: HashMap::new(),
                history: VecDeque::new(),
                history_start: 0,
                subs: Vec::new(),
                next_watch: 1,
                deleted_uids: HashSet::new(),
            })),
        };
        store.seed();
        store
    }

    fn seed(&self) {
        let ns = builtin_resources()
            .into_iter()
            .find(|r| r.plural == "namespaces")
            .expect("namespaces is built in");
        for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            let opts = WriteOptions {
                field_manager: Some("kube-apiserver".into()),
                ..WriteOptions::default()
            };
            // The store is empty, so creating these cannot fail.
            let _ = self.create(&ns, None, json!({"metadata": {"name": name}}), &opts);
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves consistent data (every write
        // is applied at once), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets every object and every open watch, keeping the resourceVersion
    /// counter moving forward and the registered resources; the history is
    /// compacted so resuming watches get 410. Built-in namespaces are recreated.
    pub fn reset(&self) {
        {
            let mut g = self.lock();
            g.objects.clear();
            g.subs.clear();
            g.history.clear();
            g.resources = builtin_resources();
            g.history_start = g.rv;
            g.deleted_uids.clear();
        }
        self.seed();
    }

    /// The resource serving `kind` in `group`/`version`.
    pub fn resource_for_kind(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Option<ResourceInfo> {
        self.lock()
            .resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
            .cloned()
    }

    /// The resource serving `plural` in `group`/`version`.
    pub fn resource_for_plural(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<ResourceInfo> {
        self.lock()
            .resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
            .cloned()
    }

    /// Every served resource, built-in ones first.
    pub fn resources(&self) -> Vec<ResourceInfo> {
        self.lock().resources.clone()
    }

    /// Serves a resource without a CRD (replacing one with the same
    /// group, version and plural).
    pub fn register(&self, info: ResourceInfo) {
        let mut g = self.lock();
        g.resources.retain(|r| {
            !(r.group == info.group && r.version == info.version && r.plural == info.plural)
        });
        g.resources.push(info);
    }

    /// The store's current resourceVersion.
    pub fn resource_version(&self) -> String {
        self.lock().rv.to_string()
    }

    /// Reads one object.
    pub fn get(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, Status> {
        let g = self.lock();
        let ns = if res.namespaced {
            namespace.unwrap_or("")
        } else {
            ""
        };
        g.objects
            .get(&res.key())
            .and_then(|m| m.get(&(ns.to_string(), name.to_string())))
            .map(|o| present(res, o))
            .ok_or_else(|| Status::not_found(res, name))
    }

    /// Lists objects, newest state, sorted by namespace then name.
    pub fn list(&self, res: &ResourceInfo, opts: &ListOptions) -> Result<ObjectList, Status> {
        let labels = LabelSelector::parse(opts.label_selector.as_deref().unwrap_or(""))?;
        let fields = FieldSelector::parse(
            opts.field_selector.as_deref().unwrap_or(""),
            &res.plural,
            &extra_fields(res),
        )?;
        let g = self.lock();
        let (list_rv, start) = match &opts.continue_token {
            Some(tok) if !tok.is_empty() => {
                let (rv, start) = decode_continue(tok)?;
                if rv < 0 || (rv as u64) < g.history_start {
                    return Err(Status::expired(
                        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
                    ));
                }
                (rv as u64, Some(start))
            }
            _ => (g.rv, None),
        };
        let ns_filter = if res.namespaced {
            opts.namespace.as_deref()
        } else {
            None
        };
        // A range read from where the previous page stopped (or the
        // namespace's first object), like etcd serves a paginated list:
        // a page costs its own objects, not the whole collection.
        let after: Option<ObjKey> = start.map(|s| match s.split_once('/') {
            Some((ns, name)) => (ns.to_string(), name.to_string()),
            None => (String::new(), s),
        });
        let first = ns_filter.map(|ns| (ns.to_string(), String::new()));
        let lower = match (after, first) {
            (Some(after), Some(first)) if first > after => Bound::Included(first),
            (Some(after), _) => Bound::Excluded(after),
            (None, Some(first)) => Bound::Included(first),
            (None, None) => Bound::Unbounded,
        };
        let limit = opts.limit.filter(|l| *l > 0).unwrap_or(usize::MAX);
        // remainingItemCount is only given without selectors (as upstream).
        let count_rest = labels.is_empty() && fields.is_empty();
        let mut page: Vec<Value> = Vec::new();
        let mut last: Option<&ObjKey> = None;
        let mut more = 0u64;
        if let Some(m) = g.objects.get(&res.key()) {
            for (k, o) in m.range((lower, Bound::Unbounded)) {
                if ns_filter.is_some_and(|ns| ns != k.0) {
                    break;
                }
                let seen = res.view(o);
                if !(labels.matches(&seen) && fields.matches(&seen)) {
                    continue;
                }
                if page.len() < limit {
                    page.push(arrange(res, &seen));
                    last = Some(k);
                } else {
                    more += 1;
                    if !count_rest {
                        break;
                    }
                }
            }
        }
        let (continue_token, remaining) = match last {
            Some(k) if more > 0 => (
                Some(encode_continue(list_rv, &list_key(&k.0, &k.1))),
                count_rest.then_some(more),
            ),
            _ => (None, None),
        };
        Ok(ObjectList {
            items: page,
            resource_version: list_rv.to_string(),
            continue_token,
            remaining_item_count: remaining,
        })
    }

    /// Creates an object. `namespace` (or the object's own) must exist.
    pub fn create(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        object: Value,
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        let mut g = self.lock();
        let out = g.create(res, namespace, object, opts)?;
        Ok(present(res, &out))
    }

    /// Replaces an object (PUT). A `metadata.resourceVersion` in `object` is a
    /// precondition: a stale one gets 409 Conflict.
    pub fn replace(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        object: Value,
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        let mut g = self.lock();
        let out = g.replace(res, namespace, name, object, opts)?;
        Ok(present(res, &out))
    }

    /// Patches an object. Apply creates it when missing and needs
    /// `opts.field_manager` (422 otherwise).
    pub fn patch(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        patch: &PatchType,
        body: &[u8],
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        let mut g = self.lock();
        let out = g.patch(res, namespace, name, patch, body, opts)?;
        Ok(present(res, &out))
    }

    /// Patches an object, telling whether apply created it.
    pub fn patch_created(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        patch: &PatchType,
        body: &[u8],
        opts: &WriteOptions,
    ) -> Result<(Value, bool), Status> {
        let mut g = self.lock();
        let ns = if res.namespaced {
            namespace.unwrap_or("")
        } else {
            ""
        };
        let existed = g.find(res, ns, name).is_some();
        let out = g.patch(res, namespace, name, patch, body, opts)?;
        Ok((present(res, &out), !existed))
    }

    /// Deletes an object. With finalizers (or Foreground/Orphan propagation)
    /// the object first gets `deletionTimestamp` and is returned as pending.
    pub fn delete(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        propagation: Option<Propagation>,
    ) -> Result<DeleteOutcome, Status> {
        let mut g = self.lock();
        let out = g.delete(res, namespace, name, propagation, false)?;
        g.collect_garbage();
        Ok(match out {
            DeleteOutcome::Deleted(o) => DeleteOutcome::Deleted(present(res, &o)),
            DeleteOutcome::Pending(o) => DeleteOutcome::Pending(present(res, &o)),
        })
    }

    /// Creates `object`, or replaces it if it exists, resolving its
    /// apiVersion and kind. A CustomResourceDefinition makes its kind served.
    pub fn apply_object(&self, object: Value) -> Result<Value, Status> {
        let api_version = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        let res = self
            .resource_for_kind(group, version, kind)
            .ok_or_else(|| {
                Status::new(
                    404,
                    "NotFound",
                    format!("no matches for kind \"{kind}\" in version \"{api_version}\""),
                )
            })?;
        let name = meta(&object, "name").unwrap_or_default();
        let ns = if res.namespaced {
            Some(meta(&object, "namespace").unwrap_or_else(|| "default".into()))
        } else {
            None
        };
        let opts = WriteOptions {
            field_manager: Some("rekon".into()),
            ..WriteOptions::default()
        };
        let mut g = self.lock();
        let nsr = ns.clone().unwrap_or_default();
        let out = if !name.is_empty() && g.find(&res, &nsr, &name).is_some() {
            let mut object = object;
            meta_mut(&mut object).remove("resourceVersion");
            g.replace(&res, ns.as_deref(), &name, object, &opts)?
        } else {
            g.create(&res, ns.as_deref(), object, &opts)?
        };
        Ok(present(&res, &out))
    }

    /// Opens a watch on `res`, filtered by `opts`' namespace and selectors
    /// (limit and continue are ignored).
    ///
    /// With `resource_version` `None` or `"0"`, the sink first gets a
    /// synthetic ADDED event per matching object, then live events. With a
    /// version, it gets every event after it, then live events; a version
    /// older than the kept history is a 410 Expired error. The sink is called
    /// with the store locked: it must not block or call back into the store.
    pub fn watch(
        &self,
        res: &ResourceInfo,
        opts: &ListOptions,
        resource_version: Option<&str>,
        sink: WatchSink,
    ) -> Result<WatchId, Status> {
        let labels = LabelSelector::parse(opts.label_selector.as_deref().unwrap_or(""))?;
        let fields = FieldSelector::parse(
            opts.field_selector.as_deref().unwrap_or(""),
            &res.plural,
            &extra_fields(res),
        )?;
        let mut g = self.lock();
        let namespace = if res.namespaced {
            opts.namespace.clone()
        } else {
            None
        };
        let id = g.next_watch;
        g.next_watch += 1;
        let mut sub = Subscription {
            id,
            res: res.clone(),
            namespace,
            labels,
            fields,
            min_rv: 0,
            sink,
        };
        match resource_version.filter(|v| !v.is_empty() && *v != "0") {
            None => {
                sub.min_rv = g.rv;
                if let Some(m) = g.objects.get(&res.key()) {
                    for o in m.values() {
                        let ev = HistEvent {
                            rv: g.rv + 1,
                            key: res.key(),
                            event_type: EventType::Added,
                            object: o.clone(),
                            old: None,
                        };
                        if !sub.deliver(&ev) {
                            return Ok(WatchId(id));
                        }
                    }
                }
            }
            Some(v) => {
                let rv = parse_rv(v)?;
                if rv < g.history_start {
                    return Err(Status::expired(format!(
                        "too old resource version: {rv} ({})",
                        g.history_start + 1
                    )));
                }
                sub.min_rv = rv;
                for ev in g.history.iter() {
                    if !sub.deliver(ev) {
                        return Ok(WatchId(id));
                    }
                }
                sub.min_rv = rv.max(g.rv);
            }
        }
        g.subs.push(sub);
        Ok(WatchId(id))
    }

    /// Like [`Store::watch`], delivering into a standard channel.
    pub fn watch_channel(
        &self,
        res: &ResourceInfo,
        opts: &ListOptions,
        resource_version: Option<&str>,
    ) -> Result<(WatchId, std::sync::mpsc::Receiver<WatchEvent>), Status> {
        let (tx, rx) = std::sync::mpsc::channel();
        let id = self.watch(
            res,
            opts,
            resource_version,
            Box::new(move |ev| tx.send(ev).is_ok()),
        )?;
        Ok((id, rx))
    }

    /// Closes one watch: its sink is dropped.
    pub fn unwatch(&self, id: WatchId) {
        self.lock().subs.retain(|s| s.id != id.0);
    }

    /// Closes every open watch (their sinks are dropped, so streams end).
    pub fn drop_watches(&self) {
        let subs = std::mem::take(&mut self.lock().subs);
        drop(subs);
    }

    /// Sends a BOOKMARK with the current resourceVersion to one watch, in
    /// order with its other events. Returns `false` when the watch is closed.
    /// `initial_events_end` adds the `k8s.io/initial-events-end` annotation.
    pub fn watch_bookmark(&self, id: WatchId, initial_events_end: bool) -> bool {
        let mut g = self.lock();
        let rv = g.rv;
        let Some(pos) = g.subs.iter().position(|s| s.id == id.0) else {
            return false;
        };
        let sub = &mut g.subs[pos];
        let mut md = Map::new();
        md.insert("resourceVersion".into(), json!(rv.to_string()));
        if initial_events_end {
            md.insert(
                "annotations".into(),
                json!({"k8s.io/initial-events-end": "true"}),
            );
        }
        let object =
            json!({"kind": sub.res.kind, "apiVersion": sub.res.api_version(), "metadata": md});
        let open = (sub.sink)(WatchEvent {
            event_type: EventType::Bookmark,
            object,
        });
        if !open {
            g.subs.remove(pos);
        }
        open
    }

    /// How many watches are open.
    pub fn watch_count(&self) -> usize {
        self.lock().subs.len()
    }

    /// Forgets the watch history: any watch resuming from a version before
    /// now gets 410 Expired, and so do older continue tokens.
    pub fn compact(&self) {
        let mut g = self.lock();
        g.history.clear();
        g.history_start = g.rv;
    }

    /// Every object and served resource as one JSON document, for
    /// [`Store::restore`] (`rekon dev` keeps its state across restarts this way).
    pub fn snapshot(&self) -> Value {
        let g = self.lock();
        let builtin = builtin_resources();
        let resources: Vec<Value> = g
            .resources
            .iter()
            .filter(|r| !builtin.contains(r))
            .map(|r| {
                json!({"group": r.group, "version": r.version, "kind": r.kind, "plural": r.plural,
                       "singular": r.singular, "shortNames": r.short_names, "namespaced": r.namespaced,
                       "statusSubresource": r.status_subresource})
            })
            .collect();
        let mut objects = Vec::new();
        for ((group, plural), m) in g.objects.iter() {
            for o in m.values() {
                objects.push(json!({"group": group, "plural": plural, "object": o}));
            }
        }
        json!({"resourceVersion": g.rv, "resources": resources, "objects": objects})
    }

    /// A store holding the state of a [`Store::snapshot`]. Watches start
    /// after the snapshot's resourceVersion (older ones get 410).
    pub fn restore(config: StoreConfig, snapshot: &Value) -> Result<Store, Status> {
        let bad = |what: &str| Status::bad_request(format!("invalid store snapshot: {what}"));
        let store = Store::new(config);
        {
            let mut g = store.lock();
            g.objects.clear();
            for r in snapshot
                .get("resources")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("resources"))?
            {
                let text = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                let info = ResourceInfo {
                    group: text("group"),
                    version: text("version"),
                    kind: text("kind"),
                    plural: text("plural"),
                    singular: text("singular"),
                    short_names: r
                        .get("shortNames")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default(),
                    namespaced: r.get("namespaced").and_then(Value::as_bool).unwrap_or(true),
                    status_subresource: r
                        .get("statusSubresource")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                };
                g.resources.retain(|x| {
                    !(x.group == info.group && x.version == info.version && x.plural == info.plural)
                });
                g.resources.push(info);
            }
            for e in snapshot
                .get("objects")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("objects"))?
            {
                let group = e
                    .get("group")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let plural = e
                    .get("plural")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad("plural"))?
                    .to_string();
                let o = e.get("object").cloned().ok_or_else(|| bad("object"))?;
                let ns = meta(&o, "namespace").unwrap_or_default();
                let name = meta(&o, "name").ok_or_else(|| bad("name"))?;
                g.objects
                    .entry((group, plural))
                    .or_default()
                    .insert((ns, name), o);
            }
            let rv = snapshot
                .get("resourceVersion")
                .and_then(Value::as_u64)
                .ok_or_else(|| bad("resourceVersion"))?;
            g.rv = g.rv.max(rv);
            g.history.clear();
            g.history_start = g.rv;
        }
        Ok(store)
    }

    /// The oldest resourceVersion a watch can still resume from.
    pub fn oldest_resource_version(&self) -> String {
        self.lock().history_start.to_string()
    }
}

fn extra_fields(res: &ResourceInfo) -> Vec<&'static str> {
    match (res.group.as_str(), res.kind.as_str()) {
        ("", "Event") | ("events.k8s.io", "Event") => vec![
            "involvedObject.name",
            "involvedObject.namespace",
            "involvedObject.kind",
            "involvedObject.uid",
            "reason",
            "type",
            "regarding.name",
            "regarding.kind",
            "regarding.namespace",
        ],
        ("", "Secret") => vec!["type"],
        ("", "Pod") => vec!["spec.nodeName", "status.phase", "spec.serviceAccountName"],
        ("", "Namespace") => vec!["status.phase"],
        _ => vec![],
    }
}

impl Inner {
    fn find(&self, res: &ResourceInfo, ns: &str, name: &str) -> Option<&Value> {
        self.objects
            .get(&res.key())?
            .get(&(ns.to_string(), name.to_string()))
    }

    fn resource_by_key(&self, key: &(String, String)) -> Option<ResourceInfo> {
        self.resources
            .iter()
            .find(|r| r.group == key.0 && r.plural == key.1)
            .cloned()
    }

    /// Stores `obj` (or removes it for Deleted) at a new resourceVersion and
    /// notifies watches. Returns the object as stored.
    fn commit(
        &mut self,
        res: &ResourceInfo,
        event_type: EventType,
        obj: Value,
        old: Option<Value>,
    ) -> Value {
        let (mut obj, old) = if res.is_events_api() {
            (event_stored(obj), old.map(event_stored))
        } else {
            (obj, old)
        };
        canonical_bytes(res, &mut obj);
        self.rv += 1;
        let rv = self.rv;
        meta_mut(&mut obj).insert("resourceVersion".into(), json!(rv.to_string()));
        let ns = meta(&obj, "namespace").unwrap_or_default();
        let name = meta(&obj, "name").unwrap_or_default();
        let map = self.objects.entry(res.key()).or_default();
        if event_type == EventType::Deleted {
            map.remove(&(ns, name));
            if let Some(uid) = meta(&obj, "uid") {
                self.deleted_uids.insert(uid);
            }
        } else {
            map.insert((ns, name), obj.clone());
        }
        let ev = HistEvent {
            rv,
            key: res.key(),
            event_type,
            object: obj.clone(),
            old,
        };
        self.subs.retain_mut(|s| s.deliver(&ev));
        self.history.push_back(ev);
        while self.history.len() > self.config.history_limit.max(1) {
            if let Some(old) = self.history.pop_front() {
                self.history_start = old.rv;
            }
        }
        obj
    }

    fn resolve_ns(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        obj: &Value,
        name: &str,
    ) -> Result<String, Status> {
        if !res.namespaced {
            return Ok(String::new());
        }
        let from_obj = meta(obj, "namespace").filter(|s| !s.is_empty());
        match (namespace, from_obj) {
            (Some(a), Some(b)) if a != b => Err(Status::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            )),
            (Some(a), _) => Ok(a.to_string()),
            (None, Some(b)) => Ok(b),
            (None, None) => Err(Status::bad_request(format!(
                "an empty namespace may not be set during creation of {} \"{name}\"",
                res.qualified_plural()
            ))),
        }
    }

    fn check_namespace(&self, res: &ResourceInfo, ns: &str, name: &str) -> Result<(), Status> {
        if !res.namespaced {
            return Ok(());
        }
        let nsres = self
            .resources
            .iter()
            .find(|r| r.group.is_empty() && r.plural == "namespaces")
            .cloned()
            .expect("namespaces is built in");
        match self.find(&nsres, "", ns) {
            None => Err(Status::not_found(&nsres, ns)),
            Some(n) if is_deleting(n) => {
                let mut st = Status::new(
                    403,
                    "Forbidden",
                    format!(
                        "{} \"{name}\" is forbidden: unable to create new content in namespace {ns} because it is being terminated",
                        res.qualified_plural()
                    ),
                );
                let mut d = Status::details_for(res, name);
                if let Some(m) = d.as_object_mut() {
                    m.insert(
                        "causes".into(),
                        json!([{"reason": "NamespaceTerminating", "message": format!("namespace {ns} is being terminated"), "field": "metadata.namespace"}]),
                    );
                }
                st.details = Some(d);
                Err(st)
            }
            Some(_) => Ok(()),
        }
    }

    fn validate(&self, res: &ResourceInfo, obj: &Value, name: &str) -> Result<(), Status> {
        let ok = if res.kind == "Namespace" && res.group.is_empty() {
            is_label(name)
        } else {
            is_subdomain(name)
        };
        if !ok {
            let rule = if res.kind == "Namespace" {
                RFC1123_LABEL
            } else {
                RFC1123_SUBDOMAIN
            };
            return Err(Status::invalid(
                res,
                name,
                "metadata.name",
                "FieldValueInvalid",
                &format!("Invalid value: \"{name}\": {rule}"),
            ));
        }
        if let Some(labels) = obj.pointer("/metadata/labels").and_then(Value::as_object) {
            for (k, v) in labels {
                if !v.is_string() {
                    return Err(Status::bad_request(format!(
                        "{} in version \"{}\" cannot be handled as a {}: json: cannot unmarshal {} into Go struct field ObjectMeta.metadata.labels of type string",
                        res.kind, res.version, res.kind, v
                    )));
                }
                let vs = v.as_str().unwrap_or("");
                let key_name = k.rsplit('/').next().unwrap_or("");
                let valid_value = vs.len() <= 63
                    && vs
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                    && (vs.is_empty()
                        || (vs.starts_with(|c: char| c.is_ascii_alphanumeric())
                            && vs.ends_with(|c: char| c.is_ascii_alphanumeric())));
                if key_name.is_empty() || !valid_value {
                    return Err(Status::invalid(
                        res,
                        name,
                        "metadata.labels",
                        "FieldValueInvalid",
                        &format!(
                            "Invalid value: \"{vs}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
                        ),
                    ));
                }
            }
        }
        if res.group == "coordination.k8s.io" && res.kind == "Lease" {
            for f in ["acquireTime", "renewTime"] {
                if let Some(t) = obj.pointer(&format!("/spec/{f}")).and_then(Value::as_str)
                    && !is_micro_time(t)
                {
                    return Err(Status::bad_request(format!(
                        "Lease in version \"v1\" cannot be handled as a Lease: parsing time \"{t}\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"{t}\" as \"2006-01-02T15:04:05.000000Z07:00\""
                    )));
                }
            }
        }
        Ok(())
    }

    fn create(
        &mut self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        mut obj: Value,
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        if !obj.is_object() {
            return Err(Status::bad_request(format!(
                "the body of the request was not a {} object",
                res.kind
            )));
        }
        let mut name = meta(&obj, "name").unwrap_or_default();
        if name.is_empty() {
            match meta(&obj, "generateName").filter(|g| !g.is_empty()) {
                Some(prefix) => {
                    name = format!("{prefix}{}", random_suffix());
                }
                None => {
                    return Err(Status::invalid(
                        res,
                        "",
                        "metadata.name",
                        "FieldValueRequired",
                        "Required value: name or generateName is required",
                    ));
                }
            }
        }
        let ns = self.resolve_ns(res, namespace, &obj, &name)?;
        self.validate(res, &obj, &name)?;
        self.check_namespace(res, &ns, &name)?;
        if self.find(res, &ns, &name).is_some() {
            return Err(Status::already_exists(res, &name));
        }
        {
            let md = meta_mut(&mut obj);
            md.insert("name".into(), json!(name));
            if res.namespaced {
                md.insert("namespace".into(), json!(ns));
            } else {
                md.remove("namespace");
            }
            md.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
            md.insert("creationTimestamp".into(), json!(now()));
            md.remove("deletionTimestamp");
            md.remove("deletionGracePeriodSeconds");
            md.remove("resourceVersion");
            md.remove("selfLink");
            if res.has_generation() {
                md.insert("generation".into(), json!(1));
            } else {
                md.remove("generation");
            }
            if md
                .get("managedFields")
                .is_some_and(|v| v.as_array().is_some_and(|a| a.is_empty()))
            {
                md.remove("managedFields");
            }
        }
        if res.status_subresource
            && let Some(m) = obj.as_object_mut()
        {
            m.remove("status");
        }
        self.defaults(res, &mut obj)?;
        if obj.pointer("/metadata/managedFields").is_none() {
            let manager = opts
                .field_manager
                .clone()
                .unwrap_or_else(|| "unknown".into());
            track_update(res, None, &mut obj, &manager, None);
        }
        let mut full = obj;
        if let Some(m) = full.as_object_mut() {
            m.insert("apiVersion".into(), json!(res.api_version()));
            m.insert("kind".into(), json!(res.kind));
        }
        if opts.dry_run {
            return Ok(full);
        }
        if res.group == "apiextensions.k8s.io" && res.kind == "CustomResourceDefinition" {
            self.register_crd(&full, None)?;
            full = self.crd_status(full);
        }
        Ok(self.commit(res, EventType::Added, full, None))
    }

    /// Fills what the real server defaults for the kinds whose defaults clients read.
    ///
    /// (Byte fields are made canonical in [`canonical_bytes`], on every write.)
    fn defaults(&self, res: &ResourceInfo, obj: &mut Value) -> Result<(), Status> {
        if !res.group.is_empty() {
            return Ok(());
        }
        let Some(m) = obj.as_object_mut() else {
            return Ok(());
        };
        match res.kind.as_str() {
            "Namespace" => {
                let name = m
                    .get("metadata")
                    .and_then(|md| md.get("name"))
                    .cloned()
                    .unwrap_or(Value::Null);
                if let Some(md) = m.get_mut("metadata").and_then(Value::as_object_mut) {
                    let labels = md.entry("labels").or_insert_with(|| json!({}));
                    if let Some(l) = labels.as_object_mut() {
                        l.insert("kubernetes.io/metadata.name".into(), name);
                    }
                }
                m.entry("spec")
                    .or_insert_with(|| json!({"finalizers": ["kubernetes"]}));
                m.insert("status".into(), json!({"phase": "Active"}));
            }
            "Secret" => {
                if let Some(Value::Object(sd)) = m.remove("stringData") {
                    let data = m.entry("data").or_insert_with(|| json!({}));
                    if let Some(d) = data.as_object_mut() {
                        for (k, v) in sd {
                            let s = v.as_str().unwrap_or("");
                            d.insert(
                                k,
                                json!(base64::engine::general_purpose::STANDARD.encode(s)),
                            );
                        }
                    }
                }
                m.entry("type").or_insert_with(|| json!("Opaque"));
            }
            "Pod" => {
                m.entry("status")
                    .or_insert_with(|| json!({"phase": "Pending", "qosClass": "BestEffort"}));
            }
            _ => {}
        }
        Ok(())
    }

    fn replace(
        &mut self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        obj: Value,
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        if !obj.is_object() {
            return Err(Status::bad_request(format!(
                "the body of the request was not a {} object",
                res.kind
            )));
        }
        if let Some(n) = meta(&obj, "name").filter(|n| !n.is_empty())
            && n != name
        {
            return Err(Status::bad_request(format!(
                "the name of the object ({n}) does not match the name on the URL ({name})"
            )));
        }
        let ns = self.resolve_ns(res, namespace, &obj, name)?;
        let existing = self
            .find(res, &ns, name)
            .map(|o| res.view(o).into_owned())
            .ok_or_else(|| Status::not_found(res, name))?;
        if let Some(rv) = meta(&obj, "resourceVersion").filter(|s| !s.is_empty()) {
            if rv.parse::<u64>().is_err() {
                return Err(Status::internal(format!(
                    "strconv.ParseUint: parsing \"{rv}\": invalid syntax"
                )));
            }
            if Some(rv) != meta(&existing, "resourceVersion") {
                return Err(Status::conflict(res, name));
            }
        }
        self.update(res, existing, obj, opts, None)
    }

    /// The update path shared by replace and patch: `incoming` becomes the
    /// object, keeping system metadata (and status or spec, by subresource).
    fn update(
        &mut self,
        res: &ResourceInfo,
        existing: Value,
        incoming: Value,
        opts: &WriteOptions,
        managed: Option<Vec<ManagedEntry>>,
    ) -> Result<Value, Status> {
        let name = meta(&existing, "name").unwrap_or_default();
        let subresource = opts.subresource.as_deref();
        if subresource.is_some_and(|s| s != "status")
            || (subresource == Some("status") && !res.status_subresource)
        {
            return Err(Status::not_found(res, &name));
        }
        self.validate(res, &incoming, &name)?;
        let mut new = if subresource == Some("status") {
            let mut n = existing.clone();
            if let Some(m) = n.as_object_mut() {
                match incoming.get("status") {
                    Some(s) => {
                        m.insert("status".into(), s.clone());
                    }
                    None => {
                        m.remove("status");
                    }
                }
            }
            n
        } else {
            let mut n = incoming.clone();
            if res.status_subresource
                && let Some(m) = n.as_object_mut()
            {
                match existing.get("status") {
                    Some(s) => {
                        m.insert("status".into(), s.clone());
                    }
                    None => {
                        m.remove("status");
                    }
                }
            }
            let old_md = existing
                .get("metadata")
                .cloned()
                .unwrap_or_else(|| json!({}));
            let md = meta_mut(&mut n);
            for k in [
                "name",
                "namespace",
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
            ] {
                match old_md.get(k) {
                    Some(v) => {
                        md.insert(k.into(), v.clone());
                    }
                    None => {
                        md.remove(k);
                    }
                }
            }
            if md.get("managedFields").is_none()
                && let Some(mf) = old_md.get("managedFields")
            {
                md.insert("managedFields".into(), mf.clone());
            }
            n
        };
        if let Some(m) = new.as_object_mut() {
            m.insert("apiVersion".into(), json!(res.api_version()));
            m.insert("kind".into(), json!(res.kind));
        }
        if res.kind == "Namespace" && res.group.is_empty() && subresource.is_none() {
            let name_v = json!(name);
            let md = meta_mut(&mut new);
            let labels = md.entry("labels").or_insert_with(|| json!({}));
            if let Some(l) = labels.as_object_mut() {
                l.insert("kubernetes.io/metadata.name".into(), name_v);
            }
            if let (Some(m), Some(s)) = (new.as_object_mut(), existing.get("status")) {
                m.insert("status".into(), s.clone());
            }
        }
        if is_deleting(&existing) {
            let old_f = finalizers(&existing);
            let added: Vec<String> = finalizers(&new)
                .into_iter()
                .filter(|f| !old_f.contains(f))
                .collect();
            if !added.is_empty() {
                let quoted: Vec<String> = added.iter().map(|f| format!("\"{f}\"")).collect();
                let msg = format!(
                    "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    quoted.join(", ")
                );
                return Err(Status::invalid_causes(
                    res,
                    &name,
                    &[
                        ("metadata.finalizers", "FieldValueForbidden", &msg),
                        ("metadata.finalizers", "FieldValueForbidden", &msg),
                    ],
                ));
            }
        }
        // managedFields: explicitly rewritten by the client, computed by apply, or tracked.
        let incoming_mf = incoming.pointer("/metadata/managedFields").cloned();
        let existing_mf = existing.pointer("/metadata/managedFields").cloned();
        match managed {
            Some(entries) => write_managed(&mut new, &entries),
            None if incoming_mf.is_some() && incoming_mf != existing_mf => {
                if incoming_mf
                    .as_ref()
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.is_empty())
                {
                    meta_mut(&mut new).remove("managedFields");
                }
            }
            None => {
                let manager = opts
                    .field_manager
                    .clone()
                    .unwrap_or_else(|| "unknown".into());
                track_update(res, Some(&existing), &mut new, &manager, subresource);
            }
        }
        if comparable(&new) == comparable(&existing) {
            return Ok(existing);
        }
        if res.has_generation() && spec_part(&new) != spec_part(&existing) {
            let g = existing
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            meta_mut(&mut new).insert("generation".into(), json!(g + 1));
        }
        if opts.dry_run {
            return Ok(new);
        }
        let is_crd = res.group == "apiextensions.k8s.io" && res.kind == "CustomResourceDefinition";
        if is_crd {
            self.register_crd(&new, Some(&existing))?;
            new = self.crd_status(new);
        }
        if is_deleting(&new) && finalizers(&new).is_empty() {
            // The write that removes the last finalizer deletes the object;
            // like the real server, it answers with the previous version
            // while the DELETED event carries a new one.
            let previous = existing.pointer("/metadata/resourceVersion").cloned();
            let mut out = self.finish_delete(res, new.clone(), Some(existing));
            if let Some(rv) = previous {
                meta_mut(&mut out).insert("resourceVersion".into(), rv);
            }
            self.collect_garbage();
            return Ok(out);
        }
        let out = self.commit(res, EventType::Modified, new, Some(existing));
        if is_deleting(&out) {
            self.collect_garbage();
        }
        Ok(out)
    }

    fn patch(
        &mut self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        ptype: &PatchType,
        body: &[u8],
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        let ns = if res.namespaced {
            namespace.unwrap_or("").to_string()
        } else {
            String::new()
        };
        let force = match ptype {
            PatchType::Apply { force } => *force,
            other => return self.patch_existing(res, &ns, name, other, body, opts),
        };
        {
            let Some(manager) = opts.field_manager.clone().filter(|m| !m.is_empty()) else {
                return Err(Status {
                    code: 422,
                    reason: "Invalid".into(),
                    message: "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch".into(),
                    details: Some(json!({"group": "meta.k8s.io", "kind": "PatchOptions", "causes": [{"reason": "FieldValueRequired", "message": "Required value: is required for apply patch", "field": "fieldManager"}]})),
                });
            };
            let config: Value = serde_yaml::from_slice(body)
                .map_err(|e| Status::bad_request(format!("error decoding YAML: {e}")))?;
            if !config.is_object() {
                return Err(Status::bad_request(
                    "error decoding YAML: the body is not an object",
                ));
            }
            self.apply(res, &ns, name, config, &manager, force, opts)
        }
    }

    /// Merge, JSON and strategic merge patches of an existing object.
    fn patch_existing(
        &mut self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        ptype: &PatchType,
        body: &[u8],
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        let existing = self
            .find(res, ns, name)
            .map(|o| res.view(o).into_owned())
            .ok_or_else(|| Status::not_found(res, name))?;
        let mut doc = existing.clone();
        match ptype {
            PatchType::Merge => {
                let p: Value = serde_json::from_slice(body)
                    .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?;
                json_patch::merge(&mut doc, &p);
            }
            PatchType::Json => {
                let p: json_patch::Patch = serde_json::from_slice(body)
                    .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?;
                json_patch::patch(&mut doc, &p).map_err(|_| Status::json_patch_failed())?;
            }
            PatchType::StrategicMerge => {
                if !is_builtin(res) {
                    return Err(Status::unsupported_patch());
                }
                let p: Value = serde_json::from_slice(body)
                    .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?;
                patch::strategic_merge(&mut doc, &p);
            }
            PatchType::Apply { .. } => {
                let st =
                    Status::bad_request("server-side apply is not a patch of an existing object");
                return Err(st);
            }
        }
        if let Some(rv) = meta(&doc, "resourceVersion")
            && Some(&rv) != meta(&existing, "resourceVersion").as_ref()
        {
            return Err(Status::conflict(res, name));
        }
        if meta(&doc, "name").as_deref() != Some(name) {
            return Err(Status::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                meta(&doc, "name").unwrap_or_default()
            )));
        }
        self.update(res, existing, doc, opts, None)
    }

    #[allow(clippy::too_many_arguments)]
    fn apply(
        &mut self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        config: Value,
        manager: &str,
        force: bool,
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        if let Some(n) = meta(&config, "name").filter(|n| n != name) {
            return Err(Status::bad_request(format!(
                "the name of the object ({n}) does not match the name on the URL ({name})"
            )));
        }
        let sub = opts.subresource.as_deref();
        let applied = ownable(res, &config, sub);
        let existing = self.find(res, ns, name).map(|o| res.view(o).into_owned());
        let mut live = existing
            .clone()
            .unwrap_or_else(|| json!({"metadata": {"name": name}}));
        let mut entries = read_managed(&live);
        let api_version = res.api_version();
        // Conflicts: another manager owns a field this apply sets to a different value.
        let mut conflicts: Vec<(FieldPath, String)> = Vec::new();
        for e in entries.iter() {
            if e.manager == manager && e.operation == "Apply" {
                continue;
            }
            for p in applied.iter() {
                if e.fields.contains(p) && patch::get_path(&live, p) != patch::get_path(&config, p)
                {
                    let who = if e.operation == "Apply" {
                        format!("conflict with \"{}\"", e.manager)
                    } else {
                        format!("conflict with \"{}\" using {}", e.manager, e.api_version)
                    };
                    conflicts.push((p.clone(), who));
                }
            }
        }
        if !conflicts.is_empty() && !force {
            let causes: Vec<Value> = conflicts
                .iter()
                .map(|(p, who)| json!({"reason": "FieldManagerConflict", "message": who, "field": path_display(p)}))
                .collect();
            let message = if conflicts.len() == 1 {
                format!(
                    "Apply failed with 1 conflict: {}: {}",
                    conflicts[0].1,
                    path_display(&conflicts[0].0)
                )
            } else {
                let lines: Vec<String> = conflicts
                    .iter()
                    .map(|(p, w)| format!("- {w}: {}", path_display(p)))
                    .collect();
                format!(
                    "Apply failed with {} conflicts: {}",
                    conflicts.len(),
                    lines.join("\n")
                )
            };
            let mut d = Status::details_for(res, name);
            if let Some(m) = d.as_object_mut() {
                m.insert("causes".into(), Value::Array(causes));
            }
            return Err(Status {
                code: 409,
                reason: "Conflict".into(),
                message,
                details: Some(d),
            });
        }
        if force {
            for e in entries.iter_mut() {
                if !(e.manager == manager && e.operation == "Apply") {
                    e.fields.retain(|p| !applied.contains(p));
                }
            }
        }
        // Fields this manager applied before and no longer applies, owned by nobody else, go away.
        let previous: BTreeSet<FieldPath> = entries
            .iter()
            .filter(|e| {
                e.manager == manager && e.operation == "Apply" && e.subresource.as_deref() == sub
            })
            .flat_map(|e| e.fields.iter().cloned())
            .collect();
        for p in previous.difference(&applied) {
            let others = entries
                .iter()
                .any(|e| !(e.manager == manager && e.operation == "Apply") && e.fields.contains(p));
            if !others {
                patch::remove_path(&mut live, p);
            }
        }
        for p in applied.iter() {
            if let Some(v) = patch::get_path(&config, p) {
                patch::set_path(&mut live, p, v.clone());
            }
        }
        let sub_owned = sub.map(str::to_string);
        entries.retain(|e| {
            !(e.manager == manager && e.operation == "Apply" && e.subresource == sub_owned)
        });
        entries.push(ManagedEntry {
            manager: manager.into(),
            operation: "Apply".into(),
            api_version,
            time: now(),
            subresource: sub_owned,
            fields: applied,
        });
        match existing {
            None => {
                if sub == Some("status") {
                    return Err(Status::not_found(res, name));
                }
                write_managed(&mut live, &entries);
                self.create(res, Some(ns).filter(|n| !n.is_empty()), live, opts)
            }
            Some(existing) => {
                if let Some(rv) = meta(&config, "resourceVersion")
                    && Some(&rv) != meta(&existing, "resourceVersion").as_ref()
                {
                    return Err(Status::conflict(res, name));
                }
                self.update(res, existing, live, opts, Some(entries))
            }
        }
    }

    fn delete(
        &mut self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        propagation: Option<Propagation>,
        from_gc: bool,
    ) -> Result<DeleteOutcome, Status> {
        let ns = if res.namespaced {
            namespace.unwrap_or("").to_string()
        } else {
            String::new()
        };
        let existing = self
            .find(res, &ns, name)
            .cloned()
            .ok_or_else(|| Status::not_found(res, name))?;
        let is_ns = res.group.is_empty() && res.kind == "Namespace";
        if is_ns && matches!(name, "default" | "kube-system" | "kube-public") && !from_gc {
            return Err(Status {
                code: 403,
                reason: "Forbidden".into(),
                message: format!(
                    "namespaces \"{name}\" is forbidden: this namespace may not be deleted"
                ),
                details: Some(Status::details_for(res, name)),
            });
        }
        if is_deleting(&existing) {
            return Ok(DeleteOutcome::Pending(existing));
        }
        let mut marked = existing.clone();
        {
            let md = meta_mut(&mut marked);
            md.insert("deletionTimestamp".into(), json!(now()));
            md.insert("deletionGracePeriodSeconds".into(), json!(0));
        }
        if is_ns {
            if let Some(m) = marked.as_object_mut() {
                m.insert("status".into(), json!({"phase": "Terminating"}));
            }
            let out = self.commit(res, EventType::Modified, marked, Some(existing));
            // Delete the namespace's contents; the namespace goes once it is empty.
            let keys: Vec<(String, String)> = self.objects.keys().cloned().collect();
            for key in keys {
                let Some(r) = self.resource_by_key(&key) else {
                    continue;
                };
                if !r.namespaced {
                    continue;
                }
                let names: Vec<String> = self
                    .objects
                    .get(&key)
                    .map(|m| {
                        m.keys()
                            .filter(|(n, _)| n == name)
                            .map(|(_, n)| n.clone())
                            .collect()
                    })
                    .unwrap_or_default();
                for n in names {
                    let _ = self.delete(&r, Some(name), &n, Some(Propagation::Background), true);
                }
            }
            return Ok(DeleteOutcome::Pending(out));
        }
        let is_crd = res.group == "apiextensions.k8s.io" && res.kind == "CustomResourceDefinition";
        if is_crd {
            self.remove_crd_objects(&existing);
        }
        let mut fins = finalizers(&existing);
        match propagation {
            Some(Propagation::Foreground) => fins.push("foregroundDeletion".into()),
            Some(Propagation::Orphan) => fins.push("orphan".into()),
            _ => {}
        }
        if fins.is_empty() {
            return Ok(DeleteOutcome::Deleted(self.finish_delete(
                res,
                existing.clone(),
                Some(existing),
            )));
        }
        meta_mut(&mut marked).insert("finalizers".into(), json!(fins));
        let out = self.commit(res, EventType::Modified, marked, Some(existing));
        Ok(DeleteOutcome::Pending(out))
    }

    fn finish_delete(&mut self, res: &ResourceInfo, obj: Value, old: Option<Value>) -> Value {
        if res.group == "apiextensions.k8s.io" && res.kind == "CustomResourceDefinition" {
            self.remove_crd_objects(&obj);
            self.unregister_crd(&obj);
        }
        self.commit(res, EventType::Deleted, obj, old)
    }

    /// Runs the garbage collector and the namespace and foreground finalizers
    /// until nothing changes.
    fn collect_garbage(&mut self) {
        loop {
            // One scan: where each uid lives, which uids own something, and
            // the objects the collector may act on (owned or being deleted).
            let mut live_uids: HashMap<String, ((String, String), ObjKey)> = HashMap::new();
            let mut owners_with_dependents: HashSet<String> = HashSet::new();
            let mut candidates: Vec<((String, String), ObjKey)> = Vec::new();
            for (key, m) in self.objects.iter() {
                for (k, o) in m.iter() {
                    if let Some(u) = meta(o, "uid") {
                        live_uids.insert(u, (key.clone(), k.clone()));
                    }
                    let owners = owner_uids(o);
                    if !owners.is_empty() || is_deleting(o) {
                        candidates.push((key.clone(), k.clone()));
                    }
                    owners_with_dependents.extend(owners);
                }
            }
            let mut changed = false;
            for (key, k) in candidates {
                let Some(res) = self.resource_by_key(&key) else {
                    continue;
                };
                // Re-read: an earlier step of this pass may have changed it.
                let Some(o) = self.objects.get(&key).and_then(|m| m.get(&k)).cloned() else {
                    continue;
                };
                let name = meta(&o, "name").unwrap_or_default();
                let ns = meta(&o, "namespace");
                let uid = meta(&o, "uid").unwrap_or_default();
                let owners = owner_uids(&o);
                let owner_objs: Vec<Option<Value>> = owners
                    .iter()
                    .map(|u| {
                        live_uids
                            .get(u)
                            .and_then(|(rk, ok)| self.objects.get(rk).and_then(|m| m.get(ok)))
                            .cloned()
                    })
                    .collect();
                // Dependents of an owner that is gone, or is being deleted in the foreground.
                if !owners.is_empty() && !is_deleting(&o) {
                    let gone = owners
                        .iter()
                        .all(|u| self.deleted_uids.contains(u) && !live_uids.contains_key(u));
                    let foreground = owner_objs.iter().flatten().any(|w| {
                        is_deleting(w) && finalizers(w).iter().any(|f| f == "foregroundDeletion")
                    });
                    if gone || foreground {
                        let prop = if foreground {
                            Some(Propagation::Foreground)
                        } else {
                            Some(Propagation::Background)
                        };
                        if self.delete(&res, ns.as_deref(), &name, prop, true).is_ok() {
                            changed = true;
                        }
                        continue;
                    }
                }
                // Orphaning owners: strip the ownerReferences pointing at them.
                let orphaning: Vec<String> = owner_objs
                    .iter()
                    .flatten()
                    .filter(|w| is_deleting(w) && finalizers(w).iter().any(|f| f == "orphan"))
                    .filter_map(|w| meta(w, "uid"))
                    .collect();
                if !orphaning.is_empty() {
                    let mut n = o.clone();
                    if let Some(refs) = n
                        .pointer_mut("/metadata/ownerReferences")
                        .and_then(Value::as_array_mut)
                    {
                        refs.retain(|r| {
                            !r.get("uid")
                                .and_then(Value::as_str)
                                .is_some_and(|u| orphaning.iter().any(|x| x == u))
                        });
                        if refs.is_empty() {
                            meta_mut(&mut n).remove("ownerReferences");
                        }
                    }
                    let mut entries = read_managed(&n);
                    for e in entries.iter_mut() {
                        e.fields
                            .retain(|p| p.get(1).map(String::as_str) != Some("ownerReferences"));
                    }
                    write_managed(&mut n, &entries);
                    self.commit(&res, EventType::Modified, n, Some(o));
                    changed = true;
                    continue;
                }
                if is_deleting(&o) {
                    let mut fins = finalizers(&o);
                    let before = fins.len();
                    let has_dependents = owners_with_dependents.contains(&uid);
                    fins.retain(|f| match f.as_str() {
                        "foregroundDeletion" | "orphan" => has_dependents,
                        _ => true,
                    });
                    if res.group.is_empty() && res.kind == "Namespace" {
                        let empty = !self.objects.iter().any(|(k, m)| {
                            self.resource_by_key(k).is_some_and(|r| r.namespaced)
                                && m.keys().any(|(n, _)| n == &name)
                        });
                        if empty && fins.is_empty() {
                            self.finish_delete(&res, o.clone(), Some(o));
                            changed = true;
                        }
                        continue;
                    }
                    if fins.len() != before {
                        let mut n = o.clone();
                        if fins.is_empty() {
                            meta_mut(&mut n).remove("finalizers");
                            self.finish_delete(&res, n, Some(o));
                        } else {
                            meta_mut(&mut n).insert("finalizers".into(), json!(fins));
                            self.commit(&res, EventType::Modified, n, Some(o));
                        }
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }

    fn crd_resources(crd: &Value) -> Result<Vec<ResourceInfo>, String> {
        let spec = crd.get("spec").ok_or("spec: Required value")?;
        let group = spec
            .get("group")
            .and_then(Value::as_str)
            .ok_or("spec.group: Required value")?;
        let names = spec.get("names").ok_or("spec.names: Required value")?;
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .ok_or("spec.names.kind: Required value")?;
        let plural = names
            .get("plural")
            .and_then(Value::as_str)
            .ok_or("spec.names.plural: Required value")?;
        let singular = names
            .get("singular")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| kind.to_ascii_lowercase());
        let short_names: Vec<String> = names
            .get("shortNames")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let namespaced = spec.get("scope").and_then(Value::as_str) != Some("Cluster");
        let versions = spec
            .get("versions")
            .and_then(Value::as_array)
            .ok_or("spec.versions: Required value")?;
        Ok(versions
            .iter()
            .filter(|v| v.get("served").and_then(Value::as_bool) != Some(false))
            .filter_map(|v| {
                Some(ResourceInfo {
                    group: group.into(),
                    version: v.get("name")?.as_str()?.into(),
                    kind: kind.into(),
                    plural: plural.into(),
                    singular: singular.clone(),
                    short_names: short_names.clone(),
                    namespaced,
                    status_subresource: v.pointer("/subresources/status").is_some(),
                })
            })
            .collect())
    }

    fn register_crd(&mut self, crd: &Value, old: Option<&Value>) -> Result<(), Status> {
        let crd_res = self
            .resources
            .iter()
            .find(|r| r.plural == "customresourcedefinitions")
            .cloned()
            .expect("CRDs are built in");
        let name = meta(crd, "name").unwrap_or_default();
        let infos = Inner::crd_resources(crd).map_err(|m| {
            let (field, detail) = m.split_once(": ").unwrap_or((&m, ""));
            Status::invalid(&crd_res, &name, field, "FieldValueRequired", detail)
        })?;
        if let Some(first) = infos.first() {
            let expected = format!("{}.{}", first.plural, first.group);
            if expected != name {
                return Err(Status::invalid(
                    &crd_res,
                    &name,
                    "metadata.name",
                    "FieldValueInvalid",
                    &format!(
                        "Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"
                    ),
                ));
            }
        }
        if let Some(old) = old {
            self.unregister_crd(old);
        }
        for info in infos {
            self.resources.retain(|r| {
                !(r.group == info.group && r.version == info.version && r.plural == info.plural)
            });
            self.resources.push(info);
        }
        Ok(())
    }

    fn crd_status(&self, mut crd: Value) -> Value {
        let names = crd
            .pointer("/spec/names")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let mut accepted = names.clone();
        if let Some(m) = accepted.as_object_mut()
            && !m.contains_key("singular")
            && let Some(k) = names.get("kind").and_then(Value::as_str)
        {
            m.insert("singular".into(), json!(k.to_ascii_lowercase()));
        }
        let stored: Vec<Value> = crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
                    .filter_map(|v| v.get("name").cloned())
                    .collect()
            })
            .unwrap_or_default();
        let t = now();
        if let Some(m) = crd.as_object_mut() {
            m.insert(
                "status".into(),
                json!({
                    "conditions": [
                        {"type": "NamesAccepted", "status": "True", "lastTransitionTime": t, "reason": "NoConflicts", "message": "no conflicts found"},
                        {"type": "Established", "status": "True", "lastTransitionTime": t, "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}
                    ],
                    "acceptedNames": accepted,
                    "storedVersions": stored,
                }),
            );
        }
        crd
    }

    fn unregister_crd(&mut self, crd: &Value) {
        if let Ok(infos) = Inner::crd_resources(crd) {
            for info in infos {
                self.resources
                    .retain(|r| !(r.group == info.group && r.plural == info.plural));
            }
        }
    }

    fn remove_crd_objects(&mut self, crd: &Value) {
        let Ok(infos) = Inner::crd_resources(crd) else {
            return;
        };
        let Some(info) = infos.into_iter().next() else {
            return;
        };
        let objs: Vec<Value> = self
            .objects
            .get(&info.key())
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default();
        for o in objs {
            self.commit(&info, EventType::Deleted, o.clone(), Some(o));
        }
    }
}

fn is_builtin(res: &ResourceInfo) -> bool {
    builtin_resources()
        .iter()
        .any(|b| b.group == res.group && b.plural == res.plural)
}

/// Exactly six fractional digits, as `metav1.MicroTime` requires.
fn is_micro_time(t: &str) -> bool {
    let Some((_, frac)) = t.split_once('.') else {
        return false;
    };
    let digits: String = frac.chars().take_while(char::is_ascii_digit).collect();
    digits.len() == 6 && chrono::DateTime::parse_from_rfc3339(t).is_ok()
}

#[cfg(test)]
mod tests;

/// Byte fields (ConfigMap `binaryData`, Secret `data`) are `[]byte` in the
/// real server: base64 with line breaks (as kustomize writes it) is decoded
/// and served back canonical, without them.
fn canonical_bytes(res: &ResourceInfo, obj: &mut Value) {
    let field = match (res.group.as_str(), res.kind.as_str()) {
        ("", "ConfigMap") => "binaryData",
        ("", "Secret") => "data",
        _ => return,
    };
    if let Some(Value::Object(bytes)) = obj.get_mut(field) {
        for value in bytes.values_mut() {
            if let Value::String(text) = value
                && text.contains(|c: char| c.is_ascii_whitespace())
            {
                text.retain(|c| !c.is_ascii_whitespace());
            }
        }
    }
}
