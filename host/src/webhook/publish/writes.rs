//! The publisher's writes: a module's configurations and conversions
//! applied, the uninstall webhook's, and a module's withdrawn — each
//! fenced by leadership.

use std::collections::BTreeMap;

use kube::api::{Patch, PatchParams};
use serde_json::Value;
use tokio::sync::watch;

use super::publisher::{Publisher, Watched};
use crate::contract::Gvk;
use crate::runtime::{Module, Phase};
use crate::webhook::apis::{configurations, crds, delete_quietly};
use crate::webhook::objects::{
    CONVERTED_BY, FIELD_MANAGER, configuration, configuration_object_name, contains,
    conversion_patch, no_conversion_patch,
};

impl Publisher {
    async fn plural(&self, kind: &Gvk) -> String {
        let resolved = match kind.version.as_str() {
            "*" => None,
            _ => self.discovery.resolve(kind).await.ok(),
        };
        resolved.map_or_else(
            || crate::names::plural_of(&kind.kind),
            |r| r.resource.plural,
        )
    }

    pub(super) async fn plurals(
        &self,
        module: &Module,
    ) -> BTreeMap<(String, String, String), String> {
        let webhooks = module.webhooks();
        let mut plurals = BTreeMap::new();
        for webhook in webhooks.mutating.iter().chain(&webhooks.validating) {
            for kind in &webhook.kinds {
                plurals.insert(key(kind), self.plural(kind).await);
            }
        }
        plurals
    }

    /// A write for `module` may go out: this replica still leads it.
    pub(super) fn fence(&self, module: &str) -> Result<(), kube::Error> {
        if self.leaders.speaks_for(Some(module)) {
            Ok(())
        } else {
            Err(kube::Error::Service(
                format!("this replica no longer leads module {module}: not publishing").into(),
            ))
        }
    }

    /// Applies what differs of a module's configurations and conversions;
    /// whether anything was written.
    pub(super) async fn publish(
        &self,
        module: &Module,
        watched: &Watched,
    ) -> Result<bool, kube::Error> {
        let name = module.name();
        let plurals = self.plurals(module).await;
        let plural = |k: &Gvk| plurals.get(&key(k)).cloned();
        let params = PatchParams::apply(FIELD_MANAGER).force();
        let webhooks = module.webhooks();
        let object_name = configuration_object_name(name);
        let mut wrote = false;
        for (phase, list, informer) in [
            (Phase::Mutating, &webhooks.mutating, &watched.mutating),
            (Phase::Validating, &webhooks.validating, &watched.validating),
        ] {
            let live = informer
                .get(None, &object_name)
                .and_then(|o| serde_json::from_str::<Value>(&o.json).ok());
            let api = configurations(&self.client, phase);
            if list.is_empty() {
                if live.is_some() {
                    self.fence(name)?;
                    delete_quietly(&api, &object_name).await?;
                    wrote = true;
                }
                continue;
            }
            let object = configuration(name, phase, list, &plural, &self.endpoint, &self.ca);
            if live.is_some_and(|live| contains(&live, &object)) {
                continue;
            }
            self.fence(name)?;
            api.patch(&object_name, &params, &Patch::Apply(&object))
                .await?;
            wrote = true;
        }
        let patch = conversion_patch(name, &self.endpoint, &self.ca);
        for conversion in &webhooks.conversions {
            let mut kind = conversion.kind.clone();
            kind.version = conversion.versions.first().cloned().unwrap_or_default();
            let crd_name = format!("{}.{}", self.plural(&kind).await, kind.group);
            let live = watched
                .crds
                .get(None, &crd_name)
                .and_then(|o| serde_json::from_str::<Value>(&o.json).ok());
            if live.is_some_and(|live| contains(&live, &patch)) {
                continue;
            }
            self.fence(name)?;
            crds(&self.client)
                .patch(&crd_name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
            wrote = true;
        }
        Ok(wrote)
    }

    /// Applies the uninstall webhook's configuration if it differs; whether
    /// it was written.
    pub(super) async fn publish_uninstall(&self, watched: &Watched) -> Result<bool, kube::Error> {
        let object = self.triggers.configuration(&self.endpoint, &self.ca);
        let live = watched
            .validating
            .get(None, crate::webhook::uninstall::CONFIGURATION)
            .and_then(|o| serde_json::from_str::<Value>(&o.json).ok());
        if live.is_some_and(|live| contains(&live, &object)) {
            return Ok(false);
        }
        configurations(&self.client, Phase::Validating)
            .patch(
                crate::webhook::uninstall::CONFIGURATION,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&object),
            )
            .await?;
        Ok(true)
    }

    /// Deletes a module's configurations and turns the conversion of the
    /// CRDs it converted through our endpoint back to `None`.
    pub(super) async fn withdraw(&self, name: &str, watched: &Watched) -> Result<(), kube::Error> {
        for phase in [Phase::Mutating, Phase::Validating] {
            if !self.leaders.speaks_for(None) {
                return Err(kube::Error::Service("this replica no longer leads".into()));
            }
            delete_quietly(
                &configurations(&self.client, phase),
                &configuration_object_name(name),
            )
            .await?;
        }
        for object in watched.crds.list(None) {
            let Ok(value) = serde_json::from_str::<Value>(&object.json) else {
                continue;
            };
            if object.label(CONVERTED_BY) != Some(name)
                || !self
                    .endpoint
                    .is_target_of(&value["spec"]["conversion"]["webhook"]["clientConfig"])
            {
                continue;
            }
            if !self.leaders.speaks_for(None) {
                return Err(kube::Error::Service("this replica no longer leads".into()));
            }
            match crds(&self.client)
                .patch(
                    object.name(),
                    &PatchParams::default(),
                    &Patch::Merge(&no_conversion_patch()),
                )
                .await
            {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// The next change of leadership; never, without a receiver or once its
/// sender is gone.
pub(super) async fn changed(receiver: &mut Option<watch::Receiver<bool>>) {
    match receiver {
        Some(changes) => changed_or_never(changes).await,
        None => std::future::pending().await,
    }
}

/// The next change; never once the sender is gone.
pub(super) async fn changed_or_never(receiver: &mut watch::Receiver<bool>) {
    if receiver.changed().await.is_err() {
        std::future::pending::<()>().await;
    }
}

fn key(kind: &Gvk) -> (String, String, String) {
    (kind.group.clone(), kind.version.clone(), kind.kind.clone())
}
