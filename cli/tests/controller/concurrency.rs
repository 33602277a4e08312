//! Concurrency: the same object is never reconciled twice at once.

use std::time::Duration;

use serde_json::json;

use crate::support::{Env, configmap};

/// When each run of `name` ended, from the host's log.
fn run_ends(log: &str, name: &str) -> Vec<chrono::DateTime<chrono::Utc>> {
    let mut ends: Vec<_> = log
        .lines()
        .filter(|l| l.contains(&format!("object={name} ")) && l.contains("reconcile failed"))
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    ends.sort();
    ends
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_object_is_never_reconciled_twice_at_once() {
    let mut env = Env::new().await;
    env.run(
        &[rekon_test_artifacts::MISBEHAVE],
        &[
            "--concurrency",
            "4",
            "--timeout-ms",
            "150",
            "--backoff-max-s",
            "1",
        ],
    );
    // Each run of `busy` spins until its 150 ms CPU deadline; meanwhile
    // it keeps changing, and other objects keep the workers busy.
    for i in 0..3 {
        env.apply(configmap(
            "default",
            &format!("other-{i}"),
            json!({}),
            json!({}),
        ));
    }
    for round in 0..25 {
        env.apply(configmap(
            "default",
            "busy",
            json!({ "misbehave.rekon.dev/mode": "loop" }),
            json!({ "round": round.to_string() }),
        ));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    env.wait("several runs of busy", || {
        (run_ends(&env.log(), "busy").len() >= 3).then_some(())
    })
    .await;
    let ends = run_ends(&env.log(), "busy");
    for pair in ends.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= chrono::Duration::milliseconds(145),
            "two runs of busy overlapped: they ended {gap} apart\n{ends:?}"
        );
    }
}
