//! Kubernetes' semver library (`library/semverlib.go`): `semver()`,
//! `isSemver()` (each with the normalising form), comparisons, `major()`,
//! `minor()`, `patch()`. Versions are parsed as `blang/semver` parses them.

use std::cmp::Ordering;

use cel::common::types::{BOOL_TYPE, CelBool, CelInt, STRING_TYPE, Type};
use cel::common::value::CowVal;
use cel::{DeclarationError, Env, ExecutionError};

use super::opaque::{Content, Opaque, arg, error, opaque_type, owned, text};

static SEMVER_TYPE: Type = opaque_type("kubernetes.Semver");

/// A prerelease identifier.
#[derive(Clone, Debug, PartialEq)]
enum Pre {
    Number(u64),
    Text(String),
}

/// A version.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<Pre>,
}

impl Content for Version {
    const TYPE: &'static Type = &SEMVER_TYPE;

    fn same(&self, other: &Self) -> bool {
        self.compare(other) == Ordering::Equal
    }
}

fn only(s: &str, allowed: impl Fn(char) -> bool) -> bool {
    s.chars().all(allowed)
}

fn alphanumeric(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

fn number(s: &str, what: &str) -> Result<u64, String> {
    if !only(s, |c| c.is_ascii_digit()) {
        return Err(format!("Invalid character(s) found in {what} number {s:?}"));
    }
    if s.len() > 1 && s.starts_with('0') {
        let word = format!("{}{}", what[..1].to_uppercase(), &what[1..]);
        return Err(format!(
            "{word} number must not contain leading zeroes {s:?}"
        ));
    }
    s.parse()
        .map_err(|_| format!("strconv.ParseUint: parsing {s:?}: invalid syntax"))
}

/// `semver.Parse`.
pub(crate) fn parse(s: &str) -> Result<Version, String> {
    if s.is_empty() {
        return Err("Version string empty".into());
    }
    let parts: Vec<&str> = s.splitn(3, '.').collect();
    let [major, minor, rest] = parts[..] else {
        return Err("No Major.Minor.Patch elements found".into());
    };
    let major = number(major, "major")?;
    let minor = number(minor, "minor")?;
    let (rest, build) = match rest.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (rest, None),
    };
    let (patch, pre) = match rest.split_once('-') {
        Some((p, pre)) => (p, Some(pre)),
        None => (rest, None),
    };
    let patch = number(patch, "patch")?;
    let mut version = Version {
        major,
        minor,
        patch,
        pre: Vec::new(),
    };
    for id in pre
        .map(|p| p.split('.').collect::<Vec<_>>())
        .unwrap_or_default()
    {
        if id.is_empty() {
            return Err("Prerelease is empty".into());
        }
        if only(id, |c| c.is_ascii_digit()) {
            if id.len() > 1 && id.starts_with('0') {
                return Err(format!(
                    "Numeric PreRelease version must not contain leading zeroes {id:?}"
                ));
            }
            let n = id
                .parse()
                .map_err(|_| format!("strconv.ParseUint: parsing {id:?}: value out of range"))?;
            version.pre.push(Pre::Number(n));
        } else if only(id, alphanumeric) {
            version.pre.push(Pre::Text(id.to_string()));
        } else {
            return Err(format!("Invalid character(s) found in prerelease {id:?}"));
        }
    }
    for meta in build
        .map(|b| b.split('.').collect::<Vec<_>>())
        .unwrap_or_default()
    {
        if meta.is_empty() {
            return Err("Build meta data is empty".into());
        }
        if !only(meta, alphanumeric) {
            return Err(format!(
                "Invalid character(s) found in build meta data {meta:?}"
            ));
        }
    }
    Ok(version)
}

/// `normalizeAndParse`: a leading `v`, leading zeros and missing parts
/// are forgiven.
fn normalize_and_parse(s: &str) -> Result<Version, String> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s
        .splitn(3, '.')
        .map(|p| {
            if p.len() > 1 {
                let trimmed = p.trim_start_matches('0');
                if trimmed.is_empty() || !trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                    return format!("0{trimmed}");
                }
                return trimmed.to_string();
            }
            p.to_string()
        })
        .collect();
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".into());
        }
        parts.resize(3, "0".into());
    }
    parse(&parts.join("."))
}

impl Version {
    fn compare(&self, other: &Version) -> Ordering {
        let core =
            (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch));
        if core != Ordering::Equal {
            return core;
        }
        match (self.pre.is_empty(), other.pre.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            _ => {}
        }
        for (a, b) in self.pre.iter().zip(&other.pre) {
            let o = match (a, b) {
                (Pre::Number(x), Pre::Number(y)) => x.cmp(y),
                (Pre::Number(_), Pre::Text(_)) => Ordering::Less,
                (Pre::Text(_), Pre::Number(_)) => Ordering::Greater,
                (Pre::Text(x), Pre::Text(y)) => x.cmp(y),
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        self.pre.len().cmp(&other.pre.len())
    }
}

/// Registers the functions on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let v = || std::borrow::ToOwned::to_owned(&SEMVER_TYPE);
    env.add_type(v())?;
    env.add_overload("semver", "string_to_semver", vec![STRING_TYPE], to_semver)?;
    env.add_overload(
        "semver",
        "string_bool_to_semver",
        vec![STRING_TYPE, BOOL_TYPE],
        to_semver,
    )?;
    env.add_overload("isSemver", "is_semver_string", vec![STRING_TYPE], is_semver)?;
    env.add_overload(
        "isSemver",
        "is_semver_string_bool",
        vec![STRING_TYPE, BOOL_TYPE],
        is_semver,
    )?;
    env.add_member_overload(
        "isGreaterThan",
        "semver_is_greater_than",
        v(),
        vec![v()],
        greater,
    )?;
    env.add_member_overload("isLessThan", "semver_is_less_than", v(), vec![v()], less)?;
    env.add_member_overload("compareTo", "semver_compare_to", v(), vec![v()], compare_to)?;
    env.add_member_overload("major", "semver_major", v(), vec![], major)?;
    env.add_member_overload("minor", "semver_minor", v(), vec![], minor)?;
    env.add_member_overload("patch", "semver_patch", v(), vec![], patch)?;
    Ok(())
}

type Out<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

fn read(args: &[CowVal<'_, '_>]) -> Result<Result<Version, String>, ExecutionError> {
    let s = text(args, 0)?;
    let normalize = args
        .get(1)
        .and_then(|a| a.downcast_ref::<CelBool>())
        .is_some_and(|b| *b.inner());
    Ok(if normalize {
        normalize_and_parse(s)
    } else {
        parse(s)
    })
}

fn to_semver<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(Opaque(read(&args)?.map_err(|e| error("semver", e))?))
}

fn is_semver<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelBool::from(read(&args)?.is_ok()))
}

fn ordering(args: &[CowVal<'_, '_>]) -> Result<Ordering, ExecutionError> {
    Ok(arg::<Version>(args, 0)?.compare(arg::<Version>(args, 1)?))
}

fn greater<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelBool::from(ordering(&args)? == Ordering::Greater))
}

fn less<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelBool::from(ordering(&args)? == Ordering::Less))
}

fn compare_to<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelInt::from(ordering(&args)? as i64))
}

fn part<'b, 'v>(args: &[CowVal<'b, 'v>], f: fn(&Version) -> u64) -> Out<'b, 'v> {
    owned(CelInt::from(f(arg::<Version>(args, 0)?) as i64))
}

fn major<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    part(&args, |v| v.major)
}

fn minor<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    part(&args, |v| v.minor)
}

fn patch<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    part(&args, |v| v.patch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_order_as_blang_semver_does() {
        let v = |s: &str| parse(s).expect("valid");
        assert_eq!(v("1.2.3").compare(&v("1.10.0")), Ordering::Less);
        assert_eq!(v("1.0.0-alpha").compare(&v("1.0.0")), Ordering::Less);
        assert_eq!(
            v("1.0.0-alpha.1").compare(&v("1.0.0-alpha.beta")),
            Ordering::Less
        );
        assert_eq!(v("1.0.0+build").compare(&v("1.0.0")), Ordering::Equal);
        assert_eq!(
            parse("1.0").unwrap_err(),
            "No Major.Minor.Patch elements found"
        );
        assert_eq!(
            parse("01.0.0").unwrap_err(),
            "Major number must not contain leading zeroes \"01\""
        );
        assert_eq!(normalize_and_parse("v1.02").map(|v| v.minor), Ok(2));
        assert!(normalize_and_parse("1-rc").is_err());
    }
}
