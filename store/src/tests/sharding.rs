//! Sharded lists and watches (`shardSelector`, the `ShardedListAndWatch`
//! gate): only the objects whose namespace or uid hashes into the ranges,
//! the selector echoed, and nothing of it with the gate off.

use super::{cm, cm_res, namespace, opts};
use crate::meta::shard::hash_field;
use crate::meta::types::{EventType, ListOptions, ObjectList, StoreConfig};
use crate::store::handle::Store;

/// A selector of the half of the hash space `namespace` falls in, and one
/// of the other half.
fn halves(namespace: &str) -> (String, String) {
    let range = |start: &str, end: &str| {
        format!("shardRange(object.metadata.namespace, '{start}', '{end}')")
    };
    let low = range("0x0000000000000000", "0x8000000000000000");
    let high = range("0x8000000000000000", "0x10000000000000000");
    if hash_field(namespace).as_str() < "8000000000000000" {
        (low, high)
    } else {
        (high, low)
    }
}

/// Two namespaces whose hashes fall in different halves, each with a
/// ConfigMap `c`.
fn two_shards(s: &Store) -> (String, String) {
    let names: Vec<String> = (0..40).map(|i| format!("team-{i}")).collect();
    let first = names[0].clone();
    let other = names
        .iter()
        .find(|n| halves(n).0 != halves(&first).0)
        .expect("namespaces in both halves")
        .clone();
    for n in [&first, &other] {
        namespace(s, n);
        s.create(&cm_res(s), Some(n), cm("c"), &opts("t")).unwrap();
    }
    (first, other)
}

/// The namespaces of a list's items.
fn namespaces_of(list: &ObjectList) -> Vec<&str> {
    list.items
        .iter()
        .map(|o| o["metadata"]["namespace"].as_str().unwrap())
        .collect()
}

fn sharded(selector: &str) -> ListOptions {
    ListOptions {
        shard_selector: Some(selector.to_string()),
        ..ListOptions::default()
    }
}

#[test]
fn a_sharded_list_holds_its_ranges_objects_and_echoes_the_selector() {
    let s = Store::new(StoreConfig::default().sharded_list_and_watch(true));
    let (first, other) = two_shards(&s);
    let (mine, _) = halves(&first);
    let list = s.list(&cm_res(&s), &sharded(&mine)).unwrap();
    let namespaces = namespaces_of(&list);
    assert!(namespaces.contains(&first.as_str()), "{namespaces:?}");
    assert!(!namespaces.contains(&other.as_str()), "{namespaces:?}");
    assert_eq!(list.shard_info.as_deref(), Some(mine.as_str()));
    // A selector that does not parse is the storage's error.
    let bad = s.list(&cm_res(&s), &sharded("shardRange(")).unwrap_err();
    assert_eq!(bad.code, 500);
    assert!(
        bad.message
            .starts_with("invalid shard selector: CEL parse error: ")
    );
}

#[test]
fn a_sharded_watch_sees_only_its_ranges_changes() {
    let s = Store::new(StoreConfig::default().sharded_list_and_watch(true));
    let (first, other) = two_shards(&s);
    let (mine, _) = halves(&first);
    let (_, events) = s
        .watch_channel(&cm_res(&s), &sharded(&mine), Some(&s.resource_version()))
        .unwrap();
    for n in [&first, &other] {
        s.create(&cm_res(&s), Some(n), cm("d"), &opts("t")).unwrap();
    }
    let seen: Vec<(EventType, String)> = events
        .try_iter()
        .map(|e| {
            let ns = e.object["metadata"]["namespace"]
                .as_str()
                .unwrap()
                .to_string();
            (e.event_type, ns)
        })
        .collect();
    assert_eq!(seen, [(EventType::Added, first)]);
}

#[test]
fn with_the_gate_off_a_shard_selector_changes_nothing() {
    let s = Store::new(StoreConfig::default());
    let (first, other) = two_shards(&s);
    let (mine, _) = halves(&first);
    let list = s.list(&cm_res(&s), &sharded(&mine)).unwrap();
    let namespaces = namespaces_of(&list);
    assert!(namespaces.contains(&first.as_str()) && namespaces.contains(&other.as_str()));
    assert!(list.shard_info.is_none());
}
