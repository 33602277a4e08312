//! EndpointSlice (discovery.k8s.io/v1): each port's name and protocol
//! defaulted (`""`, `TCP`: `SetDefaults_EndpointPort` in
//! `pkg/apis/discovery/v1/defaults.go`); the address type, the ports and
//! each endpoint's addresses and hostname checked, the address type
//! immutable (`ValidateEndpointSliceCreate` and `ValidateEndpointSliceUpdate`
//! in `pkg/apis/discovery/validation/validation.go`; endpoints left as
//! they were are not checked again).
//!
//! Left out: the special ranges `ValidateEndpointIP` refuses (loopback,
//! link-local, multicast), node names, topology labels and hints.

use serde_json::{Value, json};

use crate::apis::core::service::ip_errors;
use crate::apis::strategy::Rules;
use crate::go::net;
use crate::machinery::field::{ErrorList, FieldError, Path, immutable};
use crate::machinery::names::{
    is_dns1123_label, is_dns1123_subdomain, is_qualified_name, name_is_dns_subdomain,
};
use crate::machinery::object::items;

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate,
    validate_update,
    validate_status: None,
};

/// The address types supported, sorted (`supportedAddressTypes`).
const ADDRESS_TYPES: [&str; 3] = ["FQDN", "IPv4", "IPv6"];
/// The port protocols supported, sorted (`supportedPortProtocols`).
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
const MAX_ADDRESSES: usize = 100;
const MAX_PORTS: usize = 20000;
const MAX_ENDPOINTS: usize = 1000;

/// `SetDefaults_EndpointPort`.
fn default(slice: &mut Value) {
    let ports = slice.get_mut("ports").and_then(Value::as_array_mut);
    for port in ports.into_iter().flatten().filter_map(Value::as_object_mut) {
        for (key, value) in [("name", ""), ("protocol", "TCP")] {
            if port.get(key).is_none_or(Value::is_null) {
                port.insert(key.into(), json!(value));
            }
        }
    }
}

/// `ValidateEndpointSliceCreate`.
fn validate(slice: &Value) -> ErrorList {
    let mut errors = address_type_errors(slice);
    errors.extend(port_errors(slice));
    errors.extend(endpoint_errors(slice));
    errors
}

/// `ValidateEndpointSliceUpdate`: endpoints left as they were are not
/// checked again; the address type is immutable.
fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = address_type_errors(new);
    errors.extend(port_errors(new));
    if new.get("endpoints") != old.get("endpoints") {
        errors.extend(endpoint_errors(new));
    }
    errors.extend(immutable(
        new.get("addressType"),
        old.get("addressType"),
        &Path::new(["addressType"]),
    ));
    errors
}

/// `validateAddressType`.
fn address_type_errors(slice: &Value) -> ErrorList {
    let path = Path::new(["addressType"]);
    match slice
        .get("addressType")
        .and_then(Value::as_str)
        .unwrap_or("")
    {
        "" => vec![FieldError::required(&path, "")],
        given if !ADDRESS_TYPES.contains(&given) => {
            let supported: Vec<String> = ADDRESS_TYPES.iter().map(|s| s.to_string()).collect();
            vec![FieldError::not_supported(&path, given, &supported)]
        }
        _ => ErrorList::new(),
    }
}

/// `validatePorts`: names DNS labels, each once; a supported protocol; an
/// application protocol a qualified name.
fn port_errors(slice: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let path = Path::new(["ports"]);
    let ports = items(slice, "ports");
    if ports.len() > MAX_PORTS {
        return vec![FieldError::too_many(
            &path,
            ports.len() as i64,
            MAX_PORTS as i64,
        )];
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let at = path.index(i);
        let name = port.get("name").and_then(Value::as_str).unwrap_or("");
        if !name.is_empty() {
            for message in is_dns1123_label(name) {
                errors.push(FieldError::invalid(&at.child("name"), name, message));
            }
        }
        if names.contains(&name) {
            errors.push(FieldError::duplicate(&at.child("name"), name));
        } else {
            names.push(name);
        }
        match port.get("protocol").and_then(Value::as_str) {
            None => errors.push(FieldError::required(&at.child("protocol"), "")),
            Some(protocol) if !PROTOCOLS.contains(&protocol) => {
                let supported: Vec<String> = PROTOCOLS.iter().map(|s| s.to_string()).collect();
                errors.push(FieldError::not_supported(
                    &at.child("protocol"),
                    protocol,
                    &supported,
                ));
            }
            Some(_) => {}
        }
        if let Some(protocol) = port.get("appProtocol").and_then(Value::as_str) {
            for message in is_qualified_name(protocol) {
                errors.push(FieldError::invalid(
                    &at.child("appProtocol"),
                    protocol,
                    message,
                ));
            }
        }
    }
    errors
}

/// `validateEndpoints`: each endpoint's addresses (one to a hundred, each
/// of the slice's address type) and hostname.
fn endpoint_errors(slice: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let path = Path::new(["endpoints"]);
    let endpoints = items(slice, "endpoints");
    if endpoints.len() > MAX_ENDPOINTS {
        return vec![FieldError::too_many(
            &path,
            endpoints.len() as i64,
            MAX_ENDPOINTS as i64,
        )];
    }
    let address_type = slice
        .get("addressType")
        .and_then(Value::as_str)
        .unwrap_or("");
    for (i, endpoint) in endpoints.iter().enumerate() {
        let at = path.index(i).child("addresses");
        let addresses = items(endpoint, "addresses");
        if addresses.is_empty() {
            errors.push(FieldError::required(&at, "must contain at least 1 address"));
        } else if addresses.len() > MAX_ADDRESSES {
            errors.push(FieldError::too_many(
                &at,
                addresses.len() as i64,
                MAX_ADDRESSES as i64,
            ));
        }
        for (j, address) in addresses.iter().filter_map(|a| a.as_str()).enumerate() {
            errors.extend(address_errors(address_type, address, &at, j));
        }
        if let Some(hostname) = endpoint.get("hostname").and_then(Value::as_str) {
            let at = path.index(i).child("hostname");
            for message in is_dns1123_label(hostname) {
                errors.push(FieldError::invalid(&at, hostname, message));
            }
        }
    }
    errors
}

/// One address of an endpoint, checked as its slice's type says (an
/// unknown type's are not).
fn address_errors(address_type: &str, address: &str, at: &Path, index: usize) -> ErrorList {
    let family = match address_type {
        "IPv4" | "IPv6" => address_type,
        "FQDN" => {
            return fully_qualified_domain_name_errors(&at.index(index), address);
        }
        _ => return ErrorList::new(),
    };
    let invalid = ip_errors(&at.index(index), address);
    if !invalid.is_empty() {
        return invalid;
    }
    let is_v4 = net::parse_ip(address).is_some_and(|ip| ip.is_ipv4());
    if (family == "IPv4") != is_v4 {
        let message = format!("must be an {family} address");
        return vec![FieldError::invalid(at, address, message)];
    }
    ErrorList::new()
}

/// `IsFullyQualifiedDomainName`: a DNS subdomain (a trailing dot
/// aside) of at least two labels.
fn fully_qualified_domain_name_errors(at: &Path, name: &str) -> ErrorList {
    if name.is_empty() {
        return vec![FieldError::required(at, "")];
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let invalid = is_dns1123_subdomain(name);
    if !invalid.is_empty() {
        return invalid
            .into_iter()
            .map(|message| FieldError::invalid(at, name, message))
            .collect();
    }
    if name.split('.').count() < 2 {
        return vec![FieldError::invalid(
            at,
            name,
            "should be a domain with at least two segments separated by dots",
        )];
    }
    name.split('.')
        .flat_map(|label| {
            is_dns1123_label(label)
                .into_iter()
                .map(move |message| FieldError::invalid(at, label, message))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causes(errors: ErrorList) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn ports_are_defaulted_and_addresses_checked_by_type() {
        let mut slice = json!({"addressType": "IPv4", "ports": [{"port": 80}],
            "endpoints": [{"addresses": ["10.0.0.1", "fd00::1", "nope"]}, {"addresses": []}]});
        default(&mut slice);
        assert_eq!(
            slice["ports"][0],
            json!({"port": 80, "name": "", "protocol": "TCP"})
        );
        assert_eq!(
            causes(validate(&slice)),
            [
                "endpoints[0].addresses: Invalid value: \"fd00::1\": must be an IPv4 address",
                "endpoints[0].addresses[2]: Invalid value: \"nope\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "endpoints[1].addresses: Required value: must contain at least 1 address",
            ]
        );
    }

    #[test]
    fn ports_and_domain_names_are_checked() {
        let slice = json!({"addressType": "FQDN",
            "ports": [{"name": "web", "protocol": "ICMP"}, {"name": "web", "protocol": "TCP"}],
            "endpoints": [{"addresses": ["db.example.com", "localhost"]}]});
        assert_eq!(
            causes(validate(&slice)),
            [
                "ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                "ports[1].name: Duplicate value: \"web\"",
                "endpoints[0].addresses[1]: Invalid value: \"localhost\": should be a domain with at least two segments separated by dots",
            ]
        );
    }
}
