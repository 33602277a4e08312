//! A Service's cluster IPs as `ValidateService` checks them
//! (`ValidateServiceClusterIPsRelatedFields`).

use serde_json::{Value, json};

use super::spec::{cluster_ips, is_headless, spec_str};
use crate::go::net;
use crate::machinery::field::{ErrorList, FieldError, Path};

/// `IsValidIPForLegacyField`, for an address given new.
pub(crate) fn ip_errors(path: &Path, ip: &str) -> ErrorList {
    if net::parse_ip(ip).is_some() {
        return ErrorList::new();
    }
    vec![FieldError::invalid(
        path,
        ip,
        "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
    )]
}

/// `ValidateServiceClusterIPsRelatedFields`.
pub(crate) fn cluster_ips_related_errors(obj: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    if spec_str(obj, "type") == "ExternalName" {
        return errors;
    }
    let ips_path = Path::new(["spec", "clusterIPs"]);
    let ip = spec_str(obj, "clusterIP");
    let ips = cluster_ips(obj);
    if !ip.is_empty() {
        if ips.is_empty() {
            errors.push(FieldError::required(&ips_path, ""));
        } else if ips[0] != ip {
            errors.push(FieldError::invalid(
                &ips_path,
                json!(ips),
                "first value must match `clusterIP`",
            ));
        }
    } else if !ips.is_empty() {
        errors.push(FieldError::invalid(
            &ips_path,
            json!(ips),
            "must be empty when `clusterIP` is not specified",
        ));
    }
    let families: Vec<String> = obj
        .pointer("/spec/ipFamilies")
        .and_then(Value::as_array)
        .map(|f| {
            f.iter()
                .map(|v| v.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    let mut seen: Vec<&str> = Vec::new();
    for (i, family) in families.iter().enumerate() {
        let at = Path::new(["spec", "ipFamilies"]).index(i);
        if family != "IPv4" && family != "IPv6" {
            errors.push(FieldError::not_supported(
                &at,
                family.as_str(),
                &["IPv4".to_string(), "IPv6".to_string()],
            ));
        }
        if seen.contains(&family.as_str()) {
            errors.push(FieldError::duplicate(&at, family.as_str()));
        }
        seen.push(family);
    }
    if let Some(policy) = obj.pointer("/spec/ipFamilyPolicy").and_then(Value::as_str)
        && !["PreferDualStack", "RequireDualStack", "SingleStack"].contains(&policy)
    {
        errors.push(FieldError::not_supported(
            &Path::new(["spec", "ipFamilyPolicy"]),
            policy,
            &[
                "PreferDualStack".to_string(),
                "RequireDualStack".to_string(),
                "SingleStack".to_string(),
            ],
        ));
    }
    let mut bad = false;
    for (i, ip) in ips.iter().enumerate() {
        if i == 0 && ip == "None" {
            if ips.len() > 1 {
                bad = true;
                errors.push(FieldError::invalid(
                    &ips_path,
                    json!(ips),
                    "'None' must be the first and only value",
                ));
            }
            continue;
        }
        let found = ip_errors(&ips_path.index(i), ip);
        bad |= !found.is_empty();
        errors.extend(found);
    }
    if ips.len() > 2 {
        errors.push(FieldError::invalid(
            &ips_path,
            json!(ips),
            "may only hold up to 2 values",
        ));
    }
    if bad {
        return errors;
    }
    if ips.len() > 1 {
        let v6 = ips.iter().filter(|ip| ip.contains(':')).count();
        if v6 != 1 {
            errors.push(FieldError::invalid(
                &ips_path,
                json!(ips),
                "may specify no more than one IP for each IP family",
            ));
        }
    }
    if !is_headless(obj) {
        for (i, ip) in ips.iter().enumerate().take(families.len()) {
            let v6 = ip.contains(':');
            if families[i] == "IPv4" && v6 {
                errors.push(FieldError::invalid(
                    &ips_path.index(i),
                    ip.as_str(),
                    format!("expected an IPv4 value as indicated by `ipFamilies[{i}]`"),
                ));
            }
            if families[i] == "IPv6" && !v6 {
                errors.push(FieldError::invalid(
                    &ips_path.index(i),
                    ip.as_str(),
                    format!("expected an IPv6 value as indicated by `ipFamilies[{i}]`"),
                ));
            }
        }
    }
    errors
}
