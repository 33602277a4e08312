//! The watch history and the open watches: each change delivered to the
//! watches whose resource, namespace and selectors it matches.

use std::sync::Arc;

use serde_json::Value;

use super::present::{arrange, is_arranged};
use super::storage::view;
use crate::apis::selectors::field_set;
use crate::meta::selector::{FieldSelector, LabelSelector};
use crate::meta::types::{EventType, WatchEvent, WatchSink};
use crate::resource::info::ResourceInfo;

pub(crate) struct HistEvent {
    pub(crate) rv: u64,
    pub(crate) key: (String, String),
    pub(crate) event_type: EventType,
    pub(crate) object: Arc<Value>,
    /// The object as stored before this event.
    pub(crate) old: Option<Arc<Value>>,
}

pub(crate) struct Subscription {
    pub(crate) id: u64,
    pub(crate) res: ResourceInfo,
    pub(crate) namespace: Option<String>,
    pub(crate) labels: LabelSelector,
    pub(crate) fields: FieldSelector,
    /// The watch's `shardSelector`, when the gate honours one.
    pub(crate) shard: Option<crate::meta::shard::ShardSelector>,
    pub(crate) min_rv: u64,
    pub(crate) sink: WatchSink,
}

impl Subscription {
    pub(crate) fn deliver(&mut self, ev: &HistEvent) -> bool {
        if ev.key != self.res.key() || ev.rv <= self.min_rv {
            return true;
        }
        // `o` as stored, `seen` as this watch serves it; its fields are
        // its kind's field set (`apis/selectors.rs`).
        let matches = |o: &Value, seen: &Value| {
            let ns_ok = match &self.namespace {
                Some(ns) => {
                    seen.pointer("/metadata/namespace").and_then(Value::as_str) == Some(ns.as_str())
                }
                None => true,
            };
            ns_ok
                && self.shard.as_ref().is_none_or(|s| s.matches(seen))
                && self.labels.matches(seen)
                && (self.fields.is_empty() || self.fields.matches(&field_set(&self.res, o, seen)))
        };
        let object = view(&self.res, &ev.object);
        let now = matches(&ev.object, &object);
        let before = ev
            .old
            .as_ref()
            .is_some_and(|old| matches(old, &view(&self.res, old)));
        let event_type = match (ev.event_type, before, now) {
            (EventType::Deleted, _, true) => EventType::Deleted,
            (EventType::Deleted, _, false) => return true,
            (EventType::Added, _, true) => EventType::Added,
            (EventType::Modified, true, true) => EventType::Modified,
            (EventType::Modified, false, true) => EventType::Added,
            (_, true, false) => EventType::Deleted,
            _ => return true,
        };
        // The stored object itself when it is what this watch serves.
        let object = match object {
            std::borrow::Cow::Borrowed(_) if is_arranged(&self.res, &ev.object) => {
                ev.object.clone()
            }
            object => Arc::new(arrange(&self.res, &object)),
        };
        (self.sink)(WatchEvent { event_type, object })
    }
}
