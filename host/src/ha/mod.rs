//! HA: who reconciles what when several replicas run.
//! May call: the API server (Leases), telemetry.
//!
//! Leader election on one Lease (`leader`), or modules spread over the
//! replicas with one Lease each (`scaleout`); sharded modules' objects
//! spread over every replica by hash ranges (`shards`, moved by `ring`).

pub(crate) mod leader;
pub(crate) mod leases;
pub(crate) mod ring;
pub(crate) mod scaleout;
pub(crate) mod shards;
mod shares;

pub use leader::{LeaderConfig, Leadership};
use scaleout::ModuleLeases;
pub(crate) use shards::Shards;

/// What decides whether a module reconciles on this replica.
#[derive(Clone)]
pub(crate) enum Leaders {
    /// One leadership for the whole host (always leading without election).
    Host(Leadership),
    /// One Lease per module, spread across the replicas (scale-out mode).
    Modules(ModuleLeases),
}

impl Leaders {
    /// The leadership `module` reconciles under.
    pub fn for_module(&self, module: &str) -> Leadership {
        match self {
            Leaders::Host(leadership) => leadership.clone(),
            Leaders::Modules(leases) => leases.for_module(module),
        }
    }

    /// Whether this replica speaks for `module` (reports about it): it
    /// leads it, or, in scale-out mode, nobody serves it (`None`).
    pub fn speaks_for(&self, module: Option<&str>) -> bool {
        match (self, module) {
            (Leaders::Host(leadership), _) => leadership.is_leading(),
            (Leaders::Modules(leases), Some(module)) => leases.leads(module),
            (Leaders::Modules(_), None) => true,
        }
    }

    /// `module` is unloaded: in scale-out mode, its Lease is given up.
    pub fn unload(&self, module: &str) {
        if let Leaders::Modules(leases) = self {
            leases.unload(module);
        }
    }
}
