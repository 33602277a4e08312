//! Rollouts kept in the cluster: a promotion or an abort is written to the
//! module's `Rollout`, and a host started again follows it from its first
//! reconcile — the promoted version serves, the old one never reconciles
//! again; the aborted version is refused, not brought back as a canary.

use serde_json::{Value, json};

use super::{
    config_map_writes, configmaps_arriving, marks_written, rekon, run_with_shadow_settings,
};
use crate::support::{self, Env, configmap, namespace};

/// The module's `Rollout` (the host's namespace is `default` here).
fn rollout(env: &Env) -> Option<Value> {
    // Served once a host has applied its CRD.
    let store = env.store();
    let resource = store.resource_for_kind("rekon.dev", "v1alpha1", "Rollout")?;
    store.get(&resource, Some("default"), "misbehave").ok()
}

/// `rekon rollout ARGS... misbehave` against the test's cluster.
fn rollout_command(env: &Env, command: &str) -> (String, Option<i32>) {
    let kubeconfig = env.kubeconfig.to_str().unwrap();
    let args = [
        "rollout",
        command,
        "misbehave",
        "--kubeconfig",
        kubeconfig,
        "-n",
        "default",
    ];
    rekon(&args.map(std::ffi::OsStr::new))
}

/// Whether every object `c{i}` of `numbers` was last written by `mark`.
fn all_behaved(env: &Env, numbers: std::ops::Range<usize>, mark: &str) -> Option<()> {
    numbers
        .map(|i| env.get("", "v1", "ConfigMap", Some("shop"), &format!("c{i}")))
        .all(|c| c.is_some_and(|c| c["data"]["behaved-by"] == mark))
        .then_some(())
}

/// Starts misbehave (build A) with build B as its shadow, with `settings`,
/// and waits until the Rollout names both.
async fn start(env: &mut Env, shadow: &[u8], settings: &str) {
    run_with_shadow_settings(env, shadow.to_vec(), settings);
    env.wait(
        "the serving version and its candidate in the Rollout",
        || {
            rollout(env).filter(|r| {
                r["status"]["serving"]["digest"].is_string()
                    && r["status"]["candidate"]["digest"].is_string()
            })
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_promotion_survives_a_restart() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    for i in 0..3 {
        env.apply(configmap("shop", &format!("c{i}"), json!({}), json!({})));
    }
    let shadow = support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B");
    start(&mut env, &shadow, "").await;
    env.wait("the serving version's reconciles", || {
        all_behaved(&env, 0..3, "misbehave-build-A")
    })
    .await;
    let before = rollout(&env).unwrap()["status"].clone();
    let (out, code) = rollout_command(&env, "promote");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("module misbehave: Serving"), "{out}");
    env.wait_long("every object reconciled by the promoted version", || {
        all_behaved(&env, 0..3, "misbehave-build-B")
    })
    .await;
    let status = rollout(&env).unwrap()["status"].clone();
    assert_eq!(status["serving"]["digest"], before["candidate"]["digest"]);
    assert_eq!(status["retired"][0]["digest"], before["serving"]["digest"]);
    assert_eq!(status["lastDecision"]["action"], "Promote");
    assert_eq!(status["lastDecision"]["by"], "operator");

    // Started again with the same files and configuration: the promoted
    // version serves from the first reconcile; the old one never writes.
    env.terminate(0).await;
    let (_watch, writes) = config_map_writes(&env);
    run_with_shadow_settings(&mut env, shadow.clone(), "");
    configmaps_arriving(&env, "c", 3..6).await.unwrap();
    env.wait_long("the new objects reconciled by the promoted version", || {
        all_behaved(&env, 0..6, "misbehave-build-B")
    })
    .await;
    env.settled().await;
    let marks = marks_written(&writes);
    assert!(
        marks.iter().all(|m| m == "misbehave-build-B"),
        "the retired version wrote after the restart: {marks:?}"
    );
    let (out, code) = rollout_command(&env, "status");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("retired "), "{out}");
    assert!(out.contains("last decision: Promote"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_survives_a_restart() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    for i in 10..20 {
        env.apply(configmap("shop", &format!("c{i}"), json!({}), json!({})));
    }
    let shadow = support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B");
    // Half the objects served live by the candidate.
    start(&mut env, &shadow, "    canary: 50\n").await;
    env.wait("the canary's live writes", || {
        (10..20)
            .filter_map(|i| env.get("", "v1", "ConfigMap", Some("shop"), &format!("c{i}")))
            .any(|c| c["data"]["behaved-by"] == "misbehave-build-B")
            .then_some(())
    })
    .await;
    let (out, code) = rollout_command(&env, "abort");
    assert_eq!(code, Some(0), "{out}");
    env.wait("the candidate dropped", || {
        env.log_of(0)
            .contains("shadow unloaded: aborted")
            .then_some(())
    })
    .await;
    // The canary's objects taken back by the serving version.
    env.wait_long("the canary's objects taken back", || {
        all_behaved(&env, 10..20, "misbehave-build-A")
    })
    .await;
    let status = rollout(&env).unwrap()["status"].clone();
    assert_eq!(status["lastDecision"]["action"], "Abort");
    assert!(status["candidate"].is_null(), "{status}");
    let aborted = status["aborted"][0]["digest"].clone();
    assert!(aborted.is_string(), "{status}");

    // Started again: the aborted version is refused, not a canary again;
    // every object is the serving version's.
    env.terminate(0).await;
    let (_watch, writes) = config_map_writes(&env);
    let host = env.hosts.len();
    run_with_shadow_settings(&mut env, shadow.clone(), "    canary: 50\n");
    configmaps_arriving(&env, "c", 0..10).await.unwrap();
    env.wait_long("every object reconciled by the serving version", || {
        all_behaved(&env, 0..10, "misbehave-build-A")
    })
    .await;
    env.settled().await;
    let marks = marks_written(&writes);
    assert!(
        marks.iter().all(|m| m == "misbehave-build-A"),
        "the aborted version served after the restart: {marks:?}"
    );
    let log = env.log_of(host);
    assert!(log.contains("was aborted"), "{log}");
    assert_eq!(
        rollout(&env).unwrap()["status"]["aborted"][0]["digest"],
        aborted
    );
}

/// A canary that loops writes is rolled back by its policy within its
/// minute: the state says why, with the figures; an Event on the
/// `Rollout` announces it; the loop stops; `rekon rollout status` shows
/// the evidence after the fact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_canary_that_loops_writes_is_rolled_back_with_its_evidence() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    for i in 0..10 {
        let mut object = configmap("shop", &format!("c{i}"), json!({}), json!({}));
        object["metadata"]["annotations"] = json!({ misbehave::MODE_KEY: "churn" });
        env.apply(object);
    }
    let shadow = support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B");
    let settings = "    canary: 50\n    policy:\n      maxWritesPerObjectPerMinute: 20\n";
    run_with_shadow_settings(&mut env, shadow, settings);
    let rolled_back = env
        .wait_long("the canary rolled back by its policy", || {
            rollout(&env).filter(|r| r["status"]["lastDecision"]["action"] == "Abort")
        })
        .await;
    let decision = &rolled_back["status"]["lastDecision"];
    assert_eq!(decision["by"], "policy", "{decision}");
    let reason = decision["reason"].as_str().unwrap();
    assert!(
        reason.contains("(maxWritesPerObjectPerMinute: 20)"),
        "{reason}"
    );
    let worst = decision["evidence"]["figures"]["canaryMaxWritesPerObjectPerMinute"]
        .as_f64()
        .unwrap();
    assert!(worst > 20.0, "{decision}");
    let event = env
        .event("the rollback announced", |e| {
            e["reason"] == "Aborted" && e["regarding"]["kind"] == "Rollout"
        })
        .await;
    assert!(
        event["note"].as_str().unwrap().contains("by policy"),
        "{event}"
    );
    // The loop stopped: the serving version alone serves every object.
    env.settled().await;
    let churned = |env: &Env| -> Vec<Value> {
        (0..10)
            .map(|i| {
                env.get("", "v1", "ConfigMap", Some("shop"), &format!("c{i}"))
                    .unwrap()["data"]["churn"]
                    .clone()
            })
            .collect()
    };
    let before = churned(&env);
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert_eq!(churned(&env), before, "no write after the rollback");
    let (out, code) = rollout_command(&env, "status");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("last decision: Abort"), "{out}");
    assert!(out.contains("canaryMaxWritesPerObjectPerMinute"), "{out}");
}

/// A canary taken in steps, by time: the state says each step and its
/// share as they come, and after the last the policy promotes the
/// candidate, which then serves every object.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_canary_in_steps_is_promoted_after_its_last_step() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    for i in 0..6 {
        env.apply(configmap("shop", &format!("c{i}"), json!({}), json!({})));
    }
    let shadow = support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B");
    let settings = "    policy:\n      steps:\n      - {canary: 20, pause: 2s}\n      - {canary: 60, pause: 2s}\n";
    start(&mut env, &shadow, settings).await;
    env.wait("the first step", || {
        rollout(&env).filter(|r| {
            r["status"]["candidate"]["step"] == 0 && r["status"]["candidate"]["canary"] == 20
        })
    })
    .await;
    env.wait("the second step", || {
        rollout(&env).filter(|r| {
            r["status"]["candidate"]["step"] == 1 && r["status"]["candidate"]["canary"] == 60
        })
    })
    .await;
    let promoted = env
        .wait("the promotion after the last step", || {
            rollout(&env).filter(|r| r["status"]["lastDecision"]["action"] == "Promote")
        })
        .await;
    assert_eq!(promoted["status"]["lastDecision"]["by"], "policy");
    assert!(promoted["status"]["candidate"].is_null());
    env.wait_long("every object served by the promoted version", || {
        all_behaved(&env, 0..6, "misbehave-build-B")
    })
    .await;
}

/// Starts a replica `identity` of misbehave (build A) with build B as its
/// shadow (named in the configuration), leader election on.
fn replica_with_shadow(env: &mut Env, identity: &str, shadow: &[u8]) -> usize {
    let path = env.dir.path().join("misbehave-shadow.wasm");
    std::fs::write(&path, shadow).unwrap();
    let config = env.dir.path().join("rekon.yaml");
    std::fs::write(
        &config,
        format!("modules:\n  misbehave:\n    shadow: {}\n", path.display()),
    )
    .unwrap();
    let mut args = support::LEASE.to_vec();
    let config = config.to_str().unwrap().to_string();
    args.extend(["--identity", identity, "--config", &config]);
    let modules = [rekon_test_artifacts::MISBEHAVE, path.to_str().unwrap()];
    env.run(&modules, &args)
}

/// Two replicas, leader election on: a promotion is followed by both; the
/// standby serves the promoted version once the leader is killed, and two
/// replicas started again serve it from their first reconcile — the
/// retired version never writes after the promotion.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_keep_a_promotion_through_a_failover_and_a_restart() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    for i in 0..3 {
        env.apply(configmap("shop", &format!("c{i}"), json!({}), json!({})));
    }
    let shadow = support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B");
    let a = replica_with_shadow(&mut env, "replica-a", &shadow);
    let b = replica_with_shadow(&mut env, "replica-b", &shadow);
    let first = env.wait("a leader", || support::holder(&env)).await;
    env.wait("the candidate in the Rollout", || {
        rollout(&env).filter(|r| r["status"]["candidate"]["digest"].is_string())
    })
    .await;
    env.wait("the serving version's reconciles", || {
        all_behaved(&env, 0..3, "misbehave-build-A")
    })
    .await;
    let (out, code) = rollout_command(&env, "promote");
    assert_eq!(code, Some(0), "{out}");
    env.wait_long("every object reconciled by the promoted version", || {
        all_behaved(&env, 0..3, "misbehave-build-B")
    })
    .await;
    let (_watch, writes) = config_map_writes(&env);

    // The leader killed: the standby leads, and serves the promoted version.
    let (leader, standby) = if first == "replica-a" { (a, b) } else { (b, a) };
    env.signal(leader, "KILL");
    env.wait("a new leader", || {
        support::holder(&env).filter(|h| *h != first)
    })
    .await;
    configmaps_arriving(&env, "c", 3..6).await.unwrap();
    env.wait_long("new objects reconciled by the promoted version", || {
        all_behaved(&env, 0..6, "misbehave-build-B")
    })
    .await;

    // Both replicas started again: the promoted version from the first.
    env.terminate(standby).await;
    let _ = env.hosts[leader].wait();
    replica_with_shadow(&mut env, "replica-c", &shadow);
    replica_with_shadow(&mut env, "replica-d", &shadow);
    configmaps_arriving(&env, "c", 6..9).await.unwrap();
    env.wait_long("objects reconciled after the restart", || {
        all_behaved(&env, 0..9, "misbehave-build-B")
    })
    .await;
    env.settled().await;
    let marks = marks_written(&writes);
    assert!(
        marks.iter().all(|m| m == "misbehave-build-B"),
        "the retired version wrote after the promotion: {marks:?}"
    );
}

/// A shadow of the very build that serves (the same bytes from another
/// file) stays a shadow: the state naming that build as serving is no
/// promotion of it, at start or after a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shadow_of_the_same_build_is_never_promoted_by_the_state() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    let same = std::fs::read(rekon_test_artifacts::MISBEHAVE).unwrap();
    for round in 0..2 {
        let host = env.hosts.len();
        start(&mut env, &same, "").await;
        // A few record ticks: the leader writes the serving version, the
        // follower sees it.
        tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
        let log = env.log_of(host);
        assert!(!log.contains("shadow promoted"), "round {round}: {log}");
        let status = rollout(&env).unwrap()["status"].clone();
        assert!(status["lastDecision"].is_null(), "round {round}: {status}");
        assert!(status["candidate"]["digest"].is_string(), "{status}");
        env.terminate(host).await;
    }
}
