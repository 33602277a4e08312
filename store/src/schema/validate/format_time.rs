//! The time formats of strfmt: `date` (Go's `time.Parse("2006-01-02")`),
//! `date-time` (`IsDateTime`: a date, a `t`, then a time matched by a
//! pattern whose fraction dot matches any character) and `duration`
//! (`time.ParseDuration`, or failing that any number followed by
//! something that starts like a unit: `5 weeks`).

use std::sync::LazyLock;

use regex::Regex;

/// `strfmt.IsDate`.
pub(crate) fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| b[r.clone()].iter().all(u8::is_ascii_digit);
    if !digits(0..4) || !digits(5..7) || !digits(8..10) {
        return false;
    }
    let number =
        |r: std::ops::Range<usize>| b[r].iter().fold(0u32, |n, d| n * 10 + u32::from(d - b'0'));
    let (year, month, day) = (number(0..4), number(5..7), number(8..10));
    if !(1..=12).contains(&month) {
        return false;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    (1..=days).contains(&day)
}

/// `strfmt.IsDateTime`.
pub(crate) fn is_date_time(s: &str) -> bool {
    static TIME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
            .expect("a fixed pattern that compiles")
    });
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    let Some(m) = TIME.captures(parts[1]) else {
        return false;
    };
    &m[1] <= "23" && &m[2] <= "59" && &m[3] <= "59"
}

/// `strfmt.IsDuration` (`ParseDuration`).
pub(crate) fn is_duration(s: &str) -> bool {
    go_parse_duration(s) || scala_duration(s)
}

/// The fallback of `strfmt.ParseDuration`: every `<digits><space><letters>`
/// must have a number that fits an int, and one must name a unit.
fn scala_duration(s: &str) -> bool {
    static MATCHER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(([0-9]+)[\t\n\x0C\r ]*([A-Za-z\u{B5}]+))")
            .expect("a fixed pattern that compiles")
    });
    const UNITS: [&[&str]; 8] = [
        &["ns", "nano"],
        &["us", "\u{B5}s", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let mut ok = false;
    for m in MATCHER.captures_iter(s) {
        if m[2].parse::<i64>().is_err() {
            return false;
        }
        let unit = m[3].trim().to_lowercase();
        for variants in UNITS {
            let last = variants.len() - 1;
            for (i, variant) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(variant)) || variant.eq_ignore_ascii_case(&unit) {
                    ok = true;
                }
            }
        }
    }
    ok
}

/// Go's `time.ParseDuration` (whether it accepts `s`).
fn go_parse_duration(s: &str) -> bool {
    const MAX: u64 = 1 << 63;
    let negative = s.starts_with('-');
    let mut s = s.strip_prefix(['-', '+']).unwrap_or(s);
    if s == "0" {
        return true;
    }
    if s.is_empty() {
        return false;
    }
    let mut total: u64 = 0;
    while !s.is_empty() {
        let b = s.as_bytes();
        if !(b[0] == b'.' || b[0].is_ascii_digit()) {
            return false;
        }
        let int_digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
        let Some(mut v) = leading_int(&s[..int_digits]) else {
            return false;
        };
        s = &s[int_digits..];
        let (mut fraction, mut scale, mut post) = (0u64, 1f64, false);
        if let Some(rest) = s.strip_prefix('.') {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            (fraction, scale) = leading_fraction(&rest[..digits]);
            post = digits > 0;
            s = &rest[digits..];
        }
        if int_digits == 0 && !post {
            return false;
        }
        let unit_len = s
            .bytes()
            .take_while(|c| !(*c == b'.' || c.is_ascii_digit()))
            .count();
        let unit: u64 = match &s[..unit_len] {
            "ns" => 1,
            "us" | "\u{B5}s" | "\u{3BC}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return false,
        };
        s = &s[unit_len..];
        if v > MAX / unit {
            return false;
        }
        v *= unit;
        if fraction > 0 {
            v += (fraction as f64 * (unit as f64 / scale)) as u64;
            if v > MAX {
                return false;
            }
        }
        total += v;
        if total > MAX {
            return false;
        }
    }
    // -2^63 is a duration, 2^63 is not.
    negative || total < MAX
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
    use super::*;

    #[test]
    fn dates_follow_time_parse() {
        assert!(is_date("2024-02-29"));
        assert!(is_date("0000-02-29"));
        assert!(!is_date("2023-02-29"));
        assert!(!is_date("2024-02-30"));
        assert!(!is_date("2024-13-01"));
        assert!(!is_date("2024-1-01"));
        assert!(!is_date("2024-01-01T"));
        assert!(!is_date("+024-01-01"));
    }

    #[test]
    fn date_times_follow_strfmt_with_its_looseness() {
        assert!(is_date_time("2026-11-25T10:00:00Z"));
        assert!(is_date_time("2026-11-25T10:00:00.123+02:00"));
        assert!(is_date_time("2026-11-25t10:00:00z"));
        // What follows another `t` is not looked at; the fraction dot
        // matches anything.
        assert!(is_date_time("2026-01-01T10:00:00ZTgarbage"));
        assert!(is_date_time("2026-01-01t10:00:00x5z"));
        assert!(!is_date_time("2026-13-01T10:00:00Z"));
        assert!(!is_date_time("2026-01-01T24:00:00Z"));
        assert!(!is_date_time("2026-01-01T10:00:00"));
        assert!(!is_date_time("2026-01-01"));
    }

    #[test]
    fn durations_follow_go_then_strfmt() {
        for ok in [
            "1h30m",
            "0",
            "-0",
            "5.h",
            ".5s",
            "1\u{3BC}s",
            "300ms",
            "-1.5h",
            "5 weeks",
            "3 days",
            "1 hr",
        ] {
            assert!(is_duration(ok), "{ok}");
        }
        for bad in [
            "",
            "1",
            "abc",
            "5x",
            "1.5",
            "99999999999999999999s",
            "9223372036854775808ns",
        ] {
            assert!(!is_duration(bad), "{bad}");
        }
        assert!(is_duration("-9223372036854775808ns"));
    }
}
