//! The imports of components built for `rekon:reconciler@0.1.0`: each call
//! converted to the current one and served by it, the answer converted
//! back. One implementation of every call, whatever the version.

use super::state::HostState;
use crate::contract::v0_1::{self as convert, wit::reconciler as old};
use crate::contract::wit::reconciler::{cluster as current, log as current_log};

impl old::types::Host for HostState {}

type Answer<T> = Result<T, old::types::ApiError>;

impl old::cluster::Host for HostState {
    async fn get(&mut self, target: old::types::ObjectRef) -> Answer<String> {
        current::Host::get(self, convert::object_ref(target))
            .await
            .map_err(convert::api_error)
    }

    async fn list(
        &mut self,
        kind: old::types::Gvk,
        namespace: Option<String>,
        label_selector: Option<String>,
    ) -> Answer<Vec<String>> {
        current::Host::list(self, convert::gvk(kind), namespace, label_selector)
            .await
            .map_err(convert::api_error)
    }

    async fn create(
        &mut self,
        kind: old::types::Gvk,
        namespace: Option<String>,
        object: String,
    ) -> Answer<String> {
        current::Host::create(self, convert::gvk(kind), namespace, object)
            .await
            .map_err(convert::api_error)
    }

    async fn replace(&mut self, target: old::types::ObjectRef, object: String) -> Answer<String> {
        current::Host::replace(self, convert::object_ref(target), object)
            .await
            .map_err(convert::api_error)
    }

    async fn patch(
        &mut self,
        target: old::types::ObjectRef,
        patch_type: old::types::PatchType,
        body: String,
    ) -> Answer<String> {
        let (target, patch_type) = (convert::object_ref(target), convert::patch_type(patch_type));
        current::Host::patch(self, target, patch_type, body)
            .await
            .map_err(convert::api_error)
    }

    async fn replace_status(
        &mut self,
        target: old::types::ObjectRef,
        object: String,
    ) -> Answer<String> {
        current::Host::replace_status(self, convert::object_ref(target), object)
            .await
            .map_err(convert::api_error)
    }

    async fn patch_status(
        &mut self,
        target: old::types::ObjectRef,
        patch_type: old::types::PatchType,
        body: String,
    ) -> Answer<String> {
        let (target, patch_type) = (convert::object_ref(target), convert::patch_type(patch_type));
        current::Host::patch_status(self, target, patch_type, body)
            .await
            .map_err(convert::api_error)
    }

    async fn delete(
        &mut self,
        target: old::types::ObjectRef,
        propagation: Option<old::types::Propagation>,
    ) -> Answer<()> {
        let propagation = propagation.map(convert::propagation);
        current::Host::delete(self, convert::object_ref(target), propagation)
            .await
            .map_err(convert::api_error)
    }

    async fn record_event(
        &mut self,
        regarding: old::types::ObjectRef,
        event_type: old::types::EventType,
        reason: String,
        message: String,
    ) -> Answer<()> {
        let (regarding, event_type) = (
            convert::object_ref(regarding),
            convert::event_type(event_type),
        );
        current::Host::record_event(self, regarding, event_type, reason, message)
            .await
            .map_err(convert::api_error)
    }
}

impl old::log::Host for HostState {
    async fn log(
        &mut self,
        level: old::types::Level,
        message: String,
        fields: Vec<(String, String)>,
    ) {
        current_log::Host::log(self, convert::level(level), message, fields).await;
    }
}
