//! Loader: source events in, validated module versions out.
//! May call: runtime (compile and validate).
//!
//! It compiles each version off the supervisor's path (in the background,
//! one at a time per origin, the newest winning), skips bytes it has
//! already seen at an origin, applies the operator's narrowing, and decides
//! which origin provides each module name; the supervisor runs what it
//! hands over.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use tokio::task::JoinSet;

mod decision;
mod shadows;
mod state;

pub(crate) use decision::{Decision, Version};
pub(crate) use shadows::origin_is;
use shadows::without_serving;

use crate::config::HostConfig;
use crate::runtime::{Engine, Module, digest};
use crate::source::{Marks, Origin, Rollout, SourceEvent};

/// What is known of one origin.
#[derive(Default)]
struct OriginState {
    /// Digest of the newest bytes received (being compiled, loaded or refused).
    digest: Option<String>,
    /// Bumped by every event: a compile that finishes for an older one is
    /// dropped.
    generation: u64,
    /// How its newest version is marked to run.
    rollout: Rollout,
    /// What else its source says of how to run it.
    marks: Marks,
    /// The module name this origin provides while it runs.
    provides: Option<String>,
    /// The module this origin's version shadows.
    shadows: Option<String>,
    /// Its newest bytes, compiled again when the rollout state makes the
    /// version serve after all.
    bytes: Option<Arc<Vec<u8>>>,
}

/// The result of one compile.
struct Compiled {
    origin: Origin,
    rollout: Rollout,
    marks: Marks,
    generation: u64,
    loaded: Result<Module, crate::runtime::ModuleError>,
}

/// Turns source events into [`Decision`]s. Drive it with
/// [`Loader::event`] and [`Loader::next_compiled`].
pub(crate) struct Loader {
    engine: Engine,
    config: HostConfig,
    origins: BTreeMap<Origin, OriginState>,
    /// Module name -> the origin that provides it (the first one loaded).
    names: HashMap<String, Origin>,
    compiling: JoinSet<Compiled>,
    /// The compiles under way of versions that may shadow a module (marked
    /// so by their source, or named as a shadow by the configuration).
    shadows_compiling: HashSet<tokio::task::Id>,
    /// Shadows of modules no source serves yet, by module name: a shadow
    /// never serves; each shadows once its module is served.
    waiting: BTreeMap<String, Decision>,
    /// Decisions made and not yet handed over (a waiting shadow whose
    /// module now serves).
    ready: VecDeque<Decision>,
    /// The start's load is over: a shadow without its serving version is
    /// refused at once, not waited for quietly.
    started: bool,
    /// Each module's rollout state in the cluster, when it has one.
    states: BTreeMap<String, crate::rollout::resource::RolloutStatus>,
}

impl Loader {
    pub fn new(engine: Engine, config: HostConfig) -> Loader {
        Loader {
            engine,
            config,
            origins: BTreeMap::new(),
            names: HashMap::new(),
            compiling: JoinSet::new(),
            shadows_compiling: HashSet::new(),
            waiting: BTreeMap::new(),
            ready: VecDeque::new(),
            started: false,
            states: BTreeMap::new(),
        }
    }

    /// Whether compiles are under way (or decisions wait to be handed
    /// over by [`Loader::next_compiled`]).
    pub fn is_compiling(&self) -> bool {
        !self.compiling.is_empty() || !self.ready.is_empty()
    }

    /// Ends the start's load: each shadow still waiting for a serving
    /// version of its module is refused loudly (it keeps waiting, and
    /// shadows once its module is served).
    pub fn started(&mut self) -> Vec<Decision> {
        self.started = true;
        self.waiting.values().map(without_serving).collect()
    }

    /// Whether a version that may shadow a module is still compiling: a
    /// start holds its modules' controllers back until it is not, so a
    /// shadow given at start sees every request from the first.
    pub fn is_compiling_shadows(&self) -> bool {
        !self.shadows_compiling.is_empty()
    }

    /// Whether the version from `origin` is to shadow a module, as far as
    /// is known before it compiles.
    fn may_shadow(&self, origin: &Origin, rollout: Rollout) -> bool {
        matches!(rollout, Rollout::Shadow { .. }) || self.configured_shadow(origin).is_some()
    }

    /// Takes one source event: starts a compile (returning nothing yet),
    /// or decides at once.
    pub fn event(&mut self, event: SourceEvent) -> Option<Decision> {
        match event {
            SourceEvent::Upsert {
                origin,
                bytes,
                rollout,
                marks,
            } => {
                let state = self.origins.entry(origin.clone()).or_default();
                let digest = digest(&bytes);
                if state.digest.as_deref() == Some(digest.as_str())
                    && state.rollout == rollout
                    && state.marks == marks
                {
                    return None;
                }
                state.digest = Some(digest);
                state.bytes = Some(bytes.clone());
                state.rollout = rollout;
                state.marks = marks.clone();
                state.generation += 1;
                let generation = state.generation;
                if state.provides.is_some() {
                    tracing::info!(%origin, digest = %&state.digest.as_deref().unwrap_or_default()[..12], "new module version");
                }
                let engine = self.engine.clone();
                let may_shadow = self.may_shadow(&origin, rollout);
                let task = self.compiling.spawn(async move {
                    let loaded = Module::load(&engine, &bytes).await;
                    Compiled {
                        origin,
                        rollout,
                        marks,
                        generation,
                        loaded,
                    }
                });
                if may_shadow {
                    self.shadows_compiling.insert(task.id());
                }
                None
            }
            SourceEvent::Remove { origin } => {
                self.waiting.retain(|_, waiting| match waiting {
                    Decision::Shadow { version, .. } => version.origin != origin,
                    _ => true,
                });
                let state = self.origins.remove(&origin)?;
                if let Some(name) = state.shadows {
                    return Some(Decision::Unshadow {
                        name,
                        origin,
                        why: "its source is gone",
                    });
                }
                let name = state.provides?;
                self.names.remove(&name);
                Some(Decision::Unload { name, origin })
            }
            SourceEvent::Invalid {
                origin,
                reason,
                message,
            } => {
                let state = self.origins.entry(origin.clone()).or_default();
                // Forget the digest: the same good bytes may come back.
                state.digest = None;
                state.generation += 1;
                Some(Decision::Refuse {
                    serving: state.provides.clone(),
                    origin,
                    reason,
                    message,
                })
            }
        }
    }

    /// The next compile to finish, decided; `None` when none is under way.
    /// A compile superseded by a newer event of its origin decides nothing
    /// and is skipped.
    pub async fn next_compiled(&mut self) -> Option<Decision> {
        if let Some(decision) = self.ready.pop_front() {
            return Some(decision);
        }
        loop {
            let joined = self.compiling.join_next_with_id().await?;
            let id = match &joined {
                Ok((id, _)) => *id,
                Err(error) => error.id(),
            };
            self.shadows_compiling.remove(&id);
            let compiled = match joined {
                Ok((_, compiled)) => compiled,
                Err(error) => {
                    tracing::error!(error = %error, "a module compile task failed");
                    continue;
                }
            };
            if let Some(decision) = self.decide(compiled) {
                return Some(decision);
            }
        }
    }

    /// What a finished compile means.
    fn decide(&mut self, compiled: Compiled) -> Option<Decision> {
        let Compiled {
            origin,
            rollout,
            marks,
            generation,
            loaded,
        } = compiled;
        let state = self.origins.get_mut(&origin)?;
        if state.generation != generation {
            return None;
        }
        let serving = state.provides.clone();
        let refuse = |reason, message: String| Decision::Refuse {
            origin: origin.clone(),
            reason,
            message,
            serving: serving.clone(),
        };
        let module = match loaded {
            Ok(module) => module,
            // The bad bytes stay remembered (not compiled again in a loop);
            // the module keeps its last good version.
            Err(error) => return Some(refuse(error.metric_label(), error_chain(&error))),
        };
        let name = module.name().to_string();
        let settings = self.config.modules.get(&name);
        // Named as a shadow by the configuration, a version is one,
        // whatever else names it; and only of the module named.
        if let Some(named) = self.configured_shadow(&origin)
            && named != name
        {
            let message = format!(
                "the configuration names this file as the shadow of module {named:?} (modules.{named}.shadow), but it is module {name:?}: a shadow never serves"
            );
            return Some(refuse("shadow_of_another_module", message));
        }
        let canary = match rollout {
            Rollout::Shadow { canary } => Some(canary),
            Rollout::Serve => self
                .configured_shadow(&origin)
                .is_some()
                .then(|| settings.and_then(|m| m.canary).unwrap_or(0).min(100)),
        };
        // What the rollout state in the cluster says of this version: the
        // version it says serves does, even marked shadow (it was promoted).
        let said = self.said(&name, module.digest(), &origin, canary.is_some());
        let serves = match said {
            state::Said::Skip(decision) => return decision.map(|d| *d),
            state::Said::Serves => true,
            state::Said::Go => false,
        };
        let take_over = serves && self.names.get(&name).is_some_and(|o| *o != origin);
        let shadow = canary.is_some() && !serves;
        if shadow && serving.is_some() {
            let message = format!(
                "this source serves module {name:?} (it was promoted, or it serves already), and a version that serves cannot turn into a shadow: to update it in place, take its rekon.dev/rollout annotation off; to try a new version beside it, ship it from another source"
            );
            return Some(refuse("serving_as_shadow", message));
        }
        let state = self.origins.get_mut(&origin)?;
        // A shadow marked to serve now, or the version the state says
        // serves: promoted.
        let promoted = (!shadow && state.shadows.as_deref() == Some(name.as_str())) || take_over;
        if let Some(owner) = self
            .names
            .get(&name)
            .filter(|o| **o != origin && !shadow && !promoted)
        {
            // The first source to provide a name keeps it until it goes.
            let message = format!("another source provides module {name:?}: {owner}");
            return Some(refuse("name_taken", message));
        }
        let module = match self.config.modules.get(&name).map(|m| m.limit(&name)) {
            Some(Ok(Some(limit))) => module.narrowed(limit),
            Some(Err(error)) => return Some(refuse("invalid_configuration", error.to_string())),
            _ => module,
        };
        let mut overridden = Ok(());
        let module = module.overridden(|manifest, webhooks| {
            overridden = self
                .config
                .modules
                .get(&name)
                .map_or(Ok(()), |settings| {
                    settings.override_manifest(&name, manifest)
                })
                .and_then(|()| self.config.override_webhooks(&name, webhooks));
        });
        if let Err(error) = overridden {
            return Some(refuse("invalid_configuration", error.to_string()));
        }
        if shadow {
            let reload = state.shadows.replace(name.clone()).is_some();
            // A module has one shadow: this one replaces any other source's.
            for (other, state) in &mut self.origins {
                if *other != origin && state.shadows.as_deref() == Some(name.as_str()) {
                    tracing::info!(%origin, replaced = %other, module = %name, "a second shadow replaces the first");
                    state.shadows = None;
                }
            }
            let decision = Decision::Shadow {
                version: Version {
                    origin,
                    module,
                    reload,
                    replaces: None,
                    record: marks.record,
                    promoted_by_source: false,
                },
                canary: canary.unwrap_or(0),
                policy: marks.policy,
            };
            if self.names.contains_key(&name) {
                return Some(decision);
            }
            // No source serves the module (yet): the shadow waits for one.
            let refused = self.started.then(|| without_serving(&decision));
            self.waiting.insert(name, decision);
            return refused;
        }
        if let Some(waiting) = self.waiting.remove(&name) {
            // The module serves now: its waiting shadow follows it.
            self.ready.push_back(waiting);
        }
        if promoted {
            self.promote(&name, &origin);
            return Some(Decision::Install(Version {
                origin,
                module,
                reload: true,
                replaces: None,
                record: marks.record,
                promoted_by_source: !take_over,
            }));
        }
        let reload = serving.as_deref() == Some(name.as_str());
        let replaces = serving.filter(|p| *p != name);
        if let Some(previous) = &replaces {
            // The origin now holds another module: the old one goes first.
            self.names.remove(previous);
        }
        state.provides = Some(name.clone());
        self.names.insert(name, origin.clone());
        Some(Decision::Install(Version {
            origin,
            module,
            reload,
            replaces,
            record: marks.record,
            promoted_by_source: false,
        }))
    }
}

/// An error and its sources, as one line.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Bytes as a source event's payload.
pub(crate) fn upsert(origin: Origin, bytes: Vec<u8>) -> SourceEvent {
    SourceEvent::Upsert {
        origin,
        bytes: Arc::new(bytes),
        rollout: Rollout::Serve,
        marks: Marks::default(),
    }
}

#[cfg(test)]
mod tests;
