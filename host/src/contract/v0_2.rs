//! The imports of components built for `rekon:reconciler@0.2.0` (the text
//! is kept in `wit/versions/0.2.0/`). Later versions only added webhooks
//! and `crds`, so their types are the current ones: the bindings are
//! generated on them and nothing is converted; only the names of the
//! imports differ (`@0.2.0`). Their exports are typed by [`super::v0_3`].

#[allow(missing_docs)]
mod generated {
    wasmtime::component::bindgen!({
        path: "../wit/versions/0.2.0",
        world: "reconciler",
        imports: { default: async },
        exports: { default: async },
        with: {
            "rekon:reconciler/types": crate::contract::wit::reconciler::types,
        },
    });
}

pub(crate) use generated::Reconciler;
pub(crate) use generated::rekon as wit;
