//! ResourceSlice (resource.k8s.io/v1): the fields it is selected by.
//! resource/v1's labels (`pkg/apis/resource/v1/conversion.go`: its name,
//! `spec.nodeName` and `spec.driver`, refused in words naming the kind's
//! group, version and kind) and its field set (`toSelectableFields` in
//! `pkg/registry/resource/resourceslice/strategy.go`).

use crate::apis::strategy::Selectable;
use crate::machinery::object::text_at;
use crate::meta::selector::{Refusal, object_meta_fields};

/// The ResourceSlice's field selectors.
pub(crate) static SELECTABLE: Selectable = Selectable {
    labels: &[
        ("metadata.name", "metadata.name"),
        ("spec.nodeName", "spec.nodeName"),
        ("spec.driver", "spec.driver"),
    ],
    refusal: Refusal::ForGroupVersionKind("resource.k8s.io/v1, Kind=ResourceSlice"),
    fields: |slice| {
        let mut set = object_meta_fields(slice);
        for field in ["nodeName", "driver"] {
            set.insert(
                format!("spec.{field}"),
                text_at(slice, &format!("/spec/{field}")).to_string(),
            );
        }
        set
    },
};
