//! Kubernetes' CIDR library (`library/cidr.go`): `cidr()`, `isCIDR()`,
//! `containsIP()`, `containsCIDR()`, `ip()`, `prefixLength()`, `masked()`
//! and `string()`. Prefixes parse as Go's `netip.ParsePrefix` parses them
//! ([`crate::go::net`]), without zones or IPv4-mapped IPv6 addresses.

use std::net::IpAddr;

use cel::common::types::{CelBool, CelInt, CelString, STRING_TYPE, Type};
use cel::common::value::CowVal;
use cel::{DeclarationError, Env, ExecutionError};

use super::ip::{IP_TYPE, parse_ip};
use super::opaque::{Content, Opaque, arg, error, opaque_type, owned, text};
use crate::go::net::{self, Cidr, is_4_in_6, mask};

/// Registers the functions on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let ip = || std::borrow::ToOwned::to_owned(&IP_TYPE);
    let cidr = || std::borrow::ToOwned::to_owned(&CIDR_TYPE);
    env.add_type(cidr())?;
    env.add_overload("cidr", "string_to_cidr", vec![STRING_TYPE], to_cidr)?;
    env.add_overload("isCIDR", "is_cidr", vec![STRING_TYPE], is_cidr)?;
    env.add_overload("string", "cidr_to_string", vec![cidr()], cidr_to_string)?;
    env.add_member_overload(
        "containsIP",
        "cidr_contains_ip_string",
        cidr(),
        vec![STRING_TYPE],
        contains_ip,
    )?;
    env.add_member_overload(
        "containsIP",
        "cidr_contains_ip_ip",
        cidr(),
        vec![ip()],
        contains_ip,
    )?;
    env.add_member_overload(
        "containsCIDR",
        "cidr_contains_cidr_string",
        cidr(),
        vec![STRING_TYPE],
        contains_cidr,
    )?;
    env.add_member_overload(
        "containsCIDR",
        "cidr_contains_cidr",
        cidr(),
        vec![cidr()],
        contains_cidr,
    )?;
    env.add_member_overload("ip", "cidr_ip", cidr(), vec![], cidr_ip)?;
    env.add_member_overload(
        "prefixLength",
        "cidr_prefix_length",
        cidr(),
        vec![],
        prefix_length,
    )?;
    env.add_member_overload("masked", "cidr_masked", cidr(), vec![], masked)?;
    Ok(())
}

type Out<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

static CIDR_TYPE: Type = opaque_type("net.CIDR");

impl Content for Cidr {
    const TYPE: &'static Type = &CIDR_TYPE;

    fn same(&self, other: &Self) -> bool {
        self == other
    }
}

/// `parseCIDR`.
fn parse_cidr(raw: &str) -> Result<Cidr, String> {
    let cidr = net::parse_prefix(raw).map_err(|why| {
        format!("network address parse error during conversion from string: {why}")
    })?;
    if is_4_in_6(&cidr.addr) {
        return Err(format!("IPv4-mapped IPv6 address {raw:?} is not allowed"));
    }
    Ok(cidr)
}

fn to_cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let c = parse_cidr(text(&args, 0)?).map_err(|e| {
        error(
            "cidr",
            format!("network address parse error during conversion from string: {e}"),
        )
    })?;
    owned(Opaque(c))
}

fn is_cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelBool::from(parse_cidr(text(&args, 0)?).is_ok()))
}

fn cidr_to_string<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelString::from(arg::<Cidr>(&args, 0)?.text()))
}

fn contains_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let c = arg::<Cidr>(&args, 0)?;
    let ip = match text(&args, 1) {
        Ok(s) => parse_ip(s).map_err(|e| error("containsIP", e))?,
        Err(_) => *arg::<IpAddr>(&args, 1)?,
    };
    owned(CelBool::from(c.contains(&ip)))
}

fn contains_cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let c = arg::<Cidr>(&args, 0)?;
    let other = match text(&args, 1) {
        Ok(s) => parse_cidr(s).map_err(|e| {
            error(
                "containsCIDR",
                format!("network address parse error during conversion from string: {e}"),
            )
        })?,
        Err(_) => *arg::<Cidr>(&args, 1)?,
    };
    let overlaps = c.contains(&other.addr) || other.contains(&c.addr);
    owned(CelBool::from(overlaps && c.bits <= other.bits))
}

fn cidr_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(Opaque(arg::<Cidr>(&args, 0)?.addr))
}

fn prefix_length<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelInt::from(i64::from(arg::<Cidr>(&args, 0)?.bits)))
}

fn masked<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let c = arg::<Cidr>(&args, 0)?;
    owned(Opaque(Cidr {
        addr: mask(c.addr, c.bits),
        bits: c.bits,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::go::net::mask;

    #[test]
    fn networks_parse_as_netip_parses_them() {
        let net = parse_cidr("192.168.0.0/16").expect("valid");
        assert!(net.contains(&"192.168.3.4".parse().expect("an address")));
        assert!(!net.contains(&"10.0.0.1".parse().expect("an address")));
        assert!(parse_cidr("10.0.0.0/33").is_err());
        assert!(parse_cidr("10.0.0.0/08").is_err());
        assert_eq!(
            mask("10.1.2.3".parse().expect("an address"), 8).to_string(),
            "10.0.0.0"
        );
    }
}
