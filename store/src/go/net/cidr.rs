//! Networks: `net.ParseCIDR` and `netip.ParsePrefix` (with its words),
//! Kubernetes' sloppy `ParseCIDRSloppy`, and what a prefix contains.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::{parse_ip, strip_zeros};

/// A network: an address (not masked) and a prefix length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Cidr {
    /// The address as written.
    pub addr: IpAddr,
    /// The prefix length.
    pub bits: u8,
}

impl Cidr {
    /// The network's address: the bits past the prefix cleared.
    pub(crate) fn network(&self) -> IpAddr {
        mask(self.addr, self.bits)
    }

    /// Whether `ip` is in this network (`netip.Prefix.Contains`).
    pub(crate) fn contains(&self, ip: &IpAddr) -> bool {
        ip.is_ipv4() == self.addr.is_ipv4() && mask(*ip, self.bits) == self.network()
    }

    /// Whether `other`'s network address is in this network (Go's
    /// `ipNet.Contains(other.IP)` of two parsed CIDRs).
    pub(crate) fn contains_cidr(&self, other: &Cidr) -> bool {
        self.contains(&other.network())
    }

    /// Whether the address has bits set past the prefix.
    pub(crate) fn has_host_bits(&self) -> bool {
        self.addr != self.network()
    }

    /// `a.b.c.d/n`, the address as Go writes it.
    pub(crate) fn text(&self) -> String {
        format!("{}/{}", self.addr, self.bits)
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

/// `addr` with the bits past the first `bits` cleared.
pub(crate) fn mask(addr: IpAddr, bits: u8) -> IpAddr {
    match addr {
        IpAddr::V4(v4) => {
            let m = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(v4) & m))
        }
        IpAddr::V6(v6) => {
            let m = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(v6) & m))
        }
    }
}

/// `net.ParseCIDR`: an address without a zone, a slash, a prefix length of
/// decimal digits not over the address's bits.
pub(crate) fn parse_cidr(s: &str) -> Option<Cidr> {
    let (addr, bits) = s.split_once('/')?;
    let addr = parse_ip(addr)?;
    let digits = bits.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits != bits.len() {
        return None;
    }
    let mut n: u64 = 0;
    for b in bits.bytes() {
        n = n * 10 + u64::from(b - b'0');
        if n >= 0xFF_FFFF {
            return None;
        }
    }
    let width = if addr.is_ipv4() { 32 } else { 128 };
    (n <= width).then_some(Cidr {
        addr,
        bits: n as u8,
    })
}

/// `netutils.ParseCIDRSloppy`: `net.ParseCIDR`, or again with the leading
/// zeros of the dotted quad and of the prefix length removed.
pub(crate) fn parse_cidr_sloppy(s: &str) -> Option<Cidr> {
    parse_cidr(s).or_else(|| parse_cidr(&strip_zeros(s)))
}

/// `netip.ParsePrefix`, with its error words: no zone, a prefix length
/// without leading zeros, within the address's bits.
pub(crate) fn parse_prefix(raw: &str) -> Result<Cidr, String> {
    let bad = |why: &str| format!("netip.ParsePrefix({raw:?}): {why}");
    let (addr, bits) = raw.rsplit_once('/').ok_or_else(|| bad("no '/'"))?;
    if addr.contains('%') {
        return Err(bad("IPv6 zones cannot be present in a prefix"));
    }
    let addr =
        parse_ip(addr).ok_or_else(|| bad(&format!("ParseAddr({addr:?}): unable to parse IP")))?;
    if bits.len() > 1 && !(b'1'..=b'9').contains(&bits.as_bytes()[0]) {
        return Err(bad(&format!("bad bits after slash: {bits:?}")));
    }
    let n: u32 = bits
        .parse()
        .map_err(|_| bad(&format!("bad bits after slash: {bits:?}")))?;
    let width = if addr.is_ipv4() { 32 } else { 128 };
    if n > width {
        return Err(bad("prefix length out of range"));
    }
    Ok(Cidr {
        addr,
        bits: n as u8,
    })
}
