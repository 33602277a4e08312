//! What the loader hands the supervisor: a version to run or to shadow,
//! one to promote, stop or refuse.

use crate::runtime::Module;
use crate::source::Origin;

/// What the loader hands the supervisor.
#[derive(Debug)]
pub(crate) enum Decision {
    /// A validated version of a module, to run (instead of the running
    /// version of the same module, if any).
    Install(Version),
    /// A validated version to run as the shadow of the serving version of
    /// its module (replacing the shadow it has, if any), serving the
    /// `canary` share of its objects (a percentage) live.
    Shadow {
        /// The version.
        version: Version,
        /// The percentage of objects it serves live.
        canary: u8,
        /// Its rollout policy, when its source gives one (the operator
        /// configuration's applies otherwise).
        policy: Option<crate::config::PolicyConfig>,
    },
    /// The shadow of module `name`, from `origin`, becomes its serving
    /// version (the operator promoted it).
    Promote {
        /// The module's name.
        name: String,
        /// Where the shadow came from.
        origin: Origin,
        /// How many of its latest reconciles its source asks to record.
        record: Option<usize>,
    },
    /// The shadow of module `name`, provided by `origin`, is gone.
    Unshadow {
        /// The module's name.
        name: String,
        /// Where the shadow came from.
        origin: Origin,
        /// Why, for people: its source is gone, or it was aborted.
        why: &'static str,
    },
    /// The module `name`, provided by `origin`, is gone.
    Unload {
        /// The module's name.
        name: String,
        /// Where it came from.
        origin: Origin,
    },
    /// What `origin` holds cannot be run; `serving` is the module it
    /// provided before (still running), if any.
    Refuse {
        /// Where it comes from.
        origin: Origin,
        /// A bounded label for metrics.
        reason: &'static str,
        /// Why, for people.
        message: String,
        /// The module the origin still serves.
        serving: Option<String>,
    },
}

/// A validated module version and where it comes from.
#[derive(Debug)]
pub(crate) struct Version {
    pub origin: Origin,
    pub module: Module,
    /// The origin provided this module before (a new version of it).
    pub reload: bool,
    /// The module the origin provided before, when it is another one: it
    /// goes first.
    pub replaces: Option<String>,
    /// How many of its latest reconciles its source asks to record (the
    /// operator configuration's `record:` applies otherwise).
    pub record: Option<usize>,
    /// It was the module's shadow and its source marks it to serve now
    /// (the `rekon.dev/rollout` annotation taken off): a promotion, to be
    /// written to the rollout state.
    pub promoted_by_source: bool,
}
