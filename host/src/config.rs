//! The operator's host configuration file (`rekon run --config FILE`).
//!
//! ```yaml
//! modules:
//!   app:                     # a module, by its manifest name
//!     concurrency: 4         # overrides the module's hint
//!     permissions:           # narrows what the manifest grants
//!       - apiVersion: apps/v1
//!         kind: Deployment
//!         verbs: [get, list, patch]
//!         namespaces: [shop]  # empty or absent: every namespace
//! ```
//!
//! Narrowing never widens: a host call must be allowed by the module's
//! manifest and, when the operator lists permissions for that module, by
//! them too.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::contract::{Gvk, Permission, Verbs};
use crate::shared::{VERBS, split_api_version};

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
        source: serde_yaml::Error,
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

/// The host configuration.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Settings per module name.
    #[serde(default)]
    pub modules: BTreeMap<String, ModuleConfig>,
}

/// The operator's settings of one module.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModuleConfig {
    /// Reconciles at once (overrides the manifest's hint).
    pub concurrency: Option<usize>,
    /// When present, the module may do only what these grant (and its
    /// manifest grants).
    pub permissions: Option<Vec<PermissionConfig>>,
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
            serde_yaml::from_str(&text).map_err(|source| ConfigError::Parse {
                path: path.display().to_string(),
                source,
            })?;
        for (module, settings) in &config.modules {
            settings.limit(module)?;
        }
        Ok(config)
    }
}

impl ModuleConfig {
    /// The operator's permission limit, in contract form.
    pub(crate) fn limit(&self, module: &str) -> Result<Option<Vec<Permission>>, ConfigError> {
        let Some(permissions) = &self.permissions else {
            return Ok(None);
        };
        permissions
            .iter()
            .map(|p| {
                let (group, version) = split_api_version(&p.api_version);
                let mut verbs = Verbs::empty();
                for verb in &p.verbs {
                    verbs |= match verb.as_str() {
                        "*" => Verbs::all(),
                        name => VERBS
                            .iter()
                            .find(|(_, n)| *n == name)
                            .map(|(v, _)| *v)
                            .ok_or_else(|| ConfigError::Verb {
                                module: module.to_string(),
                                verb: name.to_string(),
                            })?,
                    };
                }
                Ok(Permission {
                    kind: Gvk {
                        group: group.to_string(),
                        version: version.to_string(),
                        kind: p.kind.clone(),
                    },
                    verbs,
                    namespaces: p.namespaces.clone(),
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}
