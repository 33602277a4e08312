//! Quantities against the real server's answers.

use super::*;

/// As a real kube-apiserver 1.36 stores them in a ResourceQuota's
/// `spec.hard` (rounded up to milli-units, then served).
#[test]
fn stored_as_the_real_server_stores_them() {
    let cases = [
        ("1000m", "1"),
        ("0.5", "500m"),
        ("1024Mi", "1Gi"),
        ("1e3", "1e3"),
        ("1.5", "1500m"),
        ("100", "100"),
        ("0.1", "100m"),
        ("1k", "1k"),
        ("2000Ki", "2000Ki"),
        ("1.5Gi", "1536Mi"),
        ("0.000001", "1m"),
        ("1n", "1m"),
        ("1u", "1m"),
        ("1e-3", "1e-3"),
        ("+1", "+1"),
        ("01", "01"),
        ("1.0", "1"),
        ("1E3", "1E3"),
        ("1000000", "1M"),
        ("12e6", "12e6"),
        ("0.5e3", "500"),
        ("5e-1", "500e-3"),
        ("1.25", "1250m"),
        ("1.2345m", "2m"),
        ("1Ei", "1Ei"),
        ("1e18", "1e18"),
        ("100000k", "100M"),
        ("1500m", "1500m"),
        ("1048576", "1048576"),
        ("1e-10", "1e-3"),
        ("0.0", "0"),
        ("-0", "0"),
        ("1.5Ki", "1536"),
        ("0.5Ki", "512"),
        ("1023Ki", "1023Ki"),
        ("1.1k", "1100"),
        ("999999999999999999999", "999999999999999999999"),
        ("1e20", "100e18"),
        ("1.", "1."),
        (".5", "500m"),
        ("1000E", "1"),
        ("1e21", "1e21"),
        ("1.G", "1.G"),
        ("8Ki", "8Ki"),
        ("0.5Gi", "512Mi"),
        ("0.1Ki", "102400m"),
        ("8Ei", "9223372036854775807"),
        ("7Ei", "7Ei"),
        ("0.5m", "1m"),
        ("2.0", "2"),
        ("1e1000", "10e999"),
        ("00.5", "500m"),
        ("1e+3", "1e+3"),
        ("-1.5Gi", "-1536Mi"),
    ];
    for (given, stored) in cases {
        let mut q = Quantity::parse(given).unwrap_or_else(|e| panic!("{given}: {e}"));
        q.round_up(MILLI);
        assert_eq!(q.text(), stored, "{given}");
    }
}

#[test]
fn refused_with_the_real_servers_words() {
    for (given, error) in [
        ("lots", ParseError::Format),
        ("1K", ParseError::Suffix),
        ("1e", ParseError::Suffix),
        ("1ki", ParseError::Suffix),
        ("1.5e3m", ParseError::Format),
        ("1e9m", ParseError::Format),
        ("1_0", ParseError::Format),
        ("", ParseError::Format),
        ("1.5.5", ParseError::Format),
    ] {
        assert_eq!(Quantity::parse(given).err(), Some(error), "{given}");
    }
    assert_eq!(
        ParseError::Format.to_string(),
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    );
}

#[test]
fn json_values() {
    let text = |v: Value| Quantity::from_json(&v).map(|q| q.text());
    assert_eq!(text(serde_json::json!(1.5)), Ok("1500m".into()));
    assert_eq!(text(serde_json::json!(2)), Ok("2".into()));
    assert_eq!(text(Value::Null), Ok("0".into()));
    assert_eq!(text(serde_json::json!(" 1 ")), Ok("1".into()));
    assert_eq!(text(serde_json::json!(true)), Err(ParseError::Format));
}

#[test]
fn compared_by_value() {
    let q = |s: &str| Quantity::parse(s).unwrap();
    assert_eq!(q("1"), q("1000m"));
    assert!(q("1Gi") > q("1G"));
    assert!(q("-1") < q("0"));
    assert!(q("-2") < q("-1"));
    assert!(q("500m") < q("1"));
    assert!(q("1e1000") > q("8Ei"));
    assert!(q("1").is_whole_in_millis());
    assert!(!q("1.5").is_whole_in_millis());
    assert!(q("1.9999").is_whole_in_millis());
    assert!(q("-1").is_negative());
    assert!(!q("-0").is_negative());
}
