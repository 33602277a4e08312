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

/// The annotation of a module ConfigMap that records the module's
/// reconciles while it serves: the number of the latest kept in memory
/// (`100`; `true` keeps [`DEFAULT_RECORDED`](crate::config::DEFAULT_RECORDED),
/// `0` or `false` none), as `record: {last: N}` does in the operator
/// configuration.
pub const RECORD_ANNOTATION: &str = "rekon.dev/record";

/// The annotation of a shadow's module ConfigMap promoting it once this
/// many of its reconciles in a row agree (`policy.promoteAfter`).
pub const PROMOTE_AFTER_ANNOTATION: &str = "rekon.dev/promote-after";

/// The annotation of a shadow's module ConfigMap dropping it at its first
/// difference when `true` (`policy.abortOnDifference`).
pub const ABORT_ON_DIFFERENCE_ANNOTATION: &str = "rekon.dev/abort-on-difference";

/// The annotation of a shadow's module ConfigMap dropping it when more than
/// this share of its reconciles fail (`0.05` or `5%`;
/// `policy.abortErrorRate`).
pub const ABORT_ERROR_RATE_ANNOTATION: &str = "rekon.dev/abort-error-rate";

/// The annotation of a shadow's module ConfigMap giving its canary steps:
/// shares and pauses, `10%/5m,50%/5m` (a step without a pause waits for
/// `rekon rollout promote`; `policy.steps`).
pub const STEPS_ANNOTATION: &str = "rekon.dev/steps";

/// The annotation of a shadow's module ConfigMap: no automatic promotion
/// before it has run this long (`5m`; `policy.minSoak`).
pub const MIN_SOAK_ANNOTATION: &str = "rekon.dev/min-soak";

/// What a module's source says of how to run it beyond serving or
/// shadowing: the annotations of its ConfigMap.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Marks {
    /// Record its reconciles, keeping this many of the latest.
    pub record: Option<usize>,
    /// Its rollout policy when it shadows (none of the fields given: no
    /// policy of its own).
    pub policy: Option<crate::config::PolicyConfig>,
}

impl Marks {
    /// The marks in a module ConfigMap's `annotations`; a value that means
    /// nothing is warned about (naming `origin`) and left out.
    pub(crate) fn of(annotations: &serde_json::Value, origin: &Origin) -> Marks {
        let text = |key: &str| annotations[key].as_str().map(str::trim);
        let unreadable = |key: &str, value: &str, expected: &str| {
            tracing::warn!(%origin, value, "annotation {key} is not {expected}: left out");
        };
        let record = text(RECORD_ANNOTATION).and_then(|value| match value {
            "true" | "on" => Some(crate::config::DEFAULT_RECORDED),
            "false" | "off" => None,
            number => match number.parse::<usize>() {
                Ok(0) => None,
                Ok(last) => Some(last),
                Err(_) => {
                    unreadable(RECORD_ANNOTATION, number, "a number of reconciles");
                    None
                }
            },
        });
        let mut policy = crate::config::PolicyConfig::default();
        if let Some(value) = text(PROMOTE_AFTER_ANNOTATION) {
            match value.parse::<u64>() {
                Ok(n) if n > 0 => policy.promote_after = Some(n),
                _ => unreadable(PROMOTE_AFTER_ANNOTATION, value, "a positive number"),
            }
        }
        if let Some(value) = text(ABORT_ON_DIFFERENCE_ANNOTATION) {
            match value {
                "true" => policy.abort_on_difference = true,
                "false" => {}
                _ => unreadable(ABORT_ON_DIFFERENCE_ANNOTATION, value, "true or false"),
            }
        }
        if let Some(value) = text(ABORT_ERROR_RATE_ANNOTATION) {
            match share(value) {
                Some(rate) => policy.abort_error_rate = Some(rate),
                None => unreadable(ABORT_ERROR_RATE_ANNOTATION, value, "a share (0.05 or 5%)"),
            }
        }
        if let Some(value) = text(STEPS_ANNOTATION) {
            match steps(value) {
                Some(steps) => policy.steps = steps,
                None => unreadable(STEPS_ANNOTATION, value, "steps (10%/5m,50%/5m)"),
            }
        }
        if let Some(value) = text(MIN_SOAK_ANNOTATION) {
            policy.min_soak = Some(value.to_string());
            if policy.soak().is_zero() && value != "0" {
                unreadable(MIN_SOAK_ANNOTATION, value, "a duration (5m)");
                policy.min_soak = None;
            }
        }
        Marks {
            record,
            policy: (policy != crate::config::PolicyConfig::default()).then_some(policy),
        }
    }
}

/// Steps as `10%/5m,50%/5m,100` (a share, and a pause unless it waits).
fn steps(text: &str) -> Option<Vec<crate::config::StepConfig>> {
    text.split(',')
        .map(|step| {
            let (share, pause) = match step.split_once('/') {
                Some((share, pause)) => (share, Some(pause.trim().to_string())),
                None => (step, None),
            };
            let step = crate::config::StepConfig {
                canary: canary_percent(share)?,
                pause,
            };
            let policy = crate::config::PolicyConfig {
                steps: vec![step.clone()],
                ..Default::default()
            };
            policy.steps().ok().map(|_| step)
        })
        .collect()
}

/// A share as `0.05` or `5%`, between 0 and 1.
fn share(text: &str) -> Option<f64> {
    let share = match text.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().ok()? / 100.0,
        None => text.parse::<f64>().ok()?,
    };
    (0.0..=1.0).contains(&share).then_some(share)
}

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

impl Rollout {
    /// How a module ConfigMap's `annotations` mark its version to run
    /// ([`ROLLOUT_ANNOTATION`], [`CANARY_ANNOTATION`]); a canary that is
    /// not a percentage is warned about (naming `origin`) and left out.
    pub(crate) fn of(annotations: &serde_json::Value, origin: &Origin) -> Rollout {
        if annotations[ROLLOUT_ANNOTATION].as_str() != Some("shadow") {
            return Rollout::Serve;
        }
        let annotation = annotations[CANARY_ANNOTATION].as_str();
        let canary = annotation.map_or(Some(0), canary_percent);
        if canary.is_none() {
            tracing::warn!(%origin, value = annotation, "{CANARY_ANNOTATION} is not a percentage: no canary");
        }
        Rollout::Shadow {
            canary: canary.unwrap_or(0),
        }
    }
}

/// A canary share as an annotation or the configuration gives it (`10`,
/// `10%`), at most 100; `None` when it is not one.
fn canary_percent(text: &str) -> Option<u8> {
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
        /// What else its source says of how to run it.
        marks: Marks,
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
