//! Kubernetes' quantity library (`library/quantity.go`): `quantity()`,
//! `isQuantity()`, `sign()`, comparisons, `asInteger()`, `isInteger()`,
//! `asApproximateFloat()`, `add()`, `sub()`. Quantities are parsed by the
//! store's one `resource.ParseQuantity`, then held in the same two
//! forms (a small integer amount with a decimal scale, or a decimal), as
//! whether a quantity "is an integer" depends on the form.

use std::cmp::Ordering;

use cel::common::types::{CelBool, CelDouble, CelInt, INT_TYPE, STRING_TYPE, Type};
use cel::common::value::CowVal;
use cel::{DeclarationError, Env, ExecutionError};

use super::opaque::{Content, Opaque, arg, error, opaque_type, owned, text};
use crate::machinery::quantity;

static QUANTITY_TYPE: Type = opaque_type("kubernetes.Quantity");

/// A quantity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Quantity {
    /// `value × 10^scale`, fitting an `int64` (`int64Amount`).
    Int { value: i64, scale: i32 },
    /// `mantissa × 10^exponent` (`infDecAmount`).
    Dec { mantissa: i128, exponent: i32 },
}

impl Content for Quantity {
    const TYPE: &'static Type = &QUANTITY_TYPE;

    fn same(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

/// `resource.ParseQuantity` ([`crate::machinery::quantity`], the one
/// parser), in the form apimachinery holds the result.
pub(crate) fn parse(s: &str) -> Result<Quantity, String> {
    let parsed = quantity::Quantity::parse(s).map_err(|e| e.to_string())?;
    if let Some((value, scale)) = parsed.int64_amount() {
        return Ok(Quantity::Int {
            value,
            scale: scale as i32,
        });
    }
    let (negative, digits, exponent) = parsed.decimal();
    // An i128 holds 38 digits: keep the 36 most significant.
    let kept = &digits[..digits.len().min(36)];
    let mantissa: i128 = std::str::from_utf8(kept)
        .ok()
        .and_then(|d| d.parse().ok())
        .unwrap_or(0);
    Ok(Quantity::Dec {
        mantissa: if negative { -mantissa } else { mantissa },
        exponent: (exponent + (digits.len() - kept.len()) as i64) as i32,
    })
}

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

impl Quantity {
    fn parts(self) -> (i128, i32) {
        match self {
            Quantity::Int { value, scale } => (i128::from(value), scale),
            Quantity::Dec { mantissa, exponent } => (mantissa, exponent),
        }
    }

    fn to_f64(self) -> f64 {
        let (m, e) = self.parts();
        m as f64 * 10f64.powi(e)
    }

    fn sign(self) -> i64 {
        self.parts().0.signum() as i64
    }

    /// The two mantissas at the smaller of the two exponents, if they fit.
    fn aligned(self, other: Quantity) -> Option<(i128, i128, i32)> {
        let (m1, e1) = self.parts();
        let (m2, e2) = other.parts();
        let e = e1.min(e2);
        let a = m1.checked_mul(pow10(u32::try_from(e1 - e).ok()?)?)?;
        let b = m2.checked_mul(pow10(u32::try_from(e2 - e).ok()?)?)?;
        Some((a, b, e))
    }

    fn cmp(&self, other: &Quantity) -> Ordering {
        match self.aligned(*other) {
            Some((a, b, _)) => a.cmp(&b),
            None => self
                .to_f64()
                .partial_cmp(&other.to_f64())
                .unwrap_or(Ordering::Equal),
        }
    }

    /// `AsInt64`: only the integer form with no negative scale.
    fn as_int(self) -> Option<i64> {
        match self {
            Quantity::Int { value, scale: 0 } => Some(value),
            Quantity::Int { value, scale } if scale > 0 => {
                value.checked_mul(10i64.checked_pow(scale as u32)?)
            }
            _ => None,
        }
    }

    /// `Add` (`Sub` with `-other`).
    fn add(self, other: Quantity, negate: bool) -> Quantity {
        if let (
            Quantity::Int {
                value: a,
                scale: sa,
            },
            Quantity::Int {
                value: b,
                scale: sb,
            },
        ) = (self, other)
        {
            let b = if negate { b.checked_neg() } else { Some(b) };
            let scale = sa.min(sb);
            let up = |v: i64, s: i32| v.checked_mul(10i64.checked_pow((s - scale) as u32)?);
            if let (Some(a), Some(b)) = (up(a, sa), b.and_then(|b| up(b, sb)))
                && let Some(value) = a.checked_add(b)
            {
                return Quantity::Int { value, scale };
            }
        }
        match self.aligned(other) {
            Some((a, b, e)) => Quantity::Dec {
                mantissa: if negate { a - b } else { a + b },
                exponent: e,
            },
            None => self,
        }
    }
}

/// Registers the functions on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let q = || QUANTITY_TYPE.clone_type();
    env.add_type(q())?;
    env.add_overload(
        "quantity",
        "string_to_quantity",
        vec![STRING_TYPE],
        to_quantity,
    )?;
    env.add_overload(
        "isQuantity",
        "is_quantity_string",
        vec![STRING_TYPE],
        is_quantity,
    )?;
    env.add_overload("sign", "quantity_sign", vec![q()], sign)?;
    env.add_member_overload(
        "isGreaterThan",
        "quantity_is_greater_than",
        q(),
        vec![q()],
        greater,
    )?;
    env.add_member_overload("isLessThan", "quantity_is_less_than", q(), vec![q()], less)?;
    env.add_member_overload(
        "compareTo",
        "quantity_compare_to",
        q(),
        vec![q()],
        compare_to,
    )?;
    env.add_member_overload(
        "asApproximateFloat",
        "quantity_get_float",
        q(),
        vec![],
        as_float,
    )?;
    env.add_member_overload("asInteger", "quantity_get_int", q(), vec![], as_integer)?;
    env.add_member_overload("isInteger", "quantity_is_integer", q(), vec![], is_integer)?;
    env.add_member_overload("add", "quantity_add", q(), vec![q()], add)?;
    env.add_member_overload("add", "quantity_add_int", q(), vec![INT_TYPE], add)?;
    env.add_member_overload("sub", "quantity_sub", q(), vec![q()], sub)?;
    env.add_member_overload("sub", "quantity_sub_int", q(), vec![INT_TYPE], sub)?;
    Ok(())
}

/// A copy of a type (`Type` is not `Clone`).
trait CloneType {
    fn clone_type(&self) -> Type;
}

impl CloneType for Type {
    fn clone_type(&self) -> Type {
        std::borrow::ToOwned::to_owned(self)
    }
}

type Out<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

fn to_quantity<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let q = parse(text(&args, 0)?).map_err(|e| error("quantity", e))?;
    owned(Opaque(q))
}

fn is_quantity<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelBool::from(parse(text(&args, 0)?).is_ok()))
}

fn sign<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelInt::from(arg::<Quantity>(&args, 0)?.sign()))
}

fn ordering(args: &[CowVal<'_, '_>]) -> Result<Ordering, ExecutionError> {
    Ok(arg::<Quantity>(args, 0)?.cmp(arg::<Quantity>(args, 1)?))
}

fn greater<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelBool::from(ordering(&args)? == Ordering::Greater))
}

fn less<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelBool::from(ordering(&args)? == Ordering::Less))
}

fn compare_to<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelInt::from(ordering(&args)? as i64))
}

fn as_float<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelDouble::from(arg::<Quantity>(&args, 0)?.to_f64()))
}

fn as_integer<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    match arg::<Quantity>(&args, 0)?.as_int() {
        Some(v) => owned(CelInt::from(v)),
        None => Err(error("asInteger", "cannot convert value to integer")),
    }
}

fn is_integer<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelBool::from(arg::<Quantity>(&args, 0)?.as_int().is_some()))
}

/// The second operand: a quantity, or an integer as one.
fn operand(args: &[CowVal<'_, '_>]) -> Result<Quantity, ExecutionError> {
    if let Some(i) = args.get(1).and_then(|a| a.downcast_ref::<CelInt>()) {
        return Ok(Quantity::Int {
            value: *i.inner(),
            scale: 0,
        });
    }
    arg::<Quantity>(args, 1).copied()
}

fn add<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(Opaque(
        arg::<Quantity>(&args, 0)?.add(operand(&args)?, false),
    ))
}

fn sub<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(Opaque(
        arg::<Quantity>(&args, 0)?.add(operand(&args)?, true),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_parse_into_the_forms_apimachinery_uses() {
        assert_eq!(
            parse("1Gi"),
            Ok(Quantity::Int {
                value: 1 << 30,
                scale: 0
            })
        );
        assert_eq!(
            parse("500m"),
            Ok(Quantity::Int {
                value: 500,
                scale: -3
            })
        );
        assert_eq!(
            parse("1.5"),
            Ok(Quantity::Int {
                value: 15,
                scale: -1
            })
        );
        assert_eq!(
            parse("-2k"),
            Ok(Quantity::Int {
                value: -2,
                scale: 3
            })
        );
        assert_eq!(parse("1e3"), Ok(Quantity::Int { value: 1, scale: 3 }));
        assert_eq!(
            parse("1.5Gi"),
            Ok(Quantity::Dec {
                mantissa: 16_106_127_360,
                exponent: -1
            })
        );
        assert_eq!(
            parse("1K").unwrap_err(),
            "unable to parse quantity's suffix"
        );
        assert!(
            parse("1Gb")
                .unwrap_err()
                .starts_with("quantities must match the regular expression")
        );
        assert!(parse("").is_err());
    }

    #[test]
    fn quantities_compare_by_value() {
        let q = |s: &str| parse(s).expect("valid");
        assert_eq!(q("1Gi").cmp(&q("1G")), Ordering::Greater);
        assert_eq!(q("1000m").cmp(&q("1")), Ordering::Equal);
        assert_eq!(
            q("1").add(q("500m"), false),
            Quantity::Int {
                value: 1500,
                scale: -3
            }
        );
        assert_eq!(
            q("1000m").as_int(),
            None,
            "a negative scale is not an integer"
        );
        assert_eq!(q("2k").as_int(), Some(2000));
    }
}
