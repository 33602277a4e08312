//! The plain types of the store's API: settings, options, results.

use crate::prelude::*;

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
pub struct WatchId(pub(crate) u64);

/// Where a watch delivers events; returning `false` closes the watch.
pub type WatchSink = Box<dyn FnMut(WatchEvent) -> bool + Send>;
