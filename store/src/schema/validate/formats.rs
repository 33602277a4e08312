//! String formats. Which formats a CRD's schema keeps is apiextensions'
//! `pkg/apiserver/validation/formats.go` (the others are dropped before
//! validation, so they check nothing); how each is checked is kube-openapi's
//! `strfmt` registry (`default.go`, `time.go`, `date.go`, `duration.go`,
//! `bson.go`, `kubernetes-extensions.go`) and the Go functions it calls.
//! Format names are compared without their dashes, as strfmt normalises
//! them (`date-time` is `datetime`).

use std::sync::LazyLock;

use regex::Regex;

use super::errors;
use super::result::GoResult;
use crate::go::mail::is_email;
use crate::go::net;
use crate::go::time::strfmt;
use crate::go::url::parse_request_uri;

/// The string formats validated by a 1.36 server (its compatibility
/// version, 1.35, includes the 1.34 Kubernetes name formats), normalised.
const SUPPORTED: [&str; 26] = [
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
    "k8sshortname",
    "k8slongname",
];

fn normalize(format: &str) -> String {
    format.replace('-', "")
}

/// The format kept on a node of type `types`
/// (`StripUnsupportedFormatsPostProcessorForVersion`): a supported string
/// format on a string or untyped node, int32 or int64 on an integer,
/// float or double on a number; "" otherwise.
pub(crate) fn kept<'a>(types: &[&str], format: Option<&'a str>) -> &'a str {
    let Some(format) = format.filter(|f| !f.is_empty()) else {
        return "";
    };
    let keep = match types {
        [] | ["string"] => SUPPORTED.contains(&normalize(format).as_str()),
        ["integer"] => format == "int32" || format == "int64",
        ["number"] => format == "float" || format == "double",
        [_, _, ..] => SUPPORTED.contains(&normalize(format).as_str()),
        _ => false,
    };
    if keep { format } else { "" }
}

/// Whether strfmt's registry knows the format (`ContainsName`).
pub(crate) fn known(format: &str) -> bool {
    !format.is_empty() && SUPPORTED.contains(&normalize(format).as_str())
}

/// `FormatOf`: the string must be valid for the format.
pub(crate) fn validate(format: &str, path: &str, data: &str) -> GoResult {
    if validates(format, data) {
        return GoResult::new();
    }
    GoResult::single(errors::invalid_type(path, format, data))
}

/// `strfmt` ipv4: any IP (leading zeros allowed) written with a dot, which
/// includes an IPv4-mapped IPv6 address.
fn is_ipv4(s: &str) -> bool {
    net::parse_ip_sloppy(s).is_some() && s.contains('.')
}

/// govalidator's `IsIPv6`: any IP written with a colon.
fn is_ipv6(s: &str) -> bool {
    net::parse_ip(s).is_some() && s.contains(':')
}

/// Whether `data` is valid for the (known) format.
pub(crate) fn validates(format: &str, data: &str) -> bool {
    match normalize(format).as_str() {
        "uri" => parse_request_uri(data).is_ok(),
        "email" => is_email(data),
        "hostname" => is_hostname(data),
        "ipv4" => is_ipv4(data),
        "ipv6" => is_ipv6(data),
        "cidr" => net::parse_cidr_sloppy(data).is_some(),
        "mac" => net::is_mac(data),
        "uuid" => UUID.is_match(data),
        "uuid3" => UUID3.is_match(data),
        "uuid4" => UUID4.is_match(data),
        "uuid5" => UUID5.is_match(data),
        "isbn" => is_isbn10(data) || is_isbn13(data),
        "isbn10" => is_isbn10(data),
        "isbn13" => is_isbn13(data),
        "creditcard" => is_credit_card(data),
        "ssn" => data.len() == 11 && SSN.is_match(data),
        "hexcolor" => HEXCOLOR.is_match(data),
        "rgbcolor" => RGBCOLOR.is_match(data),
        "byte" => BASE64.is_match(data),
        "password" => true,
        "date" => strfmt::is_date(data),
        "datetime" => strfmt::is_date_time(data),
        "duration" => strfmt::is_duration(data),
        "bsonobjectid" => data.len() == 24 && data.bytes().all(|b| b.is_ascii_hexdigit()),
        "k8sshortname" => data.len() <= 63 && SHORT_NAME.is_match(data),
        "k8slongname" => data.len() <= 253 && LONG_NAME.is_match(data),
        _ => false,
    }
}

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a fixed pattern that compiles")
}

// The patterns of strfmt and govalidator, with Go's ASCII `\d` and `\s`
// spelled out.
static HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
    )
});
static UUID: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static UUID3: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static UUID4: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static UUID5: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static CREDIT_CARD: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$",
    )
});
static SSN: LazyLock<Regex> = LazyLock::new(|| regex(r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$"));
static HEXCOLOR: LazyLock<Regex> = LazyLock::new(|| regex(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"));
static RGBCOLOR: LazyLock<Regex> = LazyLock::new(|| {
    let byte = r"(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])";
    let space = r"[\t\n\f\r ]*";
    regex(&format!(
        r"^rgb\({space}{byte}{space},{space}{byte}{space},{space}{byte}{space}\)$"
    ))
});
static BASE64: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$")
});
static SHORT_NAME: LazyLock<Regex> = LazyLock::new(|| regex(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"));
static LONG_NAME: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"));

/// `strfmt.IsHostname`: the pattern, at most 255 bytes, labels of at most
/// 63.
fn is_hostname(s: &str) -> bool {
    HOSTNAME.is_match(s) && s.len() <= 255 && s.split('.').all(|label| label.len() <= 63)
}

/// govalidator's ISBN checks: spaces and dashes removed first.
fn isbn_digits(s: &str) -> Vec<u8> {
    s.chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\u{c}' | '\r' | ' ' | '-'))
        .map(|c| if c.is_ascii() { c as u8 } else { 0 })
        .collect()
}

fn is_isbn10(s: &str) -> bool {
    let d = isbn_digits(s);
    let shape = d.len() == 10
        && d[..9].iter().all(u8::is_ascii_digit)
        && (d[9].is_ascii_digit() || d[9] == b'X');
    if !shape {
        return false;
    }
    let mut sum: i32 = (0..9)
        .map(|i| (i as i32 + 1) * i32::from(d[i] - b'0'))
        .sum();
    sum += if d[9] == b'X' {
        100
    } else {
        10 * i32::from(d[9] - b'0')
    };
    sum % 11 == 0
}

fn is_isbn13(s: &str) -> bool {
    let d = isbn_digits(s);
    if d.len() != 13 || !d.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let sum: i32 = (0..12)
        .map(|i| [1, 3][i % 2] * i32::from(d[i] - b'0'))
        .sum();
    i32::from(d[12] - b'0') - (10 - sum % 10) % 10 == 0
}

/// govalidator's `IsCreditCard`: the digits (everything else dropped) must
/// match a card pattern and pass the Luhn check.
fn is_credit_card(s: &str) -> bool {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    if !CREDIT_CARD.is_match(&digits) {
        return false;
    }
    let mut sum = 0;
    for (i, b) in digits.bytes().rev().enumerate() {
        let mut n = u32::from(b - b'0');
        if i % 2 == 1 {
            n *= 2;
            if n >= 10 {
                n = n % 10 + 1;
            }
        }
        sum += n;
    }
    sum % 10 == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_kept_by_type_and_support() {
        assert_eq!(kept(&["string"], Some("date-time")), "date-time");
        assert_eq!(kept(&["string"], Some("int32")), "");
        assert_eq!(kept(&["string"], Some("color")), "");
        assert_eq!(kept(&[], Some("u-u-i-d")), "u-u-i-d");
        assert_eq!(kept(&["integer"], Some("int32")), "int32");
        assert_eq!(kept(&["integer"], Some("uuid")), "");
        assert_eq!(kept(&["number"], Some("double")), "double");
        assert_eq!(kept(&["boolean"], Some("uuid")), "");
        assert_eq!(kept(&["integer", "string"], Some("uuid")), "uuid");
        assert!(known("k8s-short-name"));
        assert!(!known("int32"));
    }

    #[test]
    fn simple_formats_follow_strfmt() {
        let cases = [
            ("uuid", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", true),
            ("uuid", "6BA7B8109DAD11D180B400C04FD430C8", true),
            ("uuid", "not-a-uuid", false),
            ("uuid3", "6ba7b810-9dad-31d1-80b4-00c04fd430c8", true),
            ("uuid4", "6ba7b810-9dad-41d1-80b4-00c04fd430c8", true),
            ("uuid4", "6ba7b810-9dad-41d1-70b4-00c04fd430c8", false),
            ("isbn10", "0321751043", true),
            ("isbn10", "0-321-75104-3", true),
            ("isbn10", "0321751044", false),
            ("isbn13", "978-0321751041", true),
            ("isbn", "978 0321751041", true),
            ("creditcard", "4111 1111 1111 1111", true),
            ("creditcard", "4111111111111112", false),
            ("ssn", "111-11-1111", true),
            ("ssn", "111111111", false),
            ("hexcolor", "#FFF", true),
            ("hexcolor", "ffffff", true),
            ("hexcolor", "#ff", false),
            ("rgbcolor", "rgb(255, 0, 10)", true),
            ("rgbcolor", "rgb(256,0,0)", false),
            ("byte", "aGVsbG8=", true),
            ("byte", "", false),
            ("byte", "%%%", false),
            ("password", "", true),
            ("bsonobjectid", "507f1f77bcf86cd799439011", true),
            ("bsonobjectid", "507f1f77bcf86cd79943901", false),
            ("hostname", "example.com", true),
            ("hostname", "a..b", false),
            ("hostname", "-a", false),
            ("k8s-short-name", "a-b", true),
            ("k8s-short-name", "a-", false),
            ("k8s-short-name", "A", false),
            ("k8s-long-name", "a.b-c", true),
            ("k8s-long-name", "a.-", false),
        ];
        for (format, data, valid) in cases {
            assert_eq!(validates(format, data), valid, "{format} {data:?}");
        }
    }

    #[test]
    fn a_bad_value_names_the_format_as_written() {
        let result = validate("date-time", "spec.created", "2026-13-01");
        assert_eq!(
            result.errors()[0].message(),
            "spec.created in body must be of type date-time: \"2026-13-01\""
        );
    }

    fn is_cidr_format(s: &str) -> bool {
        validates("cidr", s)
    }

    #[test]
    fn ipv4_is_sloppy_and_needs_a_dot() {
        assert!(is_ipv4("192.168.0.1"));
        assert!(is_ipv4("01.02.03.004"));
        assert!(is_ipv4("::ffff:1.2.3.4"));
        assert!(!is_ipv4("256.1.1.1"));
        assert!(!is_ipv4("1.2.3"));
        assert!(!is_ipv4("::1"));
        assert!(!is_ipv4("1.2.3.4 "));
    }

    #[test]
    fn ipv6_follows_netip() {
        assert!(is_ipv6("::1"));
        assert!(is_ipv6("::"));
        assert!(is_ipv6("2001:db8::68"));
        assert!(is_ipv6("1:2:3:4:5:6:7:8"));
        assert!(is_ipv6("::ffff:192.0.2.1"));
        assert!(is_ipv6("1:2:3:4:5:6:1.2.3.4"));
        assert!(!is_ipv6("1:2:3:4:5:6:7:8:9"));
        assert!(!is_ipv6("1::2::3"));
        assert!(!is_ipv6("12345::"));
        assert!(!is_ipv6("1::2%eth0"));
        assert!(!is_ipv6("1:2:3:4:5:6:7::8"));
        assert!(!is_ipv6("1.2.3.4"));
        assert!(!is_ipv6("::01.2.3.4"));
    }

    #[test]
    fn cidr_follows_parse_cidr_sloppy() {
        assert!(is_cidr_format("10.0.0.0/8"));
        assert!(is_cidr_format("010.0.0.0/08"));
        assert!(is_cidr_format("2001:db8::/32"));
        assert!(is_cidr_format("::ffff:1.2.3.4/128"));
        assert!(!is_cidr_format("10.0.0.0/33"));
        assert!(!is_cidr_format("10.0.0.0"));
        assert!(!is_cidr_format("10.0.0.0/"));
        assert!(!is_cidr_format("10.0.0.0/8x"));
    }
}
