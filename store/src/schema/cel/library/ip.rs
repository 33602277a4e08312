//! Kubernetes' IP library (`library/ip.go`): `ip()`, `isIP()`,
//! `ip.isCanonical()`, `family()`, the address classes and `string()`.
//! Addresses parse as Go's `netip` parses them ([`crate::go::net`]),
//! without zones or IPv4-mapped IPv6 addresses.

use std::net::IpAddr;

use cel::common::types::{CelBool, CelInt, CelString, STRING_TYPE, Type};
use cel::common::value::CowVal;
use cel::{DeclarationError, Env, ExecutionError};

use super::opaque::{Content, Opaque, arg, error, opaque_type, owned, text};
use crate::go::net::{
    self, is_4_in_6, is_global_unicast, is_link_local_multicast, is_link_local_unicast,
};

pub(super) static IP_TYPE: Type = opaque_type("net.IP");

impl Content for IpAddr {
    const TYPE: &'static Type = &IP_TYPE;

    fn same(&self, other: &Self) -> bool {
        self == other
    }
}

/// `parseIPAddr`.
pub(crate) fn parse_ip(raw: &str) -> Result<IpAddr, String> {
    if raw.contains('%') {
        return Err(format!("IP address {raw:?} with zone value is not allowed"));
    }
    let addr = net::parse_ip(raw).ok_or_else(|| {
        format!("IP Address {raw:?} parse error during conversion from string: ParseAddr({raw:?}): unable to parse IP")
    })?;
    if is_4_in_6(&addr) {
        return Err(format!("IPv4-mapped IPv6 address {raw:?} is not allowed"));
    }
    Ok(addr)
}

/// Registers the functions on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let ip = || std::borrow::ToOwned::to_owned(&IP_TYPE);
    env.add_type(ip())?;
    env.add_overload("ip", "string_to_ip", vec![STRING_TYPE], to_ip)?;
    env.add_overload("isIP", "is_ip", vec![STRING_TYPE], is_ip)?;
    env.add_overload(
        "ip.isCanonical",
        "ip_is_canonical",
        vec![STRING_TYPE],
        is_canonical,
    )?;
    env.add_overload("string", "ip_to_string", vec![ip()], ip_to_string)?;
    env.add_member_overload("family", "ip_family", ip(), vec![], family)?;
    env.add_member_overload(
        "isUnspecified",
        "ip_is_unspecified",
        ip(),
        vec![],
        unspecified,
    )?;
    env.add_member_overload("isLoopback", "ip_is_loopback", ip(), vec![], loopback)?;
    env.add_member_overload(
        "isLinkLocalMulticast",
        "ip_is_link_local_multicast",
        ip(),
        vec![],
        ll_multicast,
    )?;
    env.add_member_overload(
        "isLinkLocalUnicast",
        "ip_is_link_local_unicast",
        ip(),
        vec![],
        ll_unicast,
    )?;
    env.add_member_overload(
        "isGlobalUnicast",
        "ip_is_global_unicast",
        ip(),
        vec![],
        global_unicast,
    )?;
    Ok(())
}

type Out<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

fn to_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(Opaque(
        parse_ip(text(&args, 0)?).map_err(|e| error("ip", e))?,
    ))
}

fn is_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelBool::from(parse_ip(text(&args, 0)?).is_ok()))
}

fn is_canonical<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let raw = text(&args, 0)?;
    let addr = parse_ip(raw).map_err(|e| error("ip.isCanonical", e))?;
    owned(CelBool::from(addr.to_string() == raw))
}

fn ip_to_string<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelString::from(arg::<IpAddr>(&args, 0)?.to_string()))
}

fn family<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelInt::from(if arg::<IpAddr>(&args, 0)?.is_ipv4() {
        4
    } else {
        6
    }))
}

fn test_ip<'b, 'v>(args: &[CowVal<'b, 'v>], f: fn(&IpAddr) -> bool) -> Out<'b, 'v> {
    owned(CelBool::from(f(arg::<IpAddr>(args, 0)?)))
}

fn unspecified<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    test_ip(&args, IpAddr::is_unspecified)
}

fn loopback<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    test_ip(&args, IpAddr::is_loopback)
}

fn ll_multicast<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    test_ip(&args, is_link_local_multicast)
}

fn ll_unicast<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    test_ip(&args, is_link_local_unicast)
}

fn global_unicast<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    test_ip(&args, is_global_unicast)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_as_netip_parses_them() {
        assert!(parse_ip("10.0.0.1").is_ok());
        assert_eq!(
            parse_ip("::ffff:1.2.3.4").unwrap_err(),
            "IPv4-mapped IPv6 address \"::ffff:1.2.3.4\" is not allowed"
        );
        assert_eq!(
            parse_ip("fe80::1%eth0").unwrap_err(),
            "IP address \"fe80::1%eth0\" with zone value is not allowed"
        );
        assert!(is_global_unicast(&"10.1.2.3".parse().expect("an address")));
        assert!(!is_global_unicast(
            &"169.254.0.1".parse().expect("an address")
        ));
    }
}
