//! The operator's host configuration file (`rekon run --config FILE`).
//!
//! ```yaml
//! modules:
//!   app:                     # a module, by its manifest name
//!     concurrency: 4         # overrides the module's hint
//!     selector: tier=prod    # only these primaries (overrides the manifest's)
//!     namespaces: [shop]     # only primaries in these namespaces
//!     predicates: [generationChanged]  # which primary changes count
//!     resyncPeriod: 10m      # reconcile every primary again this often; 0: never
//!     permissions:           # narrows what the manifest grants
//!       - apiVersion: apps/v1
//!         kind: Deployment
//!         verbs: [get, list, patch]
//!         namespaces: [shop]  # empty or absent: every namespace
//!     excludeNamespaces: [kube-system]   # this module's webhooks skip these
//!     webhooks:              # per webhook, by the name the module gives it
//!       validate-apps:
//!         failurePolicy: Ignore          # Fail or Ignore
//!         timeoutSeconds: 5              # 1 to 30
//!         namespaceSelector: env in (prod)
//!         objectSelector: tier=fe
//! excludeNamespaces: [kube-system, kube-public, kube-node-lease]  # every module's webhooks
//! ```
//!
//! Webhooks skip the namespaces `excludeNamespaces` lists — the most
//! specific list wins (webhook, module, top level); by default
//! `kube-system`, `kube-public`, `kube-node-lease` and rekon's own
//! namespace ([`HostConfig::namespace`]), so a module's webhook never
//! locks the cluster's own namespaces, or rekon's, while rekon is down. A
//! webhook whose namespace selector (the module's or the operator's) names
//! `kubernetes.io/metadata.name` itself decides, and gets no exclusion.
//!
//! Narrowing never widens: a host call must be allowed by the module's
//! manifest and, when the operator lists permissions for that module, by
//! them too.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

mod duration;
mod modules;
mod policy;
mod webhooks;

pub use policy::{MIN_JUDGED, PolicyConfig, StepConfig};

/// Why a configuration file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read the configuration {path}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid YAML of the expected shape.
    #[error("the configuration {path} is invalid")]
    Parse {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: serde_yaml_ng::Error,
    },
    /// A setting of a module is not acceptable.
    #[error("module {module:?}: {message}")]
    Setting {
        /// The module.
        module: String,
        /// What is wrong.
        message: String,
    },
    /// A verb is not one of get, list, watch, create, update, patch, delete.
    #[error(
        "module {module:?}: unknown verb {verb:?} (expected get, list, watch, create, update, patch, delete or *)"
    )]
    Verb {
        /// The module.
        module: String,
        /// The verb.
        verb: String,
    },
}

/// The namespaces no module's webhook is called for unless the operator
/// says otherwise (besides rekon's own, [`HostConfig::namespace`]).
pub const EXCLUDED_NAMESPACES: [&str; 3] = ["kube-system", "kube-public", "kube-node-lease"];

/// The label every namespace carries with its own name, which the
/// exclusion of namespaces selects on.
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// The host configuration.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Settings per module name.
    #[serde(default)]
    pub modules: BTreeMap<String, ModuleConfig>,
    /// Namespaces whose objects no module's webhook is called for (default:
    /// [`EXCLUDED_NAMESPACES`] and [`HostConfig::namespace`]); `[]` for none.
    #[serde(rename = "excludeNamespaces")]
    pub exclude_namespaces: Option<Vec<String>>,
    /// rekon's own namespace, excluded from webhooks by default with
    /// [`EXCLUDED_NAMESPACES`]. Not read from the file: `rekon run` sets it
    /// from `$POD_NAMESPACE` when it runs in a cluster.
    #[serde(skip)]
    pub namespace: Option<String>,
}

/// The operator's settings of one module.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModuleConfig {
    /// Reconciles at once (overrides the manifest's hint).
    pub concurrency: Option<usize>,
    /// Only primaries matching this label selector (overrides the
    /// manifest's).
    pub selector: Option<String>,
    /// Only primaries in these namespaces (overrides the manifest's; empty:
    /// every namespace).
    pub namespaces: Option<Vec<String>>,
    /// Which changes of a primary queue a reconcile: `generationChanged`,
    /// `labelsChanged`, `annotationsChanged`, `resourceVersionChanged`
    /// (overrides the manifest's; empty: every change).
    pub predicates: Option<Vec<String>>,
    /// Reconcile every primary again this often (`90s`, `10m`, `1h30m`;
    /// `0` never), overriding the manifest's period.
    #[serde(rename = "resyncPeriod")]
    pub resync_period: Option<String>,
    /// When present, the module may do only what these grant (and its
    /// manifest grants).
    pub permissions: Option<Vec<PermissionConfig>>,
    /// Namespaces whose objects this module's webhooks are not called for
    /// (overrides the top-level list).
    #[serde(rename = "excludeNamespaces")]
    pub exclude_namespaces: Option<Vec<String>>,
    /// Settings of the module's webhooks, by the name the module gives each.
    #[serde(default)]
    pub webhooks: BTreeMap<String, WebhookConfig>,
    /// Record the module's reconciles, for `rekon replay`.
    pub record: Option<RecordConfig>,
    /// A module file (as given to `rekon run`, or in its `--modules`
    /// directory) run as this module's shadow: it reconciles what the
    /// serving version reconciles, its writes sent as dry runs and
    /// compared (see `rekon rollout status`).
    pub shadow: Option<String>,
    /// The percentage of objects (0 to 100, by a stable hash of their
    /// namespace and name) the shadow serves live instead of shadowing.
    pub canary: Option<u8>,
    /// When the shadow is promoted or dropped without a command.
    pub policy: Option<PolicyConfig>,
    /// Spread the module's objects over every replica (see
    /// [`ShardingConfig`]).
    pub sharding: Option<ShardingConfig>,
}

/// A sharded module: its primary objects are spread over every replica
/// by a hash of their uid or namespace, each replica caching and
/// reconciling only its share; owned and watched objects follow their
/// primary. Needs `--leader-elect` or `--scale-out` (the replicas find
/// each other through Leases); with neither, one replica holds it all.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ShardingConfig {
    /// What places an object: `uid` (even spread) or `namespace` (a
    /// namespace's objects together).
    pub by: ShardBy,
}

/// What a sharded module's objects are placed by.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ShardBy {
    /// The primary object's uid; an owned object follows its controller
    /// owner's.
    Uid,
    /// The object's namespace.
    Namespace,
}

impl std::str::FromStr for ShardBy {
    type Err = String;

    fn from_str(text: &str) -> Result<ShardBy, String> {
        match text {
            "uid" => Ok(ShardBy::Uid),
            "namespace" => Ok(ShardBy::Namespace),
            other => Err(format!("sharding by {other:?}: uid or namespace")),
        }
    }
}

/// What of a module's reconciles is recorded ([`crate::replay`]).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordConfig {
    /// How many of the latest reconciles are kept in memory, served at
    /// `/recordings/<module>` on the metrics port (default 100; 0 keeps
    /// none).
    pub last: Option<usize>,
    /// A file every reconcile is appended to, as JSON lines.
    pub file: Option<std::path::PathBuf>,
}

/// Reconciles kept in memory when `record:` does not say.
pub const DEFAULT_RECORDED: usize = 100;

/// The operator's settings of one webhook of a module: each overrides
/// what the module declares.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookConfig {
    /// `Fail` (a failing or unreachable webhook refuses the request) or
    /// `Ignore` (lets it through).
    pub failure_policy: Option<String>,
    /// How long the API server waits for an answer, 1 to 30 seconds.
    pub timeout_seconds: Option<u32>,
    /// Only objects in namespaces matching this label selector (`""`: every
    /// namespace).
    pub namespace_selector: Option<String>,
    /// Only objects matching this label selector (`""`: every object).
    pub object_selector: Option<String>,
    /// Namespaces whose objects this webhook is not called for (overrides
    /// the module's and the top-level list).
    pub exclude_namespaces: Option<Vec<String>>,
}

/// One grant in the configuration file.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PermissionConfig {
    /// `v1`, `apps/v1`...
    pub api_version: String,
    /// The kind.
    pub kind: String,
    /// Verbs; `*` for all.
    pub verbs: Vec<String>,
    /// Namespaces; empty for all.
    #[serde(default)]
    pub namespaces: Vec<String>,
}

impl HostConfig {
    /// Reads a YAML configuration file.
    pub fn read(path: &Path) -> Result<HostConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let config: HostConfig =
            serde_yaml_ng::from_str(&text).map_err(|source| ConfigError::Parse {
                path: path.display().to_string(),
                source,
            })?;
        for (module, settings) in &config.modules {
            settings.limit(module)?;
            settings.override_manifest(module, &mut crate::contract::empty_manifest())?;
            for (name, webhook) in &settings.webhooks {
                webhook.apply(module, name, &mut crate::contract::empty_webhook())?;
            }
        }
        Ok(config)
    }

    /// Sets rekon's own namespace (excluded from webhooks by default).
    #[must_use]
    pub fn with_namespace(mut self, namespace: Option<String>) -> Self {
        self.namespace = namespace;
        self
    }
}
