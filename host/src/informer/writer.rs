//! The one place where an informer's cache is written: watcher events in,
//! changes out, synchronously.

use std::sync::{Arc, RwLock};

use kube::runtime::watcher;

use super::Change;
use super::cache::Objects;
use super::cached::Cached;

/// Applies a watcher's events to a cache, synchronously, and says what each
/// changed: the one place where the cache is written.
///
/// A (re)list is collected whole, then compared with the cache: objects it
/// lacks are `Deleted`, new ones `Added`, and those whose resourceVersion
/// moved `Updated`; unchanged objects make no change. A watch event changes
/// one object; one the cache already holds at the same resourceVersion (a
/// replay) makes no change.
pub(crate) struct CacheWriter {
    objects: Arc<RwLock<Objects>>,
    relist: Option<Objects>,
    synced: bool,
}

impl CacheWriter {
    pub fn new(objects: Arc<RwLock<Objects>>) -> CacheWriter {
        CacheWriter {
            objects,
            relist: None,
            synced: false,
        }
    }

    /// Whether a list has completed.
    pub fn is_synced(&self) -> bool {
        self.synced
    }

    /// Applies one event; returns what it changed.
    pub fn apply(&mut self, event: watcher::Event<Arc<Cached>>) -> Vec<Change> {
        match event {
            watcher::Event::Init => {
                self.relist = Some(Objects::default());
                Vec::new()
            }
            watcher::Event::InitApply(object) => {
                self.relist
                    .get_or_insert_with(Objects::default)
                    .insert(object);
                Vec::new()
            }
            watcher::Event::InitDone => {
                let mut fresh = self.relist.take().unwrap_or_default();
                let changes = {
                    let current = self.objects.read().expect("informer cache lock");
                    fresh.adopt_indexes(&current);
                    diff(&current, &fresh)
                };
                *self.objects.write().expect("informer cache lock") = fresh;
                self.synced = true;
                changes
            }
            watcher::Event::Apply(object) => {
                let mut objects = self.objects.write().expect("informer cache lock");
                let previous = objects
                    .get(object.namespace().unwrap_or_default(), object.name())
                    .cloned();
                objects.insert(object.clone());
                match previous {
                    None => vec![Change::Added(object)],
                    Some(old) if old.resource_version() != object.resource_version() => {
                        vec![Change::Updated(old, object)]
                    }
                    Some(_) => Vec::new(),
                }
            }
            watcher::Event::Delete(object) => {
                let mut objects = self.objects.write().expect("informer cache lock");
                let held = objects
                    .get(object.namespace().unwrap_or_default(), object.name())
                    .is_some();
                objects.remove(&object);
                if held {
                    vec![Change::Deleted(object)]
                } else {
                    Vec::new()
                }
            }
        }
    }
}

/// What replacing `current` by `fresh` changes.
fn diff(current: &Objects, fresh: &Objects) -> Vec<Change> {
    fn key(o: &Cached) -> (&str, &str) {
        (o.namespace().unwrap_or_default(), o.name())
    }
    let mut changes = Vec::new();
    for object in current.iter() {
        let (namespace, name) = key(object);
        if fresh.get(namespace, name).is_none() {
            changes.push(Change::Deleted(object.clone()));
        }
    }
    for object in fresh.iter() {
        let (namespace, name) = key(object);
        match current.get(namespace, name) {
            None => changes.push(Change::Added(object.clone())),
            Some(held) if held.resource_version() != object.resource_version() => {
                changes.push(Change::Updated(held.clone(), object.clone()));
            }
            Some(_) => {}
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::informer::cached::tests::{cached_object, config_maps};
    use serde_json::json;

    fn cm(name: &str, rv: &str) -> Arc<Cached> {
        let object = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "resourceVersion": rv},
        });
        Arc::new(cached_object(object, &config_maps()))
    }

    /// `+name@rv`, `~name@rv`, `-name@rv` for Added, Updated, Deleted.
    fn names(changes: &[Change]) -> Vec<String> {
        changes
            .iter()
            .map(|c| match c {
                Change::Added(o) => format!("+{}@{}", o.name(), o.resource_version()),
                Change::Updated(old, o) => format!(
                    "~{}@{}<{}",
                    o.name(),
                    o.resource_version(),
                    old.resource_version()
                ),
                Change::Deleted(o) => format!("-{}@{}", o.name(), o.resource_version()),
            })
            .collect()
    }

    fn list(writer: &mut CacheWriter, objects: &[Arc<Cached>]) -> Vec<String> {
        assert!(writer.apply(watcher::Event::Init).is_empty());
        for object in objects {
            let changes = writer.apply(watcher::Event::InitApply(object.clone()));
            assert!(changes.is_empty(), "a list changes nothing before it ends");
        }
        names(&writer.apply(watcher::Event::InitDone))
    }

    #[test]
    fn the_first_list_adds_everything_and_syncs() {
        let objects = Arc::new(RwLock::new(Objects::default()));
        let mut writer = CacheWriter::new(objects.clone());
        assert!(!writer.is_synced());
        assert_eq!(
            list(&mut writer, &[cm("a", "1"), cm("b", "2")]),
            ["+a@1", "+b@2"]
        );
        assert!(writer.is_synced());
        assert_eq!(objects.read().unwrap().len(), 2);
    }

    #[test]
    fn watch_events_say_added_updated_or_deleted_against_the_cache() {
        let objects = Arc::new(RwLock::new(Objects::default()));
        let mut writer = CacheWriter::new(objects.clone());
        list(&mut writer, &[cm("a", "1")]);
        let mut apply = |o| names(&writer.apply(watcher::Event::Apply(o)));
        assert_eq!(apply(cm("b", "2")), ["+b@2"], "created after the list");
        assert_eq!(apply(cm("a", "3")), ["~a@3<1"], "what it was comes along");
        assert_eq!(apply(cm("a", "3")), Vec::<String>::new(), "a replay");
        assert_eq!(
            names(&writer.apply(watcher::Event::Delete(cm("b", "4")))),
            ["-b@4"]
        );
        assert_eq!(
            names(&writer.apply(watcher::Event::Delete(cm("never-seen", "5")))),
            Vec::<String>::new(),
            "nothing held, nothing deleted"
        );
        let held: Vec<String> = objects
            .read()
            .unwrap()
            .iter()
            .map(|o| format!("{}@{}", o.name(), o.resource_version()))
            .collect();
        assert_eq!(held, ["a@3"]);
    }

    #[test]
    fn a_relist_reports_only_what_changed_while_the_watch_was_down() {
        let objects = Arc::new(RwLock::new(Objects::default()));
        let mut writer = CacheWriter::new(objects.clone());
        list(
            &mut writer,
            &[cm("same", "1"), cm("edited", "2"), cm("removed", "3")],
        );
        // The watch failed; meanwhile one object changed, one went, one came.
        assert_eq!(
            list(
                &mut writer,
                &[cm("edited", "7"), cm("new", "8"), cm("same", "1")]
            ),
            ["-removed@3", "~edited@7<2", "+new@8"]
        );
        assert_eq!(objects.read().unwrap().len(), 3);
        // The same list again changes nothing.
        assert!(
            list(
                &mut writer,
                &[cm("edited", "7"), cm("new", "8"), cm("same", "1")]
            )
            .is_empty()
        );
    }

    /// An index answers right after adds, updates, deletes and relists.
    #[test]
    fn indexes_follow_adds_updates_deletes_and_relists() {
        use crate::informer::IndexSpec;
        let team = |name: &str, rv: &str, team: &str| {
            let object = json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "default", "resourceVersion": rv,
                    "labels": {"team": team}},
                "data": {"owner": format!("{team}-lead")},
            });
            Arc::new(cached_object(object, &config_maps()))
        };
        let objects = Arc::new(RwLock::new(Objects::default()));
        let mut writer = CacheWriter::new(objects.clone());
        list(
            &mut writer,
            &[team("a", "1", "red"), team("b", "2", "blue")],
        );
        let by_label = IndexSpec::Label("team".into());
        let by_field = IndexSpec::Field("data.owner".into());
        objects.write().unwrap().ensure_index(&by_label);
        objects.write().unwrap().ensure_index(&by_field);
        let lookup = |spec: &IndexSpec, key: &str| -> Vec<String> {
            objects
                .read()
                .unwrap()
                .by_index(spec, key, None)
                .unwrap()
                .iter()
                .map(|o| o.name().to_string())
                .collect()
        };
        assert_eq!(lookup(&by_label, "red"), ["a"]);
        assert_eq!(lookup(&by_field, "blue-lead"), ["b"]);
        // Added, then updated away from red, then deleted.
        writer.apply(watcher::Event::Apply(team("c", "3", "red")));
        assert_eq!(lookup(&by_label, "red"), ["a", "c"]);
        writer.apply(watcher::Event::Apply(team("a", "4", "blue")));
        assert_eq!(lookup(&by_label, "red"), ["c"]);
        assert_eq!(lookup(&by_label, "blue"), ["a", "b"]);
        assert_eq!(lookup(&by_field, "red-lead"), ["c"]);
        writer.apply(watcher::Event::Delete(team("c", "5", "red")));
        assert!(lookup(&by_label, "red").is_empty());
        // A relist (the watch was down): the indexes follow the new state.
        list(
            &mut writer,
            &[team("b", "2", "blue"), team("d", "6", "red")],
        );
        assert!(objects.read().unwrap().has_index(&by_label));
        assert_eq!(lookup(&by_label, "red"), ["d"]);
        assert_eq!(lookup(&by_label, "blue"), ["b"]);
        assert_eq!(lookup(&by_field, "blue-lead"), ["b"]);
        assert!(lookup(&by_label, "green").is_empty());
    }
}
