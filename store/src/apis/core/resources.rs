//! Resource names and amounts (`pkg/apis/core/helper`, and the checks of
//! `validation.go` built on them): which names are standard, for quota,
//! for containers, extended, counted in whole numbers; `validateResourceName`,
//! `ValidateResourceQuotaResourceName`, `validateContainerResourceName`,
//! `ValidateResourceQuantityValue`. Shared by ResourceQuota, LimitRange,
//! PersistentVolumeClaim and a Pod's containers.

use serde_json::Value;

use crate::go::json::decode::json_kind;
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::is_qualified_name;
use crate::machinery::quantity::{ParseError, Quantity, default_resource_list};

/// `standardResources`.
const STANDARD: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];

/// `standardQuotaResources`.
const QUOTA: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "services.nodeports",
    "services.loadbalancers",
];

/// `integerResources`.
const INTEGER: &[&str] = &[
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

fn is_huge_pages(name: &str) -> bool {
    name.starts_with("hugepages-")
}

fn is_quota_huge_pages(name: &str) -> bool {
    name.starts_with("hugepages-") || name.starts_with("requests.hugepages-")
}

/// `IsNativeResource`: unprefixed, or in `kubernetes.io/`.
pub(crate) fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `IsExtendedResourceName`: `example.com/gpu`.
pub(crate) fn is_extended(name: &str) -> bool {
    if is_native(name) || name.starts_with("requests.") {
        return false;
    }
    is_qualified_name(&format!("requests.{name}")).is_empty()
}

/// `IsIntegerResourceName`.
pub(crate) fn is_integer(name: &str) -> bool {
    INTEGER.contains(&name) || is_extended(name)
}

/// `IsOvercommitAllowed`.
pub(crate) fn overcommit_allowed(name: &str) -> bool {
    is_native(name) && !is_huge_pages(name)
}

/// `validateResourceName`: a qualified name, standard when unprefixed.
pub(crate) fn name_errors(name: &str, path: &Path) -> ErrorList {
    let errors: ErrorList = is_qualified_name(name)
        .into_iter()
        .map(|message| FieldError::invalid(path, name, message))
        .collect();
    if !errors.is_empty() {
        return errors;
    }
    if !(name.contains('/') || STANDARD.contains(&name) || is_quota_huge_pages(name)) {
        return vec![FieldError::invalid(
            path,
            name,
            "must be a standard resource type or fully qualified",
        )];
    }
    errors
}

/// `ValidateResourceQuotaResourceName`.
pub(crate) fn quota_name_errors(name: &str, path: &Path) -> ErrorList {
    let mut errors = name_errors(name, path);
    if !(name.contains('/') || QUOTA.contains(&name) || is_quota_huge_pages(name)) {
        errors.push(FieldError::invalid(
            path,
            name,
            "must be a standard resource for quota",
        ));
    }
    errors
}

/// `IsStandardQuotaResourceName`.
pub(crate) fn is_quota_standard(name: &str) -> bool {
    QUOTA.contains(&name) || is_quota_huge_pages(name)
}

/// `validateContainerResourceName`.
pub(crate) fn container_name_errors(name: &str, path: &Path) -> ErrorList {
    let mut errors = name_errors(name, path);
    if !name.contains('/') {
        if !(["cpu", "memory", "ephemeral-storage"].contains(&name) || is_huge_pages(name)) {
            errors.push(FieldError::invalid(
                path,
                name,
                "must be a standard resource for containers",
            ));
        }
    } else if !is_native(name) && !is_extended(name) {
        errors.push(FieldError::invalid(
            path,
            name,
            "doesn't follow extended resource name standard",
        ));
    }
    errors
}

/// A stored quantity (already defaulted, so it parses; zero otherwise).
pub(crate) fn quantity(value: &Value) -> Quantity {
    Quantity::from_json(value).unwrap_or_else(|_| Quantity::parse("0").expect("0 parses"))
}

/// `ValidateNonnegativeQuantity`.
pub(crate) fn nonnegative_errors(value: &Quantity, path: &Path) -> ErrorList {
    if value.is_negative() {
        return vec![FieldError::invalid(
            path,
            value.text().as_str(),
            "must be greater than or equal to 0",
        )];
    }
    ErrorList::new()
}

/// `ValidateResourceQuantityValue`: not negative, whole for integer resources.
pub(crate) fn value_errors(name: &str, value: &Quantity, path: &Path) -> ErrorList {
    let mut errors = nonnegative_errors(value, path);
    if is_integer(name) && !value.is_whole_in_millis() {
        errors.push(FieldError::invalid(
            path,
            value.text().as_str(),
            "must be an integer",
        ));
    }
    errors
}

/// The entries of a `ResourceList` at `pointer` in `obj`.
pub(crate) fn list<'a>(obj: &'a Value, pointer: &str) -> Vec<(&'a String, &'a Value)> {
    obj.pointer(pointer)
        .and_then(Value::as_object)
        .map(|m| m.iter().collect())
        .unwrap_or_default()
}

/// Why a `ResourceList` at `pointer` cannot be decoded: not an object
/// (`json: cannot unmarshal ... of type v1.ResourceList`, naming `field`,
/// Go's `Struct.json.path`), or a quantity that does not parse.
pub(crate) fn list_decode_error(obj: &Value, pointer: &str, field: &str) -> Option<String> {
    let value = obj.pointer(pointer)?;
    match value {
        Value::Object(map) => map
            .values()
            .find_map(|v| Quantity::from_json(v).err())
            .map(|e: ParseError| e.to_string()),
        Value::Null => None,
        other => Some(format!(
            "json: cannot unmarshal {} into Go struct field {field} of type v1.ResourceList",
            json_kind(other)
        )),
    }
}

/// `SetDefaults_ResourceList` on the list at `pointer`, when there is one.
pub(crate) fn default_list(obj: &mut Value, pointer: &str) {
    default_resource_list(obj.pointer_mut(pointer));
}
