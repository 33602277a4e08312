//! Go's network addresses, as the real server reads them: `netip.ParseAddr`
//! (zones allowed), `net.ParseIP` (no zone), `net.ParseCIDR`,
//! `netip.ParsePrefix` with its error words, `net.ParseMAC`, the classes of
//! `net.IP`, and Kubernetes' sloppy readings (`k8s.io/utils/net`
//! `ParseIPSloppy`, `ParseCIDRSloppy`: Go 1.16's parser, which took leading
//! zeros in IPv4 fields). Every address check of the store asks here.

mod cidr;
#[cfg(test)]
mod tests;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use regex::Regex;

/// What `netip.ParseAddr` reads: an address, with or without a zone.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Addr {
    /// The address.
    pub ip: IpAddr,
    /// Whether it had a zone (`fe80::1%eth0`), which `net.ParseIP` refuses.
    pub zoned: bool,
}

/// `netip.ParseAddr`: IPv4 in four decimal fields without leading zeros,
/// or IPv6 (with a trailing dotted quad and a `%zone` allowed).
pub(crate) fn parse_addr(s: &str) -> Option<Addr> {
    for b in s.bytes() {
        match b {
            b'.' => {
                return parse_ipv4(s).map(|octets| Addr {
                    ip: IpAddr::V4(Ipv4Addr::from(octets)),
                    zoned: false,
                });
            }
            b':' => return parse_ipv6(s),
            b'%' => return None,
            _ => {}
        }
    }
    None
}

/// `net.ParseIP`: an address without a zone.
pub(crate) fn parse_ip(s: &str) -> Option<IpAddr> {
    parse_addr(s).filter(|addr| !addr.zoned).map(|addr| addr.ip)
}

/// `net.ParseIP` of an IPv4 address (a dotted quad).
pub(crate) fn parse_ipv4_addr(s: &str) -> Option<Ipv4Addr> {
    match parse_ip(s)? {
        IpAddr::V4(v4) => Some(v4),
        IpAddr::V6(_) => None,
    }
}

/// `netutils.ParseIPSloppy`: `net.ParseIP`, or again with the leading
/// zeros of a trailing dotted quad removed (Go 1.16 read `010.1.2.3` as
/// `10.1.2.3`).
pub(crate) fn parse_ip_sloppy(s: &str) -> Option<IpAddr> {
    parse_ip(s).or_else(|| parse_ip(&strip_zeros(s)))
}

/// `s` with the leading zeros of the fields of a trailing dotted quad (and
/// of a CIDR's prefix length after it) removed.
pub(super) fn strip_zeros(s: &str) -> String {
    static ZEROS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(^|:)0*(0|[1-9][0-9]*)\.0*(0|[1-9][0-9]*)\.0*(0|[1-9][0-9]*)\.0*(0|[1-9][0-9]*)((/)0*(0|[1-9][0-9]*))?$",
        )
        .expect("a fixed pattern that compiles")
    });
    ZEROS
        .replace_all(s, "${1}${2}.${3}.${4}.${5}${7}${8}")
        .into_owned()
}

/// `netip.parseIPv4`: four decimal fields up to 255, no leading zero.
fn parse_ipv4(s: &str) -> Option<[u8; 4]> {
    let mut fields = [0u8; 4];
    let (mut val, mut pos, mut digits) = (0u32, 0usize, 0);
    let bytes = s.as_bytes();
    for (i, &c) in bytes.iter().enumerate() {
        if c.is_ascii_digit() {
            if digits == 1 && val == 0 {
                return None;
            }
            val = val * 10 + u32::from(c - b'0');
            digits += 1;
            if val > 255 {
                return None;
            }
        } else if c == b'.' {
            if i == 0 || i == bytes.len() - 1 || bytes[i - 1] == b'.' || pos == 3 {
                return None;
            }
            fields[pos] = val as u8;
            pos += 1;
            val = 0;
            digits = 0;
        } else {
            return None;
        }
    }
    if pos < 3 {
        return None;
    }
    fields[3] = val as u8;
    Some(fields)
}

/// `netip.parseIPv6`: hex groups of up to four digits, one `::`, an
/// optional trailing dotted quad, an optional `%zone`.
fn parse_ipv6(input: &str) -> Option<Addr> {
    let (mut s, zoned) = match input.split_once('%') {
        Some((_, "")) => return None,
        Some((addr, _)) => (addr.as_bytes(), true),
        None => (input.as_bytes(), false),
    };
    let mut ip = [0u8; 16];
    let mut ellipsis: Option<usize> = None;
    if s.starts_with(b"::") {
        ellipsis = Some(0);
        s = &s[2..];
        if s.is_empty() {
            return Some(Addr {
                ip: IpAddr::V6(Ipv6Addr::UNSPECIFIED),
                zoned,
            });
        }
    }
    let mut i = 0;
    while i < 16 {
        let mut off = 0;
        let mut acc: u32 = 0;
        while off < s.len() {
            let Some(d) = (s[off] as char).to_digit(16) else {
                break;
            };
            acc = (acc << 4) + d;
            if off > 3 || acc > 0xFFFF {
                return None;
            }
            off += 1;
        }
        if off == 0 {
            return None;
        }
        if off < s.len() && s[off] == b'.' {
            if (ellipsis.is_none() && i != 12) || i + 4 > 16 {
                return None;
            }
            let quad = parse_ipv4(std::str::from_utf8(s).ok()?)?;
            ip[i..i + 4].copy_from_slice(&quad);
            s = &[];
            i += 4;
            break;
        }
        ip[i] = (acc >> 8) as u8;
        ip[i + 1] = acc as u8;
        i += 2;
        s = &s[off..];
        if s.is_empty() {
            break;
        }
        if s[0] != b':' || s.len() == 1 {
            return None;
        }
        s = &s[1..];
        if s[0] == b':' {
            if ellipsis.is_some() {
                return None;
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return None;
    }
    // Short of 16 bytes needs a `::`, which must stand for one group at
    // least; the groups after it move to the end.
    match ellipsis {
        Some(at) if i < 16 => {
            let n = 16 - i;
            ip.copy_within(at..i, at + n);
            ip[at..at + n].fill(0);
        }
        Some(_) => return None,
        None if i < 16 => return None,
        None => {}
    }
    Some(Addr {
        ip: IpAddr::V6(Ipv6Addr::from(ip)),
        zoned,
    })
}

/// `net.ParseMAC` (Go 1.26): 6, 8 or 20 octets as `aa:bb:...`,
/// `aa-bb-...`, `aabb.ccdd...` or plain `aabbcc...`.
pub(crate) fn is_mac(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 12 {
        return false;
    }
    let hex2 = |x: &[u8]| x.len() >= 2 && x[0].is_ascii_hexdigit() && x[1].is_ascii_hexdigit();
    if b[2] == b':' || b[2] == b'-' {
        if !(b.len() + 1).is_multiple_of(3) || ![6, 8, 20].contains(&((b.len() + 1) / 3)) {
            return false;
        }
        let sep = b[2];
        b.chunks(3)
            .all(|c| hex2(c) && (c.len() == 2 || c[2] == sep))
    } else if b[4] == b'.' {
        if !(b.len() + 1).is_multiple_of(5) || ![6, 8, 20].contains(&(2 * (b.len() + 1) / 5)) {
            return false;
        }
        b.chunks(5)
            .all(|c| hex2(c) && hex2(&c[2..]) && (c.len() == 4 || c[4] == b'.'))
    } else {
        [12, 16, 40].contains(&b.len()) && b.iter().all(u8::is_ascii_hexdigit)
    }
}

/// `netip.Addr.Is4In6`: an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`).
pub(crate) fn is_4_in_6(ip: &IpAddr) -> bool {
    matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some())
}

/// `net.IP.IsLinkLocalUnicast`.
pub(crate) fn is_link_local_unicast(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets()[..2] == [169, 254],
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

/// `net.IP.IsLinkLocalMulticast`.
pub(crate) fn is_link_local_multicast(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    }
}

/// `net.IP.IsGlobalUnicast`.
pub(crate) fn is_global_unicast(ip: &IpAddr) -> bool {
    let broadcast = matches!(ip, IpAddr::V4(v4) if v4.is_broadcast());
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || broadcast
        || is_link_local_unicast(ip))
}

pub(crate) use cidr::{Cidr, mask, parse_cidr, parse_cidr_sloppy, parse_prefix};
