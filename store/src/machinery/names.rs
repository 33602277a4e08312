//! The formats of names, keys and values, with the real server's words:
//! apimachinery's `pkg/util/validation/validation.go` (DNS-1123 labels and
//! subdomains, DNS-1035 labels: `must be no more than 253 characters`),
//! `pkg/api/validate/content` (qualified names, label values: `must be no
//! more than 63 bytes`; path segments), the name functions of
//! `pkg/api/validation/generic.go`, and name generation
//! (`storage/names`).

use super::field::{ErrorList, FieldError, Path};

/// A check of a name: the name, whether it is a `generateName` prefix;
/// what is wrong with it, if anything (`ValidateNameFunc`).
pub type NameFn = fn(&str, bool) -> Vec<String>;

/// `RegexError`: `msg (e.g. 'a',  or 'b', regex used for validation is
/// 're')`, with Go's double space between examples.
fn regex_error(message: &str, regex: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{message} (regex used for validation is '{regex}')");
    }
    let mut out = format!("{message} (e.g. ");
    for (i, example) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push_str(&format!("'{example}', "));
    }
    out.push_str(&format!("regex used for validation is '{regex}')"));
    out
}

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_KEY_MESSAGE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

fn lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn matches_dns1123_label(value: &str) -> bool {
    let bytes = value.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(&first), Some(&last)) => {
            lower_alnum(first)
                && lower_alnum(last)
                && bytes.iter().all(|&b| lower_alnum(b) || b == b'-')
        }
        _ => false,
    }
}

fn matches_dns1123_subdomain(value: &str) -> bool {
    value.split('.').all(matches_dns1123_label)
}

/// `[a-z]([-a-z0-9]*[a-z0-9])?`
fn matches_dns1035_label(value: &str) -> bool {
    matches_dns1123_label(value) && value.as_bytes()[0].is_ascii_lowercase()
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
fn matches_label_key(value: &str) -> bool {
    let bytes = value.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `IsDNS1123Label`.
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push("must be no more than 63 characters".to_string());
    }
    if !matches_dns1123_label(value) {
        if matches_dns1123_subdomain(value) {
            errors.push("must not contain dots".to_string());
        } else {
            errors.push(dns1123_label_message());
        }
    }
    errors
}

/// The regex part of `IsDNS1123Label`.
pub(crate) fn dns1123_label_message() -> String {
    regex_error(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        DNS1123_LABEL_FMT,
        &["my-name", "123-abc"],
    )
}

/// The regex part of `IsDNS1123Subdomain` (the same words in both
/// packages).
pub(crate) fn subdomain_regex_error() -> String {
    regex_error(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        &["example.com"],
    )
}

/// `IsDNS1123Subdomain` of `pkg/util/validation` (lengths in
/// characters).
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 253 {
        errors.push("must be no more than 253 characters".to_string());
    }
    if !matches_dns1123_subdomain(value) {
        errors.push(subdomain_regex_error());
    }
    errors
}

/// `IsDNS1035Label`.
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push("must be no more than 63 characters".to_string());
    }
    if !matches_dns1035_label(value) {
        errors.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errors
}

/// `IsQualifiedName` (`content.IsLabelKey`): a label key, annotation key
/// or finalizer: a name of at most 63 bytes, with an optional DNS
/// subdomain prefix and `/`.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > 253 {
                    errors.push("prefix part must be no more than 253 bytes".to_string());
                }
                if !matches_dns1123_subdomain(prefix) {
                    errors.push(format!("prefix part {}", subdomain_regex_error()));
                }
            }
            *name
        }
        _ => {
            errors.push(format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(LABEL_KEY_MESSAGE, LABEL_KEY_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errors;
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errors.push("name part must be no more than 63 bytes".to_string());
    }
    if !matches_label_key(name) {
        errors.push(format!(
            "name part {}",
            regex_error(
                LABEL_KEY_MESSAGE,
                LABEL_KEY_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errors
}

/// `IsValidLabelValue` (`content.IsLabelValue`).
pub fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push("must be no more than 63 bytes".to_string());
    }
    if !value.is_empty() && !matches_label_key(value) {
        errors.push(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errors
}

/// `IsPathSegmentName`: not `.` or `..`, and no `/` or `%`.
pub fn is_path_segment_name(name: &str) -> Vec<String> {
    for illegal in [".", ".."] {
        if name == illegal {
            return vec![format!("may not be '{illegal}'")];
        }
    }
    is_path_segment_prefix(name)
}

/// `IsPathSegmentPrefix`: no `/` or `%`.
pub fn is_path_segment_prefix(name: &str) -> Vec<String> {
    ["/", "%"]
        .into_iter()
        .filter(|illegal| name.contains(illegal))
        .map(|illegal| format!("may not contain '{illegal}'"))
        .collect()
}

/// `maskTrailingDash`, as Go has it: a trailing `-` of a name longer than
/// one character is replaced, with the character before it, by `a`.
pub fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        let cut = name.len() - 2;
        // Go cuts bytes; a cut inside a character drops all of it.
        let cut = (0..=cut)
            .rev()
            .find(|&i| name.is_char_boundary(i))
            .unwrap_or(0);
        return format!("{}a", &name[..cut]);
    }
    name.to_string()
}

/// `NameIsDNSSubdomain`: the names of most kinds, custom resources
/// included.
pub fn name_is_dns_subdomain(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        return is_dns1123_subdomain(&mask_trailing_dash(name));
    }
    is_dns1123_subdomain(name)
}

/// `NameIsDNSLabel`: namespaces, and the names of some kinds.
pub fn name_is_dns_label(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        return is_dns1123_label(&mask_trailing_dash(name));
    }
    is_dns1123_label(name)
}

/// `NameIsDNS1035Label`: services, and the names of some kinds.
pub fn name_is_dns1035_label(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        return is_dns1035_label(&mask_trailing_dash(name));
    }
    is_dns1035_label(name)
}

/// `ValidatePathSegmentName`: names that only need to be a path segment.
pub fn name_is_path_segment(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        return is_path_segment_prefix(name);
    }
    is_path_segment_name(name)
}

/// A name made from `generateName` (`names.SimpleNameGenerator`): the
/// prefix cut to 58 bytes, and five random characters of
/// `bcdfghjklmnpqrstvwxz2456789`.
pub fn generate_name(base: &str) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut cut = base.len().min(58);
    while !base.is_char_boundary(cut) {
        cut -= 1;
    }
    let random = uuid::Uuid::new_v4();
    let suffix: String = random.as_bytes()[..5]
        .iter()
        .map(|b| char::from(ALPHANUMS[usize::from(*b) % ALPHANUMS.len()]))
        .collect();
    format!("{}{suffix}", &base[..cut])
}

/// `IsConfigMapKey`: a key of a ConfigMap's or Secret's data.
pub(crate) fn config_map_key_errors(key: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if key.len() > 253 {
        errors.push("must be no more than 253 characters".to_string());
    }
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
    {
        errors.push(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
                .to_string(),
        );
    }
    if key == "." {
        errors.push("must not be '.'".to_string());
    } else if key == ".." {
        errors.push("must not be '..'".to_string());
    } else if key.starts_with("..") {
        errors.push("must not start with '..'".to_string());
    }
    errors
}

/// `IsValidPortNum`: a port number from 1 to 65535.
pub(crate) fn port_number_errors(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        return Vec::new();
    }
    vec!["must be between 1 and 65535, inclusive".to_string()]
}

/// `IsValidPortName`: an IANA service name (at most 15 characters, lower
/// case letters, digits and single hyphens, at least one letter).
pub(crate) fn port_name_errors(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if name.len() > 15 {
        errors.push("must be no more than 15 characters".to_string());
    }
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    if name.is_empty() || !name.chars().all(allowed) {
        errors.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_string(),
        );
    }
    if !name.chars().any(|c| c.is_ascii_lowercase()) {
        errors.push("must contain at least one letter (a-z)".to_string());
    }
    if name.contains("--") {
        errors.push("must not contain consecutive hyphens".to_string());
    }
    if name.starts_with('-') || name.ends_with('-') {
        errors.push("must not begin or end with a hyphen".to_string());
    }
    errors
}

/// A reference's `kind` or `name`: required, and a path segment
/// (`IsPathSegmentName`), as object references of several kinds check them.
pub(crate) fn required_path_segment(value: &str, path: &Path) -> ErrorList {
    if value.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    is_path_segment_name(value)
        .into_iter()
        .map(|message| FieldError::invalid(path, value, message))
        .collect()
}
