//! Storage version migration of the CRDs a module ships: when a CRD's
//! storage version is not the only one `status.storedVersions` lists, the
//! leading replica checks that every object converts to each served
//! version and back unchanged (nothing is written otherwise), writes each
//! object back unchanged so the API server stores it in the storage
//! version (resourceVersion preconditions, conflicts retried,
//! rate-limited, progress in a Lease so the next leader resumes), then
//! sets `storedVersions` to the storage version alone, after which the old
//! version can be removed from the CRD.
//!
//! Start at [`Migrator::migrate`]; [`progress::Book`] reads what runs.

mod check;
mod convert;
mod plan;
pub mod progress;
mod run;
#[cfg(test)]
mod tests;
mod write;

pub use check::{Converter, round_trip};
pub use convert::ModuleConverter;
pub use plan::Plan;
pub use progress::Progress;
pub use run::{MigrateConfig, Migrator, Outcome};
