//! The time formats of go-openapi's `strfmt`: `date` (Go's `time.Parse("2006-01-02")`),
//! `date-time` (`IsDateTime`: a date, a `t`, then a time matched by a
//! pattern whose fraction dot matches any character) and `duration`
//! (`time.ParseDuration`, or failing that any number followed by
//! something that starts like a unit: `5 weeks`).

use std::sync::LazyLock;

use chrono::{DateTime, FixedOffset, NaiveDateTime};
use regex::Regex;

use super::duration;

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

/// `strfmt.IsDuration`: `strfmt.ParseDuration` reads it.
pub(crate) fn is_duration(s: &str) -> bool {
    parse_duration(s).is_some()
}

/// `strfmt.ParseDuration`: Go's `time.ParseDuration`, or failing that
/// every `<digits><space><letters>` of `s` read as a number (that must fit
/// an `int`) of a unit its letters start like (`5 weeks`, `3 days`, `1
/// hr`), summed as Go sums `time.Duration`s; none when no unit is named.
pub(crate) fn parse_duration(s: &str) -> Option<i64> {
    static MATCHER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(([0-9]+)[\t\n\x0C\r ]*([A-Za-z\u{B5}]+))")
            .expect("a fixed pattern that compiles")
    });
    const UNITS: [(&[&str], i64); 8] = [
        (&["ns", "nano"], 1),
        (&["us", "\u{B5}s", "micro"], 1_000),
        (&["ms", "milli"], 1_000_000),
        (&["s", "sec"], 1_000_000_000),
        (&["m", "min"], 60_000_000_000),
        (&["h", "hr", "hour"], 3_600_000_000_000),
        (&["d", "day"], 86_400_000_000_000),
        (&["w", "wk", "week"], 604_800_000_000_000),
    ];
    if let Ok(nanos) = duration::parse_duration(s) {
        return Some(nanos);
    }
    let mut total: i64 = 0;
    let mut ok = false;
    for m in MATCHER.captures_iter(s) {
        let factor: i64 = m[2].parse().ok()?;
        let unit = m[3].trim().to_lowercase();
        for (variants, multiplier) in UNITS {
            let last = variants.len() - 1;
            for (i, variant) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(variant)) || variant.eq_ignore_ascii_case(&unit) {
                    ok = true;
                    total = total.wrapping_add(factor.wrapping_mul(multiplier));
                }
            }
        }
    }
    ok.then_some(total)
}

/// `strfmt.ParseDateTime`: RFC 3339, with or without fractions, or a
/// local time taken as UTC.
pub(crate) fn parse_date_time(s: &str) -> Option<DateTime<FixedOffset>> {
    DateTime::parse_from_rfc3339(s).ok().or_else(|| {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S")
            .ok()
            .map(|t| t.and_utc().fixed_offset())
    })
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
