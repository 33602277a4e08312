//! Fault injection and the request log, in-process and over HTTP.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use crate::common::{self, get, raw};

fn cm(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}})).unwrap()
}

#[tokio::test]
async fn next_requests_fail_with_the_given_status() {
    let t = common::start().await;
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    t.server
        .faults()
        .fail_next(1, Some("create"), Some("configmaps"), 500);
    let e = cms
        .create(&PostParams::default(), &cm("a"))
        .await
        .unwrap_err();
    assert!(matches!(&e, kube::Error::Api(s) if s.code == 500), "{e:?}");
    cms.create(&PostParams::default(), &cm("a")).await.unwrap();

    // Over HTTP: 429 with Retry-After for the next two lists.
    let (code, _, _) = raw(
        t.server.addr(),
        "POST",
        "/_rekon/fail",
        "application/json",
        r#"{"verb":"list","resource":"configmaps","code":429,"count":2,"retryAfterSeconds":3}"#,
    )
    .await;
    assert_eq!(code, 200);
    for _ in 0..2 {
        let (code, headers, body) =
            get(t.server.addr(), "/api/v1/namespaces/default/configmaps").await;
        assert_eq!(code, 429);
        assert!(headers.contains("retry-after: 3"), "{headers}");
        assert!(body.contains("\"reason\":\"TooManyRequests\""));
    }
    assert_eq!(
        get(t.server.addr(), "/api/v1/namespaces/default/configmaps")
            .await
            .0,
        200
    );

    // 409 on update.
    t.server.faults().fail_next(1, Some("update"), None, 409);
    let mut c = cms.get("a").await.unwrap();
    c.data = Some([("x".to_string(), "y".to_string())].into());
    let e = cms
        .replace("a", &PostParams::default(), &c)
        .await
        .unwrap_err();
    assert!(
        matches!(&e, kube::Error::Api(s) if s.code == 409 && s.reason == "Conflict"),
        "{e:?}"
    );
}

#[tokio::test]
async fn latency_and_request_log_over_http() {
    let t = common::start().await;
    let addr = t.server.addr();
    raw(
        addr,
        "POST",
        "/_rekon/latency",
        "application/json",
        r#"{"millis":150}"#,
    )
    .await;
    let start = Instant::now();
    get(addr, "/api/v1/namespaces").await;
    assert!(start.elapsed() >= Duration::from_millis(150));
    raw(addr, "DELETE", "/_rekon/faults", "application/json", "").await;
    let start = Instant::now();
    get(
        addr,
        "/api/v1/namespaces/default/configmaps?labelSelector=a%3Db",
    )
    .await;
    assert!(start.elapsed() < Duration::from_millis(150));
    let (code, _, body) = get(addr, "/_rekon/requests").await;
    assert_eq!(code, 200);
    let log: Vec<Value> = serde_json::from_str(&body).unwrap();
    let last = log.last().unwrap();
    assert_eq!(last["verb"], "list");
    assert_eq!(last["resource"], "configmaps");
    assert_eq!(last["query"], "labelSelector=a%3Db");
    assert_eq!(last["userAgent"], "raw-test/1.0");
    assert_eq!(last["status"], 200);
    assert!(
        !log.iter()
            .any(|r| r["path"].as_str().unwrap().starts_with("/_rekon"))
    );
}

#[tokio::test]
async fn restart_losing_data_and_compaction_over_http() {
    let t = common::start().await;
    let addr = t.server.addr();
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    let c = cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    let rv = c.metadata.resource_version.unwrap();
    raw(addr, "POST", "/_rekon/compact", "application/json", "").await;
    let (_, _, body) = get(
        addr,
        &format!(
            "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={}",
            rv.parse::<u64>().unwrap() - 1
        ),
    )
    .await;
    assert!(body.contains("\"code\":410"), "{body}");
    raw(
        addr,
        "POST",
        "/_rekon/restart",
        "application/json",
        r#"{"keepData":true}"#,
    )
    .await;
    common::eventually("server answers after restart", || async {
        cms.get_opt("a").await.map(|o| o.is_some()).unwrap_or(false)
    })
    .await;
    raw(
        addr,
        "POST",
        "/_rekon/restart",
        "application/json",
        r#"{"keepData":false}"#,
    )
    .await;
    common::eventually("data lost", || async {
        matches!(cms.get_opt("a").await, Ok(None))
    })
    .await;
    assert_eq!(
        get(addr, "/api/v1/namespaces/default").await.0,
        200,
        "built-in namespaces come back"
    );
}

#[tokio::test]
async fn discovery_and_openapi_documents() {
    let t = common::start().await;
    let addr = t.server.addr();
    let (code, _, body) = get(addr, "/version").await;
    assert_eq!(code, 200);
    assert!(body.contains("\"major\":\"1\""));
    let (_, _, body) = get(addr, "/api/v1").await;
    assert!(body.contains("\"configmaps\""));
    let (_, _, body) = get(addr, "/apis").await;
    for g in [
        "apps",
        "coordination.k8s.io",
        "events.k8s.io",
        "rbac.authorization.k8s.io",
        "apiextensions.k8s.io",
    ] {
        assert!(body.contains(&format!("\"name\":\"{g}\"")), "{g}");
    }
    let (code, headers, body) = get(addr, "/apis/nope.example.com/v1").await;
    assert_eq!((code, body.as_str()), (404, "404 page not found\n"));
    assert!(headers.contains("text/plain"));
    let (code, _, body) = get(addr, "/api/v1/nothings").await;
    assert_eq!(code, 404);
    assert!(body.contains("the server could not find the requested resource"));
    let (code, headers, body) = get(addr, "/openapi/v3").await;
    assert_eq!(code, 200);
    assert!(headers.contains("content-type: text/plain"));
    let index: Value = serde_json::from_str(&body).unwrap();
    let url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, headers, body) = get(addr, &url).await;
    assert_eq!(code, 200);
    assert!(headers.contains("public, immutable"));
    assert!(body.contains("fieldValidation"));
    let (code, headers, _) = get(addr, "/openapi/v3/apis/apps/v1?hash=WRONG").await;
    assert_eq!(code, 301);
    assert!(headers.contains(&format!("location: {}", url.to_ascii_lowercase())));
}

#[tokio::test]
async fn state_file_survives_a_process_restart() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let server = rekon_apiserver::ApiServer::builder()
        .persist(&state)
        .start()
        .await
        .unwrap();
    let store = server.store();
    store.apply_object(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept", "namespace": "default"}})).unwrap();
    server.shutdown().await;
    let server = rekon_apiserver::ApiServer::builder()
        .persist(&state)
        .start()
        .await
        .unwrap();
    let (code, _, _) = get(server.addr(), "/api/v1/namespaces/default/configmaps/kept").await;
    assert_eq!(code, 200);
    server.shutdown().await;
}

#[tokio::test]
async fn invalid_list_and_write_options_are_422_like_the_real_server() {
    let t = common::start().await;
    let addr = t.server.addr();
    let cases = [
        (
            "/api/v1/namespaces/default/configmaps?resourceVersionMatch=Exact",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
        (
            "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&timeoutSeconds=4",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ),
    ];
    for (path, message) in cases {
        let (code, _, body) = get(addr, path).await;
        assert_eq!(code, 422, "{path}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["message"], message);
        assert_eq!(v["details"]["kind"], "ListOptions");
    }
    let (code, _, body) = raw(
        addr,
        "POST",
        "/api/v1/namespaces/default/configmaps?dryRun=Maybe",
        "application/json",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}"#,
    )
    .await;
    assert_eq!(code, 422);
    assert!(body.contains(r#"CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"Maybe\"]: supported values: \"All\""#), "{body}");
    let (code, _, _) = get(
        addr,
        "/api/v1/namespaces/default/configmaps?limit=2&continue=garbage",
    )
    .await;
    assert_eq!(code, 400);
}
