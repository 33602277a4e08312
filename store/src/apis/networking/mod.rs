//! The networking group (`pkg/apis/networking`): one file per kind, and
//! what its kinds share with nothing else: wildcard host
//! names, and IP addresses and CIDRs read as `k8s.io/utils/net` reads them
//! (`ParseIPSloppy`, `ParseCIDRSloppy`: IPv4 octets with leading zeros
//! allowed).

pub(crate) mod ingress;
pub(crate) mod ingressclass;
pub(crate) mod networkpolicy;

use serde_json::Value;

use crate::go::net;
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::is_dns1123_subdomain;
use crate::machinery::names::required_path_segment;

/// `validateIngressTypedLocalObjectReference` (an Ingress's resource
/// backend) and the same first checks of an IngressClass's parameters: a
/// DNS subdomain group when given, a kind and a name.
fn validate_typed_reference(reference: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    if let Some(group) = reference.get("apiGroup").and_then(Value::as_str) {
        for message in is_dns1123_subdomain(group) {
            errors.push(FieldError::invalid(&path.child("apiGroup"), group, message));
        }
    }
    for key in ["kind", "name"] {
        let value = reference
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default();
        errors.extend(required_path_segment(value, &path.child(key)));
    }
    errors
}

/// `IsWildcardDNS1123Subdomain`: `*.` and a DNS subdomain.
fn wildcard_subdomain_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 253 {
        errors.push("must be no more than 253 characters".to_string());
    }
    let valid = value
        .strip_prefix("*.")
        .is_some_and(|rest| is_dns1123_subdomain(rest).is_empty());
    if !valid {
        errors.push(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                .to_string(),
        );
    }
    errors
}

/// `IsValidCIDRForLegacyField` with strict validation (on since 1.33): a
/// CIDR that parses, in canonical digits, of an address without bits past
/// its prefix; the words of each refusal.
fn cidr_errors(text: &str) -> Vec<String> {
    let Some(cidr) = net::parse_cidr_sloppy(text) else {
        return vec!["must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)".to_string()];
    };
    let (addr, bits) = text.split_once('/').unwrap_or_default();
    let strict = net::parse_ip(addr).is_some() && (bits.len() == 1 || !bits.starts_with('0'));
    if !strict {
        vec!["must not have leading 0s in IP or prefix length".to_string()]
    } else if net::is_4_in_6(&cidr.addr) {
        vec!["must not have an IPv4-mapped IPv6 address".to_string()]
    } else if cidr.has_host_bits() {
        vec!["must not have bits set beyond the prefix length".to_string()]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidrs_read_as_the_real_server_reads_them() {
        assert!(cidr_errors("10.0.0.0/8").is_empty());
        assert!(cidr_errors("fd00::/8").is_empty());
        assert_eq!(
            cidr_errors("10.0.0.0/33"),
            ["must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"]
        );
        assert_eq!(
            cidr_errors("010.0.0.0/8"),
            ["must not have leading 0s in IP or prefix length"]
        );
        assert_eq!(
            cidr_errors("10.0.0.0/08"),
            ["must not have leading 0s in IP or prefix length"]
        );
        assert_eq!(
            cidr_errors("10.1.2.3/8"),
            ["must not have bits set beyond the prefix length"]
        );
        let within = net::parse_cidr_sloppy("10.0.0.0/8").unwrap();
        assert!(within.contains_cidr(&net::parse_cidr_sloppy("10.1.0.0/16").unwrap()));
        assert!(!within.contains_cidr(&net::parse_cidr_sloppy("192.168.0.0/16").unwrap()));
        assert!(!within.contains_cidr(&net::parse_cidr_sloppy("10.0.0.0/4").unwrap()));
        assert_eq!(net::parse_ip_sloppy("010.1.2.3"), "10.1.2.3".parse().ok());
        assert!(wildcard_subdomain_errors("*.example.com").is_empty());
        assert_eq!(wildcard_subdomain_errors("foo.*.com").len(), 1);
    }
}
