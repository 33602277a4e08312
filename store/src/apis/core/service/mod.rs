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

mod alloc;
mod allocator;
mod defaults;
mod spec;
mod status;
mod strategy;
#[cfg(test)]
mod tests;
mod validate_cluster_ips;
mod validate_ports;
mod validation;

use crate::apis::strategy::Rules;
use crate::machinery::names::name_is_dns_label;
use crate::resource::info::ResourceInfo;

pub(crate) static RULES: Rules = Rules {
    // `RelaxedServiceNameValidation` is on in 1.36: a DNS label.
    name: name_is_dns_label,
    default,
    validate,
    validate_update,
    validate_status: Some(status::validate_status),
};

/// Whether `res` is the core group's Service.
pub(crate) fn is_service(res: &ResourceInfo) -> bool {
    res.custom.is_none() && res.group.is_empty() && res.kind == "Service"
}

pub(crate) use alloc::allocate;
pub(crate) use allocator::{Held, Ranges, Taken};
use defaults::default;
pub(crate) use strategy::{SELECTABLE, prepare_create, prepare_update, warnings};
pub(crate) use validate_cluster_ips::ip_errors;
use validation::{validate, validate_update};
