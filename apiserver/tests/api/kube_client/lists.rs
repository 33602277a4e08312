//! Lists and server-side apply through kube-rs: selectors, pagination,
//! metadata-only lists, managed fields and apply conflicts.

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt as _, reflector, watcher};
use serde_json::json;

use super::{api_err, cm};
use crate::common::{self, eventually};

#[tokio::test]
async fn label_and_field_selectors_and_pagination() {
    let t = common::start().await;
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    for i in 0..7 {
        let tier = if i % 2 == 0 { "even" } else { "odd" };
        cms.create(
            &PostParams::default(),
            &cm(&format!("cm-{i}"), &[("tier", tier), ("i", &i.to_string())]),
        )
        .await
        .unwrap();
    }
    let names = |l: kube::core::ObjectList<ConfigMap>| -> Vec<String> {
        l.items
            .into_iter()
            .filter_map(|c| c.metadata.name)
            .collect()
    };
    let cases = [
        ("tier=even", 4),
        // Also the namespace's root CA (kube-root-ca.crt), without labels.
        ("tier!=even", 4),
        ("i in (1,2,3)", 3),
        ("i notin (1,2,3),tier=odd", 1),
        ("tier", 7),
        ("!tier", 1),
    ];
    for (sel, n) in cases {
        let l = cms.list(&ListParams::default().labels(sel)).await.unwrap();
        assert_eq!(l.items.len(), n, "selector {sel}");
    }
    let l = cms
        .list(&ListParams::default().fields("metadata.name=cm-3"))
        .await
        .unwrap();
    assert_eq!(names(l), ["cm-3"]);
    let e = api_err(
        cms.list(&ListParams::default().labels("tier in ("))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 400);

    let mut all = Vec::new();
    let mut lp = ListParams::default().limit(3);
    let mut rvs = Vec::new();
    loop {
        let page = cms.list(&lp).await.unwrap();
        rvs.push(page.metadata.resource_version.clone());
        let next = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        all.extend(names(page));
        match next {
            Some(c) => lp = ListParams::default().limit(3).continue_token(&c),
            None => break,
        }
    }
    assert_eq!(all.len(), 8, "seven and the root CA");
    assert_eq!(rvs.len(), 3);
    assert!(
        rvs.windows(2).all(|w| w[0] == w[1]),
        "every page has the list's resourceVersion"
    );
}

#[tokio::test]
async fn server_side_apply_records_managers_and_conflicts() {
    let t = common::start().await;
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    let cfg = |v: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"shared": v}});
    let o = cms
        .patch(
            "ssa",
            &PatchParams::apply("manager-a"),
            &Patch::Apply(cfg("a")),
        )
        .await
        .unwrap();
    let mf = o.metadata.managed_fields.unwrap();
    assert_eq!(mf[0].manager.as_deref(), Some("manager-a"));
    assert_eq!(mf[0].operation.as_deref(), Some("Apply"));
    let e = api_err(
        cms.patch(
            "ssa",
            &PatchParams::apply("manager-b"),
            &Patch::Apply(cfg("b")),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
    let o = cms
        .patch(
            "ssa",
            &PatchParams::apply("manager-b").force(),
            &Patch::Apply(cfg("b")),
        )
        .await
        .unwrap();
    assert_eq!(o.data.unwrap()["shared"], "b");
}

#[tokio::test]
async fn metadata_only_list_and_watcher() {
    let t = common::start().await;
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    cms.create(&PostParams::default(), &cm("m1", &[("a", "b")]))
        .await
        .unwrap();
    let list = cms.list_metadata(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 2, "m1 and the root CA");
    assert_eq!(list.items[1].metadata.labels.as_ref().unwrap()["a"], "b");
    let (code, _, body) = common::raw(
        t.server.addr(),
        "GET",
        "/api/v1/namespaces/default/configmaps/m1",
        "application/json",
        "",
    )
    .await;
    assert_eq!(code, 200);
    assert!(body.contains("\"data\""));
    let (reader, writer) = reflector::store();
    let meta_api: Api<kube::core::PartialObjectMeta<ConfigMap>> =
        Api::namespaced(t.client.clone(), "default");
    let stream = reflector(writer, watcher(meta_api, watcher::Config::default()))
        .default_backoff()
        .applied_objects();
    let task = tokio::spawn(stream.for_each(|_| async {}));
    reader.wait_until_ready().await.unwrap();
    cms.create(&PostParams::default(), &cm("m2", &[]))
        .await
        .unwrap();
    eventually("metadata watcher sees the new object", || {
        let reader = reader.clone();
        async move { reader.state().len() == 3 }
    })
    .await;
    task.abort();
}
