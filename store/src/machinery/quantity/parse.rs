//! A quantity's text as `resource.ParseQuantity` reads it: a number, a
//! suffix (decimal SI, binary SI, or an exponent), the words of each
//! refusal.

use std::cmp::Ordering;

use serde_json::Value;

use super::{Format, MAX_INT64_FACTORS, NANO, ParseError, Quantity, mul_small};

impl Quantity {
    /// `resource.ParseQuantity`.
    pub(crate) fn parse(text: &str) -> Result<Quantity, ParseError> {
        if text.is_empty() {
            return Err(ParseError::Format);
        }
        if text == "0" {
            return Ok(Quantity::zero(Format::DecimalSI, Some("0".into())));
        }
        let parts = split(text)?;
        let (base, exponent, format) = interpret(parts.suffix).ok_or(ParseError::Suffix)?;
        let num_len = parts.num.len() as i64;
        let denom_len = parts.denom.len() as i64;
        // Go's fast path: an int64 amount, its text kept when canonical.
        let mut mantissa_shift = 0u32;
        let precision = match format {
            Format::DecimalExponent | Format::DecimalSI => {
                MAX_INT64_FACTORS - (num_len + denom_len)
            }
            Format::BinarySI if exponent >= 0 && parts.denom.is_empty() => {
                mantissa_shift = exponent as u32;
                // int32(float32(exponent)*3/10): exponents are multiples of 10.
                15 - num_len - (exponent as i64 * 3 / 10) - 1
            }
            Format::BinarySI => -1,
        };
        if precision >= 0 {
            let scale = match format {
                Format::BinarySI => 0,
                _ => exponent as i64,
            } - denom_len;
            if scale >= NANO {
                let shifted = format!("{}{}", parts.num, parts.denom);
                let value: i64 = shifted.parse().map_err(|_| ParseError::Numeric)?;
                let result = if mantissa_shift > 0 {
                    value
                        .checked_mul(1i64.checked_shl(mantissa_shift).unwrap_or(0))
                        .filter(|_| mantissa_shift < 63)
                } else {
                    Some(value)
                };
                if let Some(result) = result {
                    let canonical = match format {
                        Format::BinarySI => exponent % 10 == 0 && value & 0x07 != 0,
                        _ => {
                            scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0')
                        }
                    };
                    let mut q = Quantity::from_int(result.unsigned_abs() as u128, scale, format);
                    q.negative = !parts.positive && !q.digits.is_empty();
                    q.int_scale = Some(scale);
                    if canonical {
                        q.cached = Some(text.to_string());
                    }
                    return Ok(q);
                }
            }
        }
        // Go's `inf.Dec` path.
        let mut q = Quantity::from_decimal(parts.value).ok_or(ParseError::Numeric)?;
        q.format = format;
        if base == 10 {
            q.exp += exponent as i64;
        } else {
            for _ in 0..exponent {
                q.digits = mul_small(&q.digits, 2);
            }
        }
        // Anything non-zero is rounded up to a nano-unit at least.
        q.round_magnitude(NANO);
        if format == Format::BinarySI
            && q.cmp_magnitude(&Quantity::from_int(i64::MAX as u128, 0, format))
                == Ordering::Greater
        {
            let negative = q.negative;
            q = Quantity::from_int(i64::MAX as u128, 0, format);
            q.negative = negative;
        }
        if format == Format::BinarySI
            && !q.digits.is_empty()
            && q.cmp_magnitude(&Quantity::from_int(1, 0, format)) == Ordering::Less
        {
            q.format = Format::DecimalSI;
        }
        Ok(q)
    }

    /// A quantity as it comes in JSON (`UnmarshalJSON`): a string (spaces
    /// around it trimmed), a number (its text), or `null` (zero).
    pub(crate) fn from_json(value: &Value) -> Result<Quantity, ParseError> {
        match value {
            Value::Null => Ok(Quantity::zero(Format::DecimalExponent, None)),
            Value::String(s) => Quantity::parse(s.trim()),
            Value::Number(n) => Quantity::parse(&n.to_string()),
            // Go hands the JSON text itself to the parser, which refuses it.
            _ => Err(ParseError::Format),
        }
    }
}

/// The parts of a quantity's text (`parseQuantityString`).
struct Parts<'a> {
    positive: bool,
    value: &'a str,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

fn split(text: &str) -> Result<Parts<'_>, ParseError> {
    let bytes = text.as_bytes();
    let end = bytes.len();
    let mut pos = 0;
    let mut positive = true;
    match bytes.first() {
        Some(b'-') => {
            positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    let whole = |num: &'static str| Parts {
        positive,
        value: text,
        num,
        denom: "",
        suffix: "",
    };
    while pos < end && bytes[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Ok(whole("0"));
    }
    let start = pos;
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    let mut num = &text[start..pos];
    if pos >= end {
        return Ok(Parts {
            positive,
            value: text,
            num,
            denom: "",
            suffix: "",
        });
    }
    if num.is_empty() {
        num = "0";
    }
    let mut denom = "";
    if bytes[pos] == b'.' {
        pos += 1;
        let start = pos;
        while pos < end && bytes[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &text[start..pos];
        if pos >= end {
            return Ok(Parts {
                positive,
                value: text,
                num,
                denom,
                suffix: "",
            });
        }
    }
    let value = &text[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&bytes[pos]) {
        pos += 1;
    }
    if pos < end && matches!(bytes[pos], b'-' | b'+') {
        pos += 1;
    }
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(ParseError::Format);
    }
    Ok(Parts {
        positive,
        value,
        num,
        denom,
        suffix: &text[suffix_start..],
    })
}

/// `suffixHandler.interpret`: base, exponent and format of a suffix.
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    let decimal = match suffix {
        "n" => Some(-9),
        "u" => Some(-6),
        "m" => Some(-3),
        "" => Some(0),
        "k" => Some(3),
        "M" => Some(6),
        "G" => Some(9),
        "T" => Some(12),
        "P" => Some(15),
        "E" => Some(18),
        _ => None,
    };
    if let Some(exponent) = decimal {
        return Some((10, exponent, Format::DecimalSI));
    }
    let binary = match suffix {
        "Ki" => Some(10),
        "Mi" => Some(20),
        "Gi" => Some(30),
        "Ti" => Some(40),
        "Pi" => Some(50),
        "Ei" => Some(60),
        _ => None,
    };
    if let Some(exponent) = binary {
        return Some((2, exponent, Format::BinarySI));
    }
    let rest = suffix.strip_prefix(['e', 'E'])?;
    if rest.is_empty() {
        return None;
    }
    // strconv.ParseInt(.., 10, 64), then int32(..) as Go truncates it.
    let parsed: i64 = rest.parse().ok()?;
    Some((10, parsed as i32, Format::DecimalExponent))
}
