//! Timestamps as `metav1.Time` reads and writes them: Go's
//! `time.Parse(time.RFC3339, s)` with its exact errors (`parsing time "x"
//! as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"`, `parsing
//! time "...": month out of range`), then `UTC().Format(time.RFC3339)`:
//! offsets folded into UTC, fractions of a second dropped, and the zero
//! time (`0001-01-01T00:00:00Z`) written as no time at all.

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, Timelike};

const LAYOUT: &str = "2006-01-02T15:04:05Z07:00";

/// A timestamp read: the zero time, or one written back in RFC 3339, UTC.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Time {
    /// `time.Time{}`: written as `null`, or left out.
    Zero,
    /// `2024-01-01T08:00:00Z`.
    At(String),
}

/// Go's `quote` in package time: `\xNN` for every byte of a non-ASCII or
/// control character.
fn quote(value: &[u8]) -> String {
    let text = String::from_utf8_lossy(value);
    let mut out = String::from("\"");
    let mut offset = 0;
    for c in text.chars() {
        let width = c.len_utf8();
        let is_replacement = c == char::REPLACEMENT_CHARACTER
            && value.get(offset..offset + 3) != Some("\u{fffd}".as_bytes());
        if is_replacement {
            // An invalid byte of the original.
            out.push_str(&format!("\\x{:02x}", value[offset]));
            offset += 1;
            continue;
        }
        if (c as u32) >= 0x80 || (c as u32) < 0x20 {
            for byte in &value[offset..offset + width] {
                out.push_str(&format!("\\x{byte:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
        offset += width;
    }
    out.push('"');
    out
}

/// `*time.ParseError`.
fn cannot_parse(value: &[u8], rest: &[u8], element: &str) -> String {
    format!(
        "parsing time {} as {}: cannot parse {} as {}",
        quote(value),
        quote(LAYOUT.as_bytes()),
        quote(rest),
        quote(element.as_bytes())
    )
}

fn out_of_range(value: &[u8], what: &str) -> String {
    format!("parsing time {}: {what} out of range", quote(value))
}

fn is_digit(value: &[u8], at: usize) -> bool {
    value.get(at).is_some_and(u8::is_ascii_digit)
}

/// `getnum`: one or two digits (exactly two when `fixed`).
fn getnum(value: &[u8], fixed: bool) -> Option<(i64, &[u8])> {
    if !is_digit(value, 0) {
        return None;
    }
    if !is_digit(value, 1) {
        if fixed {
            return None;
        }
        return Some((i64::from(value[0] - b'0'), &value[1..]));
    }
    Some((
        i64::from(value[0] - b'0') * 10 + i64::from(value[1] - b'0'),
        &value[2..],
    ))
}

fn days_in(month: i64, year: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The fields of a timestamp as read, before the offset is applied.
#[derive(Default)]
struct Fields {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    nanos: i64,
    offset: i64,
}

/// Reads `text` as `time.Parse(time.RFC3339, text)` does.
pub(crate) fn parse(text: &str) -> Result<Time, String> {
    let all = text.as_bytes();
    let mut f = Fields::default();
    let mut value = all;

    // "2006"
    if value.len() < 4 || !is_digit(value, 0) || !value[..4].iter().all(u8::is_ascii_digit) {
        return Err(cannot_parse(all, value, "2006"));
    }
    f.year = value[..4]
        .iter()
        .fold(0, |n, d| n * 10 + i64::from(d - b'0'));
    value = &value[4..];

    // "-01", "-02", "T15", ":04", ":05": a separator, then a number.
    let steps: [(u8, &str, bool); 5] = [
        (b'-', "01", true),
        (b'-', "02", true),
        (b'T', "15", false),
        (b':', "04", true),
        (b':', "05", true),
    ];
    for (separator, element, fixed) in steps {
        if value.first() != Some(&separator) {
            return Err(cannot_parse(all, value, &char::from(separator).to_string()));
        }
        value = &value[1..];
        let hold = value;
        let Some((number, rest)) = getnum(value, fixed) else {
            return Err(cannot_parse(all, hold, element));
        };
        value = rest;
        let (field, limit, name) = match element {
            "01" => (&mut f.month, 12, "month"),
            "02" => (&mut f.day, 99, "day"),
            "15" => (&mut f.hour, 23, "hour"),
            "04" => (&mut f.minute, 59, "minute"),
            _ => (&mut f.second, 59, "second"),
        };
        *field = number;
        if number > limit || (element == "01" && number == 0) {
            return Err(out_of_range(all, name));
        }
    }
    // A fraction of a second the layout does not name is read all the same.
    if value.len() >= 2 && (value[0] == b'.' || value[0] == b',') && is_digit(value, 1) {
        let mut n = 2;
        while is_digit(value, n) {
            n += 1;
        }
        let digits = &value[1..n.min(10)];
        let mut nanos = digits
            .iter()
            .fold(0, |acc, d| acc * 10 + i64::from(d - b'0'));
        for _ in digits.len()..9 {
            nanos *= 10;
        }
        f.nanos = nanos;
        value = &value[n..];
    }

    // "Z07:00"
    if value.first() == Some(&b'Z') {
        value = &value[1..];
    } else {
        let hold = value;
        let bad = || cannot_parse(all, hold, "Z07:00");
        if value.len() < 6 || value[3] != b':' {
            return Err(bad());
        }
        let (sign, hours, minutes) = (value[0], &value[1..3], &value[4..6]);
        value = &value[6..];
        let hours = getnum(hours, true);
        let minutes = hours.and_then(|_| getnum(minutes, true));
        let mut failed = minutes.is_none();
        let (hours, minutes) = (hours.map_or(0, |h| h.0), minutes.map_or(0, |m| m.0));
        // Go keeps the last range error it meets, and tells it first.
        let mut range = None;
        if hours > 24 {
            range = Some("time zone offset hour");
        }
        if minutes > 60 {
            range = Some("time zone offset minute");
        }
        f.offset = (hours * 60 + minutes) * 60;
        match sign {
            b'+' => {}
            b'-' => f.offset = -f.offset,
            _ => failed = true,
        }
        if let Some(what) = range {
            return Err(out_of_range(all, what));
        }
        if failed {
            return Err(bad());
        }
    }
    if !value.is_empty() {
        return Err(format!(
            "parsing time {}: extra text: {}",
            quote(all),
            quote(value)
        ));
    }
    if f.day < 1 || f.day > days_in(f.month, f.year) {
        return Err(out_of_range(all, "day"));
    }
    Ok(format_utc(&f))
}

/// `t.UTC().Format(time.RFC3339)`, or the zero time.
fn format_utc(f: &Fields) -> Time {
    let local = NaiveDate::from_ymd_opt(f.year as i32, f.month as u32, f.day as u32)
        .and_then(|date| date.and_hms_opt(f.hour as u32, f.minute as u32, f.second as u32))
        .expect("every field was checked to be in range");
    let utc: NaiveDateTime = local - Duration::seconds(f.offset);
    let zero = NaiveDate::from_ymd_opt(1, 1, 1)
        .and_then(|date| date.and_hms_opt(0, 0, 0))
        .expect("the zero time is a valid date");
    if utc == zero && f.nanos == 0 {
        return Time::Zero;
    }
    let year = utc.year();
    // Go writes at least four digits, and the sign of years before 1.
    let year = if year < 0 {
        format!("-{:04}", -year)
    } else {
        format!("{year:04}")
    };
    Time::At(format!(
        "{year}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        utc.month(),
        utc.day(),
        utc.hour(),
        utc.minute(),
        utc.second()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Time {
        Time::At(text.into())
    }

    #[test]
    fn offsets_fold_into_utc_and_fractions_go() {
        assert_eq!(
            parse("2024-01-01T10:00:00.5+02:00"),
            Ok(at("2024-01-01T08:00:00Z"))
        );
        assert_eq!(
            parse("2024-01-01T00:30:00+01:00"),
            Ok(at("2023-12-31T23:30:00Z"))
        );
        assert_eq!(
            parse("2024-02-29T23:59:59Z"),
            Ok(at("2024-02-29T23:59:59Z"))
        );
        // One digit of hour is read (Go's general parser).
        assert_eq!(parse("2024-01-01T5:00:00Z"), Ok(at("2024-01-01T05:00:00Z")));
    }

    #[test]
    fn the_zero_time_is_no_time() {
        assert_eq!(parse("0001-01-01T00:00:00Z"), Ok(Time::Zero));
        assert_eq!(
            parse("0001-01-01T00:00:00.5Z"),
            Ok(at("0001-01-01T00:00:00Z"))
        );
    }

    /// The messages the real server gave for these (an embedded
    /// resource's `metadata.creationTimestamp`).
    #[test]
    fn errors_are_go_errors() {
        assert_eq!(
            parse("bad"),
            Err(r#"parsing time "bad" as "2006-01-02T15:04:05Z07:00": cannot parse "bad" as "2006""#.into())
        );
        assert_eq!(
            parse("2024-13-01T00:00:00Z"),
            Err(r#"parsing time "2024-13-01T00:00:00Z": month out of range"#.into())
        );
        assert_eq!(
            parse("2024-02-30T00:00:00Z"),
            Err(r#"parsing time "2024-02-30T00:00:00Z": day out of range"#.into())
        );
        assert_eq!(
            parse("2024-01-01 00:00:00Z"),
            Err(r#"parsing time "2024-01-01 00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 00:00:00Z" as "T""#.into())
        );
        assert_eq!(
            parse("2024-01-01T00:00:00"),
            Err(r#"parsing time "2024-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00""#.into())
        );
        assert_eq!(
            parse("2024-01-01T00:00:00Zjunk"),
            Err(r#"parsing time "2024-01-01T00:00:00Zjunk": extra text: "junk""#.into())
        );
        assert_eq!(
            parse("2024-01-01T24:00:00Z"),
            Err(r#"parsing time "2024-01-01T24:00:00Z": hour out of range"#.into())
        );
        assert_eq!(
            parse("é"),
            Err(r#"parsing time "\xc3\xa9" as "2006-01-02T15:04:05Z07:00": cannot parse "\xc3\xa9" as "2006""#.into())
        );
    }
}
