//! The plain types of the store's API: settings, options, results.

use serde_json::Value;

use super::status::Status;
use crate::go::json::decode::unknown_field_messages;

/// Settings of a [`Store`](crate::Store).
#[derive(Clone, Debug)]
pub struct StoreConfig {
    /// How many watch events are kept so that watches can resume from an
    /// older resourceVersion. A watch from a version older than the oldest
    /// kept event gets 410 Gone ("too old resource version").
    pub history_limit: usize,
    /// The range Services' cluster IPs come from (`--service-cluster-ip-range`;
    /// IPv4 only), `10.0.0.0/24` as a real kube-apiserver started without
    /// the flag (and envtest's) has it.
    pub service_cluster_ip_range: String,
    /// The range Services' node ports come from, both ends included
    /// (`--service-node-port-range`, `30000-32767`).
    pub service_node_port_range: (u16, u16),
    /// The `ShardedListAndWatch` feature gate (alpha, off by default as in
    /// kube-apiserver 1.36): lists and watches honour `shardSelector`.
    pub sharded_list_and_watch: bool,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            history_limit: 10_000,
            service_cluster_ip_range: "10.0.0.0/24".to_string(),
            service_node_port_range: (30000, 32767),
            sharded_list_and_watch: false,
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

    /// Sets [`StoreConfig::service_cluster_ip_range`] (an IPv4 CIDR such as `10.96.0.0/16`).
    #[must_use]
    pub fn service_cluster_ip_range(mut self, cidr: impl Into<String>) -> Self {
        self.service_cluster_ip_range = cidr.into();
        self
    }

    /// Sets [`StoreConfig::sharded_list_and_watch`] (the
    /// `ShardedListAndWatch` feature gate).
    #[must_use]
    pub fn sharded_list_and_watch(mut self, on: bool) -> Self {
        self.sharded_list_and_watch = on;
        self
    }

    /// Sets [`StoreConfig::service_node_port_range`].
    #[must_use]
    pub fn service_node_port_range(mut self, first: u16, last: u16) -> Self {
        self.service_node_port_range = (first, last);
        self
    }
}

/// The kind of patch in a [`Store::patch`](crate::Store::patch) call, from the request's Content-Type.
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

/// How a DELETE goes, from its DeleteOptions.
#[derive(Clone, Debug, Default)]
pub struct Deletion {
    /// `propagationPolicy` (or `orphanDependents: true`); `None`: the
    /// kind's default (a `batch/v1` Job and a `v1` ReplicationController
    /// orphan their dependents, everything else goes in the background).
    pub propagation: Option<Propagation>,
    /// `dryRun=All`: answered as it would go, nothing stored.
    pub dry_run: bool,
    /// `gracePeriodSeconds`: for Pods bound to a node, how long before
    /// they go (their `terminationGracePeriodSeconds` when unset).
    pub grace_period: Option<i64>,
    /// `preconditions`: what the object must be for the delete to go.
    pub preconditions: Preconditions,
    /// `orphanDependents` as given, which a Namespace reads in its own
    /// way (`false` asks for `foregroundDeletion` there, while other kinds
    /// take it as `propagation` Background).
    pub orphan_dependents: Option<bool>,
}

/// A DELETE's `preconditions` (`metav1.Preconditions`): a 409 Conflict
/// when the object has another uid or resourceVersion. An empty string is
/// a precondition too (no object has it).
#[derive(Clone, Debug, Default)]
pub struct Preconditions {
    /// `uid`: the object's uid.
    pub uid: Option<String>,
    /// `resourceVersion`: the object's resourceVersion.
    pub resource_version: Option<String>,
}

/// What a list selects and how it pages.
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    /// Only objects in this namespace; all namespaces when `None`.
    pub namespace: Option<String>,
    /// A label selector: `=`, `==`, `!=`, `in`, `notin`, exists, `!`exists.
    pub label_selector: Option<String>,
    /// A field selector: `metadata.name`, `metadata.namespace` and the
    /// fields of the kind, `=`, `==` or `!=`.
    pub field_selector: Option<String>,
    /// The page size.
    pub limit: Option<usize>,
    /// The `continue` token of the previous page.
    pub continue_token: Option<String>,
    /// `resourceVersion`: a number (`"0"`: any, the limit ignored without a
    /// continue token); any other than `"0"` is refused with a continue
    /// token.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`: `Exact` reads at `resource_version` (a
    /// version older than the history kept is 410 Expired).
    pub resource_version_match: Option<String>,
    /// `shardSelector` (with the `ShardedListAndWatch` gate on): only the
    /// objects whose uid or namespace hashes into its ranges
    /// ([`crate::meta::shard`]).
    pub shard_selector: Option<String>,
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
    /// The shard selector applied, as the list's `shardInfo` echoes it.
    pub shard_info: Option<String>,
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
    /// What to do with fields a body's kind does not declare (a custom
    /// resource's schema, a built-in kind's type), and with duplicate
    /// fields (`fieldValidation`).
    pub field_validation: FieldValidation,
    /// The warnings of the write (unknown fields under `Warn`, finalizer
    /// names...), for the client: the API server sends them as `Warning`
    /// headers. Clones share them.
    pub warnings: Warnings,
    /// The fields the body gave more than once (the last one is kept),
    /// reported as `field_validation` says (see [`crate::duplicates`]).
    pub duplicate_fields: Vec<String>,
    /// Compute the object the write would store without validating it:
    /// what admission webhooks are sent, before the server validates.
    pub skip_validation: bool,
}

impl WriteOptions {
    /// Reports what decoding a body of `kind` in `version` left out, its
    /// duplicate fields and the `unknown` ones, as `field_validation` says:
    /// `Strict` refuses the body (`400 ... strict decoding error: unknown
    /// field "spec.bogus"`), `Warn` adds a warning each.
    pub(crate) fn report_dropped(
        &self,
        kind: &str,
        version: &str,
        unknown: &[String],
    ) -> Result<(), Status> {
        let problems: Vec<String> = self
            .duplicate_fields
            .iter()
            .map(|f| format!("duplicate field \"{f}\""))
            .chain(unknown_field_messages(unknown))
            .collect();
        match self.field_validation {
            FieldValidation::Strict if !problems.is_empty() => Err(Status::cannot_handle(
                kind,
                version,
                &format!("strict decoding error: {}", problems.join(", ")),
            )),
            FieldValidation::Warn => {
                for problem in problems {
                    self.warnings.add(problem);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// `fieldValidation`: how a write treats fields the schema does not know.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FieldValidation {
    /// Refuse the write (400, `strict decoding error: unknown field ...`).
    Strict,
    /// Drop them, and say so in warnings (the real server's default).
    #[default]
    Warn,
    /// Drop them quietly.
    Ignore,
}

impl FieldValidation {
    /// The `fieldValidation` query parameter's value (`""` is the default).
    pub fn parse(value: &str) -> Option<FieldValidation> {
        match value {
            "Strict" => Some(FieldValidation::Strict),
            "Warn" | "" => Some(FieldValidation::Warn),
            "Ignore" => Some(FieldValidation::Ignore),
            _ => None,
        }
    }
}

/// Warnings collected during one request.
#[derive(Clone, Debug, Default)]
pub struct Warnings(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl Warnings {
    /// Adds one, unless it was said already.
    pub fn add(&self, warning: impl Into<String>) {
        let warning = warning.into();
        let mut list = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !list.contains(&warning) {
            list.push(warning);
        }
    }

    /// Every warning so far, in order.
    pub fn list(&self) -> Vec<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The result of [`Store::delete`](crate::Store::delete).
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
    /// the current resourceVersion (sent by [`Store::watch_bookmark`](crate::Store::watch_bookmark)).
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
    /// The object, with apiVersion and kind (shared: the store keeps the
    /// same object, and every watch of it gets this one).
    pub object: std::sync::Arc<Value>,
}

/// Identifies an open watch, for [`Store::unwatch`](crate::Store::unwatch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WatchId(pub(crate) u64);

/// Where a watch delivers events; returning `false` closes the watch.
pub type WatchSink = Box<dyn FnMut(WatchEvent) -> bool + Send>;
