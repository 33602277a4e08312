//! Kubernetes' format library (`library/format.go`): the named formats
//! (`format.dns1123Label()`, ..., `format.named('uuid')`) and
//! `validate(string)`, which gives `optional.none()` for a valid string and
//! the validator's messages otherwise: apimachinery's name checks
//! (`machinery::names`) and strfmt's formats.

use cel::common::types::{CelList, CelOptional, CelString, STRING_TYPE, Type};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::opaque::{Content, Opaque, arg, opaque_type, owned, text};
use crate::go::time::strfmt;
use crate::go::url::parse_request_uri;
use crate::machinery::names::{
    is_qualified_name, is_valid_label_value, name_is_dns_label, name_is_dns_subdomain,
    name_is_dns1035_label,
};
use crate::schema::validate::format_valid;

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
        "dns1123Label" => name_is_dns_label(value, false),
        "dns1123Subdomain" => name_is_dns_subdomain(value, false),
        "dns1035Label" => name_is_dns1035_label(value, false),
        "qualifiedName" => is_qualified_name(value),
        "dns1123LabelPrefix" => name_is_dns_label(value, true),
        "dns1123SubdomainPrefix" => name_is_dns_subdomain(value, true),
        "dns1035LabelPrefix" => name_is_dns1035_label(value, true),
        "labelValue" => is_valid_label_value(value),
        "uri" => parse_request_uri(value).err().into_iter().collect(),
        "uuid" => one(
            format_valid("uuid", value),
            "does not match the UUID format",
        ),
        "byte" => one(format_valid("byte", value), "invalid base64"),
        "date" => one(strfmt::is_date(value), "invalid date"),
        _ => one(strfmt::is_date_time(value), "invalid datetime"),
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
