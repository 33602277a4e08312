//! Node (v1): the fields nodes are selected by. core/v1's Node labels
//! (`pkg/apis/core/v1/conversion.go`: its name and `spec.unschedulable`,
//! no `metadata.namespace`) and the Node's field set
//! (`NodeToSelectableFields` in `pkg/registry/core/node/strategy.go`:
//! `spec.unschedulable` printed as Go prints a bool, `false` when unset).

use serde_json::Value;

use crate::apis::strategy::Selectable;
use crate::meta::selector::{Refusal, object_meta_fields};

/// The Node's field selectors.
pub(crate) static SELECTABLE: Selectable = Selectable {
    labels: &[
        ("metadata.name", "metadata.name"),
        ("spec.unschedulable", "spec.unschedulable"),
    ],
    refusal: Refusal::NotSupported,
    fields: |node| {
        let mut set = object_meta_fields(node);
        let unschedulable = node
            .pointer("/spec/unschedulable")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        set.insert("spec.unschedulable".into(), unschedulable.to_string());
        set
    },
};
