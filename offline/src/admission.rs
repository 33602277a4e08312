//! The modules' admission chain installed in the embedded API server:
//! every write goes through their mutating, then validating, webhooks, as
//! kube-apiserver calls a cluster's admission webhooks.

use rekon_apiserver::{Admission, AdmissionAttributes, AdmitFuture, Admitted, Status};
use rekon_host::contract::operation_named;
use rekon_host::webhook::chain::{Attributes, Chain, Outcome};

/// A host's admission [`Chain`] as the embedded API server's admission.
#[derive(Clone)]
pub struct ModuleAdmission(pub Chain);

impl Admission for ModuleAdmission {
    fn reviews(&self, group: &str, kind: &str) -> bool {
        self.0.reviews(group, kind)
    }

    fn admit(&self, attributes: AdmissionAttributes) -> AdmitFuture<'_> {
        Box::pin(async move {
            let Some(operation) = operation_named(attributes.operation) else {
                return Ok(Admitted::default());
            };
            let answer = self
                .0
                .run(Attributes {
                    group: attributes.group,
                    version: attributes.version,
                    kind: attributes.kind,
                    resource: attributes.resource,
                    sub_resource: attributes.sub_resource,
                    namespace: attributes.namespace,
                    namespace_labels: attributes.namespace_labels,
                    name: attributes.name,
                    operation,
                    object: attributes.object,
                    old_object: attributes.old_object,
                    dry_run: attributes.dry_run,
                    username: attributes.username,
                })
                .await;
            match answer.outcome {
                Outcome::Allowed { object } => Ok(Admitted {
                    object,
                    warnings: answer.warnings,
                }),
                Outcome::Denied {
                    code,
                    reason,
                    message,
                    ..
                } => Err(Status {
                    code,
                    reason,
                    message,
                    details: None,
                }),
            }
        })
    }
}
