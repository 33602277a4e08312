//! The app module sharded over three replicas, as the README's overlay
//! deploys it: three Ready pods, each claiming an equal part of the hash
//! space in its Lease, every App cached by exactly one of them and
//! reconciled, and the webhooks still answering.

use std::path::Path;
use std::time::Duration;

use rekon_rules::ShardRanges;

use crate::cluster::{Node, all_reconciled, app, apply_text, root, text, too_many_replicas, wait};

const APPS: usize = 12;

/// The overlay of the README's sharding section.
fn overlay() -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("the README");
    let start = readme
        .find("  # rekon with the app module's objects spread over 3 replicas.")
        .expect("the README's sharding overlay");
    readme[start..]
        .lines()
        .take_while(|l| l.trim() != "```")
        .map(|l| l.strip_prefix("  ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Each rekon pod's `rekon_shard_objects` for Apps.
fn apps_cached(node: &Node) -> Vec<(String, usize)> {
    node.metrics()
        .into_iter()
        .filter_map(|(pod, metrics)| {
            let line = metrics.lines().find(|l| {
                l.starts_with("rekon_shard_objects{")
                    && l.contains("kind=\"App.demo.rekon.dev/v1\"")
            })?;
            Some((pod, line.rsplit(' ').next()?.parse().ok()?))
        })
        .collect()
}

pub fn three_replicas(node: &Node, work: &Path, step: &dyn Fn(&str)) {
    step("the app module sharded over 3 replicas");
    let dir = work.join("sharded");
    std::fs::create_dir_all(&dir).expect("the overlay's directory");
    std::fs::write(dir.join("kustomization.yaml"), overlay()).expect("the overlay");
    node.k(&["apply", "-k", dir.to_str().expect("a path")]);
    node.rolled_out();
    wait("three Ready rekon pods", Duration::from_secs(180), || {
        (node.ready() == 3 && node.rekon_pods().len() == 3).then_some(())
    });
    let pods: Vec<String> = node
        .rekon_pods()
        .iter()
        .filter_map(|p| p["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    wait(
        "each pod claiming its slots of the hash space",
        Duration::from_secs(60),
        || {
            let leases = node.json(&[
                "-n",
                "rekon-system",
                "get",
                "leases",
                "-l",
                "rekon.dev/shard-group",
            ]);
            let claimed = |pod: &str| {
                leases["items"].as_array()?.iter().find_map(|l| {
                    (l["spec"]["holderIdentity"] == pod)
                        .then(|| l["metadata"]["annotations"]["rekon.dev/shard-ranges"].as_str())
                        .flatten()
                        .and_then(ShardRanges::parse)
                })
            };
            pods.iter()
                .all(|m| claimed(m) == Some(ShardRanges::assigned(&pods, m)))
                .then_some(())
        },
    );

    let apps: String = (0..APPS)
        .map(|i| format!("---\n{}", app(&format!("shard-{i:02}"), "sharded", 0)))
        .collect();
    node.k(&["create", "namespace", "sharded"]);
    apply_text(node, &apps);
    wait(
        "every sharded App reconciled",
        Duration::from_secs(120),
        || all_reconciled(node, "sharded"),
    );
    let total = node.json(&["get", "apps.v1.demo.rekon.dev", "-A"])["items"]
        .as_array()
        .map_or(0, Vec::len);
    let cached = wait(
        "each pod's share of the Apps",
        Duration::from_secs(30),
        || {
            let cached = apps_cached(node);
            (cached.len() == 3 && cached.iter().map(|(_, n)| n).sum::<usize>() == total)
                .then_some(cached)
        },
    );
    assert!(
        cached.iter().all(|(_, n)| *n < total),
        "every App is cached by exactly one pod, none by all: {cached:?} of {total}"
    );
    let refused = too_many_replicas(node);
    assert!(
        text(&refused.stderr).contains("denied the request"),
        "the webhooks answer with the module sharded: {}",
        text(&refused.stderr)
    );
}
