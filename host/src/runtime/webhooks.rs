//! A module's webhooks: their declaration checked at load, and each
//! admission or conversion review run on a fresh instance, reads only,
//! under a CPU deadline below the webhook's timeout.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use super::instance::{ReconcileError, classify, new_store};
use super::module::Module;
use super::world::Instance;
use crate::bindings::{CallContext, HostState};
use crate::cluster::Cluster;
use serde_json::{Value, json};

use crate::contract::{
    AdmissionRequest, ConversionRequest, FailurePolicy, Mutation, Operation, Verdict, Webhook,
    Webhooks,
};
use crate::names::api_version;

/// The API server's default webhook timeout, in seconds.
pub const DEFAULT_TIMEOUT_SECONDS: u32 = 10;

/// The two kinds of admission webhook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// May change the object; runs first.
    Mutating,
    /// May only allow or deny; runs after every mutating webhook.
    Validating,
}

impl Phase {
    /// `mutating` or `validating`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Mutating => "mutating",
            Phase::Validating => "validating",
        }
    }
}

/// A webhook's timeout.
pub fn timeout(webhook: &Webhook) -> Duration {
    Duration::from_secs(
        webhook
            .timeout_seconds
            .unwrap_or(DEFAULT_TIMEOUT_SECONDS)
            .into(),
    )
}

impl Module {
    /// The module's webhook of `phase` named `name`.
    pub fn webhook(&self, phase: Phase, name: &str) -> Option<&Webhook> {
        let webhooks = self.webhooks();
        let list = match phase {
            Phase::Mutating => &webhooks.mutating,
            Phase::Validating => &webhooks.validating,
        };
        list.iter().find(|w| w.name == name)
    }

    /// The CPU budget of one review for a webhook with this timeout: three
    /// quarters of it, and no more than a reconcile's, so the host answers
    /// before the API server gives up.
    pub fn review_budget(&self, timeout: Duration) -> Duration {
        self.reconcile_budget().min(timeout * 3 / 4)
    }

    /// Runs `validate` on a fresh instance. The guest may read through
    /// `cluster`; its writes are refused.
    pub async fn validate(
        &self,
        cluster: Arc<dyn Cluster>,
        request: &AdmissionRequest,
        budget: Duration,
    ) -> Result<Verdict, ReconcileError> {
        self.review(cluster, budget, async |instance, store| {
            instance.validate(store, request).await
        })
        .await
    }

    /// Runs `mutate` on a fresh instance (reads only).
    pub async fn mutate(
        &self,
        cluster: Arc<dyn Cluster>,
        request: &AdmissionRequest,
        budget: Duration,
    ) -> Result<Mutation, ReconcileError> {
        self.review(cluster, budget, async |instance, store| {
            instance.mutate(store, request).await
        })
        .await
    }

    /// Runs `convert` on a fresh instance (reads only): the converted
    /// objects, or the guest's reason for not converting them.
    pub async fn convert(
        &self,
        cluster: Arc<dyn Cluster>,
        request: &ConversionRequest,
        budget: Duration,
    ) -> Result<Result<Vec<String>, String>, ReconcileError> {
        self.review(cluster, budget, async |instance, store| {
            instance.convert(store, request).await
        })
        .await
    }

    async fn review<T>(
        &self,
        cluster: Arc<dyn Cluster>,
        budget: Duration,
        call: impl AsyncFnOnce(&Instance, &mut wasmtime::Store<HostState>) -> wasmtime::Result<T>,
    ) -> Result<T, ReconcileError> {
        let inner = &self.inner;
        let context = CallContext {
            cluster,
            caller: inner.caller.clone(),
            record: false,
            answers_as_text: false,
            read_only: true,
        };
        let code = inner.code();
        let mut store = new_store(&inner.engine, code.tier, budget, Some(context));
        let instance = code
            .pre
            .instantiate(&mut store)
            .await
            .map_err(|e| classify(e, store.data(), &inner.engine, budget))?;
        call(&instance, &mut store)
            .await
            .map_err(|e| classify(e, store.data(), &inner.engine, budget))
    }
}

/// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
pub(crate) fn operation_name(operation: Operation) -> &'static str {
    match operation {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
        Operation::Connect => "CONNECT",
    }
}

/// The operations a webhook is called for (none declared: create and update).
pub fn operations(webhook: &Webhook) -> Vec<Operation> {
    if webhook.operations.is_empty() {
        vec![Operation::Create, Operation::Update]
    } else {
        webhook.operations.clone()
    }
}

fn webhook_json(webhook: &Webhook) -> Value {
    json!({
        "name": webhook.name,
        "kinds": webhook.kinds.iter().map(|k| json!({
            "apiVersion": api_version(k), "kind": k.kind,
        })).collect::<Vec<_>>(),
        "operations": operations(webhook).into_iter().map(operation_name).collect::<Vec<_>>(),
        "subResources": webhook.sub_resources,
        "namespaceSelector": webhook.namespace_selector,
        "objectSelector": webhook.object_selector,
        "failurePolicy": match webhook.failure_policy {
            FailurePolicy::Fail => "Fail",
            FailurePolicy::Ignore => "Ignore",
        },
        "timeoutSeconds": webhook.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS),
    })
}

/// A module's webhooks as JSON, as `rekon check` prints them.
pub fn webhooks_json(webhooks: &Webhooks) -> Value {
    json!({
        "mutating": webhooks.mutating.iter().map(webhook_json).collect::<Vec<_>>(),
        "validating": webhooks.validating.iter().map(webhook_json).collect::<Vec<_>>(),
        "conversions": webhooks.conversions.iter().map(|c| json!({
            "group": c.kind.group, "kind": c.kind.kind, "versions": c.versions,
        })).collect::<Vec<_>>(),
    })
}

/// Checks a module's webhook declarations.
pub(crate) fn validate(webhooks: &Webhooks) -> Result<(), String> {
    for (phase, list) in [
        (Phase::Mutating, &webhooks.mutating),
        (Phase::Validating, &webhooks.validating),
    ] {
        let mut names = BTreeSet::new();
        for webhook in list {
            let name = &webhook.name;
            let what = format!("{} webhook {name:?}", phase.as_str());
            if !super::validate::dns_label(name) {
                return Err(format!(
                    "{what}: the name must be 1-63 characters of a-z, 0-9 and '-'"
                ));
            }
            if !names.insert(name) {
                return Err(format!("{what} is declared twice"));
            }
            if webhook.kinds.is_empty() {
                return Err(format!("{what} names no kind"));
            }
            if let Some(kind) = webhook
                .kinds
                .iter()
                .find(|k| k.kind.is_empty() || k.version.is_empty())
            {
                return Err(format!(
                    "{what}: kind {:?} (group {:?}, version {:?}) needs a kind and a version (or `*`)",
                    kind.kind, kind.group, kind.version
                ));
            }
            if let Some(t) = webhook.timeout_seconds
                && !(1..=30).contains(&t)
            {
                return Err(format!("{what}: timeout-seconds must be 1 to 30, not {t}"));
            }
            for selector in webhook
                .namespace_selector
                .iter()
                .chain(&webhook.object_selector)
            {
                rekon_rules::LabelSelector::parse(selector)
                    .map_err(|e| format!("{what}: label selector {selector:?} is invalid: {e}"))?;
            }
        }
    }
    for conversion in &webhooks.conversions {
        if conversion.kind.kind.is_empty() || conversion.kind.group.is_empty() {
            return Err(format!(
                "conversion of {:?} (group {:?}) needs the CRD's group and kind",
                conversion.kind.kind, conversion.kind.group
            ));
        }
        if conversion.versions.len() < 2 {
            return Err(format!(
                "conversion of {}: name at least two versions to convert between",
                conversion.kind.kind
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Conversion, Gvk};

    fn webhook(name: &str) -> Webhook {
        Webhook {
            name: name.into(),
            kinds: vec![Gvk {
                group: "demo.rekon.dev".into(),
                version: "v1".into(),
                kind: "App".into(),
            }],
            operations: vec![Operation::Create],
            sub_resources: Vec::new(),
            namespace_selector: None,
            object_selector: None,
            failure_policy: FailurePolicy::Fail,
            timeout_seconds: None,
        }
    }

    fn webhooks(validating: Vec<Webhook>) -> Webhooks {
        Webhooks {
            validating,
            mutating: Vec::new(),
            conversions: Vec::new(),
        }
    }

    #[test]
    fn declarations_are_checked_with_a_reason() {
        assert_eq!(validate(&webhooks(vec![webhook("apps")])), Ok(()));
        let twice = validate(&webhooks(vec![webhook("apps"), webhook("apps")])).unwrap_err();
        assert!(twice.contains("declared twice"), "{twice}");
        let bad_name = validate(&webhooks(vec![webhook("Apps")])).unwrap_err();
        assert!(bad_name.contains("a-z"), "{bad_name}");
        let mut slow = webhook("slow");
        slow.timeout_seconds = Some(31);
        assert!(
            validate(&webhooks(vec![slow]))
                .unwrap_err()
                .contains("1 to 30")
        );
        let mut selector = webhook("sel");
        selector.object_selector = Some("a in (".into());
        assert!(
            validate(&webhooks(vec![selector]))
                .unwrap_err()
                .contains("invalid")
        );
        let mut one_version = webhooks(Vec::new());
        one_version.conversions.push(Conversion {
            kind: webhook("x").kinds[0].clone(),
            versions: vec!["v1".into()],
        });
        assert!(validate(&one_version).unwrap_err().contains("two versions"));
    }
}
