//! A module's world, by the version of the contract it was built for and
//! what it exports (`reconciler`, `webhook` or `operator`): the pre-linked
//! template, its instances, and their exports in the current types
//! whatever the version.

use wasmtime::Store;
use wasmtime::component::{ComponentExportIndex, InstancePre};

use crate::bindings::HostState;
use crate::contract::v0_3::{self, OperatorPre, reconciler, webhook};
use crate::contract::{
    Action, AdmissionRequest, CONTRACT_VERSIONS, ConversionRequest, GuestError, Manifest, Mutation,
    Request, Verdict, Webhooks, v0_1,
};

/// A pre-linked instance template, and the version of the contract its
/// component was built for.
#[derive(Clone)]
pub(crate) struct Pre {
    world: World,
    version: &'static str,
    /// The export `reconcile` of a world on the current types (`operator`,
    /// `reconciler` from 0.2.0): a reconcile looks up and types only it.
    reconcile: Option<(InstancePre<HostState>, ComponentExportIndex)>,
}

/// The template of one world.
#[derive(Clone)]
enum World {
    /// The world `operator`: a reconciler with webhooks.
    Operator(OperatorPre<HostState>),
    /// The world `webhook`: webhooks only.
    Webhook(webhook::WebhookPre<HostState>),
    /// The world `reconciler` (0.2.0 and later).
    Reconciler(reconciler::ReconcilerPre<HostState>),
    /// Built for `rekon:reconciler@0.1.0`.
    V0_1(v0_1::ReconcilerPre<HostState>),
}

/// One instance of a module.
pub(crate) enum Instance {
    Operator(v0_3::Operator),
    Webhook(webhook::Webhook),
    Reconciler(reconciler::Reconciler),
    V0_1(v0_1::Reconciler),
}

/// What a module says it is when it is loaded. Kept in the compile cache
/// beside the module's code ([`crate::Engine::cached_description`]).
#[derive(serde::Serialize, serde::Deserialize)]
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
    /// the contract; the error says why it is not the current `reconciler`
    /// world.
    pub(crate) fn new(instance_pre: InstancePre<HostState>) -> wasmtime::Result<Pre> {
        // The exports of 0.2.0, 0.3.0 and 0.4.0 type alike (0.4.0's `crds`
        // is looked up by name): the imports tell the versions apart.
        let version = CONTRACT_VERSIONS[1..]
            .iter()
            .copied()
            .find(|version| imports_version(&instance_pre, version))
            .unwrap_or(CONTRACT_VERSIONS[CONTRACT_VERSIONS.len() - 1]);
        let world = if let Ok(pre) = OperatorPre::new(instance_pre.clone()) {
            World::Operator(pre)
        } else if let Ok(pre) = webhook::WebhookPre::new(instance_pre.clone()) {
            World::Webhook(pre)
        } else {
            match reconciler::ReconcilerPre::new(instance_pre.clone()) {
                Ok(pre) => World::Reconciler(pre),
                Err(current) => {
                    let pre = v0_1::ReconcilerPre::new(instance_pre).map_err(|_| current)?;
                    return Ok(Pre {
                        world: World::V0_1(pre),
                        version: CONTRACT_VERSIONS[0],
                        reconcile: None,
                    });
                }
            }
        };
        let instance_pre = match &world {
            World::Operator(pre) => Some(pre.instance_pre()),
            World::Reconciler(pre) => Some(pre.instance_pre()),
            World::Webhook(_) | World::V0_1(_) => None,
        };
        let reconcile = instance_pre.and_then(|pre| {
            let index = pre.component().get_export_index(None, "reconcile")?;
            Some((pre.clone(), index))
        });
        Ok(Pre {
            world,
            version,
            reconcile,
        })
    }

    /// Instantiates and calls `reconcile`. On the current types, only that
    /// export is looked up and type-checked: a world's other exports
    /// (`manifest`, the webhooks) have the largest types of the contract,
    /// and checking them on every reconcile cost more than the call. The
    /// outer error is the instantiation's, the inner one the call's.
    pub(crate) async fn reconcile(
        &self,
        store: &mut Store<HostState>,
        request: &Request,
    ) -> Result<wasmtime::Result<Result<Action, GuestError>>, wasmtime::Error> {
        let Some((instance_pre, index)) = &self.reconcile else {
            let instance = self.instantiate(store).await?;
            return Ok(instance.reconcile(store, request).await);
        };
        let instance = instance_pre.instantiate_async(&mut *store).await?;
        Ok(async {
            let func = instance
                .get_typed_func::<(&Request,), (Result<Action, GuestError>,)>(&mut *store, index)?;
            let (answer,) = func.call_async(&mut *store, (request,)).await?;
            Ok(answer)
        }
        .await)
    }

    /// The version of `rekon:reconciler` the component was built for.
    pub(crate) fn contract_version(&self) -> &'static str {
        self.version
    }

    /// The world the component exports: `reconciler`, `webhook` or `operator`.
    pub(crate) fn world(&self) -> &'static str {
        match self.world {
            World::Operator(_) => "operator",
            World::Webhook(_) => "webhook",
            World::Reconciler(_) | World::V0_1(_) => "reconciler",
        }
    }

    /// Whether the component reconciles (exports `reconcile`).
    pub(crate) fn reconciles(&self) -> bool {
        !matches!(self.world, World::Webhook(_))
    }

    pub(crate) async fn instantiate(
        &self,
        store: &mut Store<HostState>,
    ) -> wasmtime::Result<Instance> {
        Ok(match &self.world {
            World::Operator(pre) => Instance::Operator(pre.instantiate_async(store).await?),
            World::Webhook(pre) => Instance::Webhook(pre.instantiate_async(store).await?),
            World::Reconciler(pre) => Instance::Reconciler(pre.instantiate_async(store).await?),
            World::V0_1(pre) => Instance::V0_1(pre.instantiate_async(store).await?),
        })
    }

    /// (0.4) Calls `crds` on a fresh instance when the component exports
    /// it: the CustomResourceDefinitions it ships, as JSON documents.
    pub(crate) async fn crds(&self, store: &mut Store<HostState>) -> wasmtime::Result<Vec<String>> {
        let instance_pre = match &self.world {
            World::Operator(pre) => pre.instance_pre(),
            World::Webhook(pre) => pre.instance_pre(),
            World::Reconciler(pre) => pre.instance_pre(),
            World::V0_1(_) => return Ok(Vec::new()),
        };
        let Some(index) = instance_pre.component().get_export_index(None, "crds") else {
            return Ok(Vec::new());
        };
        let instance = instance_pre.instantiate_async(&mut *store).await?;
        let crds = instance.get_typed_func::<(), (Vec<String>,)>(&mut *store, &index)?;
        let (answer,) = crds.call_async(&mut *store, ()).await?;
        Ok(answer)
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
