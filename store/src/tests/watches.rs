//! Watches: history, expiry, label-selected watches.

use super::{cm, cm_res, opts, store};
use crate::meta::types::{EventType, ListOptions, PatchType, StoreConfig};
use crate::store::handle::Store;

#[test]
fn watch_replays_history_and_expires() {
    let s = Store::new(StoreConfig::default().history_limit(3));
    let r = cm_res(&s);
    let rv0 = s.resource_version();
    s.create(&r, Some("default"), cm("a"), &opts("t")).unwrap();
    let (_, rx) = s
        .watch_channel(&r, &ListOptions::default(), Some(&rv0))
        .unwrap();
    s.delete(&r, Some("default"), "a", None).unwrap();
    let got: Vec<_> = rx.try_iter().map(|e| e.event_type).collect();
    assert_eq!(got, [EventType::Added, EventType::Deleted]);
    for i in 0..4 {
        s.create(&r, Some("default"), cm(&format!("x{i}")), &opts("t"))
            .unwrap();
    }
    let err = s
        .watch_channel(&r, &ListOptions::default(), Some(&rv0))
        .unwrap_err();
    assert_eq!((err.code, err.reason.as_str()), (410, "Expired"));
    assert!(err.message.starts_with("too old resource version"));
    let (_, rx) = s.watch_channel(&r, &ListOptions::default(), None).unwrap();
    // The four and each namespace's root CA.
    let added: Vec<String> = rx
        .try_iter()
        .map(|e| e.object["metadata"]["name"].as_str().unwrap().to_string())
        .filter(|name| name != "kube-root-ca.crt")
        .collect();
    assert_eq!(added, ["x0", "x1", "x2", "x3"]);
    s.drop_watches();
    assert_eq!(s.watch_count(), 0);
}

#[test]
fn label_selected_watch_sees_objects_leave_and_enter() {
    let s = store();
    let r = cm_res(&s);
    let opts_sel = ListOptions {
        label_selector: Some("app=web".into()),
        ..ListOptions::default()
    };
    let (_, rx) = s.watch_channel(&r, &opts_sel, None).unwrap();
    s.create(&r, Some("default"), cm("x"), &opts("t")).unwrap();
    s.patch(
        &r,
        Some("default"),
        "x",
        &PatchType::Merge,
        br#"{"metadata":{"labels":{"app":"web"}}}"#,
        &opts("t"),
    )
    .unwrap();
    s.patch(
        &r,
        Some("default"),
        "x",
        &PatchType::Merge,
        br#"{"metadata":{"labels":{"app":"db"}}}"#,
        &opts("t"),
    )
    .unwrap();
    let got: Vec<_> = rx.try_iter().map(|e| e.event_type).collect();
    assert_eq!(got, [EventType::Added, EventType::Deleted]);
}
