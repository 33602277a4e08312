//! The operator's webhook settings applied to a module's webhooks: failure
//! policy, timeout, selectors, and the namespaces they skip.

use super::{ConfigError, EXCLUDED_NAMESPACES, HostConfig, NAMESPACE_NAME_LABEL, WebhookConfig};
use crate::contract::{FailurePolicy, Webhook, Webhooks};

impl HostConfig {
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
    pub(super) fn apply(
        &self,
        module: &str,
        name: &str,
        webhook: &mut Webhook,
    ) -> Result<(), ConfigError> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let config: HostConfig = serde_yaml_ng::from_str(
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
            let webhook: WebhookConfig = serde_yaml_ng::from_str(bad).unwrap();
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
}
