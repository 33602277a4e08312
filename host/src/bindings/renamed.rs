//! The imports of components built for `rekon:reconciler@0.2.0` and
//! `@0.3.0`: the same types as the current version, so each call is the
//! current one under the old import name.

use super::state::HostState;
use crate::contract::wit::reconciler::types::{
    ApiError, EventType, Gvk, Level, ObjectRef, PatchType, Propagation,
};
use crate::contract::wit::reconciler::{cluster as current, log as current_log};

type Answer<T> = Result<T, ApiError>;

/// Serves the imports of the package version generated at `$old` (its
/// `cluster` and `log`) with the current calls.
macro_rules! serve_as_current {
    ($old:path) => {
        const _: () = {
            use $old as old;

            impl old::cluster::Host for HostState {
                async fn get(&mut self, target: ObjectRef) -> Answer<String> {
                    current::Host::get(self, target).await
                }

                async fn list(
                    &mut self,
                    kind: Gvk,
                    namespace: Option<String>,
                    label_selector: Option<String>,
                ) -> Answer<Vec<String>> {
                    current::Host::list(self, kind, namespace, label_selector).await
                }

                async fn list_by_index(
                    &mut self,
                    index: String,
                    value: String,
                    namespace: Option<String>,
                ) -> Answer<Vec<String>> {
                    current::Host::list_by_index(self, index, value, namespace).await
                }

                async fn create(
                    &mut self,
                    kind: Gvk,
                    namespace: Option<String>,
                    object: String,
                ) -> Answer<String> {
                    current::Host::create(self, kind, namespace, object).await
                }

                async fn replace(&mut self, target: ObjectRef, object: String) -> Answer<String> {
                    current::Host::replace(self, target, object).await
                }

                async fn patch(
                    &mut self,
                    target: ObjectRef,
                    patch_type: PatchType,
                    body: String,
                ) -> Answer<String> {
                    current::Host::patch(self, target, patch_type, body).await
                }

                async fn replace_status(
                    &mut self,
                    target: ObjectRef,
                    object: String,
                ) -> Answer<String> {
                    current::Host::replace_status(self, target, object).await
                }

                async fn patch_status(
                    &mut self,
                    target: ObjectRef,
                    patch_type: PatchType,
                    body: String,
                ) -> Answer<String> {
                    current::Host::patch_status(self, target, patch_type, body).await
                }

                async fn delete(
                    &mut self,
                    target: ObjectRef,
                    propagation: Option<Propagation>,
                ) -> Answer<()> {
                    current::Host::delete(self, target, propagation).await
                }

                async fn record_event(
                    &mut self,
                    regarding: ObjectRef,
                    event_type: EventType,
                    reason: String,
                    message: String,
                ) -> Answer<()> {
                    current::Host::record_event(self, regarding, event_type, reason, message).await
                }
            }

            impl old::log::Host for HostState {
                async fn log(
                    &mut self,
                    level: Level,
                    message: String,
                    fields: Vec<(String, String)>,
                ) {
                    current_log::Host::log(self, level, message, fields).await;
                }
            }
        };
    };
}

serve_as_current!(crate::contract::v0_2::wit::reconciler);
serve_as_current!(crate::contract::v0_3::wit::reconciler);
