//! The network formats: `ipv4` (`strfmt.isIPv4`: Kubernetes' sloppy IP
//! parsing, and a dot somewhere), `ipv6` (govalidator: Go's `net.ParseIP`
//! and a colon somewhere), `cidr` (Kubernetes' sloppy `ParseCIDR`) and
//! `mac` (Go's `net.ParseMAC`). Go parses addresses with `net/netip`
//! (`ParseAddr`), whose rules these follow; a zone (`%eth0`) is refused by
//! `ParseIP`.

use std::sync::LazyLock;

use regex::Regex;

/// `strfmt` ipv4: any IP (leading zeros allowed) written with a dot, which
/// includes an IPv4-mapped IPv6 address.
pub(crate) fn is_ipv4(s: &str) -> bool {
    parse_ip_sloppy(s) && s.contains('.')
}

/// govalidator's `IsIPv6`: any IP written with a colon.
pub(crate) fn is_ipv6(s: &str) -> bool {
    parse_ip(s) && s.contains(':')
}

/// `netutils.ParseCIDRSloppy`.
pub(crate) fn is_cidr(s: &str) -> bool {
    parse_cidr(s) || parse_cidr(&strip_zeros(s))
}

/// `netutils.ParseIPSloppy`: `net.ParseIP`, or again with the leading
/// zeros of a trailing dotted quad removed.
fn parse_ip_sloppy(s: &str) -> bool {
    parse_ip(s) || parse_ip(&strip_zeros(s))
}

fn strip_zeros(s: &str) -> String {
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

/// `net.ParseIP`: an address without a zone.
pub(crate) fn parse_ip(s: &str) -> bool {
    parse_addr(s).is_some_and(|addr| !addr.zoned)
}

/// `net.ParseCIDR`: an address without a zone, a slash, a prefix length of
/// decimal digits not over the address's bits.
fn parse_cidr(s: &str) -> bool {
    let Some((addr, mask)) = s.split_once('/') else {
        return false;
    };
    let Some(addr) = parse_addr(addr).filter(|a| !a.zoned) else {
        return false;
    };
    let digits = mask.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits != mask.len() {
        return false;
    }
    let mut n: u64 = 0;
    for b in mask.bytes() {
        n = n * 10 + u64::from(b - b'0');
        if n >= 0xFF_FFFF {
            return false;
        }
    }
    n <= if addr.v4 { 32 } else { 128 }
}

/// `netip.ParseAddr` (zones allowed): whether the address is IPv4, or
/// none when it is not an address.
pub(crate) fn addr_is_v4(s: &str) -> Option<bool> {
    parse_addr(s).map(|addr| addr.v4)
}

/// What `netip.ParseAddr` tells of a valid address.
struct Addr {
    v4: bool,
    zoned: bool,
}

/// `netip.ParseAddr`.
fn parse_addr(s: &str) -> Option<Addr> {
    for b in s.bytes() {
        match b {
            b'.' => {
                return parse_ipv4(s).map(|_| Addr {
                    v4: true,
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
    let mut ellipsis = false;
    if s.starts_with(b"::") {
        ellipsis = true;
        s = &s[2..];
        if s.is_empty() {
            return Some(Addr { v4: false, zoned });
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
            if (!ellipsis && i != 12) || i + 4 > 16 {
                return None;
            }
            parse_ipv4(std::str::from_utf8(s).ok()?)?;
            s = &[];
            i += 4;
            break;
        }
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
            if ellipsis {
                return None;
            }
            ellipsis = true;
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
    // least.
    if (i < 16) != ellipsis {
        return None;
    }
    Some(Addr { v4: false, zoned })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_is_sloppy_and_needs_a_dot() {
        assert!(is_ipv4("192.168.0.1"));
        assert!(is_ipv4("01.02.03.004"));
        assert!(is_ipv4("::ffff:1.2.3.4"));
        assert!(!is_ipv4("256.1.1.1"));
        assert!(!is_ipv4("1.2.3"));
        assert!(!is_ipv4("::1"));
        assert!(!is_ipv4("1.2.3.4 "));
    }

    #[test]
    fn ipv6_follows_netip() {
        assert!(is_ipv6("::1"));
        assert!(is_ipv6("::"));
        assert!(is_ipv6("2001:db8::68"));
        assert!(is_ipv6("1:2:3:4:5:6:7:8"));
        assert!(is_ipv6("::ffff:192.0.2.1"));
        assert!(is_ipv6("1:2:3:4:5:6:1.2.3.4"));
        assert!(!is_ipv6("1:2:3:4:5:6:7:8:9"));
        assert!(!is_ipv6("1::2::3"));
        assert!(!is_ipv6("12345::"));
        assert!(!is_ipv6("1::2%eth0"));
        assert!(!is_ipv6("1:2:3:4:5:6:7::8"));
        assert!(!is_ipv6("1.2.3.4"));
        assert!(!is_ipv6("::01.2.3.4"));
    }

    #[test]
    fn cidr_follows_parse_cidr_sloppy() {
        assert!(is_cidr("10.0.0.0/8"));
        assert!(is_cidr("010.0.0.0/08"));
        assert!(is_cidr("2001:db8::/32"));
        assert!(is_cidr("::ffff:1.2.3.4/128"));
        assert!(!is_cidr("10.0.0.0/33"));
        assert!(!is_cidr("10.0.0.0"));
        assert!(!is_cidr("10.0.0.0/"));
        assert!(!is_cidr("10.0.0.0/8x"));
    }

    #[test]
    fn mac_follows_parse_mac() {
        assert!(is_mac("00:11:22:33:44:55"));
        assert!(is_mac("00-11-22-33-44-55-66-77"));
        assert!(is_mac("0011.2233.4455"));
        assert!(is_mac(&["00"; 20].join(":")));
        assert!(is_mac("ABCDEF012345"));
        assert!(is_mac("1234567890123456"));
        assert!(!is_mac("41111111111111"));
        assert!(!is_mac("ABCDEF01234G"));
        assert!(!is_mac("00:11:22:33:44"));
        assert!(!is_mac("00:11:22:33:44:55:66"));
        assert!(!is_mac("00:11-22:33:44:55"));
        assert!(!is_mac("0g:11:22:33:44:55"));
    }
}
