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

use crate::contract::verb_named;
use crate::contract::{
    FailurePolicy, Gvk, Manifest, Permission, Predicate, Verbs, Webhook, Webhooks,
};
use crate::names::split_api_version;

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
}

/// When a shadow is promoted or dropped on its own (`modules.<name>.policy`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyConfig {
    /// Promote the shadow once this many of its reconciles in a row agree
    /// with the serving version's.
    pub promote_after: Option<u64>,
    /// Drop the shadow at its first difference.
    #[serde(default)]
    pub abort_on_difference: bool,
    /// Drop the shadow when more than this share (0 to 1) of its
    /// reconciles fail, once it has made at least [`MIN_JUDGED`].
    pub abort_error_rate: Option<f64>,
}

/// Shadowed reconciles before an error rate is judged.
pub const MIN_JUDGED: u64 = 20;

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
            serde_yaml::from_str(&text).map_err(|source| ConfigError::Parse {
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

    /// Applies the operator's webhook settings and the namespace exclusion
    /// to the webhooks of `module`. Settings naming a webhook the module
    /// does not declare are reported and skipped.
    pub(crate) fn override_webhooks(
        &self,
        module: &str,
        webhooks: &mut Webhooks,
    ) -> Result<(), ConfigError> {
        let settings = self.modules.get(module);
        for name in settings.iter().flat_map(|s| s.webhooks.keys()) {
            let declared = webhooks
                .mutating
                .iter()
                .chain(&webhooks.validating)
                .any(|w| &w.name == name);
            if !declared {
                tracing::warn!(module, webhook = %name, "the configuration names a webhook the module does not declare");
            }
        }
        for webhook in webhooks.mutating.iter_mut().chain(&mut webhooks.validating) {
            let own = settings.and_then(|s| s.webhooks.get(&webhook.name));
            if let Some(own) = own {
                own.apply(module, &webhook.name.clone(), webhook)?;
            }
            let excluded = own
                .and_then(|w| w.exclude_namespaces.clone())
                .or_else(|| settings.and_then(|s| s.exclude_namespaces.clone()))
                .or_else(|| self.exclude_namespaces.clone())
                .unwrap_or_else(|| {
                    EXCLUDED_NAMESPACES
                        .iter()
                        .map(|n| n.to_string())
                        .chain(self.namespace.clone())
                        .collect()
                });
            exclude_namespaces(webhook, &excluded);
        }
        Ok(())
    }
}

/// Adds `kubernetes.io/metadata.name notin (excluded)` to the webhook's
/// namespace selector, unless the selector already names that label (the
/// module or the operator decided which namespaces) or nothing is excluded.
fn exclude_namespaces(webhook: &mut Webhook, excluded: &[String]) {
    let selector = webhook.namespace_selector.as_deref().unwrap_or_default();
    let decided = rekon_rules::LabelSelector::parse(selector)
        .is_ok_and(|s| s.keys().any(|k| k == NAMESPACE_NAME_LABEL));
    let mut excluded: Vec<&str> = excluded.iter().map(String::as_str).collect();
    excluded.sort_unstable();
    excluded.dedup();
    if decided || excluded.is_empty() {
        return;
    }
    let exclusion = format!("{NAMESPACE_NAME_LABEL} notin ({})", excluded.join(","));
    webhook.namespace_selector = Some(if selector.trim().is_empty() {
        exclusion
    } else {
        format!("{selector},{exclusion}")
    });
}

impl WebhookConfig {
    /// Applies these settings to `webhook` (named `name`, of `module`).
    fn apply(&self, module: &str, name: &str, webhook: &mut Webhook) -> Result<(), ConfigError> {
        let setting = |message: String| ConfigError::Setting {
            module: module.to_string(),
            message: format!("webhook {name:?}: {message}"),
        };
        if let Some(policy) = &self.failure_policy {
            webhook.failure_policy = match policy.as_str() {
                "Fail" => FailurePolicy::Fail,
                "Ignore" => FailurePolicy::Ignore,
                other => {
                    return Err(setting(format!(
                        "failurePolicy {other:?} is neither Fail nor Ignore"
                    )));
                }
            };
        }
        if let Some(timeout) = self.timeout_seconds {
            if !(1..=30).contains(&timeout) {
                return Err(setting(format!(
                    "timeoutSeconds must be 1 to 30, not {timeout}"
                )));
            }
            webhook.timeout_seconds = Some(timeout);
        }
        for (field, given, target) in [
            (
                "namespaceSelector",
                &self.namespace_selector,
                &mut webhook.namespace_selector,
            ),
            (
                "objectSelector",
                &self.object_selector,
                &mut webhook.object_selector,
            ),
        ] {
            if let Some(selector) = given {
                rekon_rules::LabelSelector::parse(selector)
                    .map_err(|e| setting(format!("{field} {selector:?} is invalid: {e}")))?;
                *target = Some(selector.clone()).filter(|s| !s.trim().is_empty());
            }
        }
        Ok(())
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

    fn webhooks(selector: Option<&str>) -> Webhooks {
        let webhook = |name: &str| Webhook {
            name: name.into(),
            namespace_selector: selector.map(str::to_string),
            ..crate::contract::empty_webhook()
        };
        Webhooks {
            validating: vec![webhook("validate-apps")],
            mutating: vec![webhook("default-apps")],
            conversions: Vec::new(),
        }
    }

    #[test]
    fn webhooks_leave_the_system_namespaces_and_rekons_alone_by_default() {
        let config = HostConfig::default().with_namespace(Some("rekon-system".into()));
        let mut declared = webhooks(None);
        config.override_webhooks("app", &mut declared).unwrap();
        for webhook in declared.validating.iter().chain(&declared.mutating) {
            assert_eq!(
                webhook.namespace_selector.as_deref(),
                Some(
                    "kubernetes.io/metadata.name notin (kube-node-lease,kube-public,kube-system,rekon-system)"
                )
            );
        }
        // The module's own selector is kept, the exclusion added to it.
        let mut declared = webhooks(Some("env=prod"));
        HostConfig::default()
            .override_webhooks("app", &mut declared)
            .unwrap();
        assert_eq!(
            declared.validating[0].namespace_selector.as_deref(),
            Some(
                "env=prod,kubernetes.io/metadata.name notin (kube-node-lease,kube-public,kube-system)"
            )
        );
        // A selector on the namespace's name decides alone.
        let mut declared = webhooks(Some("kubernetes.io/metadata.name in (kube-system)"));
        HostConfig::default()
            .override_webhooks("app", &mut declared)
            .unwrap();
        assert_eq!(
            declared.validating[0].namespace_selector.as_deref(),
            Some("kubernetes.io/metadata.name in (kube-system)")
        );
    }

    #[test]
    fn the_operator_sets_each_webhooks_policy_timeout_selectors_and_exclusions() {
        let config: HostConfig = serde_yaml::from_str(
            "excludeNamespaces: [ops]\n\
             modules:\n\
             \x20 app:\n\
             \x20   webhooks:\n\
             \x20     validate-apps:\n\
             \x20       failurePolicy: Ignore\n\
             \x20       timeoutSeconds: 5\n\
             \x20       objectSelector: tier=fe\n\
             \x20       excludeNamespaces: []\n",
        )
        .unwrap();
        let mut declared = webhooks(None);
        config.override_webhooks("app", &mut declared).unwrap();
        let validate = &declared.validating[0];
        assert_eq!(validate.failure_policy, FailurePolicy::Ignore);
        assert_eq!(validate.timeout_seconds, Some(5));
        assert_eq!(validate.object_selector.as_deref(), Some("tier=fe"));
        assert_eq!(
            validate.namespace_selector, None,
            "an empty list excludes nothing"
        );
        let default = &declared.mutating[0];
        assert_eq!(default.failure_policy, FailurePolicy::Fail);
        assert_eq!(
            default.namespace_selector.as_deref(),
            Some("kubernetes.io/metadata.name notin (ops)"),
            "the top-level list replaces the default one"
        );
        for bad in [
            "failurePolicy: Sometimes",
            "timeoutSeconds: 31",
            "namespaceSelector: \"a in (\"",
        ] {
            let webhook: WebhookConfig = serde_yaml::from_str(bad).unwrap();
            let error = webhook
                .apply(
                    "app",
                    "validate-apps",
                    &mut crate::contract::empty_webhook(),
                )
                .unwrap_err();
            assert!(
                error
                    .to_string()
                    .starts_with("module \"app\": webhook \"validate-apps\": "),
                "{error}"
            );
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
