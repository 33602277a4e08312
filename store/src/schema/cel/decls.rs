//! The functions the real server declares for `x-kubernetes-validations`
//! rules, with their overloads' types, as the type checker resolves calls
//! against them: cel-go's standard library (`common/stdlib/standard.go`),
//! its optional types, `ext.Strings` (version 2), `ext.Sets`, `ext.Lists`
//! (version 3), and the Kubernetes libraries of `apiserver/pkg/cel/library`
//! (lists, regex, URLs, quantities, IPs, CIDRs, named formats, semver).
//!
//! Each line of `decls.txt` is a function and one overload, written as
//! cel-go writes a signature: `string.(string) -> bool` for a member
//! overload, `(int, int) -> int` for a global one; `A`, `B`, `K`, `V` are
//! type parameters, and `#id` gives cel-go's overload id where the cost
//! estimate depends on it. The overloads of the comparable types
//! (`isSorted`, `min`, `sort`, `<`, ...) are generated. `@keys` and
//! `@mapInsert` serve the expansion of two-variable comprehensions.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use super::types::Ty;

/// One overload of a function.
#[derive(Debug)]
pub(crate) struct Overload {
    /// Called on a target (`x.f(y)`), the target first in `args`.
    pub member: bool,
    /// The argument types.
    pub args: Vec<Ty>,
    /// The result type.
    pub result: Ty,
    /// cel-go's overload id, where the cost estimate depends on it.
    pub id: Option<String>,
}

/// Every overload of every function, by function name.
pub(crate) static FUNCTIONS: LazyLock<BTreeMap<String, Vec<Overload>>> = LazyLock::new(|| {
    let mut functions: BTreeMap<String, Vec<Overload>> = BTreeMap::new();
    for line in TABLE.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (name, signature) = line
            .split_once(char::is_whitespace)
            .expect("a function name, then a signature");
        let overload = parse_signature(signature.trim())
            .unwrap_or_else(|| panic!("a well-formed signature: {line}"));
        functions
            .entry(name.to_string())
            .or_default()
            .push(overload);
    }
    functions
});

/// The comparable element types (`isSorted`, `min`, `max`, `sort`).
const COMPARABLE: &[&str] = &[
    "int",
    "uint",
    "double",
    "bool",
    "duration",
    "timestamp",
    "string",
    "bytes",
];

/// The pairs of types the ordering operators compare (with cross-type
/// numeric comparisons).
const ORDERED: &[(&str, &str)] = &[
    ("bool", "bool"),
    ("int", "int"),
    ("int", "double"),
    ("int", "uint"),
    ("uint", "uint"),
    ("uint", "double"),
    ("uint", "int"),
    ("double", "double"),
    ("double", "int"),
    ("double", "uint"),
    ("string", "string"),
    ("bytes", "bytes"),
    ("timestamp", "timestamp"),
    ("duration", "duration"),
];

/// The summable element types (`sum`).
const SUMMABLE: &[&str] = &["int", "uint", "double", "duration"];

/// The overloads whose lines are generated for each comparable type.
pub(crate) static TEMPLATED: LazyLock<BTreeMap<String, Vec<Overload>>> = LazyLock::new(|| {
    let mut functions: BTreeMap<String, Vec<Overload>> = BTreeMap::new();
    let mut add = |name: &str, signature: String| {
        let overload = parse_signature(&signature).expect("a well-formed template");
        functions
            .entry(name.to_string())
            .or_default()
            .push(overload);
    };
    for t in COMPARABLE {
        add("isSorted", format!("list({t}).() -> bool"));
        add("max", format!("list({t}).() -> {t}"));
        add("min", format!("list({t}).() -> {t}"));
        add("sort", format!("list({t}).() -> list({t}) #list_{t}_sort"));
        add(
            "@sortByAssociatedKeys",
            format!("list(A).(list({t})) -> list(A) #list_{t}_sortByAssociatedKeys"),
        );
    }
    for t in SUMMABLE {
        add("sum", format!("list({t}).() -> {t}"));
    }
    for op in ["_<_", "_<=_", "_>_", "_>=_"] {
        let word = match op {
            "_<_" => "less",
            "_<=_" => "less_equals",
            "_>_" => "greater",
            _ => "greater_equals",
        };
        for (a, b) in ORDERED {
            let id = if a == b && (*a == "string" || *a == "bytes") {
                format!(" #{word}_{a}")
            } else {
                String::new()
            };
            add(op, format!("({a}, {b}) -> bool{id}"));
        }
    }
    functions
});

/// The overloads of `name`, if it is declared.
pub(crate) fn lookup(name: &str) -> Option<Vec<&'static Overload>> {
    let mut all: Vec<&Overload> = Vec::new();
    if let Some(list) = FUNCTIONS.get(name) {
        all.extend(list);
    }
    if let Some(list) = TEMPLATED.get(name) {
        all.extend(list);
    }
    (!all.is_empty()).then_some(all)
}

/// The identifiers that name types: `int`, `list`, ...
pub(crate) fn type_ident(name: &str) -> Option<Ty> {
    let t = match name {
        "bool" => Ty::Bool,
        "bytes" => Ty::Bytes,
        "double" => Ty::Double,
        "google.protobuf.Duration" => Ty::Duration,
        "int" => Ty::Int,
        "list" => Ty::list(Ty::Param("A".into())),
        "map" => Ty::map(Ty::Param("A".into()), Ty::Param("B".into())),
        "null_type" => Ty::Null,
        "string" => Ty::String,
        "google.protobuf.Timestamp" => Ty::Timestamp,
        "type" => Ty::Type(None),
        "uint" => Ty::Uint,
        "net.IP" | "net.CIDR" => Ty::Opaque(name.into(), Vec::new()),
        _ => return None,
    };
    Some(Ty::Type(Some(Box::new(t))))
}

/// Reads `T.(A, B) -> R` or `(A, B) -> R`, with an optional `#id`.
fn parse_signature(text: &str) -> Option<Overload> {
    let (text, id) = match text.split_once('#') {
        Some((signature, id)) => (signature.trim(), Some(id.trim().to_string())),
        None => (text, None),
    };
    let (params, result) = text.split_once("->")?;
    let params = params.trim();
    let open = params.rfind(".(").map(|i| i + 1).unwrap_or(0);
    let (target, list) = params.split_at(open);
    let list = list.strip_prefix('(')?.strip_suffix(')')?;
    let mut args = Vec::new();
    let member = !target.is_empty();
    if member {
        args.push(parse_type(target.strip_suffix('.')?)?);
    }
    if !list.trim().is_empty() {
        for part in split_top(list) {
            args.push(parse_type(part.trim())?);
        }
    }
    Some(Overload {
        member,
        args,
        result: parse_type(result.trim())?,
        id,
    })
}

/// Splits at the commas outside parentheses.
fn split_top(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// Reads a type: `int`, `list(A)`, `map(string, int)`, `optional(V)`,
/// `type(A)`, `net.IP`.
fn parse_type(text: &str) -> Option<Ty> {
    let (name, params) = match text.split_once('(') {
        Some((name, rest)) => {
            let inner = rest.strip_suffix(')')?;
            let params: Option<Vec<Ty>> = split_top(inner)
                .into_iter()
                .map(|p| parse_type(p.trim()))
                .collect();
            (name, params?)
        }
        None => (text, Vec::new()),
    };
    let mut params = params.into_iter();
    let mut next = || params.next();
    Some(match name {
        "dyn" => Ty::Dyn,
        "null" => Ty::Null,
        "bool" => Ty::Bool,
        "int" => Ty::Int,
        "uint" => Ty::Uint,
        "double" => Ty::Double,
        "string" => Ty::String,
        "bytes" => Ty::Bytes,
        "duration" => Ty::Duration,
        "timestamp" => Ty::Timestamp,
        "list" => Ty::list(next()?),
        "map" => {
            let key = next()?;
            Ty::map(key, next()?)
        }
        "optional" => Ty::optional(next()?),
        "type" => Ty::Type(Some(Box::new(next()?))),
        single if single.len() == 1 => Ty::Param(single.into()),
        opaque => Ty::Opaque(opaque.into(), Vec::new()),
    })
}

/// The declarations, one overload a line (`decls.txt`).
const TABLE: &str = include_str!("decls.txt");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_read_as_cel_go_writes_them() {
        let join = lookup("join").expect("declared");
        assert!(join.iter().all(|o| o.member));
        assert_eq!(join[1].args[1].to_string(), "string");
        let index = lookup("_[_]").expect("declared");
        assert_eq!(index[1].args[0].to_string(), "map(A, B)");
        assert_eq!(index[2].result.to_string(), "optional_type(V)");
        assert_eq!(lookup("sum").expect("templated").len(), 4);
        assert!(
            lookup("reverse")
                .expect("declared")
                .iter()
                .all(|o| o.member)
        );
        assert!(lookup("nothing").is_none());
    }
}
