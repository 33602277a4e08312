//! Source: where module versions come from, as bytes under an [`Origin`].
//! May call: informer (module ConfigMaps).
//!
//! The loader validates and compiles what a source produces, so a
//! controller only ever sees validated versions. A directory of `*.wasm`
//! files ([`dir`]), module ConfigMaps ([`configmaps`]) in the format of
//! [`pack`].

pub(crate) mod configmaps;
pub(crate) mod dir;
pub mod pack;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Where a module version comes from.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// Given to [`HostBuilder::module`](crate::HostBuilder::module), under
    /// the name given (a path, say).
    Given(String),
    /// A file in a watched directory.
    File(PathBuf),
    /// A module ConfigMap written by `rekon pack` (its head ConfigMap).
    ConfigMap {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Given(name) => f.write_str(name),
            Origin::File(path) => write!(f, "{}", path.display()),
            Origin::ConfigMap { namespace, name } => write!(f, "configmap:{namespace}/{name}"),
        }
    }
}

/// How long a directory must be quiet before it is rescanned.
pub const DEBOUNCE: Duration = Duration::from_millis(50);

/// How long module ConfigMaps must be quiet before they are read: the
/// parts of one `kubectl apply` arrive within milliseconds of each other.
pub const CONFIGMAP_QUIET: Duration = Duration::from_millis(100);

/// The annotation of a module ConfigMap (`rekon pack`'s head) that says
/// how its version is run: `shadow` beside the serving version (see
/// [`Rollout`]); absent or anything else, it serves.
pub const ROLLOUT_ANNOTATION: &str = "rekon.dev/rollout";

/// The annotation of a shadow's module ConfigMap giving the share of
/// objects (a percentage, `10` or `10%`) it serves live: its canary.
pub const CANARY_ANNOTATION: &str = "rekon.dev/canary";

/// How a module version is run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rollout {
    /// It serves: the module's requests are reconciled by it.
    #[default]
    Serve,
    /// It shadows the serving version of its module: it reconciles the
    /// same requests, its writes sent as dry runs and compared; the objects
    /// in its `canary` share (a percentage) it serves live instead.
    Shadow {
        /// The percentage of objects it serves live.
        canary: u8,
    },
}

/// A canary share as an annotation or the configuration gives it (`10`,
/// `10%`), at most 100; `None` when it is not one.
pub(crate) fn canary_percent(text: &str) -> Option<u8> {
    let number = text.trim().trim_end_matches('%').trim();
    number.parse::<u8>().ok().filter(|p| *p <= 100)
}

/// A change of a module source.
#[derive(Clone, Debug)]
pub enum SourceEvent {
    /// A module version appeared or changed at `origin`.
    Upsert {
        /// Where it comes from.
        origin: Origin,
        /// Its bytes.
        bytes: Arc<Vec<u8>>,
        /// Whether it serves or shadows (as its source marks it).
        rollout: Rollout,
    },
    /// The module at `origin` is gone.
    Remove {
        /// Where it came from.
        origin: Origin,
    },
    /// What `origin` holds is not a module (a missing or mismatched part,
    /// a digest mismatch): reported, and the last good version keeps serving.
    Invalid {
        /// Where it comes from.
        origin: Origin,
        /// Why, as a bounded metric label.
        reason: &'static str,
        /// Why, for people.
        message: String,
    },
}
