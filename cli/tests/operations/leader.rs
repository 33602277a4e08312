//! Leader election between replicas: only the leader writes, a killed or
//! frozen leader is replaced, SIGTERM hands the Lease over at once.

use std::time::{Duration, Instant};

use crate::support::{Env, app, holder, path, reconciled, replica, writes};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_leader_writes_and_a_killed_leader_is_replaced() {
    let mut env = Env::new().await;
    env.apply_file(&path("guests/app/manifests/crd.yaml"));
    // Installed as deploy/ installs it: a replica then writes nothing of it.
    env.apply_file(&path("deploy/crds/rollouts.yaml"));
    let a = replica(&mut env, "replica-a");
    let b = replica(&mut env, "replica-b");
    let first = env.wait("a leader", || holder(&env)).await;
    env.apply(app("one", 1));
    reconciled(&env, "one").await;
    let writers: Vec<String> = writes(&env).into_iter().map(|w| w.0).collect();
    assert!(!writers.is_empty(), "the App was written by someone");
    assert!(
        writers.iter().all(|w| *w == first),
        "only the leader {first} writes: {writers:?}"
    );

    // SIGKILL: no release; the standby takes over once the Lease expires.
    let (leader, standby) = if first == "replica-a" { (a, b) } else { (b, a) };
    env.signal(leader, "KILL");
    let killed = Instant::now();
    let second = env
        .wait("a new leader", || holder(&env).filter(|h| *h != first))
        .await;
    let took = killed.elapsed();
    assert!(
        took < Duration::from_millis(2000 + 200 + 1500),
        "took {took:?} to fail over: more than the lease duration plus a retry"
    );
    env.apply(app("two", 1));
    reconciled(&env, "two").await;
    assert_eq!(
        second,
        if standby == a {
            "replica-a"
        } else {
            "replica-b"
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_leader_writes_nothing_after_the_new_leader_starts() {
    let mut env = Env::new().await;
    env.apply_file(&path("guests/app/manifests/crd.yaml"));
    // Installed as deploy/ installs it: a replica then writes nothing of it.
    env.apply_file(&path("deploy/crds/rollouts.yaml"));
    let a = replica(&mut env, "replica-a");
    let b = replica(&mut env, "replica-b");
    let first = env.wait("a leader", || holder(&env)).await;
    let (leader, _) = if first == "replica-a" { (a, b) } else { (b, a) };
    env.apply(app("before", 1));
    reconciled(&env, "before").await;

    // Freeze the leader past its lease, with work pending for it.
    env.signal(leader, "STOP");
    env.apply(app("during", 1));
    let second = env
        .wait("a new leader", || holder(&env).filter(|h| *h != first))
        .await;
    reconciled(&env, "during").await;
    // Thaw it: it must notice it lost the Lease before writing anything.
    env.signal(leader, "CONT");
    env.apply(app("after", 1));
    reconciled(&env, "after").await;
    tokio::time::sleep(Duration::from_millis(800)).await;

    let log = writes(&env);
    let new_first = log
        .iter()
        .position(|w| w.0 == second)
        .expect("the new leader wrote");
    let late: Vec<_> = log[new_first..].iter().filter(|w| w.0 == first).collect();
    assert!(
        late.is_empty(),
        "the old leader wrote after the new one: {late:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_hands_the_lease_over_at_once() {
    let mut env = Env::new().await;
    env.apply_file(&path("guests/app/manifests/crd.yaml"));
    // Installed as deploy/ installs it: a replica then writes nothing of it.
    env.apply_file(&path("deploy/crds/rollouts.yaml"));
    // A long lease: a handover faster than it proves the release.
    let mut args = vec![
        "--leader-elect",
        "--lease-duration",
        "20s",
        "--renew-deadline",
        "15s",
        "--retry-period",
        "200ms",
    ];
    args.extend(["--identity", "replica-a"]);
    let a = env.run(&[rekon_test_artifacts::APP], &args);
    env.wait("replica-a leads", || {
        holder(&env).filter(|h| h == "replica-a")
    })
    .await;
    args.pop();
    args.push("replica-b");
    env.run(&[rekon_test_artifacts::APP], &args);
    env.signal(a, "TERM");
    let sent = Instant::now();
    env.wait("replica-b leads", || {
        holder(&env).filter(|h| h == "replica-b")
    })
    .await;
    assert!(
        sent.elapsed() < Duration::from_secs(10),
        "the standby waited for the lease to expire instead of taking the released one\n{}",
        env.log_of(a)
    );
    env.apply(app("handed-over", 1));
    reconciled(&env, "handed-over").await;
}
