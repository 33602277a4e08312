//! A loaded, validated module version: its compiled component, its
//! pre-linked instance template and its manifest.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use sha2::{Digest, Sha256};
use wasmtime::component::Component;

use super::engine::{CompileSource, Engine, Tier};
use super::instance::{ReconcileError, classify, new_store};
use super::validate::{validate_crds, validate_manifest};
use super::world::{Described, Pre};
use crate::bindings::Caller;
use crate::contract::{Manifest, Permission, Webhooks};

/// Why a module could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ModuleError {
    /// The bytes are not WebAssembly at all.
    #[error("not a WebAssembly component: the file does not start with the wasm magic bytes")]
    NotWasm,
    /// A core module was given where a component is needed.
    #[error(
        "this is a core WebAssembly module, not a component: build for wasm32-wasip2 \
         (or wrap it with `wasm-tools component new`)"
    )]
    CoreModule,
    /// The component failed to compile (malformed or unsupported).
    #[error("the component is invalid")]
    Compile(#[source] wasmtime::Error),
    /// The component imports something the host does not provide.
    #[error(
        "the component does not target the rekon:reconciler world (it imports what the host does not provide)"
    )]
    Imports(#[source] wasmtime::Error),
    /// The component lacks an export of the world, or has the wrong type.
    #[error("the component does not export the rekon:reconciler world")]
    Exports(#[source] wasmtime::Error),
    /// Calling `manifest` failed.
    #[error("the module failed while describing itself (manifest)")]
    ManifestCall(#[source] Box<ReconcileError>),
    /// The manifest is not acceptable.
    #[error("the module's manifest is invalid: {0}")]
    InvalidManifest(String),
}

impl ModuleError {
    /// A short, bounded label for metrics.
    pub fn metric_label(&self) -> &'static str {
        match self {
            ModuleError::NotWasm => "not_wasm",
            ModuleError::CoreModule => "core_module",
            ModuleError::Compile(_) => "compile",
            ModuleError::Imports(_) => "wrong_world",
            ModuleError::Exports(_) => "wrong_world",
            ModuleError::ManifestCall(_) => "manifest_failed",
            ModuleError::InvalidManifest(_) => "invalid_manifest",
        }
    }
}

/// A loaded, validated module version. Cheap to clone.
#[derive(Clone)]
pub struct Module {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) engine: Engine,
    /// The code it runs: baseline first when tiered loading compiled it,
    /// then optimised. Shared by its narrowed and overridden copies.
    pub(super) code: Arc<std::sync::RwLock<Code>>,
    pub(super) manifest: Manifest,
    pub(super) webhooks: Arc<Webhooks>,
    /// The CRDs it ships, asked for the first time they are needed.
    pub(super) crds: Arc<tokio::sync::OnceCell<Vec<Value>>>,
    pub(super) caller: Arc<Caller>,
    pub(super) digest: String,
    pub(super) source: CompileSource,
    pub(super) compile_time: Duration,
    pub(super) budget: Duration,
}

/// A module version's code: its pre-linked template and the compiler tier
/// that built it.
#[derive(Clone)]
pub(super) struct Code {
    pub(super) pre: Pre,
    pub(super) tier: Tier,
}

impl Inner {
    /// The code to start the next reconcile (or review) on.
    pub(super) fn code(&self) -> Code {
        self.code.read().expect("code lock").clone()
    }
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("name", &self.inner.manifest.name)
            .field("version", &self.inner.manifest.version)
            .field("digest", &self.inner.digest)
            .finish_non_exhaustive()
    }
}

/// How long a module version serves on baseline code before its
/// optimised build starts compiling (tiered loading).
pub const OPTIMIZE_AFTER: Duration = Duration::from_secs(2);

/// The sha256 of module bytes, hex: the identity of a module version.
pub fn digest(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl Module {
    /// Validates and loads a module: checks the bytes are a component,
    /// compiles it (or loads it from the compile cache), links it against
    /// the host's imports, checks its exports, and asks for its manifest
    /// (or, for a version described before, takes it from the cache).
    pub async fn load(engine: &Engine, bytes: &[u8]) -> Result<Module, ModuleError> {
        match bytes.get(0..8) {
            Some([0, b'a', b's', b'm', 1, 0, 0, 0]) => return Err(ModuleError::CoreModule),
            Some([0, b'a', b's', b'm', ..]) => {}
            _ => return Err(ModuleError::NotWasm),
        }
        let digest = digest(bytes);
        let started = Instant::now();
        // Compiling takes from milliseconds to seconds: keep it off the
        // threads that run reconciles.
        let bytes: Arc<[u8]> = Arc::from(bytes);
        let (component, source) = {
            let _turn = engine.load_turn().await;
            let (engine, bytes, digest) = (engine.clone(), bytes.clone(), digest.clone());
            tokio::task::spawn_blocking(move || engine.compile_tiered(&bytes, &digest))
                .await
                .map_err(|e| ModuleError::Compile(wasmtime::Error::msg(e.to_string())))?
                .map_err(ModuleError::Compile)?
        };
        let compile_time = started.elapsed();
        let module = Self::from_component(engine, component, digest, source, compile_time).await?;
        if source == CompileSource::Baseline {
            module.optimize_in_background(bytes);
        }
        Ok(module)
    }

    /// Loads a module on one tier's code, and keeps it there (no
    /// background swap): for benchmarks and tests that compare the tiers.
    #[cfg(feature = "bench")]
    pub async fn load_on(engine: &Engine, bytes: &[u8], tier: Tier) -> Result<Module, ModuleError> {
        let digest = digest(bytes);
        let started = Instant::now();
        let (component, source) = match tier {
            Tier::Baseline => (
                engine
                    .compile_baseline(bytes)
                    .map_err(ModuleError::Compile)?,
                CompileSource::Baseline,
            ),
            Tier::Optimized => engine
                .compile(bytes, &digest)
                .map_err(ModuleError::Compile)?,
        };
        Self::from_component(engine, component, digest, source, started.elapsed()).await
    }

    /// Compiles the optimised build of a module serving on baseline code
    /// (once it has served [`OPTIMIZE_AFTER`] and is still loaded), off
    /// the reconcile threads, writes it to the cache, and swaps it in:
    /// a reconcile (or review) that started on baseline code finishes on
    /// it; the next one runs optimised code. The controller sees nothing.
    fn optimize_in_background(&self, bytes: Arc<[u8]>) {
        let inner = &self.inner;
        let (engine, digest) = (inner.engine.clone(), inner.digest.clone());
        let code = Arc::downgrade(&inner.code);
        tokio::spawn(async move {
            // A version replaced within moments (an author's quick edits)
            // is never optimised, and does not slow the next one's load.
            tokio::time::sleep(OPTIMIZE_AFTER).await;
            if code.strong_count() == 0 {
                return;
            }
            let _turn = engine.optimizing_turn().await;
            if code.strong_count() == 0 {
                return;
            }
            let started = Instant::now();
            let compiled = {
                let (engine, digest) = (engine.clone(), digest.clone());
                tokio::task::spawn_blocking(move || engine.compile(&bytes, &digest)).await
            };
            let optimized = match compiled {
                Ok(Ok((component, _))) => engine
                    .linker_for(Tier::Optimized)
                    .instantiate_pre(&component)
                    .and_then(Pre::new),
                Ok(Err(error)) => Err(error),
                Err(error) => Err(wasmtime::Error::msg(error.to_string())),
            };
            match optimized {
                Ok(pre) => {
                    let Some(code) = code.upgrade() else {
                        return; // unloaded meanwhile: the cache has it for next time
                    };
                    *code.write().expect("code lock") = Code {
                        pre,
                        tier: Tier::Optimized,
                    };
                    tracing::info!(
                        digest,
                        compile_ms = started.elapsed().as_millis() as u64,
                        "module runs optimised code now"
                    );
                }
                Err(error) => tracing::warn!(
                    digest,
                    error = %format!("{error:#}"),
                    "cannot compile the optimised build: the module stays on baseline code"
                ),
            }
        });
    }

    async fn from_component(
        engine: &Engine,
        component: Component,
        digest: String,
        source: CompileSource,
        compile_time: Duration,
    ) -> Result<Module, ModuleError> {
        let tier = match source {
            CompileSource::Baseline => Tier::Baseline,
            CompileSource::Cache | CompileSource::Compiled => Tier::Optimized,
        };
        let instance_pre = engine
            .linker_for(tier)
            .instantiate_pre(&component)
            .map_err(ModuleError::Imports)?;
        let pre = Pre::new(instance_pre).map_err(ModuleError::Exports)?;

        let budget = engine.config().max_reconcile_time;
        // A version this engine described before (same bytes, same limits,
        // same host) is not run again: loading it from the cache then
        // touches none of its code.
        let (described, kept) = match engine.cached_description(&digest) {
            Some(described) => (described, true),
            None => {
                let mut store = new_store(engine, tier, budget, None);
                let described = async {
                    let instance = pre
                        .instantiate(&mut store)
                        .await
                        .map_err(|e| classify(e, store.data(), engine, budget))?;
                    instance
                        .describe(&mut store)
                        .await
                        .map_err(|e| classify(e, store.data(), engine, budget))
                }
                .await
                .map_err(|e| ModuleError::ManifestCall(Box::new(e)))?;
                (described, false)
            }
        };
        validate_manifest(&described.manifest, pre.reconciles())
            .map_err(ModuleError::InvalidManifest)?;
        super::webhooks::validate(&described.webhooks).map_err(ModuleError::InvalidManifest)?;
        // Kept once it is known good.
        if !kept {
            engine.keep_description(&digest, &described);
        }
        let Described { manifest, webhooks } = described;

        let budget = manifest
            .timeout_ms
            .map(|ms| Duration::from_millis(ms.into()).min(budget))
            .unwrap_or(budget);
        let caller = Arc::new(Caller {
            name: manifest.name.clone(),
            version: manifest.version.clone(),
            permissions: manifest.permissions.clone(),
            operator_limit: None,
            indexes: manifest.indexes.clone(),
        });
        Ok(Module {
            inner: Arc::new(Inner {
                engine: engine.clone(),
                manifest,
                webhooks: Arc::new(webhooks),
                code: Arc::new(std::sync::RwLock::new(Code { pre, tier })),
                crds: Arc::default(),
                caller,
                digest,
                source,
                compile_time,
                budget,
            }),
        })
    }

    /// The same module version, with its permissions narrowed by the
    /// operator: a host call must be allowed by the manifest and by `limit`.
    #[must_use]
    pub fn narrowed(&self, limit: Vec<Permission>) -> Module {
        let inner = &self.inner;
        let mut caller = (*inner.caller).clone();
        caller.operator_limit = Some(limit);
        Module {
            inner: Arc::new(Inner {
                engine: inner.engine.clone(),
                code: inner.code.clone(),
                manifest: inner.manifest.clone(),
                webhooks: inner.webhooks.clone(),
                crds: inner.crds.clone(),
                caller: Arc::new(caller),
                digest: inner.digest.clone(),
                source: inner.source,
                compile_time: inner.compile_time,
                budget: inner.budget,
            }),
        }
    }

    /// The same module version, with its manifest and webhooks changed by
    /// `change` (the operator's overrides: selector, namespaces,
    /// predicates, resync; webhooks' failure policy, timeout, selectors and
    /// excluded namespaces).
    #[must_use]
    pub fn overridden(&self, change: impl FnOnce(&mut Manifest, &mut Webhooks)) -> Module {
        let inner = &self.inner;
        let mut manifest = inner.manifest.clone();
        let mut webhooks = (*inner.webhooks).clone();
        change(&mut manifest, &mut webhooks);
        Module {
            inner: Arc::new(Inner {
                engine: inner.engine.clone(),
                code: inner.code.clone(),
                manifest,
                webhooks: Arc::new(webhooks),
                crds: inner.crds.clone(),
                caller: inner.caller.clone(),
                digest: inner.digest.clone(),
                source: inner.source,
                compile_time: inner.compile_time,
                budget: inner.budget,
            }),
        }
    }

    #[cfg(test)]
    /// Whether a call of `verb` on `kind` in `namespace` is allowed (by
    /// the manifest and the operator's narrowing).
    pub(crate) fn allows(
        &self,
        verb: crate::contract::Verbs,
        kind: &crate::contract::Gvk,
        namespace: Option<&str>,
    ) -> bool {
        self.inner.caller.allows(verb, kind, namespace)
    }

    /// The module's manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.inner.manifest
    }

    /// The version of `rekon:reconciler` the module was built for
    /// (`0.1.0` to `0.4.0`).
    pub fn contract_version(&self) -> &'static str {
        self.inner.code().pre.contract_version()
    }

    /// The world the module exports: `reconciler`, `webhook` or `operator`.
    pub fn world(&self) -> &'static str {
        self.inner.code().pre.world()
    }

    /// Whether the module reconciles (a `webhook` module only serves
    /// webhooks: no controller runs for it).
    pub fn reconciles(&self) -> bool {
        self.inner.code().pre.reconciles()
    }

    /// The webhooks the module serves (empty for a reconciler).
    pub fn webhooks(&self) -> &Webhooks {
        &self.inner.webhooks
    }

    /// The CustomResourceDefinitions the module ships (0.4.0 and later;
    /// empty when it ships none): checked `apiextensions.k8s.io/v1`
    /// objects, in the module's order. The module is asked (its `crds`
    /// export, on a fresh instance) the first time, not when it loads: a
    /// host that installs no CRD spends nothing on them.
    pub async fn crds(&self) -> Result<&[Value], ModuleError> {
        let inner = &self.inner;
        let crds = inner
            .crds
            .get_or_try_init(|| async {
                let budget = inner.engine.config().max_reconcile_time;
                let code = inner.code();
                let mut store = new_store(&inner.engine, code.tier, budget, None);
                let crds = code.pre.crds(&mut store).await.map_err(|e| {
                    ModuleError::ManifestCall(Box::new(classify(
                        e,
                        store.data(),
                        &inner.engine,
                        budget,
                    )))
                })?;
                validate_crds(&crds).map_err(ModuleError::InvalidManifest)
            })
            .await?;
        Ok(crds)
    }

    /// The module's name (from its manifest).
    pub fn name(&self) -> &str {
        &self.inner.manifest.name
    }

    /// sha256 of the module's bytes, hex.
    pub fn digest(&self) -> &str {
        &self.inner.digest
    }

    /// Whether the module was compiled now or loaded from the compile cache.
    pub fn compile_source(&self) -> CompileSource {
        self.inner.source
    }

    /// Which compiler's code the next reconcile runs: baseline while the
    /// optimised build of a module loaded on baseline code compiles.
    pub fn tier(&self) -> Tier {
        self.inner.code().tier
    }

    /// How long compiling (or loading from the cache) took.
    pub fn compile_time(&self) -> Duration {
        self.inner.compile_time
    }

    /// The CPU budget of one reconcile of this module.
    pub fn reconcile_budget(&self) -> Duration {
        self.inner.budget
    }
}
