//! The operator's settings of a module applied to its manifest: which
//! primaries, which changes count, how often to resync, and the
//! permissions narrowed.

use super::duration::go_duration;
use super::{ConfigError, ModuleConfig};
use crate::contract::{Gvk, Manifest, Permission, Predicate, Verbs, verb_named};
use crate::names::split_api_version;

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
            rekon_rules::LabelSelector::parse(selector)
                .map_err(|e| setting(format!("selector {selector:?} is invalid: {e}")))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_replace_what_the_manifest_says() {
        let config: ModuleConfig = serde_yaml_ng::from_str(
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
        let never: ModuleConfig = serde_yaml_ng::from_str("resyncPeriod: \"0\"\n").unwrap();
        never.override_manifest("app", &mut manifest).unwrap();
        assert_eq!(manifest.resync_period_ms, None);
        for bad in [
            "predicates: [sometimes]",
            "resyncPeriod: soon",
            "selector: \"a in (\"",
        ] {
            let config: ModuleConfig = serde_yaml_ng::from_str(bad).unwrap();
            let error = config.override_manifest("app", &mut manifest).unwrap_err();
            assert!(error.to_string().starts_with("module \"app\": "), "{error}");
        }
    }
}
