//! Scale-out: modules spread over replicas, one Lease per module, and
//! move when a replica dies.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{self, Env, LEASE, identity};

/// Nine modules: `misbehav1` to `misbehav9`.
fn modules() -> Vec<String> {
    (1..=9).map(|i| format!("misbehav{i}")).collect()
}

fn replica(env: &mut Env, files: &[String], identity: &str) -> usize {
    // The short timings of the election tests.
    let mut args = vec!["--scale-out"];
    args.extend(LEASE.iter().filter(|a| **a != "--leader-elect"));
    args.extend(["--identity", identity]);
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    env.run(&files, &args)
}

/// Module -> the replica holding its Lease.
fn holders(env: &Env) -> std::collections::BTreeMap<String, String> {
    let leases = env.resource("coordination.k8s.io", "v1", "Lease");
    env.store()
        .list(&leases, &Default::default())
        .map(|l| l.items)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|lease| {
            let module = lease["metadata"]["name"]
                .as_str()?
                .strip_prefix("rekon-module-")?
                .to_string();
            let holder = lease["spec"]["holderIdentity"].as_str()?.to_string();
            Some((module, holder))
        })
        .collect()
}

/// How many modules each replica holds, once all nine are held.
fn shares(env: &Env) -> Option<std::collections::BTreeMap<String, usize>> {
    let holders = holders(env);
    if holders.len() != 9 {
        return None;
    }
    let mut shares = std::collections::BTreeMap::new();
    for holder in holders.values() {
        *shares.entry(holder.clone()).or_insert(0) += 1;
    }
    Some(shares)
}

/// A ConfigMap every module stamps.
fn probe(env: &Env, name: &str) {
    let annotations: serde_json::Map<String, Value> = modules()
        .into_iter()
        .map(|m| (format!("{m}.rekon.dev/mode"), json!("stamp")))
        .collect();
    env.apply(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": { "name": name, "namespace": "default", "annotations": annotations },
    }));
}

/// The modules that have stamped ConfigMap `name`.
fn stamped(env: &Env, name: &str) -> Vec<String> {
    let Some(cm) = env.get("", "v1", "ConfigMap", Some("default"), name) else {
        return Vec::new();
    };
    modules()
        .into_iter()
        .filter(|m| cm["data"][m] == format!("{m}-build-A").as_str())
        .collect()
}

async fn all_stamped(env: &Env, name: &str) {
    env.wait(&format!("{name} stamped by every module"), || {
        (stamped(env, name).len() == 9).then_some(())
    })
    .await;
}

/// The replicas whose requests wrote for `module` (by field manager),
/// from the `from`th request of the log on.
fn writers_of(env: &Env, module: &str, from: usize) -> Vec<String> {
    let manager = format!("fieldManager=rekon-{module}");
    env.server
        .requests()
        .into_iter()
        .skip(from)
        .filter(|r| r.method == "PATCH" && r.query.contains(&manager))
        .filter_map(|r| identity(&r.user_agent))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modules_spread_over_replicas_and_move_when_one_dies() {
    let mut env = Env::new().await;
    let dir = env.dir.path().join("modules");
    std::fs::create_dir(&dir).unwrap();
    let files: Vec<String> = modules()
        .iter()
        .map(|m| {
            let file = dir.join(format!("{m}.wasm"));
            std::fs::write(&file, support::misbehave_named(m)).unwrap();
            file.display().to_string()
        })
        .collect();

    // One replica takes every module; two more join and get their share.
    let a = replica(&mut env, &files, "replica-a");
    env.wait("replica-a holding all nine modules", || {
        shares(&env).filter(|s| s.get("replica-a") == Some(&9))
    })
    .await;
    replica(&mut env, &files, "replica-b");
    let c = replica(&mut env, &files, "replica-c");
    env.wait("three modules per replica", || {
        shares(&env).filter(|s| s.len() == 3 && s.values().all(|n| *n == 3))
    })
    .await;
    // What each module's replica writes once they are balanced (the one
    // that held them all has written the namespaces' root CAs before).
    let from = env.server.requests().len();
    probe(&env, "probe-balanced");
    all_stamped(&env, "probe-balanced").await;
    let balanced = holders(&env);
    for (module, holder) in &balanced {
        // The server logs a request once it has answered it: a write seen
        // in the store may not be in the log yet.
        let writers = env
            .wait(&format!("{module}'s write in the request log"), || {
                Some(writers_of(&env, module, from)).filter(|w| !w.is_empty())
            })
            .await;
        assert!(
            writers.iter().all(|w| w == holder),
            "{module} is held by {holder} but written by {writers:?}"
        );
    }

    // SIGKILL one: its Leases expire and the other two take them, while
    // the modules they hold keep reconciling.
    let dead: Vec<String> = balanced
        .iter()
        .filter(|(_, h)| *h == "replica-c")
        .map(|(m, _)| m.clone())
        .collect();
    env.signal(c, "KILL");
    let killed = Instant::now();
    probe(&env, "probe-failover");
    let survivors_done = env
        .wait("the surviving replicas' modules stamping", || {
            let done = stamped(&env, "probe-failover");
            (done.len() >= 6).then_some(done)
        })
        .await;
    // The dead replica's Leases cannot have expired yet: only the live
    // replicas' modules have stamped.
    if holders(&env).values().filter(|h| *h == "replica-c").count() == 3 {
        assert!(
            survivors_done.iter().all(|m| !dead.contains(m)),
            "a module of the dead replica was reconciled before being taken over: {survivors_done:?}"
        );
    }
    env.wait("the dead replica's modules taken over", || {
        shares(&env).filter(|s| !s.contains_key("replica-c") && s.values().all(|n| *n <= 5))
    })
    .await;
    let took = killed.elapsed();
    assert!(
        took < Duration::from_millis(2000 + 200 + 1500),
        "took {took:?} to move the modules: more than the lease duration plus a retry"
    );
    all_stamped(&env, "probe-failover").await;
    probe(&env, "probe-after");
    all_stamped(&env, "probe-after").await;

    // SIGTERM hands the Leases over at once: the last replica takes all.
    env.signal(a, "TERM");
    let sent = Instant::now();
    env.wait("replica-b holding all nine modules", || {
        shares(&env).filter(|s| s.get("replica-b") == Some(&9))
    })
    .await;
    assert!(
        sent.elapsed() < Duration::from_secs(2),
        "replica-b waited for the Leases to expire instead of taking the released ones\n{}",
        env.log_of(a)
    );
    probe(&env, "probe-last");
    all_stamped(&env, "probe-last").await;
}
