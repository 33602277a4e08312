//! Bindings: the guest's imports served — each call checked, timed and recorded.
//! May call: cluster (and contract, shared).
//!
//! A guest instance's state ([`state`]), its permissions ([`permissions`]),
//! each host call ([`call`]), and the imports ([`calls`], [`log`]).

mod call;
mod calls;
mod log;
mod permissions;
mod renamed;
mod state;
mod v0_1;

use wasmtime::component::{HasSelf, Linker};

pub(crate) use permissions::Caller;
pub use state::CallRecord;
pub(crate) use state::{CallContext, HostState};

use crate::contract::Operator;

/// Largest object or patch body a guest may send in one call.
pub const MAX_CALL_PAYLOAD: usize = 3 << 20;
/// Longest log message or reconcile error message kept from a guest.
pub const MAX_MESSAGE: usize = 8 << 10;
/// Longest Event reason (the API server's limit).
pub const MAX_EVENT_REASON: usize = rekon_rules::MAX_EVENT_REASON;

/// Adds WASI (without ambient authority) and the `rekon:reconciler`
/// imports, of every version of the contract, to a linker.
pub(crate) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_async(linker)?;
    Operator::add_to_linker::<HostState, HasSelf<HostState>>(linker, |state| state)?;
    crate::contract::v0_3::Operator::add_to_linker::<HostState, HasSelf<HostState>>(
        linker,
        |state| state,
    )?;
    crate::contract::v0_2::Reconciler::add_to_linker::<HostState, HasSelf<HostState>>(
        linker,
        |state| state,
    )?;
    crate::contract::v0_1::Reconciler::add_to_linker::<HostState, HasSelf<HostState>>(
        linker,
        |state| state,
    )?;
    Ok(())
}
