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
//! ```
//!
//! Narrowing never widens: a host call must be allowed by the module's
//! manifest and, when the operator lists permissions for that module, by
//! them too.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::contract::{Gvk, Manifest, Permission, Predicate, Verbs};
use crate::shared::{split_api_version, verb_named};

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
            settings.override_manifest(module, &mut crate::contract::empty_manifest())?;
        }
        Ok(config)
    }
}

impl ModuleConfig {
    /// Applies the operator's overrides to a module's manifest.
    pub(crate) fn override_manifest(
        &self,
        module: &str,
        manifest: &mut Manifest,
    ) -> Result<(), ConfigError> {
        let setting = |message: String| ConfigError::Setting {
            module: module.to_string(),
            message,
        };
        if let Some(selector) = &self.selector {
            rekon_store::LabelSelector::parse(selector)
                .map_err(|e| setting(format!("selector {selector:?} is invalid: {}", e.message)))?;
            manifest.primary_selector = Some(selector.clone()).filter(|s| !s.trim().is_empty());
        }
        if let Some(namespaces) = &self.namespaces {
            manifest.primary_namespaces = namespaces.clone();
        }
        if let Some(predicates) = &self.predicates {
            manifest.primary_predicates = predicates
                .iter()
                .map(|p| predicate(p).ok_or_else(|| setting(format!("unknown predicate {p:?} (expected generationChanged, labelsChanged, annotationsChanged or resourceVersionChanged)"))))
                .collect::<Result<_, _>>()?;
        }
        if let Some(period) = &self.resync_period {
            let parsed = go_duration(period).ok_or_else(|| {
                setting(format!(
                    "resyncPeriod {period:?} is not a duration (90s, 10m, 1h30m, 0)"
                ))
            })?;
            manifest.resync_period_ms =
                Some(u64::try_from(parsed.as_millis()).unwrap_or(u64::MAX)).filter(|ms| *ms > 0);
        }
        Ok(())
    }

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
                        name => verb_named(name).ok_or_else(|| ConfigError::Verb {
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

/// A predicate by its configuration name.
fn predicate(name: &str) -> Option<Predicate> {
    Some(match name {
        "generationChanged" => Predicate::GenerationChanged,
        "labelsChanged" => Predicate::LabelsChanged,
        "annotationsChanged" => Predicate::AnnotationsChanged,
        "resourceVersionChanged" => Predicate::ResourceVersionChanged,
        _ => return None,
    })
}

/// A duration as Go writes one (`1h30m`, `90s`, `500ms`, `0`).
pub(crate) fn go_duration(text: &str) -> Option<std::time::Duration> {
    let text = text.trim();
    if text == "0" {
        return Some(std::time::Duration::ZERO);
    }
    let mut rest = text;
    let mut total = std::time::Duration::ZERO;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit() && c != '.')?;
        let (number, tail) = rest.split_at(digits);
        let number: f64 = number.parse().ok()?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let seconds = match unit {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
        total += std::time::Duration::try_from_secs_f64(number * seconds).ok()?;
        rest = tail;
    }
    (!text.is_empty()).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn go_durations_parse_as_go_writes_them() {
        assert_eq!(go_duration("90s"), Some(Duration::from_secs(90)));
        assert_eq!(go_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(go_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(go_duration("1.5h"), Some(Duration::from_secs(5400)));
        assert_eq!(go_duration("0"), Some(Duration::ZERO));
        for bad in ["", "10", "5 minutes", "1d", "m"] {
            assert_eq!(go_duration(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn overrides_replace_what_the_manifest_says() {
        let config: ModuleConfig = serde_yaml::from_str(
            "selector: tier=prod\nnamespaces: [shop]\npredicates: [generationChanged]\nresyncPeriod: 10m\n",
        )
        .unwrap();
        let mut manifest = crate::contract::empty_manifest();
        manifest.resync_period_ms = Some(1);
        config.override_manifest("app", &mut manifest).unwrap();
        assert_eq!(manifest.primary_selector.as_deref(), Some("tier=prod"));
        assert_eq!(manifest.primary_namespaces, ["shop"]);
        assert_eq!(manifest.primary_predicates, [Predicate::GenerationChanged]);
        assert_eq!(manifest.resync_period_ms, Some(600_000));
        let never: ModuleConfig = serde_yaml::from_str("resyncPeriod: \"0\"\n").unwrap();
        never.override_manifest("app", &mut manifest).unwrap();
        assert_eq!(manifest.resync_period_ms, None);
        for bad in [
            "predicates: [sometimes]",
            "resyncPeriod: soon",
            "selector: \"a in (\"",
        ] {
            let config: ModuleConfig = serde_yaml::from_str(bad).unwrap();
            let error = config.override_manifest("app", &mut manifest).unwrap_err();
            assert!(error.to_string().starts_with("module \"app\": "), "{error}");
        }
    }
}
