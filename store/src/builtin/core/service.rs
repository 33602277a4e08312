//! Service (v1): its defaults (`SetDefaults_Service`), the addresses its
//! storage assigns (a cluster IP from the service range, node ports from
//! the node-port range, kept on update, free again once the Service is
//! gone), and its validation (`ValidateService`, `ValidateServiceUpdate`).
//!
//! Allocation reads the Services stored, so nothing is held apart from
//! them: an address is taken while a Service holds it. Like the real
//! allocators, dynamic addresses come from above a small static band left
//! for addresses asked for by name (a 16th of the addresses, 16 to 256: the
//! first 16 of a /24; a 32nd of the ports, 16 to 128: 30000-30085);
//! unlike them, the lowest free address is picked, not a random one.
//!
//! Left out: IPv6 and dual-stack ranges (a cluster has one IPv4 range),
//! `trafficDistribution` values, the CIDRs of `loadBalancerSourceRanges`
//! and its annotation, the warnings about address forms (leading zeros),
//! the topology annotations, a load balancer's status checks.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr};

use serde_json::{Map, Value, json};

use super::super::Rules;
use crate::api::status::Status;
use crate::go::json::encode::go_json;
use crate::go::net;
use crate::machinery::field::{ErrorList, ErrorType, FieldError, Path};
use crate::machinery::names::{
    is_dns1123_label, is_dns1123_subdomain, is_qualified_name, name_is_dns_label,
};
use crate::machinery::objectmeta::validate_labels;
use crate::resource::info::ResourceInfo;

pub(crate) static RULES: Rules = Rules {
    // `RelaxedServiceNameValidation` is on in 1.36: a DNS label.
    name: name_is_dns_label,
    default,
    validate,
    validate_update,
    validate_status: None,
};

fn spec_str<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.pointer(&format!("/spec/{key}"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn ports(obj: &Value) -> &[Value] {
    obj.pointer("/spec/ports")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn cluster_ips(obj: &Value) -> Vec<String> {
    obj.pointer("/spec/clusterIPs")
        .and_then(Value::as_array)
        .map(|ips| {
            ips.iter()
                .map(|ip| ip.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn is_headless(obj: &Value) -> bool {
    spec_str(obj, "clusterIP") == "None"
}

/// `service.ExternallyAccessible`.
fn externally_accessible(obj: &Value) -> bool {
    match spec_str(obj, "type") {
        "LoadBalancer" | "NodePort" => true,
        "ClusterIP" => obj
            .pointer("/spec/externalIPs")
            .and_then(Value::as_array)
            .is_some_and(|ips| !ips.is_empty()),
        _ => false,
    }
}

/// `service.NeedsHealthCheck`.
fn needs_health_check(obj: &Value) -> bool {
    spec_str(obj, "type") == "LoadBalancer" && spec_str(obj, "externalTrafficPolicy") == "Local"
}

fn needs_cluster_ip(obj: &Value) -> bool {
    spec_str(obj, "type") != "ExternalName" && !is_headless(obj)
}

fn needs_node_ports(obj: &Value) -> bool {
    match spec_str(obj, "type") {
        "NodePort" => true,
        "LoadBalancer" => obj.pointer("/spec/allocateLoadBalancerNodePorts") != Some(&json!(false)),
        _ => false,
    }
}

/// `PrepareForCreate`: a new Service starts with an empty status.
pub(crate) fn prepare_create(obj: &mut Value) {
    if let Some(root) = obj.as_object_mut() {
        root.insert("status".into(), json!({"loadBalancer": {}}));
    }
}

/// `PrepareForUpdate`'s `dropTypeDependentFields`: what a change of type
/// leaves behind goes, when the client left it as it was (the cluster IP
/// and IP families leaving ClusterIP, node ports leaving NodePort and
/// LoadBalancer, the external traffic policy, a load balancer's status).
pub(crate) fn prepare_update(new: &mut Value, old: &Value) {
    let same = |new: &Value, key: &str| {
        new.pointer(&format!("/spec/{key}")) == old.pointer(&format!("/spec/{key}"))
    };
    let view = new.clone();
    let drop_cluster_ip = needs_cluster_ip_of_type(old) && !needs_cluster_ip_of_type(&view);
    let same_ips = same(&view, "clusterIP") && same(&view, "clusterIPs");
    let same_families = same(&view, "ipFamilies");
    let same_policy = same(&view, "ipFamilyPolicy");
    let node_port_types = |o: &Value| matches!(spec_str(o, "type"), "NodePort" | "LoadBalancer");
    let old_ports = node_ports_of_ports(old);
    let drop_node_ports = node_port_types(old)
        && !node_port_types(&view)
        && node_ports_of_ports(&view)
            .iter()
            .all(|p| old_ports.contains(p));
    let drop_health =
        needs_health_check(old) && !needs_health_check(&view) && same(&view, "healthCheckNodePort");
    let drop_allocate = spec_str(old, "type") == "LoadBalancer"
        && spec_str(&view, "type") != "LoadBalancer"
        && old.pointer("/spec/allocateLoadBalancerNodePorts").is_some()
        && same(&view, "allocateLoadBalancerNodePorts");
    let drop_external = externally_accessible(old)
        && !externally_accessible(&view)
        && same(&view, "externalTrafficPolicy");
    let load_balancer = spec_str(&view, "type") == "LoadBalancer";
    if let Some(spec) = spec_mut(new) {
        if drop_cluster_ip {
            if same_ips {
                spec.remove("clusterIP");
                spec.remove("clusterIPs");
            }
            if same_families {
                spec.remove("ipFamilies");
            }
            if same_policy {
                spec.remove("ipFamilyPolicy");
            }
        }
        if drop_node_ports && let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut)
        {
            for port in ports.iter_mut().filter_map(Value::as_object_mut) {
                port.remove("nodePort");
            }
        }
        if drop_health {
            spec.remove("healthCheckNodePort");
        }
        if drop_allocate {
            spec.remove("allocateLoadBalancerNodePorts");
        }
        if drop_external {
            spec.remove("externalTrafficPolicy");
        }
    }
    if !load_balancer && let Some(root) = new.as_object_mut() {
        root.insert("status".into(), json!({"loadBalancer": {}}));
    }
}

/// `needsClusterIP` of the strategy: any type but ExternalName.
fn needs_cluster_ip_of_type(obj: &Value) -> bool {
    spec_str(obj, "type") != "ExternalName"
}

fn node_ports_of_ports(service: &Value) -> Vec<i64> {
    ports(service)
        .iter()
        .filter_map(|p| p.get("nodePort").and_then(Value::as_i64))
        .filter(|p| *p != 0)
        .collect()
}

/// `SetDefaults_Service`.
fn default(obj: &mut Value) {
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    let Some(spec) = root.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if spec
        .get("sessionAffinity")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .is_empty()
    {
        spec.insert("sessionAffinity".into(), json!("None"));
    }
    match spec.get("sessionAffinity").and_then(Value::as_str) {
        Some("None") => {
            spec.remove("sessionAffinityConfig");
        }
        Some("ClientIP")
            if spec
                .get("sessionAffinityConfig")
                .and_then(|c| c.pointer("/clientIP/timeoutSeconds"))
                .is_none_or(Value::is_null) =>
        {
            spec.insert(
                "sessionAffinityConfig".into(),
                json!({"clientIP": {"timeoutSeconds": 10800}}),
            );
        }
        _ => {}
    }
    if spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .is_empty()
    {
        spec.insert("type".into(), json!("ClusterIP"));
    }
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            if port
                .get("protocol")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .is_empty()
            {
                port.insert("protocol".into(), json!("TCP"));
            }
            let target = port.get("targetPort");
            if target.is_none_or(|t| t.is_null() || *t == json!(0) || *t == json!("")) {
                let number = port.get("port").cloned().unwrap_or(json!(0));
                port.insert("targetPort".into(), number);
            }
        }
    }
    let kind = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let view = json!({"spec": Value::Object(spec.clone())});
    if externally_accessible(&view)
        && spec
            .get("externalTrafficPolicy")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .is_empty()
    {
        spec.insert("externalTrafficPolicy".into(), json!("Cluster"));
    }
    if spec.get("internalTrafficPolicy").is_none_or(Value::is_null)
        && matches!(kind.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP")
    {
        spec.insert("internalTrafficPolicy".into(), json!("Cluster"));
    }
    if kind == "LoadBalancer"
        && spec
            .get("allocateLoadBalancerNodePorts")
            .is_none_or(Value::is_null)
    {
        spec.insert("allocateLoadBalancerNodePorts".into(), json!(true));
    }
    // Read back without it (`defaultOnReadInternalTrafficPolicy`).
    if kind == "ExternalName" {
        spec.remove("internalTrafficPolicy");
    }
}

/// `GetWarningsForService`: fields a Service's type or headlessness makes
/// ignored, and deprecated ones (the address-form warnings left out).
pub(crate) fn warnings(obj: &Value) -> Vec<String> {
    let mut warnings = Vec::new();
    let kind = spec_str(obj, "type");
    let external_ips = obj
        .pointer("/spec/externalIPs")
        .and_then(Value::as_array)
        .is_some_and(|ips| !ips.is_empty());
    let headless = kind == "ClusterIP" && is_headless(obj);
    if headless {
        if !spec_str(obj, "loadBalancerIP").is_empty() {
            warnings.push("spec.loadBalancerIP is ignored for headless services".to_string());
        }
        if external_ips {
            warnings.push("spec.externalIPs is ignored for headless services".to_string());
        }
        if spec_str(obj, "sessionAffinity") != "None" {
            warnings.push("spec.SessionAffinity is ignored for headless services".to_string());
        }
    }
    if external_ips && !headless && kind != "ExternalName" {
        warnings.push(
            "spec.externalIPs is deprecated and may no longer be implemented in some clusters"
                .to_string(),
        );
    }
    if kind == "ExternalName" && external_ips {
        warnings.push("spec.externalIPs is ignored when spec.type is \"ExternalName\"".to_string());
    }
    if kind != "ExternalName" && !spec_str(obj, "externalName").is_empty() {
        warnings.push(
            "spec.externalName is ignored when spec.type is not \"ExternalName\"".to_string(),
        );
    }
    if spec_str(obj, "trafficDistribution") == "PreferClose" {
        warnings.push(
            "spec.trafficDistribution: \"PreferClose\" is deprecated; use \"PreferSameZone\""
                .to_string(),
        );
    }
    warnings
}

/// The service range and node-port range addresses come from.
#[derive(Clone, Debug)]
pub(crate) struct Ranges {
    /// First address and prefix length of the service range.
    pub network: (Ipv4Addr, u8),
    /// The node-port range, both ends included.
    pub node_ports: (u16, u16),
}

impl Ranges {
    /// Reads `10.0.0.0/24`-style ranges (IPv4 only); the defaults when unreadable.
    pub(crate) fn new(cidr: &str, node_ports: (u16, u16)) -> Ranges {
        let parsed = net::parse_cidr(cidr).and_then(|c| match c.addr {
            IpAddr::V4(ip) if c.bits <= 30 => Some((ip, c.bits)),
            _ => None,
        });
        let network = parsed.unwrap_or((Ipv4Addr::new(10, 0, 0, 0), 24));
        Ranges {
            network,
            node_ports,
        }
    }

    /// The usable addresses (network and broadcast addresses left out).
    fn addresses(&self) -> (u32, u32) {
        let (ip, bits) = self.network;
        let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
        let base = u32::from(ip) & mask;
        (base + 1, (base | !mask) - 1)
    }

    fn contains(&self, ip: Ipv4Addr) -> bool {
        let (first, last) = self.addresses();
        (first..=last).contains(&u32::from(ip))
    }

    /// An address nobody holds: above the static band first, the lowest
    /// free one.
    fn free_ip(&self, taken: &Taken) -> Option<String> {
        let (first, last) = self.addresses();
        let size = last - first + 1;
        let band = (size / 16).clamp(16, 256).min(size);
        taken
            .lowest_free_ip(first + band, last)
            .or_else(|| taken.lowest_free_ip(first, first + band - 1))
            .map(|n| Ipv4Addr::from(n).to_string())
    }

    /// A node port nobody holds: above the static band first.
    fn free_port(&self, held: &BTreeSet<i64>) -> Option<i64> {
        let (first, last) = (i64::from(self.node_ports.0), i64::from(self.node_ports.1));
        let size = last - first + 1;
        let band = (size / 32).clamp(16, 128).min(size);
        lowest_free(held, &[], first + band, last)
            .or_else(|| lowest_free(held, &[], first, first + band - 1))
    }
}

/// The lowest of `from..=to` that `taken` does not hold (or `own` does):
/// a walk of the taken ones in order, to the first gap.
fn lowest_free<T>(taken: &BTreeSet<T>, own: &[T], from: T, to: T) -> Option<T>
where
    T: Copy + Ord + std::ops::Add<Output = T> + From<u8>,
{
    if from > to {
        return None;
    }
    let mut next = from;
    for &held in taken.range(from..=to) {
        if held > next || own.contains(&held) {
            break;
        }
        if held == to {
            return None;
        }
        next = held + T::from(1);
    }
    Some(next).filter(|n| *n <= to)
}

/// Whether `res` is the core group's Service.
pub(crate) fn is_service(res: &ResourceInfo) -> bool {
    res.custom.is_none() && res.group.is_empty() && res.kind == "Service"
}

/// The addresses every stored Service holds, kept by the store as Services
/// are written (`Inner::services`), so that an allocation reads no Service.
#[derive(Debug, Default)]
pub(crate) struct Held {
    ips: BTreeSet<u32>,
    ports: BTreeSet<i64>,
    /// For a search from an address, the address below which every one is
    /// held (so that the next search starts there, not at the bottom).
    ip_hints: std::sync::Arc<std::sync::Mutex<BTreeMap<u32, u32>>>,
}

impl Held {
    /// What `services` hold.
    pub(crate) fn of<'a>(services: impl Iterator<Item = &'a Value>) -> Held {
        let mut held = Held::default();
        for service in services {
            held.add(service);
        }
        held
    }

    /// `service` holds its addresses.
    pub(crate) fn add(&mut self, service: &Value) {
        self.ips.extend(ip_numbers(service));
        self.ports.extend(node_ports_of(service));
    }

    /// `service` holds its addresses no more.
    pub(crate) fn remove(&mut self, service: &Value) {
        let freed = ip_numbers(service);
        if let Ok(mut hints) = self.ip_hints.lock() {
            for (from, below) in hints.iter_mut() {
                for ip in &freed {
                    if *from <= *ip && *ip < *below {
                        *below = *ip;
                    }
                }
            }
        }
        for ip in freed {
            self.ips.remove(&ip);
        }
        for port in node_ports_of(service) {
            self.ports.remove(&port);
        }
    }
}

/// A Service's cluster IPs as numbers (IPv4; `None` and others left out).
fn ip_numbers(service: &Value) -> Vec<u32> {
    cluster_ips(service)
        .iter()
        .filter_map(|ip| net::parse_ipv4_addr(ip))
        .map(u32::from)
        .collect()
}

/// What other Services hold: what every Service holds but the one being
/// written (its own addresses stay its own on update).
pub(crate) struct Taken<'a> {
    held: &'a Held,
    own_ips: Vec<u32>,
    own_ports: Vec<i64>,
}

impl<'a> Taken<'a> {
    /// What Services other than `own` (the stored version of the one being
    /// written, if any) hold.
    pub(crate) fn besides(held: &'a Held, own: Option<&Value>) -> Taken<'a> {
        Taken {
            held,
            own_ips: own.map(ip_numbers).unwrap_or_default(),
            own_ports: own.map(node_ports_of).unwrap_or_default(),
        }
    }

    /// The lowest address of `from..=to` free for this Service.
    fn lowest_free_ip(&self, from: u32, to: u32) -> Option<u32> {
        let mut hints = self.held.ip_hints.lock().ok();
        let start = hints
            .as_ref()
            .and_then(|h| h.get(&from).copied())
            .unwrap_or(from)
            .max(from);
        // Below the hint every address is held: its own are the free ones.
        if let Some(own) = self
            .own_ips
            .iter()
            .filter(|ip| (from..start).contains(*ip))
            .min()
        {
            return Some(*own);
        }
        let found = lowest_free(&self.held.ips, &self.own_ips, start, to);
        if let Some(hints) = hints.as_mut() {
            hints.insert(from, found.unwrap_or(to.saturating_add(1)).max(start));
        }
        found
    }

    fn has_ip(&self, ip: Ipv4Addr) -> bool {
        let n = u32::from(ip);
        self.held.ips.contains(&n) && !self.own_ips.contains(&n)
    }

    fn ports(&self) -> BTreeSet<i64> {
        let mut ports = self.held.ports.clone();
        for port in &self.own_ports {
            ports.remove(port);
        }
        ports
    }
}

fn node_ports_of(service: &Value) -> Vec<i64> {
    let mut held = node_ports_of_ports(service);
    if let Some(port) = service
        .pointer("/spec/healthCheckNodePort")
        .and_then(Value::as_i64)
        && port != 0
    {
        held.push(port);
    }
    held
}

fn spec_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    obj.get_mut("spec").and_then(Value::as_object_mut)
}

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
/// holds. A refusal here comes alone, before the other checks.
pub(crate) fn allocate(
    obj: &mut Value,
    old: Option<&Value>,
    taken: &Taken<'_>,
    ranges: &Ranges,
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
                    Some(addr) if taken.has_ip(addr) => Some("provided IP is already allocated"),
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
        let old_ports = old.map(node_ports_of).unwrap_or_default();
        if let Some(list) = obj.pointer_mut("/spec/ports").and_then(Value::as_array_mut) {
            for (i, port) in list.iter_mut().enumerate() {
                let Some(port) = port.as_object_mut() else {
                    continue;
                };
                let asked = port.get("nodePort").and_then(Value::as_i64).unwrap_or(0);
                let at = Path::new(["spec", "ports"]).index(i).child("nodePort");
                if asked == 0 {
                    if let Some(free) = ranges.free_port(&held) {
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
                }
            }
        }
        if needs_health_check(obj)
            && obj
                .pointer("/spec/healthCheckNodePort")
                .and_then(Value::as_i64)
                .unwrap_or(0)
                == 0
            && let Some(free) = ranges.free_port(&held)
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

/// `IsValidIPForLegacyField`, for an address given new.
fn ip_errors(path: &Path, ip: &str) -> ErrorList {
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
fn cluster_ips_related_errors(obj: &Value) -> ErrorList {
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

fn port_number_errors(path: &Path, value: &Value) -> ErrorList {
    let n = value.as_i64().unwrap_or(0);
    crate::machinery::names::port_number_errors(n)
        .into_iter()
        .map(|message| FieldError::invalid(path, n, message))
        .collect()
}

/// `ValidatePortNumOrName`.
fn port_num_or_name_errors(path: &Path, value: Option<&Value>) -> ErrorList {
    match value {
        Some(Value::String(name)) => crate::machinery::names::port_name_errors(name)
            .into_iter()
            .map(|message| FieldError::invalid(path, name.as_str(), message))
            .collect(),
        Some(other) => port_number_errors(path, other),
        None => port_number_errors(path, &json!(0)),
    }
}

fn validate_port(
    port: &Value,
    require_name: bool,
    names: &mut Vec<String>,
    path: &Path,
) -> ErrorList {
    let mut errors = ErrorList::new();
    let name = port.get("name").and_then(Value::as_str).unwrap_or_default();
    if require_name && name.is_empty() {
        errors.push(FieldError::required(&path.child("name"), ""));
    } else if !name.is_empty() {
        for message in is_dns1123_label(name) {
            errors.push(FieldError::invalid(&path.child("name"), name, message));
        }
        if names.iter().any(|n| n == name) {
            errors.push(FieldError::duplicate(&path.child("name"), name));
        } else {
            names.push(name.to_string());
        }
    }
    errors.extend(port_number_errors(
        &path.child("port"),
        port.get("port").unwrap_or(&json!(0)),
    ));
    let protocol = port
        .get("protocol")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if protocol.is_empty() {
        errors.push(FieldError::required(&path.child("protocol"), ""));
    } else if !["SCTP", "TCP", "UDP"].contains(&protocol) {
        errors.push(FieldError::not_supported(
            &path.child("protocol"),
            protocol,
            &["SCTP".to_string(), "TCP".to_string(), "UDP".to_string()],
        ));
    }
    errors.extend(port_num_or_name_errors(
        &path.child("targetPort"),
        port.get("targetPort"),
    ));
    if let Some(protocol) = port.get("appProtocol").and_then(Value::as_str) {
        for message in is_qualified_name(protocol) {
            errors.push(FieldError::invalid(
                &path.child("appProtocol"),
                protocol,
                message,
            ));
        }
    }
    errors
}

fn not_supported(path: &Path, value: &str, supported: &[&str]) -> FieldError {
    let supported: Vec<String> = supported.iter().map(|s| s.to_string()).collect();
    FieldError::not_supported(path, value, &supported)
}

/// `validateService`.
fn validate_service(obj: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let spec = Path::new(["spec"]);
    let kind = spec_str(obj, "type");
    let headless = is_headless(obj);
    let ips = cluster_ips(obj);
    let list = ports(obj);
    if list.is_empty() && !headless && kind != "ExternalName" {
        errors.push(FieldError::required(&spec.child("ports"), ""));
    }
    match kind {
        "LoadBalancer" | "NodePort" if headless => {
            errors.push(FieldError::invalid(
                &spec.child("clusterIPs").index(0),
                ips.first().map_or("", String::as_str),
                format!("may not be set to 'None' for {kind} services"),
            ));
        }
        "ExternalName" => {
            if !ips.is_empty() {
                errors.push(FieldError::forbidden(
                    &spec.child("clusterIPs"),
                    "may not be set for ExternalName services",
                ));
            }
            if obj
                .pointer("/spec/ipFamilies")
                .and_then(Value::as_array)
                .is_some_and(|f| !f.is_empty())
            {
                errors.push(FieldError::forbidden(
                    &spec.child("ipFamilies"),
                    "may not be set for ExternalName services",
                ));
            }
            if obj
                .pointer("/spec/ipFamilyPolicy")
                .is_some_and(|p| !p.is_null())
            {
                errors.push(FieldError::forbidden(
                    &spec.child("ipFamilyPolicy"),
                    "may not be set for ExternalName services",
                ));
            }
            let cname = spec_str(obj, "externalName");
            let cname = cname.strip_suffix('.').unwrap_or(cname);
            if cname.is_empty() {
                errors.push(FieldError::required(&spec.child("externalName"), ""));
            } else {
                for message in is_dns1123_subdomain(cname) {
                    errors.push(FieldError::invalid(
                        &spec.child("externalName"),
                        cname,
                        message,
                    ));
                }
            }
        }
        _ => {}
    }
    let mut names = Vec::new();
    for (i, port) in list.iter().enumerate() {
        errors.extend(validate_port(
            port,
            list.len() > 1,
            &mut names,
            &spec.child("ports").index(i),
        ));
    }
    if let Some(selector) = obj.pointer("/spec/selector").filter(|s| s.is_object()) {
        errors.extend(validate_labels(
            &json!({ "labels": selector }),
            &spec.child("selector"),
        ));
    }
    let affinity = spec_str(obj, "sessionAffinity");
    if affinity.is_empty() {
        errors.push(FieldError::required(&spec.child("sessionAffinity"), ""));
    } else if !["ClientIP", "None"].contains(&affinity) {
        errors.push(not_supported(
            &spec.child("sessionAffinity"),
            affinity,
            &["ClientIP", "None"],
        ));
    }
    if affinity == "ClientIP" {
        let timeout = obj
            .pointer("/spec/sessionAffinityConfig/clientIP/timeoutSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if !(1..=86400).contains(&timeout) {
            errors.push(FieldError::invalid(
                &spec
                    .child("sessionAffinityConfig")
                    .child("clientIP")
                    .child("timeoutSeconds"),
                timeout,
                "must be greater than 0 and less than 86400",
            ));
        }
    } else if affinity == "None"
        && obj
            .pointer("/spec/sessionAffinityConfig")
            .is_some_and(|c| !c.is_null())
    {
        errors.push(FieldError::forbidden(
            &spec.child("sessionAffinityConfig"),
            "must not be set when session affinity is None",
        ));
    }
    errors.extend(cluster_ips_related_errors(obj));
    if let Some(external) = obj.pointer("/spec/externalIPs").and_then(Value::as_array) {
        for (i, ip) in external.iter().enumerate() {
            errors.extend(ip_errors(
                &spec.child("externalIPs").index(i),
                ip.as_str().unwrap_or_default(),
            ));
        }
    }
    if kind.is_empty() {
        errors.push(FieldError::required(&spec.child("type"), ""));
    } else if !["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"].contains(&kind) {
        errors.push(not_supported(
            &spec.child("type"),
            kind,
            &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
        ));
    }
    if kind == "ClusterIP" {
        for (i, port) in list.iter().enumerate() {
            if port.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0 {
                errors.push(FieldError::forbidden(
                    &spec.child("ports").index(i).child("nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    let mut node_ports: Vec<(String, i64)> = Vec::new();
    for (i, port) in list.iter().enumerate() {
        let number = port.get("nodePort").and_then(Value::as_i64).unwrap_or(0);
        if number == 0 {
            continue;
        }
        let key = (
            port.get("protocol")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            number,
        );
        if node_ports.contains(&key) {
            errors.push(FieldError::duplicate(
                &spec.child("ports").index(i).child("nodePort"),
                number,
            ));
        }
        node_ports.push(key);
    }
    let mut seen: Vec<(String, i64)> = Vec::new();
    for (i, port) in list.iter().enumerate() {
        let protocol = port
            .get("protocol")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
        let key = (protocol, number);
        if seen.contains(&key) {
            // Go prints the key, a `ServicePort` struct, field by field.
            let written = format!(
                "{{\"Name\":\"\",\"Protocol\":{},\"AppProtocol\":null,\"Port\":{},\"TargetPort\":0,\"NodePort\":0}}",
                go_json(&json!(key.0)),
                key.1
            );
            errors.push(crate::machinery::field::error_with_written_value(
                ErrorType::Duplicate,
                &spec.child("ports").index(i),
                &written,
                "",
            ));
        }
        seen.push(key);
    }
    let ranges = obj
        .pointer("/spec/loadBalancerSourceRanges")
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty());
    if ranges && kind != "LoadBalancer" {
        errors.push(FieldError::forbidden(
            &spec.child("LoadBalancerSourceRanges"),
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    if let Some(class) = obj
        .pointer("/spec/loadBalancerClass")
        .and_then(Value::as_str)
    {
        if kind == "LoadBalancer" {
            for message in is_qualified_name(class) {
                errors.push(FieldError::invalid(
                    &spec.child("loadBalancerClass"),
                    class,
                    message,
                ));
            }
        } else {
            errors.push(FieldError::forbidden(
                &spec.child("loadBalancerClass"),
                "may only be used when `type` is 'LoadBalancer'",
            ));
        }
    }
    let allocate_lb = obj
        .pointer("/spec/allocateLoadBalancerNodePorts")
        .filter(|v| !v.is_null());
    if allocate_lb.is_some() && kind != "LoadBalancer" {
        errors.push(FieldError::forbidden(
            &spec.child("allocateLoadBalancerNodePorts"),
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    if kind == "LoadBalancer" && allocate_lb.is_none() {
        errors.push(FieldError::required(
            &Path::new(["allocateLoadBalancerNodePorts"]),
            "",
        ));
    }
    let external = spec_str(obj, "externalTrafficPolicy");
    if !externally_accessible(obj) {
        if !external.is_empty() {
            errors.push(FieldError::invalid(
                &spec.child("externalTrafficPolicy"),
                external,
                "may only be set for externally-accessible services",
            ));
        }
    } else if external.is_empty() {
        errors.push(FieldError::required(
            &spec.child("externalTrafficPolicy"),
            "",
        ));
    } else if !["Cluster", "Local"].contains(&external) {
        errors.push(not_supported(
            &spec.child("externalTrafficPolicy"),
            external,
            &["Cluster", "Local"],
        ));
    }
    let health = obj
        .pointer("/spec/healthCheckNodePort")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if !needs_health_check(obj) {
        if health != 0 {
            errors.push(FieldError::invalid(
                &spec.child("healthCheckNodePort"),
                health,
                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
            ));
        }
    } else if health == 0 {
        errors.push(FieldError::required(&spec.child("healthCheckNodePort"), ""));
    } else {
        errors.extend(port_number_errors(
            &spec.child("healthCheckNodePort"),
            &json!(health),
        ));
    }
    match obj
        .pointer("/spec/internalTrafficPolicy")
        .and_then(Value::as_str)
    {
        None if matches!(kind, "NodePort" | "LoadBalancer" | "ClusterIP") => {
            errors.push(FieldError::required(
                &spec.child("internalTrafficPolicy"),
                "",
            ));
        }
        Some(policy) if !["Cluster", "Local"].contains(&policy) => {
            errors.push(not_supported(
                &spec.child("internalTrafficPolicy"),
                policy,
                &["Cluster", "Local"],
            ));
        }
        _ => {}
    }
    errors
}

fn validate(obj: &Value) -> ErrorList {
    validate_service(obj)
}

/// `ValidateServiceUpdate`: the cluster IPs stay (`validateUpgradeDowngradeClusterIPs`).
fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let external = |o: &Value| spec_str(o, "type") == "ExternalName";
    if !(external(new) || external(old) || is_headless(new) && is_headless(old)) {
        let (old_ips, new_ips) = (cluster_ips(old), cluster_ips(new));
        let at = |i: usize| Path::new(["spec", "clusterIPs"]).index(i);
        if old_ips.len() == new_ips.len() {
            for (i, ip) in old_ips.iter().enumerate() {
                if *ip != new_ips[i] {
                    errors.push(FieldError::invalid(
                        &at(i),
                        json!(new_ips),
                        "may not change once set",
                    ));
                }
            }
        } else if old_ips.len() > new_ips.len() {
            if new_ips.is_empty() {
                errors.push(FieldError::invalid(
                    &at(0),
                    json!(new_ips),
                    "primary clusterIP can not be unset",
                ));
            } else if new_ips[0] != old_ips[0] {
                errors.push(FieldError::invalid(
                    &at(0),
                    json!(new_ips),
                    "may not change once set",
                ));
            }
        } else if !old_ips.is_empty() && new_ips[0] != old_ips[0] {
            errors.push(FieldError::invalid(
                &at(0),
                json!(new_ips),
                "may not change once set",
            ));
        }
    }
    let load_balancer = |o: &Value| spec_str(o, "type") == "LoadBalancer";
    if load_balancer(old)
        && load_balancer(new)
        && new.pointer("/spec/loadBalancerClass") != old.pointer("/spec/loadBalancerClass")
    {
        let class = new
            .pointer("/spec/loadBalancerClass")
            .cloned()
            .unwrap_or(Value::Null);
        errors.push(FieldError::invalid(
            &Path::new(["spec", "loadBalancerClass"]),
            class,
            "may not change once set",
        ));
    }
    if needs_health_check(old)
        && needs_health_check(new)
        && new.pointer("/spec/healthCheckNodePort") != old.pointer("/spec/healthCheckNodePort")
    {
        errors.push(FieldError::forbidden(
            &Path::new(["spec", "healthCheckNodePort"]),
            "field is immutable",
        ));
    }
    errors.extend(validate_service(new));
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_come_from_above_the_static_band() {
        let ranges = Ranges::new("10.0.0.0/24", (30000, 32767));
        let none = Held::default();
        assert_eq!(
            ranges.free_ip(&Taken::besides(&none, None)).as_deref(),
            Some("10.0.0.17")
        );
        let svc = |ip: &str| json!({"spec": {"clusterIPs": [ip]}});
        let held = Held::of([svc("10.0.0.17"), svc("10.0.0.18"), svc("10.0.0.20")].iter());
        assert_eq!(
            ranges.free_ip(&Taken::besides(&held, None)).as_deref(),
            Some("10.0.0.19")
        );
        // A Service's own address is free for itself.
        let own = svc("10.0.0.17");
        assert_eq!(
            ranges
                .free_ip(&Taken::besides(&held, Some(&own)))
                .as_deref(),
            Some("10.0.0.17")
        );
        assert_eq!(ranges.free_port(&BTreeSet::new()), Some(30086));
        assert_eq!(
            ranges.free_port(&BTreeSet::from([30086, 30087])),
            Some(30088)
        );
        assert!(ranges.contains("10.0.0.254".parse().unwrap()));
        assert!(!ranges.contains("10.0.0.255".parse().unwrap()));
        assert!(!ranges.contains("10.1.0.5".parse().unwrap()));
    }

    #[test]
    fn a_full_dynamic_band_gives_addresses_of_the_static_one_then_none() {
        let ranges = Ranges::new("10.0.0.0/27", (30000, 30015));
        // 30 addresses: a static band of 16 (.1-.16), the rest dynamic.
        let svc =
            |n: u32| json!({"spec": {"clusterIPs": [Ipv4Addr::from(0x0a00_0000 + n).to_string()]}});
        let dynamic: Vec<Value> = (17..=30).map(svc).collect();
        let held = Held::of(dynamic.iter());
        assert_eq!(
            ranges.free_ip(&Taken::besides(&held, None)).as_deref(),
            Some("10.0.0.1")
        );
        let all: Vec<Value> = (1..=30).map(svc).collect();
        let mut held = Held::of(all.iter());
        assert_eq!(ranges.free_ip(&Taken::besides(&held, None)), None);
        held.remove(&svc(25));
        assert_eq!(
            ranges.free_ip(&Taken::besides(&held, None)).as_deref(),
            Some("10.0.0.25")
        );
    }

    #[test]
    fn a_service_is_defaulted_as_the_real_server_does() {
        let mut svc = json!({"metadata": {"name": "a"}, "spec": {"ports": [{"port": 80}]}});
        default(&mut svc);
        allocate(
            &mut svc,
            None,
            &Taken::besides(&Held::default(), None),
            &Ranges::new("10.0.0.0/24", (30000, 32767)),
        )
        .unwrap();
        assert_eq!(
            svc["spec"],
            json!({"ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}], "sessionAffinity": "None",
                "type": "ClusterIP", "internalTrafficPolicy": "Cluster", "ipFamilyPolicy": "SingleStack",
                "ipFamilies": ["IPv4"], "clusterIP": "10.0.0.17", "clusterIPs": ["10.0.0.17"]})
        );
        assert!(validate(&svc).is_empty());
    }
}
