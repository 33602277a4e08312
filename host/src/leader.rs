//! Leader election on a coordination.k8s.io/v1 Lease, as client-go does it:
//! the leader renews the Lease every retry period; a candidate takes it over
//! when it has not seen it change for a whole lease duration.
//!
//! Safety: a leader that has not renewed within the renew deadline (shorter
//! than the lease duration) stops at once — its [`Leadership::is_leading`]
//! turns false before any other replica may take the Lease over, and the
//! host refuses writes from then on, so two replicas never write at once.
//! The deadline is measured on the monotonic clock, which keeps running
//! while a process is frozen.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use kube::api::{Api, PostParams};
use serde_json::{Value, json};
use tokio::sync::watch;

/// Settings of leader election. Defaults like controller-runtime: 15 s
/// lease, 10 s renew deadline, 2 s retry period.
#[derive(Clone, Debug)]
pub struct LeaderConfig {
    /// Lease name.
    pub name: String,
    /// Lease namespace.
    pub namespace: String,
    /// This replica's identity (unique per replica).
    pub identity: String,
    /// How long a Lease is valid without renewal.
    pub lease_duration: Duration,
    /// How long a leader keeps leading without a successful renewal.
    pub renew_deadline: Duration,
    /// How often to try to acquire or renew.
    pub retry_period: Duration,
}

impl LeaderConfig {
    /// Defaults for `identity`: lease `rekon-leader` in `namespace`.
    pub fn new(namespace: impl Into<String>, identity: impl Into<String>) -> LeaderConfig {
        LeaderConfig {
            name: "rekon-leader".into(),
            namespace: namespace.into(),
            identity: identity.into(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }

    /// Sets the lease name.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Sets the lease duration, renew deadline and retry period.
    #[must_use]
    pub fn timing(mut self, lease: Duration, renew_deadline: Duration, retry: Duration) -> Self {
        self.lease_duration = lease;
        self.renew_deadline = renew_deadline;
        self.retry_period = retry;
        self
    }
}

/// Whether this replica leads, shared with the controllers and the writes.
#[derive(Clone, Debug)]
pub struct Leadership {
    state: Arc<Mutex<State>>,
    changes: watch::Receiver<bool>,
}

#[derive(Debug)]
struct State {
    /// When the Lease was last renewed by us (None: not leading).
    renewed: Option<Instant>,
    renew_deadline: Duration,
}

impl Leadership {
    /// A leadership that always leads (no election).
    pub fn always() -> Leadership {
        let (_tx, changes) = watch::channel(true);
        // The sender is dropped: the value stays true forever.
        Leadership {
            state: Arc::new(Mutex::new(State {
                renewed: None,
                renew_deadline: Duration::MAX,
            })),
            changes,
        }
    }

    /// Leading now: the Lease was renewed within the renew deadline (always
    /// true without election).
    pub fn is_leading(&self) -> bool {
        let state = self.state.lock().expect("leadership lock");
        if state.renew_deadline == Duration::MAX {
            return true;
        }
        state
            .renewed
            .is_some_and(|at| at.elapsed() < state.renew_deadline)
    }

    /// A receiver that changes when leadership is gained or lost.
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.changes.clone()
    }
}

/// Runs an election until `stop`; then releases the Lease if held.
pub(crate) struct Elector {
    config: LeaderConfig,
    api: Api<kube::api::DynamicObject>,
    state: Arc<Mutex<State>>,
    changes: watch::Sender<bool>,
    /// The Lease as last seen, and when (monotonic) it was first seen so.
    observed: Option<(Value, Instant)>,
}

fn micro_time(at: chrono::DateTime<chrono::Utc>) -> String {
    // The API server accepts MicroTime with exactly six fractional digits.
    at.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

impl Elector {
    pub fn new(client: kube::Client, config: LeaderConfig) -> (Elector, Leadership) {
        let resource = kube::api::ApiResource {
            group: "coordination.k8s.io".into(),
            version: "v1".into(),
            api_version: "coordination.k8s.io/v1".into(),
            kind: "Lease".into(),
            plural: "leases".into(),
        };
        let api = Api::namespaced_with(client, &config.namespace, &resource);
        let state = Arc::new(Mutex::new(State {
            renewed: None,
            renew_deadline: config.renew_deadline,
        }));
        let (changes, receiver) = watch::channel(false);
        let leadership = Leadership {
            state: state.clone(),
            changes: receiver,
        };
        (
            Elector {
                config,
                api,
                state,
                changes,
                observed: None,
            },
            leadership,
        )
    }

    fn set_renewed(&self, at: Option<Instant>) {
        self.state.lock().expect("leadership lock").renewed = at;
    }

    fn leading(&self) -> bool {
        let state = self.state.lock().expect("leadership lock");
        state
            .renewed
            .is_some_and(|at| at.elapsed() < state.renew_deadline)
    }

    /// Runs until `stop` turns true.
    pub async fn run(mut self, mut stop: watch::Receiver<bool>) {
        loop {
            let was_leading = *self.changes.borrow();
            let attempt_started = Instant::now();
            match self.try_acquire_or_renew().await {
                Ok(true) => self.set_renewed(Some(attempt_started)),
                Ok(false) => self.set_renewed(None),
                Err(error) => {
                    tracing::warn!(lease = %self.config.name, error = %error, "cannot reach the leader Lease");
                }
            }
            let leading = self.leading();
            if leading != was_leading {
                if leading {
                    tracing::info!(identity = %self.config.identity, lease = %self.config.name, "became the leader");
                } else {
                    tracing::warn!(identity = %self.config.identity, lease = %self.config.name, "stopped leading");
                    self.set_renewed(None);
                }
                self.changes.send_replace(leading);
            }
            // While leading, wake up in time to step down at the deadline
            // if renewals keep failing.
            let wait = self.config.retry_period;
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = stop.wait_for(|s| *s) => break,
            }
        }
        if self.leading() {
            self.release().await;
        }
        self.set_renewed(None);
        self.changes.send_replace(false);
    }

    /// One round: returns whether we hold the Lease after it.
    async fn try_acquire_or_renew(&mut self) -> Result<bool, kube::Error> {
        let now = chrono::Utc::now();
        let me = &self.config.identity;
        let duration_s = self.config.lease_duration.as_secs().max(1);
        let current = match self.api.get_opt(&self.config.name).await? {
            None => {
                let lease = json!({
                    "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": { "name": self.config.name, "namespace": self.config.namespace },
                    "spec": {
                        "holderIdentity": me,
                        "leaseDurationSeconds": duration_s,
                        "acquireTime": micro_time(now),
                        "renewTime": micro_time(now),
                        "leaseTransitions": 0,
                    },
                });
                let object = serde_json::from_value(lease).expect("a Lease is a valid object");
                return match self.api.create(&PostParams::default(), &object).await {
                    Ok(_) => Ok(true),
                    Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
                    Err(error) => Err(error),
                };
            }
            Some(lease) => lease,
        };
        let spec = current.data["spec"].clone();
        let holder = spec["holderIdentity"].as_str().unwrap_or_default();
        // Expiry is judged on our own clock: when did we first see the
        // Lease as it is now? (Clocks of other machines are not trusted.)
        let record = json!([
            spec["holderIdentity"],
            spec["renewTime"],
            spec["leaseTransitions"]
        ]);
        let observed_at = match &self.observed {
            Some((seen, at)) if *seen == record => *at,
            _ => {
                self.observed = Some((record, Instant::now()));
                Instant::now()
            }
        };
        let lease_duration = spec["leaseDurationSeconds"]
            .as_u64()
            .map(Duration::from_secs)
            .unwrap_or(self.config.lease_duration);
        let expired = observed_at.elapsed() >= lease_duration;
        if holder != me && !holder.is_empty() && !expired {
            return Ok(false);
        }
        let mut lease = current.clone();
        let transitions = spec["leaseTransitions"].as_i64().unwrap_or(0);
        lease.data["spec"]["renewTime"] = json!(micro_time(now));
        lease.data["spec"]["leaseDurationSeconds"] = json!(duration_s);
        if holder != me {
            lease.data["spec"]["holderIdentity"] = json!(me);
            lease.data["spec"]["acquireTime"] = json!(micro_time(now));
            lease.data["spec"]["leaseTransitions"] = json!(transitions + 1);
        }
        match self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(true),
            // Someone else wrote the Lease first: they win this round.
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Gives the Lease up so a standby takes over at once.
    async fn release(&self) {
        let Ok(Some(mut lease)) = self.api.get_opt(&self.config.name).await else {
            return;
        };
        if lease.data["spec"]["holderIdentity"] != self.config.identity.as_str() {
            return;
        }
        lease.data["spec"]["holderIdentity"] = Value::Null;
        lease.data["spec"]["leaseDurationSeconds"] = json!(1);
        match self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => tracing::info!(lease = %self.config.name, "released the leader Lease"),
            Err(error) => {
                tracing::warn!(lease = %self.config.name, error = %error, "cannot release the leader Lease")
            }
        }
    }
}
