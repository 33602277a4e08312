//! Lease (coordination.k8s.io/v1): a positive duration and no negative
//! transitions (`ValidateLeaseSpec`); `strategy` and `preferredHolder` are
//! dropped as the strategy drops them while the `CoordinatedLeaderElection`
//! gate is off, as it is by default. Its times are `metav1.MicroTime`,
//! which the real server parses strictly when it decodes the object
//! (`time.Parse` with six fractional digits): a `400` with Go's words for
//! where the parse stopped, not a field error ([`decode`]).

use serde_json::Value;

use crate::builtin::Rules;
use crate::builtin::common::spec_mut;
use crate::field::{ErrorList, FieldError, Path, go_quote};
use crate::metadata::name_is_dns_subdomain;

/// `metav1.RFC3339Micro`.
const LAYOUT: &str = "2006-01-02T15:04:05.000000Z07:00";

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate,
    validate_update: |new, _| validate(new),
    validate_status: None,
};

/// Not a default but `PrepareForCreate` and `PrepareForUpdate` with the
/// gate off: a stored Lease never has a strategy, so an update drops it
/// too. `spec` is always written.
fn default(lease: &mut Value) {
    if let Some(spec) = spec_mut(lease) {
        spec.remove("strategy");
        spec.remove("preferredHolder");
    }
}

fn validate(lease: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let spec = Path::new(["spec"]);
    let number = |key: &str| {
        lease
            .pointer(&format!("/spec/{key}"))
            .and_then(Value::as_i64)
    };
    if let Some(duration) = number("leaseDurationSeconds").filter(|d| *d <= 0) {
        errors.push(FieldError::invalid(
            &spec.child("leaseDurationSeconds"),
            duration,
            "must be greater than 0",
        ));
    }
    if let Some(transitions) = number("leaseTransitions").filter(|t| *t < 0) {
        errors.push(FieldError::invalid(
            &spec.child("leaseTransitions"),
            transitions,
            "must be greater than or equal to 0",
        ));
    }
    errors
}

/// Why `lease` does not decode: an `acquireTime` or `renewTime` that is not
/// a MicroTime (Go's `parsing time ...` error).
pub(crate) fn decode(lease: &Value) -> Option<String> {
    ["acquireTime", "renewTime"].into_iter().find_map(|field| {
        let time = lease.pointer(&format!("/spec/{field}"))?.as_str()?;
        let why = parse_micro_time(time).err()?;
        Some(format!("parsing time {}{why}", go_quote(time)))
    })
}

/// Parses `t` as Go's `time.Parse(RFC3339Micro, t)` does, element by
/// element; what follows `parsing time "t"` in Go's error when it fails.
fn parse_micro_time(t: &str) -> Result<(), String> {
    // The layout's elements: digits (how many), or text to match.
    const ELEMENTS: [(&str, usize); 13] = [
        ("2006", 4),
        ("-", 0),
        ("01", 2),
        ("-", 0),
        ("02", 2),
        ("T", 0),
        ("15", 2),
        (":", 0),
        ("04", 2),
        (":", 0),
        ("05", 2),
        (".000000", 7),
        ("Z07:00", 0),
    ];
    let cannot = |rest: &str, element: &str| {
        Err(format!(
            " as {}: cannot parse {} as {}",
            go_quote(LAYOUT),
            go_quote(rest),
            go_quote(element)
        ))
    };
    let mut rest = t;
    let mut numbers = Vec::new();
    for (element, digits) in ELEMENTS {
        let bytes = rest.as_bytes();
        match (element, digits) {
            (".000000", _) => {
                let ok = bytes.len() >= 7
                    && matches!(bytes[0], b'.' | b',')
                    && bytes[1..7].iter().all(u8::is_ascii_digit);
                if !ok {
                    return cannot(rest, element);
                }
                rest = &rest[7..];
            }
            ("Z07:00", _) => {
                if rest.starts_with('Z') {
                    rest = &rest[1..];
                    continue;
                }
                let ok = bytes.len() >= 6
                    && matches!(bytes[0], b'+' | b'-')
                    && bytes[3] == b':'
                    && [1, 2, 4, 5].iter().all(|&i| bytes[i].is_ascii_digit());
                if !ok {
                    return cannot(rest, element);
                }
                rest = &rest[6..];
            }
            (_, 0) => match rest.strip_prefix(element) {
                Some(after) => rest = after,
                None => return cannot(rest, element),
            },
            (_, n) => {
                if bytes.len() < n || !bytes[..n].iter().all(u8::is_ascii_digit) {
                    return cannot(rest, element);
                }
                numbers.push(rest[..n].parse::<u32>().unwrap_or_default());
                rest = &rest[n..];
            }
        }
    }
    let [year, month, day, hour, minute, second] = numbers[..] else {
        return cannot(rest, LAYOUT);
    };
    for (name, value, max) in [("month", month, 12), ("hour", hour, 23)] {
        if value > max || (name == "month" && value == 0) {
            return Err(format!(": {name} out of range"));
        }
    }
    for (name, value) in [("minute", minute), ("second", second)] {
        if value > 59 {
            return Err(format!(": {name} out of range"));
        }
    }
    if chrono::NaiveDate::from_ymd_opt(year as i32, month, day).is_none() {
        return Err(": day out of range".to_string());
    }
    if !rest.is_empty() {
        return Err(format!(": extra text: {}", go_quote(rest)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_micro_time;

    #[test]
    fn micro_times_fail_where_go_stops() {
        assert_eq!(parse_micro_time("2026-01-02T03:04:05.123456Z"), Ok(()));
        assert_eq!(parse_micro_time("2026-01-02T03:04:05.123456+02:00"), Ok(()));
        let cannot = |rest: &str, element: &str| {
            Err(format!(
                " as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"{rest}\" as \"{element}\""
            ))
        };
        assert_eq!(
            parse_micro_time("2026-01-02T03:04:05Z"),
            cannot("Z", ".000000")
        );
        assert_eq!(
            parse_micro_time("2026-01-02T03:04:05.12Z"),
            cannot(".12Z", ".000000")
        );
        assert_eq!(
            parse_micro_time("2026-01-02T03:04:05.1234567Z"),
            cannot("7Z", "Z07:00")
        );
        assert_eq!(parse_micro_time("yesterday"), cannot("yesterday", "2006"));
        assert_eq!(
            parse_micro_time("2026-13-02T03:04:05.000000Z"),
            Err(": month out of range".into())
        );
        assert_eq!(
            parse_micro_time("2026-02-30T03:04:05.000000Z"),
            Err(": day out of range".into())
        );
        assert_eq!(
            parse_micro_time("2026-01-02T03:04:05.000000Zx"),
            Err(": extra text: \"x\"".into())
        );
    }
}
