//! Components built for `rekon:reconciler@0.2.0` (the text is kept in
//! `wit/versions/0.2.0/`). 0.3.0 only added webhooks, so their types are
//! the current ones: the bindings are generated on them and nothing is
//! converted; only the names of the imports differ (`@0.2.0`).

#[allow(missing_docs)]
mod generated {
    wasmtime::component::bindgen!({
        path: "../wit/versions/0.2.0",
        world: "reconciler",
        imports: { default: async },
        exports: { default: async },
        with: {
            "rekon:reconciler/types": crate::contract::rekon::reconciler::types,
        },
    });
}

pub(crate) use generated::{Reconciler, ReconcilerPre, rekon};
