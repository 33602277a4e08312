//! Kubernetes' format library (`library/format.go`): the named formats
//! (`format.dns1123Label()`, ..., `format.named('uuid')`) and
//! `validate(string)`, which gives `optional.none()` for a valid string and
//! the validator's messages otherwise, worded as apimachinery words them.

use std::sync::LazyLock;

use cel::common::types::{CelList, CelOptional, CelString, STRING_TYPE, Type};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};
use regex::Regex;

use super::lib_url::parse_request_uri;
use super::opaque::{Content, Opaque, arg, opaque_type, owned, text};

static FORMAT_TYPE: Type = opaque_type("kubernetes.NamedFormat");

/// A named format: its name in `format.<name>()`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Format(&'static str);

impl Content for Format {
    const TYPE: &'static Type = &FORMAT_TYPE;

    fn same(&self, other: &Self) -> bool {
        self == other
    }
}

/// The names, in `format.<name>()`.
const NAMES: &[&str] = &[
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

const LABEL: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const LABEL_1035: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const KEY: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";

fn whole(pattern: &str) -> Regex {
    Regex::new(&format!("^(?:{pattern})$")).expect("a valid pattern")
}

static RE_LABEL: LazyLock<Regex> = LazyLock::new(|| whole(LABEL));
static RE_SUBDOMAIN: LazyLock<Regex> = LazyLock::new(|| whole(&format!("{LABEL}(\\.{LABEL})*")));
static RE_1035: LazyLock<Regex> = LazyLock::new(|| whole(LABEL_1035));
static RE_KEY: LazyLock<Regex> = LazyLock::new(|| whole(KEY));
static RE_UUID: LazyLock<Regex> =
    LazyLock::new(|| whole("(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}"));
static RE_BASE64: LazyLock<Regex> = LazyLock::new(|| {
    whole("(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})")
});
static RE_TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
        .expect("a valid pattern")
});

/// `RegexError`.
fn regex_error(message: &str, pattern: &str, examples: &[&str]) -> String {
    let shown: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{message} (e.g. {}regex used for validation is '{pattern}')",
        shown.join(" or ")
    )
}

fn max_len(n: usize, unit: &str) -> String {
    format!("must be no more than {n} {unit}")
}

fn dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len(63, "characters"));
    }
    if !RE_LABEL.is_match(value) {
        if RE_SUBDOMAIN.is_match(value) {
            errs.push("must not contain dots".into());
        } else {
            errs.push(regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
                LABEL,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

fn dns1123_subdomain(value: &str, unit: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(max_len(253, unit));
    }
    if !RE_SUBDOMAIN.is_match(value) {
        errs.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            &format!("{LABEL}(\\.{LABEL})*"),
            &["example.com"],
        ));
    }
    errs
}

fn dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len(63, "characters"));
    }
    if !RE_1035.is_match(value) {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            LABEL_1035,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

const KEY_MESSAGE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// `content.IsLabelKey` (a qualified name).
fn qualified_name(value: &str) -> Vec<String> {
    let parts: Vec<&str> = value.split('/').collect();
    let mut errs = Vec::new();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    dns1123_subdomain(prefix, "bytes")
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            return vec![format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(KEY_MESSAGE, KEY, &["MyName", "my.name", "123-abc"])
            )];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".into());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len(63, "bytes")));
    }
    if !RE_KEY.is_match(name) {
        errs.push(format!(
            "name part {}",
            regex_error(KEY_MESSAGE, KEY, &["MyName", "my.name", "123-abc"])
        ));
    }
    errs
}

fn label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len(63, "bytes"));
    }
    if !value.is_empty() && !RE_KEY.is_match(value) {
        errs.push(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            &format!("({KEY})?"),
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `maskTrailingDash`, as Go writes it (dropping two characters).
fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        format!("{}a", &name[..name.len() - 2])
    } else {
        name.to_string()
    }
}

fn is_date(s: &str) -> bool {
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok() && s.len() == 10
}

/// strfmt's `IsDateTime`.
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    RE_TIME
        .captures(parts[1])
        .is_some_and(|m| &m[1] <= "23" && &m[2] <= "59" && &m[3] <= "59")
}

/// The messages of the named format for `value` (none when valid).
fn check(format: &str, value: &str) -> Vec<String> {
    let one = |ok: bool, message: &str| {
        if ok {
            Vec::new()
        } else {
            vec![message.to_string()]
        }
    };
    match format {
        "dns1123Label" => dns1123_label(value),
        "dns1123Subdomain" => dns1123_subdomain(value, "characters"),
        "dns1035Label" => dns1035_label(value),
        "qualifiedName" => qualified_name(value),
        "dns1123LabelPrefix" => dns1123_label(&mask_trailing_dash(value)),
        "dns1123SubdomainPrefix" => dns1123_subdomain(&mask_trailing_dash(value), "characters"),
        "dns1035LabelPrefix" => dns1035_label(&mask_trailing_dash(value)),
        "labelValue" => label_value(value),
        "uri" => parse_request_uri(value).err().into_iter().collect(),
        "uuid" => one(RE_UUID.is_match(value), "does not match the UUID format"),
        "byte" => one(RE_BASE64.is_match(value), "invalid base64"),
        "date" => one(is_date(value), "invalid date"),
        _ => one(is_date_time(value), "invalid datetime"),
    }
}

/// Registers the functions on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let format = || std::borrow::ToOwned::to_owned(&FORMAT_TYPE);
    env.add_type(format())?;
    env.add_member_overload(
        "validate",
        "format-validate",
        format(),
        vec![STRING_TYPE],
        validate,
    )?;
    env.add_overload("format.named", "format-named", vec![STRING_TYPE], named)?;
    for (name, f) in NAMES.iter().zip(CONSTANTS) {
        let qualified = format!("format.{name}");
        env.add_overload(&qualified, &qualified, vec![], f)?;
    }
    Ok(())
}

type Out<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

fn named<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let name = text(&args, 0)?;
    owned(match NAMES.iter().find(|n| **n == name) {
        Some(n) => CelOptional::of(Box::new(Opaque(Format(n)))),
        None => CelOptional::none(),
    })
}

fn validate<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let format = arg::<Format>(&args, 0)?;
    let errors = check(format.0, text(&args, 1)?);
    if errors.is_empty() {
        return owned(CelOptional::none());
    }
    let list: Vec<Box<dyn Val + 'v>> = errors
        .into_iter()
        .map(|e| Box::new(CelString::from(e)) as Box<dyn Val + 'v>)
        .collect();
    owned(CelOptional::of(Box::new(CelList::from(list))))
}

macro_rules! constants {
    ($($i:literal),*) => {
        [$({
            fn constant<'b, 'v>(_: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
                owned(Opaque(Format(NAMES[$i])))
            }
            constant as cel::common::functions::Function
        }),*]
    };
}

/// The zero-argument functions, one per name.
const CONSTANTS: [cel::common::functions::Function; 13] =
    constants!(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_formats_give_apimachinery_messages() {
        assert!(check("dns1123Label", "my-name").is_empty());
        assert_eq!(check("dns1123Label", "a.b"), ["must not contain dots"]);
        assert_eq!(
            check("dns1123Label", "A"),
            [
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert!(check("dns1123LabelPrefix", "abc-").is_empty());
        assert!(check("qualifiedName", "example.com/MyName").is_empty());
        assert_eq!(
            check("qualifiedName", "/x"),
            ["prefix part must be non-empty"]
        );
        assert!(check("uuid", "123e4567-e89b-12d3-a456-426614174000").is_empty());
        assert_eq!(check("byte", "x"), ["invalid base64"]);
        assert!(check("datetime", "2024-01-02T03:04:05Z").is_empty());
        assert_eq!(check("date", "2024-13-01"), ["invalid date"]);
    }
}
