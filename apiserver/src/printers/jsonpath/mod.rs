//! The JSONPath of a custom resource's printer column, read and evaluated
//! as client-go's `util/jsonpath` does (`parser.go`, `jsonpath.go`), with
//! missing keys allowed: fields (`.a`, `['a']`), `*`, indexes and slices
//! (`[0]`, `[-1]`, `[1:3:2]`), unions (`[0,2]`), recursive descent (`..a`)
//! and filters (`[?(@.type=="Ready")]`). `range`/`end` are not read.

use std::borrow::Cow;

use serde_json::Value;

mod eval;
mod parse;

use eval::list;
use parse::action;

/// A parsed JSONPath: the nodes of its action (`{...}`).
#[derive(Clone, Debug)]
pub(crate) struct JsonPath(Vec<Node>);

/// One node of a path, as `parser.go` makes them.
#[derive(Clone, Debug)]
pub(super) enum Node {
    Field(String),
    Wildcard,
    /// `[start:end:step]`, each known or not; a lone index's end is
    /// `start + 1`, derived.
    Array([Param; 3]),
    /// `[?(left op right)]`; op `exists` for `[?(left)]`.
    Filter(Vec<Node>, Vec<Node>, String),
    Union(Vec<Vec<Node>>),
    Recursive,
    /// A constant: a quoted text, a number or a boolean.
    Constant(Value),
    /// A keyword other than `true`/`false` (`range`, `end`): not evaluated.
    Identifier,
}

/// One bound of a slice (`ParamsEntry`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Param {
    pub(super) value: i64,
    pub(super) known: bool,
    pub(super) derived: bool,
}

/// A value the path reached: in the object, or a constant of the path.
pub(super) type Found<'a> = Cow<'a, Value>;

/// Whether `c` ends a field or an identifier (`isTerminator`).
pub(super) fn terminator(c: Option<char>) -> bool {
    matches!(
        c,
        None | Some(' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}')
    )
}

impl JsonPath {
    /// `path` read as `jsonpath.Parse("{" + path + "}")` reads it; `None`
    /// where that fails (or holds a part not read here).
    pub(crate) fn parse(path: &str) -> Option<JsonPath> {
        let chars: Vec<char> = format!("{path}}}").chars().collect();
        let mut at = 0;
        let nodes = action(&chars, &mut at)?;
        Some(JsonPath(nodes))
    }

    /// The first value the path finds in `o`, if any (`FindResults`, whose
    /// first result the table convertor takes); `None` also when the path
    /// cannot be evaluated on `o` (an index out of range, a field of a list).
    pub(crate) fn first<'a>(&self, o: &'a Value) -> Option<Found<'a>> {
        list(vec![Cow::Borrowed(o)], &self.0)
            .ok()?
            .into_iter()
            .next()
    }
}
