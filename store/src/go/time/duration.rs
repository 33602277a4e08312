//! Go's `time.ParseDuration` (`1h30m`, `1.5s`, `-2ms`, `0`): the
//! nanoseconds as an `int64`, or Go's error (`time: unknown unit "d" in
//! duration "3d"`), exactly as Go computes them, fractions of a unit
//! through a `float64` and the range checked against 2^63.

use super::parse::quote;

/// `time.ParseDuration`.
pub(crate) fn parse_duration(text: &str) -> Result<i64, String> {
    const MAX: u64 = 1 << 63;
    let invalid = || format!("time: invalid duration {}", quote(text.as_bytes()));
    let negative = text.starts_with('-');
    let mut s = text.strip_prefix(['-', '+']).unwrap_or(text);
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: u64 = 0;
    while !s.is_empty() {
        let b = s.as_bytes();
        if !(b[0] == b'.' || b[0].is_ascii_digit()) {
            return Err(invalid());
        }
        let int_digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
        let mut v = leading_int(&s[..int_digits]).ok_or_else(invalid)?;
        s = &s[int_digits..];
        let (mut fraction, mut scale, mut post) = (0u64, 1f64, false);
        if let Some(rest) = s.strip_prefix('.') {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            (fraction, scale) = leading_fraction(&rest[..digits]);
            post = digits > 0;
            s = &rest[digits..];
        }
        if int_digits == 0 && !post {
            return Err(invalid());
        }
        let unit_len = s
            .bytes()
            .take_while(|c| !(*c == b'.' || c.is_ascii_digit()))
            .count();
        if unit_len == 0 {
            return Err(format!(
                "time: missing unit in duration {}",
                quote(text.as_bytes())
            ));
        }
        let unit: u64 = match &s[..unit_len] {
            "ns" => 1,
            "us" | "\u{B5}s" | "\u{3BC}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            other => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    quote(other.as_bytes()),
                    quote(text.as_bytes())
                ));
            }
        };
        s = &s[unit_len..];
        if v > MAX / unit {
            return Err(invalid());
        }
        v *= unit;
        if fraction > 0 {
            v += (fraction as f64 * (unit as f64 / scale)) as u64;
            if v > MAX {
                return Err(invalid());
            }
        }
        total += v;
        if total > MAX {
            return Err(invalid());
        }
    }
    if negative {
        // -2^63 is a duration, 2^63 is not.
        return Ok((total as i64).wrapping_neg());
    }
    i64::try_from(total).map_err(|_| invalid())
}

/// `leadingInt`: the digits as a number, none on overflow past 2^63.
fn leading_int(digits: &str) -> Option<u64> {
    let mut x: u64 = 0;
    for b in digits.bytes() {
        if x > (1 << 63) / 10 {
            return None;
        }
        x = x * 10 + u64::from(b - b'0');
        if x > 1 << 63 {
            return None;
        }
    }
    Some(x)
}

/// `leadingFraction`: the digits as a number and its scale, precision
/// dropped past overflow.
fn leading_fraction(digits: &str) -> (u64, f64) {
    let (mut x, mut scale) = (0u64, 1f64);
    for b in digits.bytes() {
        if x > ((1 << 63) - 1) / 10 {
            break;
        }
        let y = x * 10 + u64::from(b - b'0');
        if y > 1 << 63 {
            break;
        }
        x = y;
        scale *= 10.0;
    }
    (x, scale)
}

#[cfg(test)]
mod tests {
    use super::parse_duration;

    #[test]
    fn durations_read_as_go_reads_them() {
        assert_eq!(parse_duration("1h30m"), Ok(5_400_000_000_000));
        assert_eq!(parse_duration("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_duration("-2ms"), Ok(-2_000_000));
        assert_eq!(parse_duration("+0"), Ok(0));
        assert_eq!(parse_duration(".5us"), Ok(500));
        assert_eq!(parse_duration("9223372036854775807ns"), Ok(i64::MAX));
        assert_eq!(parse_duration("-9223372036854775808ns"), Ok(i64::MIN));
        assert_eq!(
            parse_duration("9223372036854775808ns"),
            Err("time: invalid duration \"9223372036854775808ns\"".into())
        );
        assert_eq!(
            parse_duration("3d"),
            Err("time: unknown unit \"d\" in duration \"3d\"".into())
        );
        assert_eq!(
            parse_duration("10"),
            Err("time: missing unit in duration \"10\"".into())
        );
        assert_eq!(
            parse_duration("1.2.3s"),
            Err("time: missing unit in duration \"1.2.3s\"".into())
        );
        assert_eq!(
            parse_duration(""),
            Err("time: invalid duration \"\"".into())
        );
        assert_eq!(
            parse_duration("."),
            Err("time: invalid duration \".\"".into())
        );
    }
}
