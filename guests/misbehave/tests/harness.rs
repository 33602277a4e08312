//! The `misbehave` modes that return (the others trap, spin or exhaust
//! memory, and are tested against the real runtime by the host's tests).

use misbehave::{BUILD_MARK, MODE_KEY, Misbehave, Mode, NAME, SIZE_KEY, VICTIM};
use rekon_sdk::k8s_openapi::api::core::v1::{ConfigMap, Secret};
use rekon_sdk::prelude::*;
use rekon_sdk::testing::{FakeCluster, Verb};

fn seeded(name: &str, annotations: &str) -> FakeCluster {
    FakeCluster::from_yaml(&format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: default, annotations: {{{annotations}}}}}\n---\napiVersion: v1\nkind: Secret\nmetadata: {{name: {VICTIM}, namespace: default}}\n"
    ))
    .expect("fixtures")
}

fn run(cluster: &FakeCluster, name: &str) -> Result<Action, Error> {
    cluster.reconcile::<Misbehave>(Some("default"), name)
}

#[test]
fn ok_mode_patches_the_configmap_once() {
    let cluster = seeded("plain", "");
    assert_eq!(run(&cluster, "plain"), Ok(Action::Done));
    let writes = cluster.writes();
    assert_eq!(writes.len(), 1);
    assert_eq!(writes[0].verb, Verb::MergePatch);
    let cm: ConfigMap = cluster.get(Some("default"), "plain").expect("cm");
    assert_eq!(cm.data.expect("data")["reconciled"], "true");

    cluster.take_writes();
    assert_eq!(run(&cluster, "plain"), Ok(Action::Done));
    assert!(cluster.writes().is_empty(), "already reconciled: no write");
}

#[test]
fn stamp_mode_writes_its_own_key_once_and_leaves_the_others() {
    let cluster = seeded("s", &format!("{MODE_KEY}: stamp"));
    assert_eq!(run(&cluster, "s"), Ok(Action::Done));
    let cm: ConfigMap = cluster.get(Some("default"), "s").expect("cm");
    let data = cm.data.expect("data");
    assert_eq!(data[NAME], BUILD_MARK);
    assert!(
        !data.contains_key("reconciled"),
        "stamp is not ok: {data:?}"
    );
    assert_eq!(cluster.writes()[0].verb, Verb::MergePatch);

    cluster.take_writes();
    assert_eq!(run(&cluster, "s"), Ok(Action::Done));
    assert!(cluster.writes().is_empty(), "already stamped: no write");
}

#[test]
fn forbidden_mode_reports_the_403_and_the_secret_survives() {
    let cluster = seeded("x", &format!("{MODE_KEY}: forbidden"));
    assert_eq!(run(&cluster, "x"), Ok(Action::Done));
    let cm: ConfigMap = cluster.get(Some("default"), "x").expect("cm");
    assert_eq!(cm.data.expect("data")["forbidden"], "403 Forbidden");
    assert!(cluster.get::<Secret>(Some("default"), VICTIM).is_some());
}

#[test]
fn mode_comes_from_the_name_when_not_annotated() {
    let cluster = seeded("error", "");
    let err = run(&cluster, "error").expect_err("fails");
    assert!(err.retry);
    assert_eq!(err.message, "misbehave: asked to fail");
}

#[test]
fn error_modes() {
    let cluster = seeded("p", &format!("{MODE_KEY}: permanent-error"));
    assert!(!run(&cluster, "p").expect_err("fails").retry);

    let cluster = seeded("h", &format!("{MODE_KEY}: huge-error, {SIZE_KEY}: '1000'"));
    let err = run(&cluster, "h").expect_err("fails");
    assert_eq!(err.message.len(), 1000);

    let cluster = seeded("u", &format!("{MODE_KEY}: no-such-mode"));
    let err = run(&cluster, "u").expect_err("unknown mode");
    assert!(!err.retry && err.message.contains("no-such-mode"));
}

#[test]
fn requeue_and_huge_log_modes() {
    let cluster = seeded("r", &format!("{MODE_KEY}: requeue, {SIZE_KEY}: '250'"));
    assert_eq!(run(&cluster, "r"), Ok(Action::RequeueAfter(250)));

    let cluster = seeded("l", &format!("{MODE_KEY}: huge-log, {SIZE_KEY}: '4096'"));
    assert_eq!(run(&cluster, "l"), Ok(Action::Done));
    assert!(cluster.logs().iter().any(|l| l.message.len() == 4096));
}

#[test]
#[should_panic(expected = "misbehave: asked to panic")]
fn panic_mode_panics_with_its_message() {
    let cluster = seeded("panic", "");
    let _ = run(&cluster, "panic");
}

#[test]
fn every_mode_has_a_name() {
    for (name, mode) in Mode::ALL {
        assert_eq!(Mode::from_name(name), Some(mode));
    }
    let m = Misbehave::manifest();
    assert!(!m.allows(&Gvk::of::<Secret>(), Verbs::DELETE, Some("default")));
}
