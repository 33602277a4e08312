//! A module's world, by the version of the contract it was built for and
//! what it exports (`reconciler`, `webhook` or `operator`): the pre-linked
//! template, its instances, and their exports in the current types
//! whatever the version.

use wasmtime::Store;
use wasmtime::component::InstancePre;

use crate::bindings::HostState;
use crate::contract::{
    Action, AdmissionRequest, ConversionRequest, GuestError, Manifest, Mutation, Operator,
    OperatorPre, Request, Verdict, Webhooks, reconciler, v0_1, v0_2, webhook,
};

/// A pre-linked instance template.
#[derive(Clone)]
pub(crate) enum Pre {
    /// The current world `operator`: a reconciler with webhooks.
    Operator(OperatorPre<HostState>),
    /// The current world `webhook`: webhooks only.
    Webhook(webhook::WebhookPre<HostState>),
    /// The current world `reconciler`.
    Reconciler(reconciler::ReconcilerPre<HostState>),
    /// Built for `rekon:reconciler@0.2.0`.
    V0_2(v0_2::ReconcilerPre<HostState>),
    /// Built for `rekon:reconciler@0.1.0`.
    V0_1(v0_1::ReconcilerPre<HostState>),
}

/// One instance of a module.
pub(crate) enum Instance {
    Operator(Operator),
    Webhook(webhook::Webhook),
    Reconciler(reconciler::Reconciler),
    V0_2(v0_2::Reconciler),
    V0_1(v0_1::Reconciler),
}

/// What a module says it is when it is loaded.
pub(crate) struct Described {
    /// Its manifest; for a webhook-only module, its name, version and
    /// permissions with nothing to reconcile.
    pub(crate) manifest: Manifest,
    /// Its webhooks (none for a reconciler).
    pub(crate) webhooks: Webhooks,
}

/// The webhooks of a module that serves none.
pub(crate) fn no_webhooks() -> Webhooks {
    Webhooks {
        validating: Vec::new(),
        mutating: Vec::new(),
        conversions: Vec::new(),
    }
}

impl Pre {
    /// The template of a component exporting one world of one version of
    /// the contract, the newest first; the error says why it is not the
    /// current `reconciler` world.
    pub(crate) fn new(instance_pre: InstancePre<HostState>) -> wasmtime::Result<Pre> {
        // The exports of the world `reconciler` are the same in 0.2.0 and
        // 0.3.0: the imports tell them apart.
        if imports_version(&instance_pre, "0.2.0") {
            return v0_2::ReconcilerPre::new(instance_pre).map(Pre::V0_2);
        }
        if let Ok(pre) = OperatorPre::new(instance_pre.clone()) {
            return Ok(Pre::Operator(pre));
        }
        if let Ok(pre) = webhook::WebhookPre::new(instance_pre.clone()) {
            return Ok(Pre::Webhook(pre));
        }
        match reconciler::ReconcilerPre::new(instance_pre.clone()) {
            Ok(pre) => Ok(Pre::Reconciler(pre)),
            Err(current) => v0_2::ReconcilerPre::new(instance_pre.clone())
                .map(Pre::V0_2)
                .or_else(|_| v0_1::ReconcilerPre::new(instance_pre).map(Pre::V0_1))
                .map_err(|_| current),
        }
    }

    /// The version of `rekon:reconciler` the component was built for.
    pub(crate) fn contract_version(&self) -> &'static str {
        let versions = crate::contract::CONTRACT_VERSIONS;
        match self {
            Pre::Operator(_) | Pre::Webhook(_) | Pre::Reconciler(_) => versions[2],
            Pre::V0_2(_) => versions[1],
            Pre::V0_1(_) => versions[0],
        }
    }

    /// The world the component exports: `reconciler`, `webhook` or `operator`.
    pub(crate) fn world(&self) -> &'static str {
        match self {
            Pre::Operator(_) => "operator",
            Pre::Webhook(_) => "webhook",
            Pre::Reconciler(_) | Pre::V0_2(_) | Pre::V0_1(_) => "reconciler",
        }
    }

    /// Whether the component reconciles (exports `reconcile`).
    pub(crate) fn reconciles(&self) -> bool {
        !matches!(self, Pre::Webhook(_))
    }

    pub(crate) async fn instantiate(
        &self,
        store: &mut Store<HostState>,
    ) -> wasmtime::Result<Instance> {
        Ok(match self {
            Pre::Operator(pre) => Instance::Operator(pre.instantiate_async(store).await?),
            Pre::Webhook(pre) => Instance::Webhook(pre.instantiate_async(store).await?),
            Pre::Reconciler(pre) => Instance::Reconciler(pre.instantiate_async(store).await?),
            Pre::V0_2(pre) => Instance::V0_2(pre.instantiate_async(store).await?),
            Pre::V0_1(pre) => Instance::V0_1(pre.instantiate_async(store).await?),
        })
    }
}

/// Whether the component imports an interface of `rekon:reconciler@<version>`.
fn imports_version(instance_pre: &InstancePre<HostState>, version: &str) -> bool {
    let component = instance_pre.component();
    let suffix = format!("@{version}");
    component
        .component_type()
        .imports(component.engine())
        .any(|(name, _)| name.starts_with("rekon:reconciler/") && name.ends_with(&suffix))
}

fn not_exported(what: &str) -> wasmtime::Error {
    wasmtime::Error::msg(format!("the module does not export `{what}`"))
}

impl Instance {
    /// Calls `manifest` (and `webhooks`).
    pub(crate) async fn describe(
        &self,
        store: &mut Store<HostState>,
    ) -> wasmtime::Result<Described> {
        let manifest = match self {
            Instance::Operator(instance) => {
                let manifest = instance.call_manifest(&mut *store).await?;
                let webhooks = instance.call_webhooks(store).await?;
                return Ok(Described { manifest, webhooks });
            }
            Instance::Webhook(instance) => {
                let described = instance.call_manifest(store).await?;
                let mut manifest = crate::contract::empty_manifest();
                manifest.name = described.name;
                manifest.version = described.version;
                manifest.permissions = described.permissions;
                return Ok(Described {
                    manifest,
                    webhooks: described.webhooks,
                });
            }
            Instance::Reconciler(instance) => instance.call_manifest(store).await?,
            Instance::V0_2(instance) => instance.call_manifest(store).await?,
            Instance::V0_1(instance) => v0_1::manifest(instance.call_manifest(store).await?),
        };
        Ok(Described {
            manifest,
            webhooks: no_webhooks(),
        })
    }

    /// Calls `reconcile`.
    pub(crate) async fn reconcile(
        &self,
        store: &mut Store<HostState>,
        request: &Request,
    ) -> wasmtime::Result<Result<Action, GuestError>> {
        match self {
            Instance::Operator(instance) => instance.call_reconcile(store, request).await,
            Instance::Webhook(_) => Err(not_exported("reconcile")),
            Instance::Reconciler(instance) => instance.call_reconcile(store, request).await,
            Instance::V0_2(instance) => instance.call_reconcile(store, request).await,
            Instance::V0_1(instance) => {
                let answer = instance
                    .call_reconcile(store, &v0_1::request(request))
                    .await?;
                Ok(answer.map(v0_1::action).map_err(v0_1::guest_error))
            }
        }
    }

    /// Calls `validate`.
    pub(crate) async fn validate(
        &self,
        store: &mut Store<HostState>,
        request: &AdmissionRequest,
    ) -> wasmtime::Result<Verdict> {
        match self {
            Instance::Operator(instance) => instance.call_validate(store, request).await,
            Instance::Webhook(instance) => instance.call_validate(store, request).await,
            _ => Err(not_exported("validate")),
        }
    }

    /// Calls `mutate`.
    pub(crate) async fn mutate(
        &self,
        store: &mut Store<HostState>,
        request: &AdmissionRequest,
    ) -> wasmtime::Result<Mutation> {
        match self {
            Instance::Operator(instance) => instance.call_mutate(store, request).await,
            Instance::Webhook(instance) => instance.call_mutate(store, request).await,
            _ => Err(not_exported("mutate")),
        }
    }

    /// Calls `convert`.
    pub(crate) async fn convert(
        &self,
        store: &mut Store<HostState>,
        request: &ConversionRequest,
    ) -> wasmtime::Result<Result<Vec<String>, String>> {
        match self {
            Instance::Operator(instance) => instance.call_convert(store, request).await,
            Instance::Webhook(instance) => instance.call_convert(store, request).await,
            _ => Err(not_exported("convert")),
        }
    }
}
