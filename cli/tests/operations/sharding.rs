//! Sharding: one module's objects spread over three replicas by a hash of
//! their uid, each caching and reconciling its own share, and handed over
//! when a replica dies or joins; with the API server filtering
//! (`ShardedListAndWatch` on) and without (filtered in the host).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use rekon_rules::ShardRanges;
use serde_json::{Value, json};

use crate::support::{Env, LEASE, free_port, http_get, identity, shard_claims, shard_owner};

const OBJECTS: usize = 240;
const MODULE: &str = "misbehave";

/// A sharded replica: leader election timings, its identity, metrics.
fn replica(env: &mut Env, identity: &str, port: u16) -> usize {
    let mut args = LEASE.to_vec();
    let metrics = format!("127.0.0.1:{port}");
    args.extend(["--identity", identity, "--shard", "misbehave=uid"]);
    args.extend(["--metrics-addr", &metrics]);
    env.run(&[rekon_test_artifacts::MISBEHAVE], &args)
}

/// The ranges each replica claims in its membership Lease.
fn claims(env: &Env) -> BTreeMap<String, ShardRanges> {
    let leases = env.resource("coordination.k8s.io", "v1", "Lease");
    let listed = env
        .store()
        .list(&leases, &Default::default())
        .map(|l| l.items)
        .unwrap_or_default();
    shard_claims(&listed)
}

/// Waits until `members` claim their slots of the hash space (a dead replica's Lease may still say what it held: the others
/// ignore it once expired); returns how long that took.
async fn settled(env: &Env, members: &[&str]) -> Duration {
    let started = Instant::now();
    env.wait_long(&format!("the ring settled on {members:?}"), || {
        let claims = claims(env);
        members
            .iter()
            .all(|m| claims.get(*m) == Some(&ShardRanges::assigned(members, m)))
            .then_some(())
    })
    .await;
    started.elapsed()
}

fn object(i: usize) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {
            "name": format!("obj-{i:04}"), "namespace": "default",
            "annotations": {"misbehave.rekon.dev/mode": "stamp"},
        },
    })
}

/// The uid of each object.
fn uids(env: &Env) -> BTreeMap<String, String> {
    (0..OBJECTS)
        .map(|i| {
            let name = format!("obj-{i:04}");
            let cm = env
                .get("", "v1", "ConfigMap", Some("default"), &name)
                .expect("the object");
            (
                name,
                cm["metadata"]["uid"].as_str().expect("a uid").to_string(),
            )
        })
        .collect()
}

/// Takes every stamp off (a change each object's owner must reconcile).
fn unstamp(env: &Env) {
    for i in 0..OBJECTS {
        env.apply(object(i));
    }
}

async fn all_stamped(env: &Env) {
    env.wait_long("every object stamped", || {
        (0..OBJECTS)
            .all(|i| {
                env.get(
                    "",
                    "v1",
                    "ConfigMap",
                    Some("default"),
                    &format!("obj-{i:04}"),
                )
                .is_some_and(|cm| cm["data"][MODULE] == misbehave::BUILD_MARK)
            })
            .then_some(())
    })
    .await;
}

/// Who stamped each object, from the `from`th request of the log on.
fn stampers(env: &Env, from: usize) -> BTreeMap<String, BTreeSet<String>> {
    let mut by_object: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for request in env.server.requests().into_iter().skip(from) {
        if request.method != "PATCH" || request.resource != "configmaps" {
            continue;
        }
        let (Some(who), Some(name)) = (
            identity(&request.user_agent),
            request.path.rsplit('/').next(),
        ) else {
            continue;
        };
        // The test's objects only: each namespace's kube-root-ca.crt is
        // stamped too, whenever its owner gets to it.
        if !name.starts_with("obj-") {
            continue;
        }
        by_object.entry(name.to_string()).or_default().insert(who);
    }
    by_object
}

/// Every object stamped once by the replica whose part holds its uid.
async fn each_by_its_owner(env: &Env, members: &[&str], from: usize) {
    all_stamped(env).await;
    let uids = uids(env);
    let by_object = env
        .wait("every stamp in the request log", || {
            let s = stampers(env, from);
            (s.len() == OBJECTS).then_some(s)
        })
        .await;
    for (name, writers) in &by_object {
        let owner = shard_owner(members, &uids[name]);
        assert_eq!(
            writers.iter().map(String::as_str).collect::<Vec<_>>(),
            [owner],
            "{name} is {owner}'s, written by {writers:?}"
        );
    }
}

/// A replica's `rekon_shard_objects` and filtering mode.
fn cached(port: u16) -> Option<(usize, String)> {
    let text = http_get(port, "/metrics")?;
    let objects = text
        .lines()
        .find(|l| l.starts_with("rekon_shard_objects{") && l.contains("kind=\"ConfigMap/v1\""))?
        .rsplit(' ')
        .next()?
        .parse()
        .ok()?;
    let mode = text
        .lines()
        .find(|l| l.starts_with("rekon_shard_filtering{") && l.ends_with(" 1"))?
        .split("mode=\"")
        .nth(1)?
        .split('"')
        .next()?
        .to_string();
    Some((objects, mode))
}

/// The metric names the README's sharding section lists.
fn documented() -> Vec<String> {
    let readme = std::fs::read_to_string(crate::support::path("README.md")).expect("the README");
    let section = readme
        .split("### Sharding one module's objects")
        .nth(1)
        .expect("the README has a sharding section");
    let section = section.split("\n## ").next().expect("a section");
    let section = section.split("\n### ").next().expect("a section");
    let names: Vec<String> = section
        .split('`')
        .filter(|t| t.starts_with("rekon_shard_"))
        .map(str::to_string)
        .collect();
    assert!(names.len() >= 6, "{names:?}");
    names
}

async fn spread_and_handed_over(gate: bool) {
    let mut env = Env::with_gate("ShardedListAndWatch", gate).await;
    let names = ["replica-a", "replica-b", "replica-c"];
    let ports: Vec<u16> = names.iter().map(|_| free_port()).collect();
    let mut index: Vec<usize> = names
        .iter()
        .zip(&ports)
        .map(|(name, port)| replica(&mut env, name, *port))
        .collect();
    settled(&env, &names).await;

    // Created once the ring is settled: each object stamped once, by its
    // owner, and cached there only.
    let from = env.server.requests().len();
    for i in 0..OBJECTS {
        env.apply(object(i));
    }
    each_by_its_owner(&env, &names, from).await;
    let all = env
        .store()
        .list(&env.resource("", "v1", "ConfigMap"), &Default::default())
        .map(|l| l.items.len())
        .expect("listing");
    let want_mode = if gate { "server" } else { "host" };
    for (name, port) in names.iter().zip(&ports) {
        // The gauges are set every second.
        let (objects, mode) = env
            .wait(&format!("{name}'s shard metrics"), || {
                cached(*port).filter(|(objects, _)| *objects > 0)
            })
            .await;
        assert_eq!(mode, want_mode, "{name} filters");
        let served = http_get(*port, "/metrics").unwrap_or_default();
        for metric in documented() {
            assert!(
                served.lines().any(|l| l.starts_with(&metric)),
                "{metric} is documented but not served by {name}"
            );
        }
        assert!(
            objects as f64 <= 0.45 * all as f64 && objects > 0,
            "{name} caches {objects} of {all} objects"
        );
    }

    // A replica killed: its part goes to the others within a lease
    // duration (and a round), and each object is reconciled by its new
    // owner once.
    env.signal(index[2], "KILL");
    let took = settled(&env, &names[..2]).await;
    assert!(
        took < Duration::from_millis(2000 + 2000),
        "took {took:?} to hand the dead replica's part over"
    );
    let from = env.server.requests().len();
    unstamp(&env);
    each_by_its_owner(&env, &names[..2], from).await;

    // It comes back: three parts again, nobody writing for another's.
    index[2] = replica(&mut env, names[2], ports[2]);
    settled(&env, &names).await;
    let from = env.server.requests().len();
    unstamp(&env);
    each_by_its_owner(&env, &names, from).await;

    // One leaves cleanly: its part is handed over, not left to expire —
    // once it has ended, its membership Lease is gone (an expired one
    // stays ten lease durations). How fast is the pipeline bench's
    // `sharded_handoff_s`.
    let ended = env.terminate(index[0]).await;
    assert!(
        ended.success(),
        "{} ended with {ended} after TERM",
        names[0]
    );
    let left = claims(&env);
    assert!(
        !left.contains_key(names[0]),
        "{} ended and its Lease still claims {:?}",
        names[0],
        left.get(names[0])
    );
    let took = settled(&env, &names[1..]).await;
    eprintln!("a leaving replica's part taken in {took:?}");
    let from = env.server.requests().len();
    unstamp(&env);
    each_by_its_owner(&env, &names[1..], from).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_spread_over_replicas_filtered_by_the_api_server() {
    spread_and_handed_over(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_spread_over_replicas_filtered_in_the_host() {
    spread_and_handed_over(false).await;
}
