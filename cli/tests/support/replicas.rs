//! Replicas of the App operator with leader election: starting one, the
//! Lease holder, what each replica wrote, and waiting for an App.

use super::{Env, LEASE};

/// Starts a replica of the App operator with leader election, as
/// `identity`; returns its index.
pub fn replica(env: &mut Env, identity: &str) -> usize {
    let mut args = LEASE.to_vec();
    args.extend(["--identity", identity]);
    env.run(&[rekon_test_artifacts::APP], &args)
}

/// The replica holding the leader Lease.
pub fn holder(env: &Env) -> Option<String> {
    env.lease_holder("rekon-leader")
}

/// Writes to the cluster by each replica (Lease renewals aside), in the
/// order the API server received them: (identity, method, path).
pub fn writes(env: &Env) -> Vec<(String, String, String)> {
    env.server
        .requests()
        .into_iter()
        .filter(|r| matches!(r.method.as_str(), "POST" | "PUT" | "PATCH" | "DELETE"))
        .filter(|r| r.resource != "leases")
        .filter_map(|r| Some((identity(&r.user_agent)?, r.method, r.path)))
        .collect()
}

/// The replica identity in a `rekon/<version> (<identity>)` User-Agent.
pub fn identity(user_agent: &str) -> Option<String> {
    Some(
        user_agent
            .split('(')
            .nth(1)?
            .trim_end_matches(')')
            .to_string(),
    )
}

/// Waits until App `default/name` is reconciled (its first generation).
pub async fn reconciled(env: &Env, name: &str) {
    env.wait(&format!("App {name} reconciled"), || {
        env.get("demo.rekon.dev", "v1", "App", Some("default"), name)
            .filter(|a| a["status"]["observedGeneration"] == 1)
    })
    .await;
}

/// The ranges each replica claims in its shard membership Lease, from
/// Leases as JSON (`rekon.dev/shard-group` ones; others are skipped).
#[allow(dead_code)]
pub fn shard_claims<'a>(
    leases: impl IntoIterator<Item = &'a serde_json::Value>,
) -> std::collections::BTreeMap<String, rekon_rules::ShardRanges> {
    leases
        .into_iter()
        .filter(|l| l["metadata"]["labels"]["rekon.dev/shard-group"].is_string())
        .filter_map(|l| {
            let ranges = l["metadata"]["annotations"]["rekon.dev/shard-ranges"].as_str()?;
            Some((
                l["spec"]["holderIdentity"].as_str()?.to_string(),
                rekon_rules::ShardRanges::parse(ranges)?,
            ))
        })
        .collect()
}

/// Which of `members` owns an object of `uid`: the one whose slots of the
/// hash space hold its point.
#[allow(dead_code)]
pub fn shard_owner<'a>(members: &[&'a str], uid: &str) -> &'a str {
    let point = rekon_rules::shard_point(uid);
    members
        .iter()
        .find(|m| rekon_rules::ShardRanges::assigned(members, m).contains(point))
        .expect("every point has an owner")
}
