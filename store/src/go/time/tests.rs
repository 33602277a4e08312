//! `time.Parse` against Go's answers.

use super::parse::{Layout, format_utc, parse};

fn rfc3339(text: &str) -> Result<Option<String>, String> {
    parse(Layout::Rfc3339, text).map(|f| format_utc(&f))
}

fn micro(text: &str) -> Result<(), String> {
    parse(Layout::Rfc3339Micro, text).map(|_| ())
}

fn at(text: &str) -> Result<Option<String>, String> {
    Ok(Some(text.into()))
}

#[test]
fn offsets_fold_into_utc_and_fractions_go() {
    assert_eq!(
        rfc3339("2024-01-01T10:00:00.5+02:00"),
        at("2024-01-01T08:00:00Z")
    );
    assert_eq!(
        rfc3339("2024-01-01T00:30:00+01:00"),
        at("2023-12-31T23:30:00Z")
    );
    assert_eq!(rfc3339("2024-02-29T23:59:59Z"), at("2024-02-29T23:59:59Z"));
    // One digit of hour is read (Go's general parser).
    assert_eq!(rfc3339("2024-01-01T5:00:00Z"), at("2024-01-01T05:00:00Z"));
}

#[test]
fn the_zero_time_is_no_time() {
    assert_eq!(rfc3339("0001-01-01T00:00:00Z"), Ok(None));
    assert_eq!(
        rfc3339("0001-01-01T00:00:00.5Z"),
        at("0001-01-01T00:00:00Z")
    );
}

/// The messages the real server gave for these (an embedded
/// resource's `metadata.creationTimestamp`).
#[test]
fn errors_are_go_errors() {
    assert_eq!(
        rfc3339("bad"),
        Err(
            r#"parsing time "bad" as "2006-01-02T15:04:05Z07:00": cannot parse "bad" as "2006""#
                .into()
        )
    );
    assert_eq!(
        rfc3339("2024-13-01T00:00:00Z"),
        Err(r#"parsing time "2024-13-01T00:00:00Z": month out of range"#.into())
    );
    assert_eq!(
        rfc3339("2024-02-30T00:00:00Z"),
        Err(r#"parsing time "2024-02-30T00:00:00Z": day out of range"#.into())
    );
    assert_eq!(
        rfc3339("2024-01-01 00:00:00Z"),
        Err(r#"parsing time "2024-01-01 00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 00:00:00Z" as "T""#.into())
    );
    assert_eq!(
        rfc3339("2024-01-01T00:00:00"),
        Err(r#"parsing time "2024-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00""#.into())
    );
    assert_eq!(
        rfc3339("2024-01-01T00:00:00Zjunk"),
        Err(r#"parsing time "2024-01-01T00:00:00Zjunk": extra text: "junk""#.into())
    );
    assert_eq!(
        rfc3339("2024-01-01T24:00:00Z"),
        Err(r#"parsing time "2024-01-01T24:00:00Z": hour out of range"#.into())
    );
    assert_eq!(
        rfc3339("é"),
        Err(r#"parsing time "\xc3\xa9" as "2006-01-02T15:04:05Z07:00": cannot parse "\xc3\xa9" as "2006""#.into())
    );
}

#[test]
fn micro_times_fail_where_go_stops() {
    assert_eq!(micro("2026-01-02T03:04:05.123456Z"), Ok(()));
    assert_eq!(micro("2026-01-02T03:04:05.123456+02:00"), Ok(()));
    let cannot = |value: &str, rest: &str, element: &str| {
        Err(format!(
            "parsing time \"{value}\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"{rest}\" as \"{element}\""
        ))
    };
    let t = "2026-01-02T03:04:05Z";
    assert_eq!(micro(t), cannot(t, "Z", ".000000"));
    let t = "2026-01-02T03:04:05.12Z";
    assert_eq!(micro(t), cannot(t, ".12Z", ".000000"));
    let t = "2026-01-02T03:04:05.1234567Z";
    assert_eq!(micro(t), cannot(t, "7Z", "Z07:00"));
    assert_eq!(micro("yesterday"), cannot("yesterday", "yesterday", "2006"));
    assert_eq!(
        micro("2026-13-02T03:04:05.000000Z"),
        Err("parsing time \"2026-13-02T03:04:05.000000Z\": month out of range".into())
    );
    assert_eq!(
        micro("2026-02-30T03:04:05.000000Z"),
        Err("parsing time \"2026-02-30T03:04:05.000000Z\": day out of range".into())
    );
    assert_eq!(
        micro("2026-01-02T03:04:05.000000Zx"),
        Err("parsing time \"2026-01-02T03:04:05.000000Zx\": extra text: \"x\"".into())
    );
}
