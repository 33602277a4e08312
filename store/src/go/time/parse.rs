//! Go's `time.Parse` with the layouts the real server reads timestamps
//! with (`time.RFC3339` for `metav1.Time`, `RFC3339Micro` for
//! `metav1.MicroTime`), element by element as `time.parse` walks a layout,
//! with its exact errors (`parsing time "x" as "2006-01-02T15:04:05Z07:00":
//! cannot parse "x" as "2006"`, `parsing time "...": month out of range`);
//! and `t.UTC().Format(time.RFC3339)`.

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, Timelike};

/// A layout the real server parses timestamps with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Layout {
    /// `time.RFC3339`: `2006-01-02T15:04:05Z07:00` (a fraction of a second
    /// is read all the same).
    Rfc3339,
    /// `metav1.RFC3339Micro`: `2006-01-02T15:04:05.000000Z07:00` (exactly
    /// six fractional digits).
    Rfc3339Micro,
}

/// One element of a layout, as `nextStdChunk` splits it.
#[derive(Clone, Copy)]
enum Element {
    /// Text that must be there (`-`, `T`, `:`).
    Literal(&'static str),
    /// `2006`.
    LongYear,
    /// `01`.
    ZeroMonth,
    /// `02`.
    ZeroDay,
    /// `15`.
    Hour,
    /// `04`.
    ZeroMinute,
    /// `05`.
    ZeroSecond,
    /// `.000000`: exactly this many fractional digits.
    FracSecond0(usize),
    /// `Z07:00`.
    ColonTz,
}

impl Element {
    /// The element as the layout writes it.
    fn text(self) -> &'static str {
        match self {
            Element::Literal(text) => text,
            Element::LongYear => "2006",
            Element::ZeroMonth => "01",
            Element::ZeroDay => "02",
            Element::Hour => "15",
            Element::ZeroMinute => "04",
            Element::ZeroSecond => "05",
            Element::FracSecond0(_) => ".000000",
            Element::ColonTz => "Z07:00",
        }
    }
}

impl Layout {
    /// The layout as Go writes it.
    pub(crate) fn text(self) -> &'static str {
        match self {
            Layout::Rfc3339 => "2006-01-02T15:04:05Z07:00",
            Layout::Rfc3339Micro => "2006-01-02T15:04:05.000000Z07:00",
        }
    }

    /// The layout's elements (`RFC3339Micro` is `RFC3339` with exactly six
    /// fractional digits after the seconds).
    fn elements(self) -> Vec<Element> {
        const MICRO: [Element; 13] = [
            Element::LongYear,
            Element::Literal("-"),
            Element::ZeroMonth,
            Element::Literal("-"),
            Element::ZeroDay,
            Element::Literal("T"),
            Element::Hour,
            Element::Literal(":"),
            Element::ZeroMinute,
            Element::Literal(":"),
            Element::ZeroSecond,
            Element::FracSecond0(6),
            Element::ColonTz,
        ];
        MICRO
            .into_iter()
            .filter(|e| self == Layout::Rfc3339Micro || !matches!(e, Element::FracSecond0(_)))
            .collect()
    }
}

/// The fields of a timestamp as read, before the offset is applied.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Parsed {
    /// The year.
    pub year: i64,
    /// The month, 1 to 12.
    pub month: i64,
    /// The day of the month.
    pub day: i64,
    /// The hour.
    pub hour: i64,
    /// The minute.
    pub minute: i64,
    /// The second.
    pub second: i64,
    /// The fraction of a second, in nanoseconds.
    pub nanos: i64,
    /// The offset from UTC, in seconds east.
    pub offset: i64,
}

/// Go's `quote` in package time: `\xNN` for every byte of a non-ASCII or
/// control character.
pub(crate) fn quote(value: &[u8]) -> String {
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

/// The package's `atoi`: an optional sign, then decimal digits only.
fn atoi(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = digits.iter().try_fold(0i64, |n, d| {
        n.checked_mul(10)?.checked_add(i64::from(d - b'0'))
    })?;
    Some(if negative { -n } else { n })
}

/// `parseNanoseconds`: a `.` or `,` and the digits after it (the first
/// nine count), as nanoseconds; `Err(true)` when out of range.
fn nanoseconds(value: &[u8], nbytes: usize) -> Result<i64, bool> {
    if !matches!(value.first(), Some(b'.' | b',')) {
        return Err(false);
    }
    let nbytes = nbytes.min(10);
    let ns = atoi(&value[1..nbytes]).ok_or(false)?;
    if ns < 0 {
        return Err(true);
    }
    Ok((nbytes..10).fold(ns, |ns, _| ns * 10))
}

fn days_in(month: i64, year: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Reads `text` as `time.Parse(layout, text)` does: the fields, or Go's
/// error.
pub(crate) fn parse(layout: Layout, text: &str) -> Result<Parsed, String> {
    let all = text.as_bytes();
    let cannot = |rest: &[u8], element: &str| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            quote(all),
            quote(layout.text().as_bytes()),
            quote(rest),
            quote(element.as_bytes())
        )
    };
    let out_of_range = |what: &str| format!("parsing time {}: {what} out of range", quote(all));
    let mut f = Parsed::default();
    let mut value = all;
    let elements = layout.elements();
    for (at, element) in elements.iter().enumerate() {
        let hold = value;
        // A range error and a malformed element, as Go's loop keeps them.
        let mut range: Option<&str> = None;
        let mut bad = false;
        match *element {
            Element::Literal(text) => match value.strip_prefix(text.as_bytes()) {
                Some(rest) => {
                    value = rest;
                    continue;
                }
                None => return Err(cannot(value, text)),
            },
            Element::LongYear => {
                if value.len() < 4 || !is_digit(value, 0) {
                    bad = true;
                } else {
                    match atoi(&value[..4]) {
                        Some(year) => f.year = year,
                        None => bad = true,
                    }
                    value = &value[4..];
                }
            }
            Element::ZeroMonth | Element::ZeroDay | Element::Hour | Element::ZeroMinute => {
                let fixed = !matches!(element, Element::Hour);
                match getnum(value, fixed) {
                    None => bad = true,
                    Some((number, rest)) => {
                        value = rest;
                        match element {
                            Element::ZeroMonth => {
                                f.month = number;
                                if !(1..=12).contains(&number) {
                                    range = Some("month");
                                }
                            }
                            Element::ZeroDay => f.day = number,
                            Element::Hour => {
                                f.hour = number;
                                if number >= 24 {
                                    range = Some("hour");
                                }
                            }
                            _ => {
                                f.minute = number;
                                if number >= 60 {
                                    range = Some("minute");
                                }
                            }
                        }
                    }
                }
            }
            Element::ZeroSecond => match getnum(value, true) {
                None => bad = true,
                Some((number, rest)) => {
                    value = rest;
                    f.second = number;
                    if number >= 60 {
                        range = Some("second");
                    } else if value.len() >= 2
                        && matches!(value[0], b'.' | b',')
                        && is_digit(value, 1)
                        && !matches!(elements.get(at + 1), Some(Element::FracSecond0(_)))
                    {
                        // A fraction of a second the layout does not name is
                        // read all the same.
                        let mut n = 2;
                        while is_digit(value, n) {
                            n += 1;
                        }
                        match nanoseconds(value, n) {
                            Ok(nanos) => f.nanos = nanos,
                            Err(true) => range = Some("fractional second"),
                            Err(false) => bad = true,
                        }
                        value = &value[n..];
                    }
                }
            },
            Element::FracSecond0(digits) => {
                let ndigit = 1 + digits;
                if value.len() < ndigit {
                    bad = true;
                } else {
                    match nanoseconds(value, ndigit) {
                        Ok(nanos) => f.nanos = nanos,
                        Err(true) => range = Some("fractional second"),
                        Err(false) => bad = true,
                    }
                    value = &value[ndigit..];
                }
            }
            Element::ColonTz => {
                if value.first() == Some(&b'Z') {
                    value = &value[1..];
                    continue;
                }
                if value.len() < 6 || value[3] != b':' {
                    bad = true;
                } else {
                    let (sign, hours, minutes) = (value[0], &value[1..3], &value[4..6]);
                    value = &value[6..];
                    let hours = getnum(hours, true);
                    let minutes = hours.and_then(|_| getnum(minutes, true));
                    bad = minutes.is_none();
                    let (hours, minutes) = (hours.map_or(0, |h| h.0), minutes.map_or(0, |m| m.0));
                    // Go keeps the last range error it meets.
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
                        _ => bad = true,
                    }
                }
            }
        }
        if let Some(what) = range {
            return Err(out_of_range(what));
        }
        if bad {
            return Err(cannot(hold, element.text()));
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
        return Err(out_of_range("day"));
    }
    Ok(f)
}

/// `t.UTC().Format(RFC3339Micro)` (metav1.MicroTime's encoding: six
/// fractional digits) of what was parsed, or `None` for the zero time.
pub(crate) fn format_utc_micro(f: &Parsed) -> Option<String> {
    let seconds = format_utc(&Parsed {
        nanos: 0,
        ..f.clone()
    });
    match seconds {
        Some(text) => {
            let text = text.strip_suffix('Z').unwrap_or(&text).to_string();
            Some(format!("{text}.{:06}Z", f.nanos / 1000))
        }
        // The zero second with a fraction is not the zero time.
        None if f.nanos != 0 => Some(format!("0001-01-01T00:00:00.{:06}Z", f.nanos / 1000)),
        None => None,
    }
}

/// `t.UTC().Format(time.RFC3339)` of what was parsed, or `None` for the
/// zero time (`0001-01-01T00:00:00Z`).
pub(crate) fn format_utc(f: &Parsed) -> Option<String> {
    let local = NaiveDate::from_ymd_opt(f.year as i32, f.month as u32, f.day as u32)
        .and_then(|date| date.and_hms_opt(f.hour as u32, f.minute as u32, f.second as u32))
        .expect("every field was checked to be in range");
    let utc: NaiveDateTime = local - Duration::seconds(f.offset);
    let zero = NaiveDate::from_ymd_opt(1, 1, 1)
        .and_then(|date| date.and_hms_opt(0, 0, 0))
        .expect("the zero time is a valid date");
    if utc == zero && f.nanos == 0 {
        return None;
    }
    let year = utc.year();
    // Go writes at least four digits, and the sign of years before 1.
    let year = if year < 0 {
        format!("-{:04}", -year)
    } else {
        format!("{year:04}")
    };
    Some(format!(
        "{year}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        utc.month(),
        utc.day(),
        utc.hour(),
        utc.minute(),
        utc.second()
    ))
}
