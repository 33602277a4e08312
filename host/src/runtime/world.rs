//! A module's world, by the version of the contract it was built for: the
//! pre-linked template, its instances, and their two exports in the
//! current types whatever the version.

use wasmtime::Store;
use wasmtime::component::InstancePre;

use crate::bindings::HostState;
use crate::contract::{Action, GuestError, Manifest, Reconciler, ReconcilerPre, Request, v0_1};

/// A pre-linked instance template.
#[derive(Clone)]
pub(crate) enum Pre {
    /// Built for the current version of `rekon:reconciler`.
    Current(ReconcilerPre<HostState>),
    /// Built for `rekon:reconciler@0.1.0`.
    V0_1(v0_1::ReconcilerPre<HostState>),
}

/// One instance of a module.
pub(crate) enum Instance {
    Current(Reconciler),
    V0_1(v0_1::Reconciler),
}

impl Pre {
    /// The template of a component exporting one version of the world, the
    /// current one first; the error says why it is not the current world.
    pub(crate) fn new(instance_pre: InstancePre<HostState>) -> wasmtime::Result<Pre> {
        match ReconcilerPre::new(instance_pre.clone()) {
            Ok(pre) => Ok(Pre::Current(pre)),
            Err(current) => v0_1::ReconcilerPre::new(instance_pre)
                .map(Pre::V0_1)
                .map_err(|_| current),
        }
    }

    /// The version of `rekon:reconciler` the component was built for.
    pub(crate) fn contract_version(&self) -> &'static str {
        match self {
            Pre::Current(_) => crate::contract::CONTRACT_VERSIONS[1],
            Pre::V0_1(_) => crate::contract::CONTRACT_VERSIONS[0],
        }
    }

    pub(crate) async fn instantiate(
        &self,
        store: &mut Store<HostState>,
    ) -> wasmtime::Result<Instance> {
        Ok(match self {
            Pre::Current(pre) => Instance::Current(pre.instantiate_async(store).await?),
            Pre::V0_1(pre) => Instance::V0_1(pre.instantiate_async(store).await?),
        })
    }
}

impl Instance {
    /// Calls `manifest`.
    pub(crate) async fn manifest(
        &self,
        store: &mut Store<HostState>,
    ) -> wasmtime::Result<Manifest> {
        match self {
            Instance::Current(instance) => instance.call_manifest(store).await,
            Instance::V0_1(instance) => Ok(v0_1::manifest(instance.call_manifest(store).await?)),
        }
    }

    /// Calls `reconcile`.
    pub(crate) async fn reconcile(
        &self,
        store: &mut Store<HostState>,
        request: &Request,
    ) -> wasmtime::Result<Result<Action, GuestError>> {
        match self {
            Instance::Current(instance) => instance.call_reconcile(store, request).await,
            Instance::V0_1(instance) => {
                let answer = instance
                    .call_reconcile(store, &v0_1::request(request))
                    .await?;
                Ok(answer.map(v0_1::action).map_err(v0_1::guest_error))
            }
        }
    }
}
