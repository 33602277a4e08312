//! The addresses a Service's storage assigns (`BeginCreate`,
//! `BeginUpdate` of `pkg/registry/core/service/storage`): a cluster IP and
//! node ports, kept on update, and its IP families.

use serde_json::{Map, Value, json};

use super::allocator::{Ranges, Taken};
use super::spec::{
    cluster_ips, is_headless, needs_cluster_ip, needs_cluster_ip_of_type, needs_health_check,
    needs_node_ports, node_ports_of, ports, spec_mut, spec_str,
};
use super::validate_cluster_ips::cluster_ips_related_errors;
use crate::go::net;
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::meta::status::Status;

/// `NormalizeClusterIPs`: `clusterIP` and `clusterIPs` kept in step.
fn normalize_cluster_ips(new: &mut Value, old: Option<&Value>) {
    let ip = spec_str(new, "clusterIP").to_string();
    let ips = cluster_ips(new);
    let Some(spec) = spec_mut(new) else {
        return;
    };
    let Some(old) = old else {
        if !ip.is_empty() && ips.is_empty() {
            spec.insert("clusterIPs".into(), json!([ip]));
        }
        return;
    };
    let (old_ip, old_ips) = (spec_str(old, "clusterIP"), cluster_ips(old));
    let mut ips_now = ips.clone();
    if !old_ips.is_empty() && ips.is_empty() && old_ip == ip {
        spec.insert("clusterIPs".into(), json!(old_ips));
        ips_now = old_ips.clone();
    }
    if old_ip != ip {
        let same = ips_now == old_ips;
        if !old_ip.is_empty() && ip.is_empty() {
            if same {
                spec.remove("clusterIPs");
            }
        } else if same {
            spec.insert("clusterIPs".into(), json!([ip]));
        }
    }
}

/// `patchAllocatedValues`: an update that leaves out what was allocated keeps it.
fn keep_allocated(new: &mut Value, old: &Value) {
    // (By type alone: a headless service keeps its `None` too.)
    if needs_cluster_ip_of_type(old) && needs_cluster_ip_of_type(new) {
        let (old_ip, old_ips) = (spec_str(old, "clusterIP").to_string(), cluster_ips(old));
        let empty_ip = spec_str(new, "clusterIP").is_empty();
        let empty_ips = cluster_ips(new).is_empty();
        if let Some(spec) = spec_mut(new) {
            if empty_ip {
                spec.insert("clusterIP".into(), json!(old_ip));
            }
            if empty_ips && !old_ips.is_empty() {
                spec.insert("clusterIPs".into(), json!(old_ips));
            }
        }
    }
    if needs_node_ports(old) && needs_node_ports(new) {
        let used_old: Vec<i64> = node_ports_of(old);
        let used_new: Vec<i64> = node_ports_of(new);
        let by_name: Vec<(String, i64)> = ports(old)
            .iter()
            .map(|p| {
                (
                    p.get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    p.get("nodePort").and_then(Value::as_i64).unwrap_or(0),
                )
            })
            .collect();
        if let Some(list) = new.pointer_mut("/spec/ports").and_then(Value::as_array_mut) {
            for port in list.iter_mut().filter_map(Value::as_object_mut) {
                if port.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0 {
                    continue;
                }
                let name = port.get("name").and_then(Value::as_str).unwrap_or_default();
                let previous = by_name
                    .iter()
                    .rev()
                    .find(|(n, _)| n == name)
                    .map_or(0, |(_, p)| *p);
                let used = used_old.contains(&previous) && used_new.contains(&previous);
                if previous != 0 && !used {
                    port.insert("nodePort".into(), json!(previous));
                }
            }
        }
    }
    if needs_health_check(old) && needs_health_check(new) {
        let previous = old.pointer("/spec/healthCheckNodePort").cloned();
        if new
            .pointer("/spec/healthCheckNodePort")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            == 0
            && let (Some(spec), Some(previous)) = (spec_mut(new), previous)
        {
            spec.insert("healthCheckNodePort".into(), previous);
        }
    }
}

fn invalid(kind: &str, name: &str, errors: ErrorList) -> Status {
    Status::from_field_errors("", kind, name, &errors)
}

/// What the Service storage does before validation (`BeginCreate` and
/// `BeginUpdate`): `clusterIP`/`clusterIPs` in step, the IP family fields,
/// a cluster IP and node ports given or checked against what `taken`
/// holds. A refusal here comes alone, before the other checks. A dry run
/// allocates nothing: a node port it needs is a placeholder, as the
/// port allocator's dry-run operation answers (`AllocateNext`: 32769, or
/// one more than the highest port the operation saw).
pub(crate) fn allocate(
    obj: &mut Value,
    old: Option<&Value>,
    taken: &Taken<'_>,
    ranges: &Ranges,
    dry_run: bool,
) -> Result<(), Status> {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if let Some(old) = old {
        keep_allocated(obj, old);
    }
    normalize_cluster_ips(obj, old);
    if spec_str(obj, "type") == "ExternalName" {
        return Ok(());
    }
    init_ip_families(obj, old, &name)?;
    // The cluster IP.
    let had = old.map(cluster_ips).unwrap_or_default();
    let ips = cluster_ips(obj);
    if needs_cluster_ip(obj)
        && (old.is_none() || had.is_empty() || had.iter().any(|ip| ip == "None"))
    {
        match ips.first() {
            None => {
                let ip = ranges.free_ip(taken).ok_or_else(|| {
                    Status::internal("failed to allocate a serviceIP: range is full")
                })?;
                if let Some(spec) = spec_mut(obj) {
                    spec.insert("clusterIP".into(), json!(ip));
                    spec.insert("clusterIPs".into(), json!([ip]));
                }
            }
            Some(ip) => {
                let why = match net::parse_ipv4_addr(ip) {
                    Some(addr) if !ranges.contains(addr) => {
                        Some("the provided network does not match the current range")
                    }
                    // A dry run does not check whether the address is
                    // free (the allocators' `allocate(ip, dryRun)`).
                    Some(addr) if !dry_run && taken.has_ip(addr) => {
                        Some("provided IP is already allocated")
                    }
                    _ => None,
                };
                if let Some(why) = why {
                    return Err(invalid(
                        "Service",
                        &name,
                        vec![FieldError::invalid(
                            &Path::new(["spec", "clusterIPs"]),
                            json!(ips),
                            format!("failed to allocate IP {ip}: {why}"),
                        )],
                    ));
                }
            }
        }
    }
    // Node ports.
    let mut errors = ErrorList::new();
    if needs_node_ports(obj) {
        let mut held = taken.ports();
        // The ports a dry-run operation has seen, and its next placeholder.
        let mut seen: Vec<i64> = Vec::new();
        let placeholder = |seen: &mut Vec<i64>| {
            let next = seen.iter().max().map_or(32769, |p| p + 1);
            seen.push(next);
            next
        };
        let old_ports = old.map(node_ports_of).unwrap_or_default();
        if let Some(list) = obj.pointer_mut("/spec/ports").and_then(Value::as_array_mut) {
            for (i, port) in list.iter_mut().enumerate() {
                let Some(port) = port.as_object_mut() else {
                    continue;
                };
                let asked = port.get("nodePort").and_then(Value::as_i64).unwrap_or(0);
                let at = Path::new(["spec", "ports"]).index(i).child("nodePort");
                if asked == 0 {
                    if dry_run {
                        port.insert("nodePort".into(), json!(placeholder(&mut seen)));
                    } else if let Some(free) = ranges.free_port(&held) {
                        port.insert("nodePort".into(), json!(free));
                        held.insert(free);
                    }
                    continue;
                }
                if old_ports.contains(&asked) {
                    continue;
                }
                let (low, high) = ranges.node_ports;
                if asked < i64::from(low) || asked > i64::from(high) {
                    errors.push(FieldError::invalid(
                        &at,
                        asked,
                        format!(
                            "provided port is not in the valid range. The range of valid ports is {low}-{high}"
                        ),
                    ));
                } else if held.contains(&asked) {
                    errors.push(FieldError::invalid(
                        &at,
                        asked,
                        "provided port is already allocated",
                    ));
                } else {
                    held.insert(asked);
                    seen.push(asked);
                }
            }
        }
        let health_check_wanted = needs_health_check(obj)
            && obj
                .pointer("/spec/healthCheckNodePort")
                .and_then(Value::as_i64)
                .unwrap_or(0)
                == 0;
        let free = match (health_check_wanted, dry_run) {
            (false, _) => None,
            (true, true) => Some(placeholder(&mut seen)),
            (true, false) => ranges.free_port(&held),
        };
        if let Some(free) = free
            && let Some(spec) = spec_mut(obj)
        {
            spec.insert("healthCheckNodePort".into(), json!(free));
        }
    }
    if !errors.is_empty() {
        return Err(invalid("Service", &name, errors));
    }
    Ok(())
}

/// `initIPFamilyFields` on a single-stack IPv4 cluster.
fn init_ip_families(obj: &mut Value, old: Option<&Value>, name: &str) -> Result<(), Status> {
    let policy_path = Path::new(["spec", "ipFamilyPolicy"]);
    if obj
        .pointer("/spec/ipFamilyPolicy")
        .is_none_or(Value::is_null)
    {
        let inherited = old
            .and_then(|o| o.pointer("/spec/ipFamilyPolicy"))
            .filter(|p| !p.is_null())
            .cloned();
        let selectorless = obj
            .pointer("/spec/selector")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty);
        let policy = inherited.unwrap_or_else(|| {
            if is_headless(obj) && selectorless {
                json!("RequireDualStack")
            } else {
                json!("SingleStack")
            }
        });
        if let Some(spec) = spec_mut(obj) {
            spec.insert("ipFamilyPolicy".into(), policy);
        }
    }
    let errors = cluster_ips_related_errors(obj);
    if !errors.is_empty() {
        return Err(invalid("Service", name, errors));
    }
    let policy = spec_str(obj, "ipFamilyPolicy").to_string();
    let families: Vec<Value> = obj
        .pointer("/spec/ipFamilies")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut errors = ErrorList::new();
    if policy == "SingleStack" {
        if cluster_ips(obj).len() == 2 {
            errors.push(FieldError::invalid(
                &policy_path,
                policy.as_str(),
                "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
            ));
        }
        if families.len() == 2 {
            errors.push(FieldError::invalid(
                &policy_path,
                policy.as_str(),
                "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
            ));
        }
    }
    let mut families = families;
    for (i, ip) in cluster_ips(obj).iter().enumerate() {
        if ip == "None" {
            break;
        }
        if i >= families.len() {
            if net::parse_ipv4_addr(ip).is_some() {
                families.push(json!("IPv4"));
            } else {
                errors.push(FieldError::invalid(
                    &Path::new(["spec", "clusterIPs"]).index(i),
                    json!(cluster_ips(obj)),
                    "IPv6 is not configured on this cluster",
                ));
            }
        }
    }
    if !errors.is_empty() {
        return Err(invalid("Service", name, errors));
    }
    if is_headless(obj)
        && obj
            .pointer("/spec/selector")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty)
    {
        if families.is_empty() {
            families.push(json!("IPv4"));
        }
        if families.len() < 2 && policy != "SingleStack" {
            let other = if families[0] == "IPv4" {
                "IPv6"
            } else {
                "IPv4"
            };
            families.push(json!(other));
        }
        if let Some(spec) = spec_mut(obj) {
            spec.insert("ipFamilies".into(), json!(families));
        }
        return Ok(());
    }
    if policy == "RequireDualStack" {
        errors.push(FieldError::invalid(
            &policy_path,
            policy.as_str(),
            "this cluster is not configured for dual-stack services",
        ));
    }
    for (i, family) in families.iter().enumerate() {
        if family != "IPv4" {
            errors.push(FieldError::invalid(
                &Path::new(["spec", "ipFamilies"]).index(i),
                family.clone(),
                "not configured on this cluster",
            ));
        }
    }
    if !errors.is_empty() {
        return Err(invalid("Service", name, errors));
    }
    if families.is_empty() {
        families.push(json!("IPv4"));
    }
    if let Some(spec) = spec_mut(obj) {
        spec.insert("ipFamilies".into(), json!(families));
    }
    Ok(())
}
