//! Lease reads and writes of one replica, typed (coordination.k8s.io/v1),
//! with what it has observed of each Lease.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, ListParams, PostParams};

use super::leader::LeaderConfig;

/// Lease reads and writes of one replica, with what it has observed of each
/// Lease: expiry is judged on our own clock (when did the Lease change to
/// what it is now?), never on the clocks of other machines.
///
/// A change is dated when we last saw the Lease as it was before, but never
/// earlier than half the gap between lease duration and renew deadline
/// before we saw it changed: a holder stops writing a renew deadline after
/// it sent its last renewal, and that renewal landed before we saw it, so
/// the others wait at least `(lease duration - renew deadline) / 2` past the
/// holder's last write — however slow the requests — while taking over up
/// to a poll period sooner than dating the change when it was seen.
pub(crate) struct Leases {
    api: Api<Lease>,
    namespace: String,
    identity: String,
    lease_duration: Duration,
    /// How far before we saw a change it may be dated (see above).
    slack: Duration,
    observed: HashMap<String, Observed>,
}

/// One Lease as last seen: its state, since when (as dated), and when we
/// last looked.
struct Observed {
    seen: Seen,
    since: Instant,
    looked: Instant,
}

/// What tells one state of a Lease from the next: who holds it, when it
/// was renewed, how often it changed hands.
#[derive(Clone, Debug, PartialEq)]
struct Seen {
    holder: Option<String>,
    renewed: Option<MicroTime>,
    transitions: Option<i32>,
}

/// The holder a Lease names ("" when free).
pub(crate) fn holder_of(lease: &Lease) -> &str {
    lease
        .spec
        .as_ref()
        .and_then(|s| s.holder_identity.as_deref())
        .unwrap_or_default()
}

/// How long a Lease is valid without renewal, as it says.
pub(crate) fn duration_of(lease: &Lease) -> Option<Duration> {
    let seconds = lease.spec.as_ref()?.lease_duration_seconds?;
    Some(Duration::from_secs(u64::try_from(seconds).unwrap_or(0)))
}

/// Now, as a Lease's MicroTime.
pub(crate) fn now() -> MicroTime {
    MicroTime(Timestamp::now())
}

/// A duration in whole seconds, at least one, as a Lease says it.
pub(crate) fn seconds(duration: Duration) -> i32 {
    i32::try_from(duration.as_secs().max(1)).unwrap_or(i32::MAX)
}

impl Leases {
    pub fn new(client: kube::Client, config: &LeaderConfig) -> Leases {
        Leases {
            api: Api::namespaced(client, &config.namespace),
            namespace: config.namespace.clone(),
            identity: config.identity.clone(),
            lease_duration: config.lease_duration,
            slack: config.lease_duration.saturating_sub(config.renew_deadline) / 2,
            observed: HashMap::new(),
        }
    }

    pub fn identity(&self) -> &str {
        &self.identity
    }

    pub async fn get(&self, name: &str) -> Result<Option<Lease>, kube::Error> {
        self.api.get_opt(name).await
    }

    pub async fn list(&self, selector: &str) -> Result<Vec<Lease>, kube::Error> {
        Ok(self
            .api
            .list(&ListParams::default().labels(selector))
            .await?
            .items)
    }

    /// How long `lease` has looked as it does now, to us.
    pub fn unchanged_for(&mut self, lease: &Lease) -> Duration {
        let spec = lease.spec.clone().unwrap_or_default();
        let record = Seen {
            holder: spec.holder_identity,
            renewed: spec.renew_time,
            transitions: spec.lease_transitions,
        };
        let name = lease.metadata.name.clone().unwrap_or_default();
        let now = Instant::now();
        match self.observed.get_mut(&name) {
            Some(observed) if observed.seen == record => {
                observed.looked = now;
                now.saturating_duration_since(observed.since)
            }
            before => {
                // Changed since we last looked (then: not before that look,
                // nor before the slack); first seen: now.
                let since = before.map_or(now, |b| {
                    b.looked.max(now.checked_sub(self.slack).unwrap_or(now))
                });
                self.observed.insert(
                    name,
                    Observed {
                        seen: record,
                        since,
                        looked: now,
                    },
                );
                now.saturating_duration_since(since)
            }
        }
    }

    /// Free to take: nobody holds it, or its holder has not renewed it for
    /// a whole lease duration (as we observed).
    pub fn expired(&mut self, lease: &Lease) -> bool {
        let duration = duration_of(lease).unwrap_or(self.lease_duration);
        holder_of(lease).is_empty() || self.unchanged_for(lease) >= duration
    }

    /// One round on Lease `name` as last read (`current`; None: it does not
    /// exist): creates it, renews it, or takes it over if it expired.
    /// Returns whether we hold it afterwards.
    pub async fn acquire_or_renew(
        &mut self,
        name: &str,
        current: Option<&Lease>,
        labels: &BTreeMap<String, String>,
    ) -> Result<bool, kube::Error> {
        Ok(self.write(name, current, labels, None).await?.is_some())
    }

    /// [`acquire_or_renew`](Self::acquire_or_renew), setting one
    /// annotation on the Lease as well; returns the Lease as written (None:
    /// not ours).
    pub async fn acquire_or_renew_annotated(
        &mut self,
        name: &str,
        current: Option<&Lease>,
        labels: &BTreeMap<String, String>,
        annotation: (&str, &str),
    ) -> Result<Option<Lease>, kube::Error> {
        self.write(name, current, labels, Some(annotation)).await
    }

    async fn write(
        &mut self,
        name: &str,
        current: Option<&Lease>,
        labels: &BTreeMap<String, String>,
        annotation: Option<(&str, &str)>,
    ) -> Result<Option<Lease>, kube::Error> {
        let annotations =
            annotation.map(|(key, value)| BTreeMap::from([(key.to_string(), value.to_string())]));
        let now = now();
        let duration_s = seconds(self.lease_duration);
        let Some(current) = current else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(name.to_string()),
                    namespace: Some(self.namespace.clone()),
                    labels: Some(labels.clone()),
                    annotations: annotations.clone(),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(self.identity.clone()),
                    lease_duration_seconds: Some(duration_s),
                    acquire_time: Some(now.clone()),
                    renew_time: Some(now),
                    lease_transitions: Some(0),
                    ..LeaseSpec::default()
                }),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(written) => Ok(Some(written)),
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(None),
                Err(error) => Err(error),
            };
        };
        let holder = holder_of(current);
        if holder != self.identity && !self.expired(current) {
            return Ok(None);
        }
        let taken = holder != self.identity;
        let mut lease = current.clone();
        if let Some(annotations) = annotations {
            lease
                .metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .extend(annotations);
        }
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        spec.renew_time = Some(now.clone());
        spec.lease_duration_seconds = Some(duration_s);
        if taken {
            spec.holder_identity = Some(self.identity.clone());
            spec.acquire_time = Some(now);
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
        match self.api.replace(name, &PostParams::default(), &lease).await {
            Ok(written) => Ok(Some(written)),
            // Someone else wrote the Lease first: they win this round.
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Gives Lease `name` up (if we hold it) so another replica takes it
    /// at once.
    pub async fn release(&self, name: &str) {
        let Ok(Some(mut lease)) = self.api.get_opt(name).await else {
            return;
        };
        if holder_of(&lease) != self.identity {
            return;
        }
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        match self.api.replace(name, &PostParams::default(), &lease).await {
            Ok(_) => tracing::info!(lease = %name, "released the Lease"),
            Err(error) => {
                tracing::warn!(lease = %name, error = %error, "cannot release the Lease")
            }
        }
    }

    /// Deletes Lease `name` (best effort).
    pub async fn delete(&mut self, name: &str) {
        self.observed.remove(name);
        if let Err(error) = self.api.delete(name, &DeleteParams::default()).await {
            tracing::debug!(lease = %name, error = %error, "cannot delete the Lease");
        }
    }
}

/// A Lease name from parts: lowercase letters, digits, `-` and `.` only.
pub(crate) fn lease_name(prefix: &str, role: &str, name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '-' | '.') => c,
            _ => '-',
        })
        .collect();
    let mut full = format!("{prefix}-{role}-{clean}");
    full.truncate(253);
    full.trim_end_matches(['-', '.']).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leases(lease: u64, deadline_ms: u64) -> Leases {
        let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
        let client = kube::Client::try_from(config).unwrap();
        let timing = LeaderConfig::new("default", "me").timing(
            Duration::from_secs(lease),
            Duration::from_millis(deadline_ms),
            Duration::from_millis(100),
        );
        Leases::new(client, &timing)
    }

    fn renewed(holder: &str, at: i64) -> Lease {
        Lease {
            metadata: ObjectMeta {
                name: Some("l".into()),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(holder.into()),
                renew_time: Some(MicroTime(Timestamp::from_second(at).unwrap())),
                ..LeaseSpec::default()
            }),
        }
    }

    #[tokio::test]
    async fn a_change_is_dated_at_the_last_look_that_saw_the_state_before() {
        // Slack 4 s: a change seen now dates from the look before.
        let mut leases = leases(10, 2000);
        assert_eq!(leases.unchanged_for(&renewed("a", 1)), Duration::ZERO);
        std::thread::sleep(Duration::from_millis(150));
        let unchanged = leases.unchanged_for(&renewed("a", 1));
        assert!(unchanged >= Duration::from_millis(150), "{unchanged:?}");
        std::thread::sleep(Duration::from_millis(200));
        let since_change = leases.unchanged_for(&renewed("a", 2));
        assert!(
            since_change >= Duration::from_millis(200) && since_change < Duration::from_secs(2),
            "dated at the look before: {since_change:?}"
        );
        assert!(!leases.expired(&renewed("a", 2)));
    }

    #[tokio::test]
    async fn a_change_is_never_dated_earlier_than_the_slack() {
        // Lease 1 s, deadline 960 ms: a change is dated at most 20 ms early.
        let mut tight = leases(1, 960);
        tight.unchanged_for(&renewed("a", 1));
        std::thread::sleep(Duration::from_millis(300));
        let since_change = tight.unchanged_for(&renewed("a", 2));
        assert!(
            since_change <= Duration::from_millis(100),
            "within the slack: {since_change:?}"
        );
        // A Lease seen for the first time dates from now.
        let mut fresh = leases(10, 2000);
        assert_eq!(fresh.unchanged_for(&renewed("b", 5)), Duration::ZERO);
    }

    #[test]
    fn lease_names_are_valid_object_names() {
        assert_eq!(lease_name("rekon", "module", "app"), "rekon-module-app");
        assert_eq!(
            lease_name("rekon", "replica", "Node_1:42"),
            "rekon-replica-node-1-42"
        );
        assert!(lease_name("rekon", "module", &"x".repeat(400)).len() <= 253);
    }
}
