//! NetworkPolicy (networking.k8s.io/v1): `policyTypes` defaulted from the
//! rules (`Ingress`, and `Egress` when there are egress rules), ports' `TCP`
//! (`SetDefaults_NetworkPolicy`, `SetDefaults_NetworkPolicyPort`); the
//! checks of `ValidateNetworkPolicySpec`: selectors, ports and end ports,
//! peers, ipBlocks (an update may keep the CIDRs it had), policy types.

use serde_json::{Value, json};

use super::cidr_errors;
use crate::apis::shape::{drop_empty, drop_empty_in_selector, spec_mut};
use crate::apis::strategy::Rules;
use crate::go::net::{parse_cidr_sloppy, parse_ip};
use crate::go::strconv::go_quote;
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::labels::validate_label_selector;
use crate::machinery::names::{name_is_dns_subdomain, port_name_errors, port_number_errors};

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate: |policy| validate(policy, &[]),
    validate_update: |new, old| validate(new, &cidrs(old)),
    validate_status: None,
};

/// The directions of a policy's rules: the field, its peers' field.
const DIRECTIONS: [(&str, &str); 2] = [("ingress", "from"), ("egress", "to")];

fn default(policy: &mut Value) {
    let Some(spec) = spec_mut(policy) else {
        return;
    };
    if spec.get("podSelector").is_none_or(Value::is_null) {
        spec.insert("podSelector".into(), json!({}));
    }
    let empty = |key: &str| {
        spec.get(key)
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
    };
    if empty("policyTypes") {
        let mut types = vec![json!("Ingress")];
        if !empty("egress") {
            types.push(json!("Egress"));
        }
        spec.insert("policyTypes".into(), Value::Array(types));
    }
    drop_empty_in_selector(spec.get_mut("podSelector"));
    drop_empty(spec, &["ingress", "egress"]);
    for (direction, peers) in DIRECTIONS {
        let rules = spec.get_mut(direction).and_then(Value::as_array_mut);
        for rule in rules.into_iter().flatten().filter_map(Value::as_object_mut) {
            drop_empty(rule, &["ports", peers]);
            let ports = rule.get_mut("ports").and_then(Value::as_array_mut);
            for port in ports.into_iter().flatten().filter_map(Value::as_object_mut) {
                if port.get("protocol").is_none_or(Value::is_null) {
                    port.insert("protocol".into(), json!("TCP"));
                }
            }
            let peer_list = rule.get_mut(peers).and_then(Value::as_array_mut);
            for peer in peer_list.into_iter().flatten() {
                drop_empty_in_selector(peer.get_mut("podSelector"));
                drop_empty_in_selector(peer.get_mut("namespaceSelector"));
                if let Some(block) = peer.get_mut("ipBlock").and_then(Value::as_object_mut) {
                    drop_empty(block, &["except"]);
                }
            }
        }
    }
}

/// The CIDRs of `policy`'s ipBlocks (and their exceptions): an update may
/// keep them even when they are no longer valid.
fn cidrs(policy: &Value) -> Vec<String> {
    let mut found = Vec::new();
    for (direction, peers) in DIRECTIONS {
        let rules = policy
            .pointer(&format!("/spec/{direction}"))
            .and_then(Value::as_array);
        for rule in rules.into_iter().flatten() {
            for peer in rule
                .get(peers)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(block) = peer.get("ipBlock").filter(|b| !b.is_null()) else {
                    continue;
                };
                let texts = std::iter::once(block.get("cidr")).chain(
                    block
                        .get("except")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .map(Some),
                );
                found.extend(
                    texts
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(str::to_string),
                );
            }
        }
    }
    found
}

/// The warnings of a policy (`networkPolicyWarnings`): IPv6 CIDRs not
/// written in their RFC 5952 canonical form.
pub(crate) fn warnings(policy: &Value) -> Vec<String> {
    let mut warnings = Vec::new();
    for (direction, peers) in DIRECTIONS {
        let rules = policy
            .pointer(&format!("/spec/{direction}"))
            .and_then(Value::as_array);
        for (i, rule) in rules.into_iter().flatten().enumerate() {
            let peer_list = rule.get(peers).and_then(Value::as_array);
            for (j, peer) in peer_list.into_iter().flatten().enumerate() {
                let Some(block) = peer.get("ipBlock").filter(|b| !b.is_null()) else {
                    continue;
                };
                let at = Path::new(["spec", direction])
                    .index(i)
                    .child(peers)
                    .index(j)
                    .child("ipBlock");
                let cidr = block.get("cidr").and_then(Value::as_str);
                warnings.extend(cidr.and_then(|c| canonical_warning(c, &at.child("cidr"))));
                let excepts = block.get("except").and_then(Value::as_array);
                for (k, except) in excepts.into_iter().flatten().enumerate() {
                    let text = except.as_str().unwrap_or_default();
                    warnings.extend(canonical_warning(text, &at.child("except").index(k)));
                }
            }
        }
    }
    warnings
}

/// `GetWarningsForCIDR` of a CIDR that passed validation: an IPv6 CIDR
/// written otherwise than its canonical form.
fn canonical_warning(text: &str, path: &Path) -> Option<String> {
    let (addr, bits) = text.split_once('/')?;
    let Some(std::net::IpAddr::V6(addr)) = parse_ip(addr) else {
        return None;
    };
    let canonical = format!("{addr}/{bits}");
    (canonical != text).then(|| {
        format!(
            "{path}: IPv6 CIDR value {} should be in RFC 5952 canonical format ({})",
            go_quote(text),
            go_quote(&canonical)
        )
    })
}

fn validate(policy: &Value, old_cidrs: &[String]) -> ErrorList {
    let empty = json!({});
    let spec = policy.get("spec").unwrap_or(&empty);
    let path = Path::new(["spec"]);
    let mut errors = validate_label_selector(spec.get("podSelector"), &path.child("podSelector"));
    for (direction, peers) in DIRECTIONS {
        let rules = spec.get(direction).and_then(Value::as_array);
        for (i, rule) in rules.into_iter().flatten().enumerate() {
            let at = path.child(direction).index(i);
            let ports = rule.get("ports").and_then(Value::as_array);
            for (j, port) in ports.into_iter().flatten().enumerate() {
                errors.extend(validate_port(port, &at.child("ports").index(j)));
            }
            let peer_list = rule.get(peers).and_then(Value::as_array);
            for (j, peer) in peer_list.into_iter().flatten().enumerate() {
                errors.extend(validate_peer(peer, &at.child(peers).index(j), old_cidrs));
            }
        }
    }
    let types = spec.get("policyTypes").and_then(Value::as_array);
    let types = types.map(Vec::as_slice).unwrap_or_default();
    if types.len() > 2 {
        errors.push(FieldError::invalid(
            &path.child("policyTypes"),
            Value::Array(types.to_vec()),
            "may not specify more than two policyTypes",
        ));
        return errors;
    }
    for (i, kind) in types.iter().enumerate() {
        let kind = kind.as_str().unwrap_or_default();
        if !matches!(kind, "Ingress" | "Egress") {
            errors.push(FieldError::not_supported(
                &path.child("policyTypes").index(i),
                kind,
                &["Ingress".into(), "Egress".into()],
            ));
        }
    }
    errors
}

/// `ValidateNetworkPolicyPort`.
fn validate_port(port: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    if let Some(protocol) = port.get("protocol").and_then(Value::as_str)
        && !matches!(protocol, "TCP" | "UDP" | "SCTP")
    {
        errors.push(FieldError::not_supported(
            &path.child("protocol"),
            protocol,
            &["TCP".into(), "UDP".into(), "SCTP".into()],
        ));
    }
    let end = port.get("endPort").and_then(Value::as_i64);
    match port.get("port").filter(|p| !p.is_null()) {
        Some(Value::String(name)) => {
            if let Some(end) = end {
                errors.push(FieldError::invalid(
                    &path.child("endPort"),
                    end,
                    "may not be specified when `port` is non-numeric",
                ));
            }
            for message in port_name_errors(name) {
                errors.push(FieldError::invalid(
                    &path.child("port"),
                    name.as_str(),
                    message,
                ));
            }
        }
        Some(number) => {
            let number = number.as_i64().unwrap_or_default();
            for message in port_number_errors(number) {
                errors.push(FieldError::invalid(&path.child("port"), number, message));
            }
            if let Some(end) = end {
                if end < number {
                    // The value shown is `port`'s, as the real server shows it.
                    errors.push(FieldError::invalid(
                        &path.child("endPort"),
                        number,
                        "must be greater than or equal to `port`",
                    ));
                }
                for message in port_number_errors(end) {
                    errors.push(FieldError::invalid(&path.child("endPort"), end, message));
                }
            }
        }
        None => {
            if let Some(end) = end {
                errors.push(FieldError::invalid(
                    &path.child("endPort"),
                    end,
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
    errors
}

/// `ValidateNetworkPolicyPeer`: selectors, or one ipBlock alone.
fn validate_peer(peer: &Value, path: &Path, old_cidrs: &[String]) -> ErrorList {
    let mut errors = ErrorList::new();
    let set = |key: &str| peer.get(key).filter(|v| !v.is_null());
    let mut count = 0;
    for key in ["podSelector", "namespaceSelector"] {
        if let Some(selector) = set(key) {
            count += 1;
            errors.extend(validate_label_selector(Some(selector), &path.child(key)));
        }
    }
    if let Some(block) = set("ipBlock") {
        count += 1;
        errors.extend(validate_ip_block(block, &path.child("ipBlock"), old_cidrs));
    }
    if count == 0 {
        errors.push(FieldError::required(path, "must specify a peer"));
    } else if count > 1 && set("ipBlock").is_some() {
        errors.push(FieldError::forbidden(
            path,
            "may not specify both ipBlock and another peer",
        ));
    }
    errors
}

/// `ValidateIPBlock`: a CIDR, and exceptions strictly inside it.
fn validate_ip_block(block: &Value, path: &Path, old_cidrs: &[String]) -> ErrorList {
    let mut errors = ErrorList::new();
    let cidr = block
        .get("cidr")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if cidr.is_empty() {
        errors.push(FieldError::required(&path.child("cidr"), ""));
        return errors;
    }
    let checked = |text: &str, at: &Path| -> ErrorList {
        if old_cidrs.iter().any(|old| old == text) {
            return ErrorList::new();
        }
        cidr_errors(text)
            .into_iter()
            .map(|message| FieldError::invalid(at, text, message))
            .collect()
    };
    errors.extend(checked(cidr, &path.child("cidr")));
    let Some(network) = parse_cidr_sloppy(cidr) else {
        return errors;
    };
    let excepts = block.get("except").and_then(Value::as_array);
    for (i, except) in excepts.into_iter().flatten().enumerate() {
        let text = except.as_str().unwrap_or_default();
        let at = path.child("except").index(i);
        errors.extend(checked(text, &at));
        let Some(inner) = parse_cidr_sloppy(text) else {
            continue;
        };
        if !network.contains_cidr(&inner) || network.bits >= inner.bits {
            errors.push(FieldError::invalid(
                &at,
                text,
                "must be a strict subset of `cidr`",
            ));
        }
    }
    errors
}
