//! The rollout state in the cluster, as the loader follows it: which
//! version of a module serves is what its `Rollout` says
//! ([`crate::rollout::resource`]), never the order versions load in. A
//! version the state retired or aborted does not come back; a version the
//! state names serves, taking over from another source; a promotion or an
//! abort written by any replica (or the operator) is carried out here.

use super::{Compiled, Decision, Loader};
use crate::rollout::Command;
use crate::rollout::resource::{RolloutStatus, short};
use crate::source::Origin;

/// What a module's state says of a compiled version.
pub(super) enum Said {
    /// Nothing against it: decided as without a state.
    Go,
    /// It is the version the state says serves: it takes the module over
    /// from whichever source provides it now.
    Serves,
    /// It does not run: skipped (quietly, or with this refusal).
    Skip(Option<Box<Decision>>),
}

impl Loader {
    /// What the state of module `name` says of the version `digest` from
    /// `origin` (marked `shadow` or not).
    pub(super) fn said(&self, name: &str, digest: &str, origin: &Origin, shadow: bool) -> Said {
        let Some(state) = self.states.get(name) else {
            return Said::Go;
        };
        let serving = state.serving.as_ref();
        let source = origin.to_string();
        // The version the state says serves does — but a shadow of the
        // same build from another source stays a shadow.
        if serving.is_some_and(|s| s.digest == digest && (!shadow || s.source == source)) {
            return Said::Serves;
        }
        if state.is_aborted(digest) {
            let why = state
                .last_decision
                .as_ref()
                .filter(|d| d.version.digest == digest)
                .map(|d| format!(" ({} by {}: {})", "aborted", d.by, d.reason))
                .unwrap_or_default();
            return Said::Skip(Some(Box::new(Decision::Refuse {
                origin: origin.clone(),
                reason: "aborted",
                message: format!(
                    "version {} of module {name:?} was aborted{why}: it is not tried again until its bytes change",
                    short(digest)
                ),
                serving: self.names.contains_key(name).then(|| name.to_string()),
            })));
        }
        if shadow {
            return Said::Go;
        }
        // The shadow marked to serve by its source: a promotion.
        if self
            .origins
            .get(origin)
            .is_some_and(|known| known.shadows.as_deref() == Some(name))
        {
            return Said::Go;
        }
        if serving.is_some_and(|s| s.source == source) {
            // A new version at the serving source: an upgrade in place.
            return Said::Serves;
        }
        if state.is_retired(digest) {
            tracing::info!(%origin, module = %name, digest = short(digest), "a retired version: it served before and does not serve again unless promoted");
            return Said::Skip(None);
        }
        // The state names another version, which a source holds: this one
        // does not serve.
        if let Some(serving) = serving
            && self.origins.iter().any(|(other, known)| {
                other != origin
                    && (known.digest.as_deref() == Some(serving.digest.as_str())
                        || other.to_string() == serving.source)
            })
        {
            return Said::Skip(Some(Box::new(Decision::Refuse {
                origin: origin.clone(),
                reason: "not_serving",
                message: format!(
                    "module {name:?}'s Rollout says version {} ({}) from {} serves: this version does not (mark it shadow to try it, then promote it)",
                    serving.version,
                    short(&serving.digest),
                    serving.source
                ),
                serving: self.names.contains_key(name).then(|| name.to_string()),
            })));
        }
        Said::Go
    }

    /// Follows the state of module `name` (`None`: its `Rollout` is gone):
    /// a promotion or an abort of its shadow is carried out; a serving
    /// version the state names that another source holds is compiled
    /// again, to take over.
    pub fn state(&mut self, name: &str, state: Option<RolloutStatus>) -> Vec<Decision> {
        let Some(state) = state else {
            self.states.remove(name);
            return Vec::new();
        };
        let mut decisions = Vec::new();
        let shadow = self
            .origins
            .iter()
            .find(|(_, known)| known.shadows.as_deref() == Some(name))
            .and_then(|(origin, known)| Some((origin.to_string(), known.digest.clone()?)));
        let serving = state.serving.as_ref().map(|s| s.digest.clone());
        let running = self
            .names
            .get(name)
            .and_then(|origin| self.origins.get(origin))
            .and_then(|known| known.digest.clone());
        self.states.insert(name.to_string(), state.clone());
        if let Some((origin, digest)) = shadow {
            // The state names the shadow's version as serving: a promotion
            // — unless the serving version is the same build, and the
            // state speaks of it (a shadow of identical bytes is no
            // promotion until the state names its source).
            let same_build = running.as_deref() == Some(digest.as_str());
            let names_shadow = state
                .serving
                .as_ref()
                .is_some_and(|s| s.digest == digest && (!same_build || s.source == origin));
            let command = if names_shadow {
                Some(Command::Promote)
            } else if state.is_aborted(&digest) {
                Some(Command::Abort)
            } else {
                None
            };
            if let Some(decision) = command.and_then(|c| self.command(name, c)) {
                decisions.push(decision);
            }
        }
        let Some(serving) = serving else {
            return decisions;
        };
        if running.as_deref() == Some(serving.as_str()) {
            return decisions;
        }
        // Another source holds the version the state says serves.
        let holder = self
            .origins
            .iter()
            .find(|(_, known)| {
                known.digest.as_deref() == Some(serving.as_str()) && known.shadows.is_none()
            })
            .map(|(origin, _)| origin.clone());
        if let Some(origin) = holder {
            self.compile_again(&origin);
        }
        decisions
    }

    /// Compiles the bytes `origin` holds again (the compile cache makes it
    /// cheap), to be decided anew.
    fn compile_again(&mut self, origin: &Origin) {
        let Some(known) = self.origins.get_mut(origin) else {
            return;
        };
        let Some(bytes) = known.bytes.clone() else {
            return;
        };
        known.generation += 1;
        let (generation, rollout, marks) = (known.generation, known.rollout, known.marks.clone());
        let engine = self.engine.clone();
        let origin = origin.clone();
        self.compiling.spawn(async move {
            let loaded = crate::runtime::Module::load(&engine, &bytes).await;
            Compiled {
                origin,
                rollout,
                marks,
                generation,
                loaded,
            }
        });
    }
}

impl Loader {
    /// Carries out an operator's command on module `name`'s rollout:
    /// promoting makes the origin of its shadow provide the module (the
    /// origin that provided it stays known, providing nothing); aborting
    /// drops the shadow (its origin stays known: the same bytes are not
    /// loaded again until they change). `None` when it has no shadow.
    pub fn command(&mut self, name: &str, command: crate::rollout::Command) -> Option<Decision> {
        let origin = self
            .origins
            .iter()
            .find(|(_, state)| state.shadows.as_deref() == Some(name))
            .map(|(origin, _)| origin.clone())?;
        match command {
            crate::rollout::Command::Abort => {
                self.origins.get_mut(&origin)?.shadows = None;
                Some(Decision::Unshadow {
                    name: name.to_string(),
                    origin,
                    why: "aborted",
                })
            }
            crate::rollout::Command::Promote => {
                self.promote(name, &origin);
                Some(Decision::Promote {
                    name: name.to_string(),
                    record: self.origins.get(&origin)?.marks.record,
                    origin,
                })
            }
        }
    }

    /// The shadow from `origin` provides module `name` now; the origin that
    /// provided it stays known, providing nothing.
    pub(super) fn promote(&mut self, name: &str, origin: &Origin) {
        if let Some(state) = self.origins.get_mut(origin) {
            state.shadows = None;
            state.provides = Some(name.to_string());
        }
        if let Some(previous) = self.names.insert(name.to_string(), origin.clone())
            && let Some(state) = self.origins.get_mut(&previous)
        {
            state.provides = None;
        }
    }
}
