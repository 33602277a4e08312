//! Two modules on one kind share one watch.

use serde_json::json;

use crate::support::{Env, configmap};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_modules_on_one_kind_share_one_watch() {
    let mut env = Env::new().await;
    env.run(
        &[
            rekon_test_artifacts::CONFIGMAP_SYNC,
            rekon_test_artifacts::MISBEHAVE,
        ],
        &[],
    );
    env.apply(configmap(
        "default",
        "plain",
        json!({}),
        json!({ "a": "b" }),
    ));
    // misbehave reconciles every ConfigMap: its write shows both
    // controllers are running.
    env.wait("misbehave's reconcile", || {
        env.get("", "v1", "ConfigMap", Some("default"), "plain")
            .filter(|c| c["data"]["reconciled"] == "true")
    })
    .await;
    // One informer: one list, and one watch (a watch the client had to
    // reopen after a connection error would be a second watch request
    // of the same informer: the lists tell informers apart).
    let requests = env.server.requests();
    let count = |verb: &str| {
        requests
            .iter()
            .filter(|r| r.verb == verb && r.resource == "configmaps")
            .count()
    };
    assert_eq!(
        (count("list"), count("watch").min(1)),
        (1, 1),
        "one list and watch of configmaps for both modules: {requests:#?}"
    );
    let started = env
        .log()
        .matches("informer started kind=ConfigMap/v1")
        .count();
    assert_eq!(started, 1, "{}", env.log());
}
