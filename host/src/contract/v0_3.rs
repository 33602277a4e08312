//! The worlds as `rekon:reconciler@0.3.0` wrote them (the text is kept in
//! `wit/versions/0.3.0/`), on the current types.
//!
//! Their exports type every module the host dispatches to but 0.1.0 ones:
//! - 0.4.0 only added the export `crds`, which the host finds by name
//!   (`runtime::world::Pre::crds`), so a 0.4.0 component passes these
//!   checks too;
//! - 0.2.0's world `reconciler` has the same exports as 0.3.0's.
//!
//! Their imports (`cluster` and `log`, `@0.3.0`) are the current calls
//! under the old names (`bindings::v0_3`).

#[allow(missing_docs)]
mod generated {
    wasmtime::component::bindgen!({
        path: "../wit/versions/0.3.0",
        world: "operator",
        imports: { default: async },
        exports: { default: async },
        with: {
            "rekon:reconciler/types": crate::contract::wit::reconciler::types,
            "rekon:reconciler/webhook-types": crate::contract::wit::reconciler::webhook_types,
        },
    });
}

/// The world `reconciler`, on the same types.
#[allow(missing_docs)]
pub(crate) mod reconciler {
    wasmtime::component::bindgen!({
        path: "../wit/versions/0.3.0",
        world: "reconciler",
        imports: { default: async },
        exports: { default: async },
        with: {
            "rekon:reconciler/types": crate::contract::wit::reconciler::types,
            "rekon:reconciler/cluster": super::generated::rekon::reconciler::cluster,
            "rekon:reconciler/log": super::generated::rekon::reconciler::log,
        },
    });
}

/// The world `webhook`, on the same types.
#[allow(missing_docs)]
pub(crate) mod webhook {
    wasmtime::component::bindgen!({
        path: "../wit/versions/0.3.0",
        world: "webhook",
        imports: { default: async },
        exports: { default: async },
        with: {
            "rekon:reconciler/types": crate::contract::wit::reconciler::types,
            "rekon:reconciler/webhook-types": crate::contract::wit::reconciler::webhook_types,
            "rekon:reconciler/cluster": super::generated::rekon::reconciler::cluster,
            "rekon:reconciler/log": super::generated::rekon::reconciler::log,
        },
    });
}

pub(crate) use generated::rekon as wit;
pub(crate) use generated::{Operator, OperatorPre};
