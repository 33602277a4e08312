//! Role and ClusterRole (rbac.authorization.k8s.io/v1): their rules
//! (`ValidateRole`, `ValidateClusterRole`), a cluster role's aggregation
//! rule; `rules` is always written (`null` when there are none).

use serde_json::Value;

use super::validate_rules;
use crate::apis::shape::{drop_empty, drop_empty_in_selector};
use crate::apis::strategy::Rules;
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::labels::{Selector, selector_kind, validate_label_selector};
use crate::machinery::names::name_is_path_segment;

/// A Role's rules.
pub(crate) static ROLE: Rules = Rules {
    name: name_is_path_segment,
    default,
    validate: validate_role,
    validate_update: |new, _| validate_role(new),
    validate_status: None,
};

/// A ClusterRole's rules.
pub(crate) static CLUSTER_ROLE: Rules = Rules {
    name: name_is_path_segment,
    default,
    validate: validate_cluster_role,
    validate_update: |new, _| validate_cluster_role(new),
    validate_status: None,
};

/// `rules` has no `omitempty`: a role without rules shows `rules: null`,
/// and so does one with `rules: []` once stored (as protobuf, an empty
/// list comes back as none: `fieldmanager::builtin::stored`), though its
/// writer owns the empty list it sent.
fn default(role: &mut Value) {
    let Some(map) = role.as_object_mut() else {
        return;
    };
    let rules = map.entry("rules").or_insert(Value::Null);
    let rules = rules.as_array_mut();
    for rule in rules.into_iter().flatten().filter_map(Value::as_object_mut) {
        drop_empty(
            rule,
            &["apiGroups", "resources", "resourceNames", "nonResourceURLs"],
        );
    }
    let selectors = map
        .get_mut("aggregationRule")
        .and_then(|a| a.get_mut("clusterRoleSelectors"))
        .and_then(Value::as_array_mut);
    for selector in selectors.into_iter().flatten() {
        drop_empty_in_selector(Some(selector));
    }
}

fn validate_role(role: &Value) -> ErrorList {
    validate_rules(role, true)
}

fn validate_cluster_role(role: &Value) -> ErrorList {
    let mut errors = validate_rules(role, false);
    let Some(aggregation) = role.get("aggregationRule").filter(|a| !a.is_null()) else {
        return errors;
    };
    let path = Path::new(["aggregationRule", "clusterRoleSelectors"]);
    let selectors = aggregation
        .get("clusterRoleSelectors")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if selectors.is_empty() {
        errors.push(FieldError::required(
            &path,
            "at least one clusterRoleSelector required if aggregationRule is non-nil",
        ));
    }
    for (i, selector) in selectors.iter().enumerate() {
        let at = path.index(i);
        errors.extend(validate_label_selector(Some(selector), &at));
        if selector_kind(Some(selector)) == Selector::Invalid {
            errors.push(FieldError::invalid(
                &at,
                Value::Null,
                "invalid label selector.",
            ));
        }
    }
    errors
}
