//! Watches through kube-rs: events, bookmarks and timeouts, a too old
//! resource version, dropped watches, and streaming lists.

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::runtime::{WatchStreamExt as _, reflector, watcher};
use serde_json::json;

use super::cm;
use crate::common::{self, eventually, get};

#[tokio::test]
async fn watch_delivers_events_bookmarks_and_times_out() {
    let t = common::start().await;
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    let rv = cms
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut stream = cms
        .watch(&WatchParams::default().timeout(3), &rv)
        .await
        .unwrap()
        .boxed();
    cms.create(&PostParams::default(), &cm("w", &[]))
        .await
        .unwrap();
    cms.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "2"}})),
    )
    .await
    .unwrap();
    cms.delete("w", &DeleteParams::default()).await.unwrap();
    let mut seen = Vec::new();
    while let Some(ev) = stream.next().await {
        seen.push(match ev.unwrap() {
            WatchEvent::Added(_) => "ADDED",
            WatchEvent::Modified(_) => "MODIFIED",
            WatchEvent::Deleted(_) => "DELETED",
            WatchEvent::Bookmark(_) => "BOOKMARK",
            WatchEvent::Error(e) => panic!("{e:?}"),
        });
    }
    assert_eq!(
        seen,
        ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"],
        "the stream ends at timeoutSeconds"
    );
}

#[tokio::test]
async fn too_old_resource_version_is_an_error_event() {
    let t = common::start_with(rekon_apiserver::ApiServer::builder().history_limit(2)).await;
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    for i in 0..4 {
        cms.create(&PostParams::default(), &cm(&format!("c{i}"), &[]))
            .await
            .unwrap();
    }
    let (code, _, body) = get(
        t.server.addr(),
        "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1",
    )
    .await;
    assert_eq!(code, 200);
    assert!(body.starts_with(r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 ("#), "{body}");
    assert!(body.contains(r#""reason":"Expired","code":410}}"#));
}

#[tokio::test]
async fn watcher_survives_dropped_watches_and_410() {
    let t = common::start_with(rekon_apiserver::ApiServer::builder().history_limit(5)).await;
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    let (reader, writer) = reflector::store();
    let stream = reflector(writer, watcher(cms.clone(), watcher::Config::default()))
        .default_backoff()
        .applied_objects();
    let task = tokio::spawn(stream.for_each(|_| async {}));
    reader.wait_until_ready().await.unwrap();
    let faults = t.server.faults();
    let pp = PostParams::default();
    for round in 0..3 {
        for i in 0..4 {
            cms.create(&pp, &cm(&format!("r{round}-{i}"), &[]))
                .await
                .unwrap();
        }
        cms.delete(&format!("r{round}-0"), &DeleteParams::default())
            .await
            .unwrap();
        if round == 1 {
            // Resuming from the last seen version now gets a 410.
            faults.compact();
        }
        faults.drop_watches();
        for i in 4..10 {
            cms.create(&pp, &cm(&format!("r{round}-{i}"), &[]))
                .await
                .unwrap();
        }
    }
    let want = || async {
        let mut fresh: Vec<String> = cms
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter_map(|c| c.metadata.name)
            .collect();
        fresh.sort();
        fresh
    };
    let fresh = want().await;
    assert_eq!(fresh.len(), 28, "27 and the root CA");
    eventually("the watcher's view equals a fresh list", || {
        let reader = reader.clone();
        let fresh = fresh.clone();
        async move {
            let mut seen: Vec<String> = reader
                .state()
                .iter()
                .filter_map(|c| c.metadata.name.clone())
                .collect();
            seen.sort();
            seen == fresh
        }
    })
    .await;
    let watches = t
        .server
        .requests()
        .iter()
        .filter(|r| r.verb == "watch" && r.resource == "configmaps")
        .count();
    assert!(
        watches >= 4,
        "the watcher re-watched after each drop ({watches})"
    );
    task.abort();
}

#[tokio::test]
async fn streaming_list_watcher_gets_initial_events_then_changes() {
    let t = common::start().await;
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    for i in 0..3 {
        cms.create(&PostParams::default(), &cm(&format!("s{i}"), &[]))
            .await
            .unwrap();
    }
    let (reader, writer) = reflector::store();
    let stream = reflector(
        writer,
        watcher(cms.clone(), watcher::Config::default().streaming_lists()),
    )
    .default_backoff()
    .applied_objects();
    let task = tokio::spawn(stream.for_each(|_| async {}));
    reader.wait_until_ready().await.unwrap();
    assert_eq!(reader.state().len(), 4, "three and the root CA");
    cms.delete("s0", &DeleteParams::default()).await.unwrap();
    eventually("deletion seen", || {
        let reader = reader.clone();
        async move { reader.state().len() == 3 }
    })
    .await;
    let watch = t
        .server
        .requests()
        .into_iter()
        .find(|r| r.verb == "watch")
        .unwrap();
    assert!(
        watch.query.contains("sendInitialEvents=true"),
        "{}",
        watch.query
    );
    task.abort();
}
