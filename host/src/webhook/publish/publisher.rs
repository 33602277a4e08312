//! The publisher's loop: watches what is published, and in each round
//! (on a change, a module swap, a leadership change, or every minute)
//! compares it with what the modules need.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::watch;

use super::writes::{changed, changed_or_never};
use super::{DRIFT_SETTLE, RESYNC, RETRY, gvk};
use crate::contract::Gvk;
use crate::discovery::Discovery;
use crate::ha::Leaders;
use crate::informer::{Informer, Informers};
use crate::names::MANAGED_BY;
use crate::runtime::Module;
use crate::webhook::members::Members;
use crate::webhook::objects::{CONVERTED_BY, CaSource, Endpoint, WEBHOOKS_OF};
use crate::webhook::registry::WebhookModules;
use crate::webhook::uninstall::Triggers;

/// Keeps the cluster's webhook configurations and CRD conversions in line
/// with the modules serving webhooks, while this replica leads.
pub(crate) struct Publisher {
    pub client: kube::Client,
    pub discovery: Arc<Discovery>,
    pub informers: Arc<Informers>,
    pub modules: WebhookModules,
    pub endpoint: Endpoint,
    pub ca: CaSource,
    pub leaders: Leaders,
    /// The other replicas serving webhooks (none: this one is alone).
    pub members: Option<Arc<Members>>,
    /// rekon's own objects, whose deletion means it is being uninstalled
    /// (and the uninstall webhook is published for them).
    pub triggers: Triggers,
    /// True once the modules found at start have loaded (or been refused):
    /// no module is withdrawn before that.
    pub loaded: watch::Receiver<bool>,
}

/// The published objects the publisher watches.
pub(super) struct Watched {
    pub mutating: Arc<Informer>,
    pub validating: Arc<Informer>,
    pub crds: Arc<Informer>,
}

/// What one round left undone.
#[derive(Default)]
struct Round {
    /// A write failed: try again soon.
    failed: bool,
    /// A module this replica no longer serves is still served by another
    /// replica: look again soon, it may go there too.
    pending: bool,
}

impl Publisher {
    /// Runs until aborted.
    pub async fn run(mut self) {
        let watched = self.watch().await;
        let mut module_changes = self.modules.subscribe();
        let mut leadership = self.leadership_changes();
        let mut drift = futures::stream::select_all(
            [&watched.mutating, &watched.validating, &watched.crds]
                .map(|informer| informer.changed()),
        );
        let mut uninstalling_said = false;
        loop {
            let round = if self.triggers.uninstalling().await {
                if !uninstalling_said {
                    tracing::warn!(
                        "rekon is being uninstalled: the webhook configurations are no longer published"
                    );
                    uninstalling_said = true;
                }
                Round::default()
            } else {
                self.round(&watched).await
            };
            let wait = if round.failed || round.pending {
                RETRY
            } else {
                RESYNC
            };
            tokio::select! {
                changed = module_changes.changed() => if changed.is_err() { return },
                _ = changed(&mut leadership) => {}
                _ = changed_or_never(&mut self.loaded) => {}
                Some(()) = futures::StreamExt::next(&mut drift) => {
                    // Let a burst (our own applies) settle into one round;
                    // and when an uninstall deleted what we published, let
                    // its deletion of a trigger land first, so the round
                    // sees it and publishes nothing again.
                    tokio::time::sleep(DRIFT_SETTLE).await;
                    while let Some(Some(())) = futures::FutureExt::now_or_never(futures::StreamExt::next(&mut drift)) {}
                }
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// A receiver that changes when this replica's leadership does (none
    /// in scale-out mode: module Leases come and go, the periodic round
    /// catches them, and each module's publication is fenced by its own).
    fn leadership_changes(&self) -> Option<watch::Receiver<bool>> {
        match &self.leaders {
            Leaders::Host(leadership) => Some(leadership.subscribe()),
            Leaders::Modules(_) => None,
        }
    }

    /// Informers of what is published (label-selected: nothing else is
    /// cached), retried until they start.
    async fn watch(&self) -> Watched {
        let start = |kind: Gvk, selector: String| {
            let informers = self.informers.clone();
            async move {
                loop {
                    match informers.informer(&kind, Some(&selector), None).await {
                        Ok(informer) => return informer,
                        Err(error) => {
                            tracing::warn!(kind = %kind.kind, error = %error, "cannot watch the published webhook objects; retrying");
                            tokio::time::sleep(RETRY).await;
                        }
                    }
                }
            }
        };
        let managed = format!("{}={}", MANAGED_BY.0, MANAGED_BY.1);
        let (mutating, validating, crds) = tokio::join!(
            start(
                gvk(
                    "admissionregistration.k8s.io",
                    "MutatingWebhookConfiguration"
                ),
                managed.clone()
            ),
            start(
                gvk(
                    "admissionregistration.k8s.io",
                    "ValidatingWebhookConfiguration"
                ),
                managed
            ),
            start(
                gvk("apiextensions.k8s.io", "CustomResourceDefinition"),
                CONVERTED_BY.to_string()
            ),
        );
        for informer in [&mutating, &validating, &crds] {
            informer.wait_ready().await;
        }
        Watched {
            mutating,
            validating,
            crds,
        }
    }

    /// One comparison of what should be published with what is, and the
    /// writes that close the difference.
    async fn round(&self, watched: &Watched) -> Round {
        let mut round = Round::default();
        let modules: BTreeMap<String, Module> = self
            .modules
            .all()
            .into_iter()
            .map(|m| (m.name().to_string(), m))
            .collect();
        for (name, module) in &modules {
            if !self.leaders.speaks_for(Some(name)) {
                continue;
            }
            match self.publish(module, watched).await {
                Ok(true) => {
                    tracing::info!(module = %name, endpoint = %self.endpoint, "webhook configurations published")
                }
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(module = %name, error = %error, "cannot publish the webhook configurations; retrying");
                    round.failed = true;
                }
            }
        }
        if !self.triggers.is_empty() && self.leaders.speaks_for(None) {
            match self.publish_uninstall(watched).await {
                Ok(true) => tracing::info!("uninstall webhook published"),
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(error = %error, "cannot publish the uninstall webhook; retrying");
                    round.failed = true;
                }
            }
        }
        if *self.loaded.borrow() && self.leaders.speaks_for(None) {
            for name in self.published_elsewhere(watched, &modules) {
                if let Some(members) = &self.members {
                    match members.serving().await {
                        Ok(serving) if serving.contains(&name) => {
                            round.pending = true;
                            continue;
                        }
                        Ok(_) => {}
                        Err(error) => {
                            tracing::warn!(module = %name, error = %error, "cannot tell which replicas serve webhooks; not withdrawing");
                            round.failed = true;
                            continue;
                        }
                    }
                }
                match self.withdraw(&name, watched).await {
                    Ok(()) => {
                        tracing::info!(module = %name, "webhook configurations withdrawn: no replica serves the module")
                    }
                    Err(error) => {
                        tracing::warn!(module = %name, error = %error, "cannot withdraw the webhook configurations; retrying");
                        round.failed = true;
                    }
                }
            }
        }
        round
    }

    /// The modules whose configurations or conversions point at our
    /// endpoint but which this replica does not serve.
    fn published_elsewhere(
        &self,
        watched: &Watched,
        modules: &BTreeMap<String, Module>,
    ) -> BTreeSet<String> {
        let mut found = BTreeSet::new();
        for informer in [&watched.mutating, &watched.validating] {
            for object in informer.list(None) {
                let Ok(value) = serde_json::from_str::<Value>(&object.json) else {
                    continue;
                };
                let ours = value["webhooks"].as_array().is_some_and(|w| {
                    w.iter()
                        .any(|w| self.endpoint.is_target_of(&w["clientConfig"]))
                });
                if let Some(module) = object.label(WEBHOOKS_OF)
                    && ours
                {
                    found.insert(module.to_string());
                }
            }
        }
        for object in watched.crds.list(None) {
            let Ok(value) = serde_json::from_str::<Value>(&object.json) else {
                continue;
            };
            if let Some(module) = object.label(CONVERTED_BY)
                && self
                    .endpoint
                    .is_target_of(&value["spec"]["conversion"]["webhook"]["clientConfig"])
            {
                found.insert(module.to_string());
            }
        }
        found.retain(|m| !modules.contains_key(m));
        found
    }
}
