//! A real API server that keeps an audit log, and who the log says made
//! each request.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

/// A real cluster without controllers whose API server writes the audit
/// log `policy` asks for into `dir/audit.log` (and takes `args` too).
pub(super) fn audited_cluster(
    dir: &Path,
    policy: &str,
    args: &[String],
) -> (rekon_envtest::RealCluster, PathBuf) {
    let assets = rekon_envtest::assets().unwrap();
    let policy_file = dir.join("audit-policy.yaml");
    std::fs::write(&policy_file, policy).unwrap();
    let audit = dir.join("audit.log");
    let mut apiserver_args = vec![
        format!("--audit-policy-file={}", policy_file.display()),
        format!("--audit-log-path={}", audit.display()),
    ];
    apiserver_args.extend_from_slice(args);
    let cluster = rekon_envtest::RealCluster::start(
        &assets,
        &rekon_envtest::Options {
            controller_manager: false,
            apiserver_args,
            ..rekon_envtest::Options::default()
        },
    )
    .unwrap();
    (cluster, audit)
}

/// The requests the audit log at `audit` kept (their `ResponseComplete`
/// events), from byte `from` on; and where its last whole line ends, the
/// mark for a later look (a line being written is left for it).
pub(super) fn events(audit: &Path, from: usize) -> (usize, Vec<Value>) {
    let text = std::fs::read(audit).unwrap_or_default();
    let end = text
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |at| at + 1);
    let events = text
        .get(from.min(end)..end)
        .unwrap_or_default()
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
        .filter(|event| event["stage"] == "ResponseComplete")
        .collect();
    (end, events)
}

/// Who (the identity in each user agent's parentheses) made the requests
/// the audit log kept from byte `from` on, by object name; and the mark
/// for a later look.
pub(super) fn writers(audit: &Path, from: usize) -> (usize, BTreeMap<String, BTreeSet<String>>) {
    let (end, events) = events(audit, from);
    let mut writers: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for event in &events {
        let agent = event["userAgent"].as_str().unwrap_or_default();
        let Some(identity) = agent.split('(').nth(1).map(|s| s.trim_end_matches(')')) else {
            continue;
        };
        if let Some(name) = event["objectRef"]["name"].as_str() {
            writers
                .entry(name.to_string())
                .or_default()
                .insert(identity.to_string());
        }
    }
    (end, writers)
}
