//! The service and node-port ranges, and the addresses Services hold
//! (the IP and port allocators' state, read from the stored Services).

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr};

use serde_json::Value;

use super::spec::{ip_numbers, node_ports_of};
use crate::go::net;

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
    pub(super) fn addresses(&self) -> (u32, u32) {
        let (ip, bits) = self.network;
        let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
        let base = u32::from(ip) & mask;
        (base + 1, (base | !mask) - 1)
    }

    pub(super) fn contains(&self, ip: Ipv4Addr) -> bool {
        let (first, last) = self.addresses();
        (first..=last).contains(&u32::from(ip))
    }

    /// An address nobody holds: above the static band first, the lowest
    /// free one.
    pub(super) fn free_ip(&self, taken: &Taken) -> Option<String> {
        let (first, last) = self.addresses();
        let size = last - first + 1;
        let band = (size / 16).clamp(16, 256).min(size);
        taken
            .lowest_free_ip(first + band, last)
            .or_else(|| taken.lowest_free_ip(first, first + band - 1))
            .map(|n| Ipv4Addr::from(n).to_string())
    }

    /// A node port nobody holds: above the static band first.
    pub(super) fn free_port(&self, held: &BTreeSet<i64>) -> Option<i64> {
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

/// The addresses every stored Service holds, kept by the store as Services
/// are written (`Registry::services`), so that an allocation reads no Service.
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
    pub(super) fn lowest_free_ip(&self, from: u32, to: u32) -> Option<u32> {
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

    pub(super) fn has_ip(&self, ip: Ipv4Addr) -> bool {
        let n = u32::from(ip);
        self.held.ips.contains(&n) && !self.own_ips.contains(&n)
    }

    pub(super) fn ports(&self) -> BTreeSet<i64> {
        let mut ports = self.held.ports.clone();
        for port in &self.own_ports {
            ports.remove(port);
        }
        ports
    }
}
