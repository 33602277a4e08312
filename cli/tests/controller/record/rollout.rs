//! Rollouts of a shadow: promoted or aborted by command while objects keep
//! arriving, a canary share served live, and a policy that decides alone.

use serde_json::json;

use super::{
    assert_counted, config_map_writes, configmaps_arriving, marks_written, rekon, rollout_status,
    run_with_shadow, run_with_shadow_settings,
};
use crate::support::{self, Env, configmap, namespace};

/// Promotion while objects keep arriving: `rekon rollout promote` makes the
/// shadow serve in one step; every object, those created during the swap
/// included, ends up reconciled by it, none is written by the old version
/// once the new one has written it (no reconcile of the old version runs
/// after the swap), and the shadow is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_promoted_shadow_serves_and_no_object_is_lost() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    let (_watch, writes) = config_map_writes(&env);
    for i in 0..5 {
        env.apply(configmap("shop", &format!("c{i}"), json!({}), json!({})));
    }
    let shadow = support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B");
    let port = run_with_shadow(&mut env, shadow);
    let behaved = |env: &Env, name: &str, mark: &str| {
        env.get("", "v1", "ConfigMap", Some("shop"), name)
            .is_some_and(|c| c["data"]["behaved-by"] == mark)
    };
    env.wait("the serving version's reconciles", || {
        (0..5)
            .all(|i| behaved(&env, &format!("c{i}"), "misbehave-build-A"))
            .then_some(())
    })
    .await;
    env.wait("the shadow's comparisons", || {
        rollout_status(port, "misbehave")
            .0
            // The five and each namespace's kube-root-ca.crt (default,
            // kube-system, kube-public, kube-node-lease, shop).
            .contains("10 objects shadowed")
            .then_some(())
    })
    .await;
    // Objects arrive while the shadow is promoted.
    let arriving = configmaps_arriving(&env, "c", 5..25);
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let addr = format!("127.0.0.1:{port}");
    let (out, code) =
        rekon(&["rollout", "promote", "misbehave", "--addr", &addr].map(std::ffi::OsStr::new));
    assert_eq!(code, Some(0), "{out}");
    arriving.await.unwrap();
    env.wait_long("every object reconciled by the promoted version", || {
        (0..25)
            .all(|i| behaved(&env, &format!("c{i}"), "misbehave-build-B"))
            .then_some(())
    })
    .await;
    let (status, _) = rollout_status(port, "misbehave");
    assert!(status.contains("no shadow"), "{status}");
    // Each object's marks as written: A then B, or B alone; never A again
    // after B.
    let mut marks: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for event in writes.try_iter() {
        let object = &event.object;
        let name = object["metadata"]["name"].as_str().unwrap().to_string();
        if name == "kube-root-ca.crt" {
            continue;
        }
        let history = marks.entry(name).or_default();
        if let Some(mark) = object["data"]["behaved-by"].as_str()
            && history.last().map(String::as_str) != Some(mark)
        {
            history.push(mark.to_string());
        }
    }
    assert_eq!(marks.len(), 25, "{marks:?}");
    for (name, history) in &marks {
        assert!(
            history == &["misbehave-build-A", "misbehave-build-B"]
                || history == &["misbehave-build-B"],
            "{name} was written {history:?}"
        );
    }
    // A second promotion has nothing to promote.
    let (out, code) =
        rekon(&["rollout", "promote", "misbehave", "--addr", &addr].map(std::ffi::OsStr::new));
    assert_ne!(code, Some(0), "{out}");
    assert!(out.contains("has no shadow"), "{out}");
    // A module no host runs is named as such, not as one without a shadow.
    let (out, code) =
        rekon(&["rollout", "status", "nosuch", "--addr", &addr].map(std::ffi::OsStr::new));
    assert_ne!(code, Some(0), "{out}");
    assert!(
        out.contains("no module \"nosuch\" runs on this host"),
        "{out}"
    );
}

/// `rekon rollout abort` drops the shadow while objects keep arriving: the
/// serving version goes on alone without a restart (each new object
/// reconciled for its creation once), and nothing the shadow would have
/// written is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_shadow_is_gone_and_the_serving_version_goes_on() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    env.apply(configmap("shop", "one", json!({}), json!({})));
    let (_watch, writes) = config_map_writes(&env);
    let shadow = support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B");
    let port = run_with_shadow(&mut env, shadow);
    env.wait("the shadow's comparison", || {
        rollout_status(port, "misbehave")
            .0
            .contains("differ  shop/one")
            .then_some(())
    })
    .await;
    // Objects arrive while the shadow is dropped.
    let mark = env.log().len();
    let arriving = configmaps_arriving(&env, "a", 0..20);
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let addr = format!("127.0.0.1:{port}");
    let (out, code) =
        rekon(&["rollout", "abort", "misbehave", "--addr", &addr].map(std::ffi::OsStr::new));
    assert_eq!(code, Some(0), "{out}");
    arriving.await.unwrap();
    env.wait("the shadow gone", || {
        rollout_status(port, "misbehave")
            .0
            .contains("no shadow")
            .then_some(())
    })
    .await;
    let metrics = support::http_get(port, "/metrics").unwrap();
    assert!(
        !metrics.contains("rekon_candidate_canary_percent{module=\"misbehave\""),
        "the aborted candidate's series is gone:\n{metrics}"
    );
    let names: Vec<String> = (0..20).map(|i| format!("a{i}")).collect();
    for name in names.iter().map(String::as_str).chain(["one"]) {
        env.wait("the serving version's reconcile", || {
            env.get("", "v1", "ConfigMap", Some("shop"), name)
                .filter(|c| c["data"]["behaved-by"] == "misbehave-build-A")
        })
        .await;
    }
    env.settled().await;
    // The serving version never stopped: each arriving object was
    // reconciled for its creation once, and nothing was reloaded.
    for name in &names {
        let reasons = env.reconcile_reasons(mark, name);
        assert_eq!(
            reasons.iter().filter(|r| *r == "added").count(),
            1,
            "{name}: {reasons:?}"
        );
        assert!(
            !reasons.iter().any(|r| r == "module-reloaded"),
            "{name}: {reasons:?}"
        );
    }
    // Nothing the shadow would have written was ever stored.
    let marks = marks_written(&writes);
    assert!(!marks.is_empty());
    assert!(marks.iter().all(|m| m == "misbehave-build-A"), "{marks:?}");
}

/// A canary: the shadow serves a share of the objects live (the same ones
/// every time, by a stable hash of their namespace and name), the serving
/// version the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_canary_share_is_served_live_by_the_new_version() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    let names: Vec<String> = (0..20).map(|i| format!("c{i}")).collect();
    for name in &names {
        env.apply(configmap("shop", name, json!({}), json!({})));
    }
    let shadow = support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B");
    let port = run_with_shadow_settings(&mut env, shadow, "    canary: 50\n");
    let marks = |env: &Env| -> Option<Vec<String>> {
        names
            .iter()
            .map(|name| {
                let c = env.get("", "v1", "ConfigMap", Some("shop"), name)?;
                c["data"]["behaved-by"].as_str().map(str::to_string)
            })
            .collect()
    };
    let first = env.wait("every object reconciled", || marks(&env)).await;
    let by_b = first.iter().filter(|m| *m == "misbehave-build-B").count();
    assert!(
        by_b > 0 && by_b < names.len(),
        "both versions serve a share: {first:?}"
    );
    env.settled().await;
    // The same objects each time: relabelled, each is reconciled again by
    // the version that served it.
    for name in &names {
        let mut object = configmap("shop", name, json!({}), json!({}));
        object["metadata"]["labels"] = json!({"touched": "yes"});
        env.apply(object);
    }
    env.settled().await;
    assert_eq!(marks(&env).unwrap(), first);
    let (status, _) = rollout_status(port, "misbehave");
    assert!(
        status.contains("canary: the shadow serves 50% of the objects live"),
        "{status}"
    );
    assert_counted(port, "rekon_canary_reconciles_total");
    // The candidate is shown beside the serving version, with its share.
    let metrics = support::http_get(port, "/metrics").unwrap();
    let candidate = metrics
        .lines()
        .find(|l| l.starts_with("rekon_candidate_canary_percent{module=\"misbehave\""))
        .unwrap_or_else(|| panic!("no candidate series:\n{metrics}"));
    assert!(candidate.ends_with(" 50"), "{candidate}");
    // Reconciles are counted under the version that served them: the
    // serving version's digest and the canary's, each with a share.
    fn digest_of(line: &str) -> Option<&str> {
        line.split("digest=\"").nth(1)?.split('"').next()
    }
    let candidate_digest = digest_of(candidate).unwrap();
    let serving_line = metrics
        .lines()
        .find(|l| l.starts_with("rekon_module_info{module=\"misbehave\""))
        .unwrap();
    let serving_digest = digest_of(serving_line).unwrap();
    let done_by = |digest: &str| -> f64 {
        metrics
            .lines()
            .filter(|l| l.starts_with("rekon_reconciles_total{module=\"misbehave\""))
            .filter(|l| l.contains(&format!("digest=\"{digest}\"")))
            .filter(|l| l.contains("result=\"done\""))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    assert!(done_by(candidate_digest) > 0.0, "{metrics}");
    assert!(done_by(serving_digest) > 0.0, "{metrics}");
    assert!(
        metrics.lines().any(|l| l
            .starts_with("rekon_reconcile_duration_seconds_count{module=\"misbehave\"")
            && l.contains(candidate_digest)),
        "{metrics}"
    );
    // Each reconcile the canary served is logged under its version; the
    // others are not.
    let log = env.log();
    let behaved: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("misbehave: behaved"))
        .collect();
    let by_canary = behaved
        .iter()
        .filter(|l| l.contains("canary_digest="))
        .count();
    assert!(
        by_canary > 0 && by_canary < behaved.len(),
        "{by_canary} of {} reconciles logged as the canary's",
        behaved.len()
    );
}

/// A policy decides without a command: a shadow that agrees on three
/// reconciles in a row is promoted; one that differs, with
/// `abortOnDifference`, is dropped and the serving version goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rollout_policy_promotes_an_agreeing_shadow_and_aborts_a_differing_one() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    for i in 0..4 {
        env.apply(configmap("shop", &format!("c{i}"), json!({}), json!({})));
    }
    // The same logic, another build (the mark is never written: every
    // object is behaved already when the shadow sees it).
    let same = support::misbehave_with("misbehave: behaved", "misbehave: behavex");
    let port = run_with_shadow_settings(&mut env, same, "    policy:\n      promoteAfter: 3\n");
    env.wait("the policy's promotion", || {
        env.log().contains("shadow promoted").then_some(())
    })
    .await;
    let (status, _) = rollout_status(port, "misbehave");
    assert!(status.contains("no shadow"), "{status}");
    assert!(
        env.log().contains("command=Promote"),
        "the policy promoted it, not a command: {}",
        env.log()
    );

    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    env.apply(configmap("shop", "one", json!({}), json!({})));
    let other = support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B");
    let port = run_with_shadow_settings(
        &mut env,
        other,
        "    policy:\n      abortOnDifference: true\n",
    );
    env.wait("the policy's abort", || {
        let decided = env.log().contains("command=Abort");
        let (out, _) = rollout_status(port, "misbehave");
        (decided && out.contains("serving 0.1.0") && out.contains("no shadow")).then_some(())
    })
    .await;
    env.apply(configmap("shop", "two", json!({}), json!({})));
    env.wait("the serving version goes on", || {
        env.get("", "v1", "ConfigMap", Some("shop"), "two")
            .filter(|c| c["data"]["behaved-by"] == "misbehave-build-A")
    })
    .await;
    assert!(!env.log().contains("shadow promoted"));
}
