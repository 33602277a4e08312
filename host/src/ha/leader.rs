//! Leader election on coordination.k8s.io/v1 Leases, as client-go does it:
//! the holder renews its Lease every retry period; a candidate takes it over
//! when it has not seen it change for a whole lease duration.
//!
//! Two modes use it: one Lease for the whole host ([`Elector`], `rekon run
//! --leader-elect`), or one Lease per module spread across the replicas
//! ([`super::scaleout`], `rekon run --scale-out`).
//!
//! Safety: a holder that has not renewed within the renew deadline (shorter
//! than the lease duration) stops at once — its [`Leadership::is_leading`]
//! turns false before any other replica may take the Lease over, and the
//! host refuses its writes from then on, so two replicas never write for
//! the same module at once. The deadline is measured on the monotonic
//! clock, which keeps running while a process is frozen.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::leases::Leases;

/// Settings of leader election. Defaults like controller-runtime: 15 s
/// lease, 10 s renew deadline, 2 s retry period.
#[derive(Clone, Debug)]
pub struct LeaderConfig {
    /// Lease name (in scale-out mode: the prefix of every Lease name).
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

/// Whether this replica leads (the whole host, or one module in scale-out
/// mode), shared with the controllers and the writes.
#[derive(Clone, Debug)]
pub struct Leadership {
    state: Arc<Mutex<State>>,
    changes: watch::Receiver<bool>,
    /// Without election, the sender nobody uses: kept so that the channel
    /// stays open and `changed()` waits forever instead of failing at once.
    _unchanging: Option<Arc<watch::Sender<bool>>>,
}

#[derive(Debug)]
struct State {
    /// When the Lease was last renewed by us (None: not leading).
    renewed: Option<Instant>,
    renew_deadline: Duration,
}

impl State {
    fn leading(&self) -> bool {
        self.renew_deadline == Duration::MAX
            || self
                .renewed
                .is_some_and(|at| at.elapsed() < self.renew_deadline)
    }
}

impl Leadership {
    /// A leadership that always leads (no election).
    pub fn always() -> Leadership {
        let (sender, changes) = watch::channel(true);
        Leadership {
            state: Arc::new(Mutex::new(State {
                renewed: None,
                renew_deadline: Duration::MAX,
            })),
            changes,
            _unchanging: Some(Arc::new(sender)),
        }
    }

    /// Leading now: the Lease was renewed within the renew deadline (always
    /// true without election).
    pub fn is_leading(&self) -> bool {
        self.state.lock().expect("leadership lock").leading()
    }

    /// A receiver that changes when leadership is gained or lost.
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.changes.clone()
    }
}

/// The election's side of a [`Leadership`]: records renewals and losses.
#[derive(Debug)]
pub(crate) struct Holder {
    state: Arc<Mutex<State>>,
    changes: watch::Sender<bool>,
}

impl Holder {
    /// A holder that does not lead yet, and the leadership it drives.
    pub fn new(renew_deadline: Duration) -> (Holder, Leadership) {
        let state = Arc::new(Mutex::new(State {
            renewed: None,
            renew_deadline,
        }));
        let (changes, receiver) = watch::channel(false);
        let leadership = Leadership {
            state: state.clone(),
            changes: receiver,
            _unchanging: None,
        };
        (Holder { state, changes }, leadership)
    }

    /// The Lease was renewed by a request started at `at`.
    pub fn renewed(&self, at: Instant) {
        self.state.lock().expect("leadership lock").renewed = Some(at);
    }

    /// The Lease is someone else's (or given up): stop leading now.
    pub fn lost(&self) {
        self.state.lock().expect("leadership lock").renewed = None;
    }

    /// Leading now (renewed within the renew deadline).
    pub fn leading(&self) -> bool {
        self.state.lock().expect("leadership lock").leading()
    }

    /// Tells subscribers when leading changed since the last call: returns
    /// the new value if it did. A deadline passed counts as a loss.
    pub fn publish(&self) -> Option<bool> {
        let leading = self.leading();
        if !leading {
            self.lost();
        }
        let previous = *self.changes.borrow();
        (leading != previous).then(|| {
            self.changes.send_replace(leading);
            leading
        })
    }
}

/// The label on every Lease rekon creates (what an uninstall deletes).
pub(crate) fn managed_by() -> BTreeMap<String, String> {
    let (key, value) = crate::names::MANAGED_BY;
    BTreeMap::from([(key.to_string(), value.to_string())])
}

/// Runs the election of one Lease for the whole host until `stop`; then
/// releases the Lease if held.
pub(crate) struct Elector {
    config: LeaderConfig,
    leases: Leases,
    holder: Holder,
}

impl Elector {
    pub fn new(client: kube::Client, config: LeaderConfig) -> (Elector, Leadership) {
        let leases = Leases::new(client, &config);
        let (holder, leadership) = Holder::new(config.renew_deadline);
        (
            Elector {
                config,
                leases,
                holder,
            },
            leadership,
        )
    }

    /// Runs until `stop` turns true.
    pub async fn run(mut self, mut stop: watch::Receiver<bool>) {
        let name = self.config.name.clone();
        loop {
            let attempt_started = Instant::now();
            let round = match self.leases.get(&name).await {
                Ok(current) => {
                    self.leases
                        .acquire_or_renew(&name, current.as_ref(), &managed_by())
                        .await
                }
                Err(error) => Err(error),
            };
            match round {
                Ok(true) => self.holder.renewed(attempt_started),
                Ok(false) => self.holder.lost(),
                Err(error) => {
                    tracing::warn!(lease = %name, error = %error, "cannot reach the leader Lease");
                }
            }
            match self.holder.publish() {
                Some(true) => {
                    tracing::info!(identity = %self.config.identity, lease = %name, "became the leader")
                }
                Some(false) => {
                    tracing::warn!(identity = %self.config.identity, lease = %name, "stopped leading")
                }
                None => {}
            }
            tokio::select! {
                _ = tokio::time::sleep(self.config.retry_period) => {}
                _ = stop.wait_for(|s| *s) => break,
            }
        }
        // Stop writing first, then give the Lease up.
        let held = self.holder.leading();
        self.holder.lost();
        self.holder.publish();
        if held {
            self.leases.release(&name).await;
        }
    }
}
