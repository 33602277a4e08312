//! Shard selectors (KEP-5866, `ShardedListAndWatch`): the `shardSelector`
//! of a list or watch, `shardRange(object.metadata.uid, '0x…', '0x…')`
//! joined with `||`, read as apiserver's `sharding.Parse` reads it (a CEL
//! expression parsed, never evaluated) with its errors word for word, and
//! matched as apimachinery's `sharding` package matches: the 64-bit
//! FNV-1a hash of the object's uid or namespace, as 16 lowercase hex
//! digits, within `[start, end)` of any range.

use serde_json::Value;

/// The fields a shard range may hash.
const KEYS: [&str; 2] = ["object.metadata.uid", "object.metadata.namespace"];

/// The exclusive upper bound of the hash space (2^64).
pub const HASH_END: &str = "0x10000000000000000";

/// One `shardRange(key, start, end)`.
#[derive(Clone, Debug, PartialEq)]
pub struct ShardRange {
    /// The field hashed: `object.metadata.uid` or `object.metadata.namespace`.
    pub key: String,
    /// The first hash in the range, `0x` and 16 hex digits.
    pub start: String,
    /// The first hash after it, `0x` and 16 hex digits, or [`HASH_END`].
    pub end: String,
}

/// A parsed shard selector: one or more ranges of one field.
#[derive(Clone, Debug, PartialEq)]
pub struct ShardSelector {
    /// The ranges; an object in any of them matches.
    pub ranges: Vec<ShardRange>,
}

impl ShardSelector {
    /// Reads `text` as the real server does; its error is the message
    /// after `invalid shard selector: `.
    pub fn parse(text: &str) -> Result<ShardSelector, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err(
                "empty shard selector is not allowed; omit the parameter for unfiltered lists"
                    .into(),
            );
        }
        let parsed = cel::parser::Parser::new().parse(text).map_err(|errors| {
            match errors.errors.first() {
                Some(first) => format!("CEL parse error: {}", first.msg),
                None => "CEL parse error".to_string(),
            }
        })?;
        let ranges = walk(&parsed.expr)?;
        if let Some(other) = ranges.iter().find(|r| r.key != ranges[0].key) {
            return Err(format!(
                "all shard ranges must use the same field, got {:?} and {:?}",
                ranges[0].key, other.key
            ));
        }
        Ok(ShardSelector { ranges })
    }

    /// The selector as the real server echoes it in a list's `shardInfo`.
    pub fn text(&self) -> String {
        self.ranges
            .iter()
            .map(|r| format!("shardRange({}, '{}', '{}')", r.key, r.start, r.end))
            .collect::<Vec<_>>()
            .join(" || ")
    }

    /// Whether `object`'s hashed field falls in one of the ranges.
    pub fn matches(&self, object: &Value) -> bool {
        let Some(first) = self.ranges.first() else {
            return true;
        };
        let field = match first.key.as_str() {
            "object.metadata.uid" => "uid",
            _ => "namespace",
        };
        let value = object["metadata"][field].as_str().unwrap_or_default();
        let hash = format!("0x{}", hash_field(value));
        self.ranges
            .iter()
            .any(|r| !hex_less(&hash, &r.start) && hex_less(&hash, &r.end))
    }
}

/// `HashField`: the 64-bit FNV-1a hash of `value`, 16 lowercase hex digits.
pub fn hash_field(value: &str) -> String {
    format!("{:016x}", rekon_rules::fnv1a64(value.bytes()))
}

/// `HexLess`: two `0x` hex values of 16 digits (or 2^64's 17) compared.
fn hex_less(a: &str, b: &str) -> bool {
    if a.len() != b.len() {
        return a.len() < b.len();
    }
    a < b
}

/// The numbers cel-go gives the kinds of expressions (`ast.ExprKind`),
/// which its messages print.
fn kind(e: &cel::common::ast::Expr) -> u8 {
    use cel::common::ast::Expr;
    match e {
        Expr::Unspecified => 0,
        Expr::Call(_) => 1,
        Expr::Comprehension(_) => 2,
        Expr::Ident(_) => 3,
        Expr::List(_) => 4,
        Expr::Literal(_) => 5,
        Expr::Map(_) => 6,
        Expr::Select(_) => 7,
        Expr::Struct(_) => 8,
    }
}

/// `walkExpr`: `shardRange()` calls joined by `||`, nothing else.
fn walk(e: &cel::common::ast::Expr) -> Result<Vec<ShardRange>, String> {
    use cel::common::ast::Expr;
    let Expr::Call(call) = e else {
        return Err(format!(
            "unexpected expression kind {}; expected shardRange() call or || operator",
            kind(e)
        ));
    };
    match call.func_name.as_str() {
        "_||_" => {
            if call.args.len() != 2 {
                return Err("|| operator requires exactly 2 arguments".into());
            }
            let mut ranges = walk(&call.args[0].expr)?;
            ranges.extend(walk(&call.args[1].expr)?);
            Ok(ranges)
        }
        "shardRange" => shard_range(&call.args).map(|r| vec![r]),
        other => Err(format!(
            "unsupported function {other:?}; only shardRange() and || are allowed"
        )),
    }
}

/// `parseShardRangeCall`: a field path and two hex literals, start first.
fn shard_range(args: &[cel::common::ast::IdedExpr]) -> Result<ShardRange, String> {
    if args.len() != 3 {
        return Err(format!(
            "shardRange() requires exactly 3 arguments, got {}",
            args.len()
        ));
    }
    let key =
        field_path(&args[0].expr).map_err(|why| format!("shardRange() first argument: {why}"))?;
    if !KEYS.contains(&key.as_str()) {
        return Err(format!(
            "unsupported field path {key:?}; supported: object.metadata.uid, object.metadata.namespace"
        ));
    }
    let start = hex_literal(&args[1].expr, "hexStart")?;
    let end = hex_literal(&args[2].expr, "hexEnd")?;
    if !hex_less(&start, &end) {
        return Err(format!(
            "shard range start {start} must be less than end {end}"
        ));
    }
    Ok(ShardRange { key, start, end })
}

/// `extractFieldPath`: identifiers joined by selections.
fn field_path(e: &cel::common::ast::Expr) -> Result<String, String> {
    use cel::common::ast::Expr;
    match e {
        Expr::Ident(name) => Ok(name.clone()),
        Expr::Select(select) => Ok(format!(
            "{}.{}",
            field_path(&select.operand.expr)?,
            select.field
        )),
        other => Err(format!(
            "expected field path (e.g. object.metadata.uid), got expression kind {}",
            kind(other)
        )),
    }
}

/// `extractHexLiteral`: a string literal of `0x` and 16 lowercase hex
/// digits, or 2^64.
fn hex_literal(e: &cel::common::ast::Expr, name: &str) -> Result<String, String> {
    use cel::common::ast::{Expr, LiteralValue};
    let Expr::Literal(literal) = e else {
        return Err(format!(
            "{name} must be a string literal (e.g. '0xff'), got expression kind {}",
            kind(e)
        ));
    };
    let s = match literal {
        LiteralValue::String(s) => s.to_string(),
        other => {
            let go_type = match other {
                LiteralValue::Boolean(_) => "bool",
                LiteralValue::Bytes(_) => "[]uint8",
                LiteralValue::Double(_) => "float64",
                LiteralValue::Int(_) => "int64",
                LiteralValue::Null => "structpb.NullValue",
                LiteralValue::UInt(_) => "uint64",
                LiteralValue::String(_) => "string",
            };
            return Err(format!("{name} must be a string literal, got {go_type}"));
        }
    };
    let Some(hex) = s.strip_prefix("0x") else {
        return Err(format!("{name} must have '0x' prefix, got {s:?}"));
    };
    if hex.is_empty() {
        return Err(format!("{name}: hex value is required after '0x'"));
    }
    if hex.len() > 17 {
        return Err(format!(
            "{name}: hex value too long ({} chars, max 17): {hex:?}",
            hex.len()
        ));
    }
    if let Some(c) = hex
        .chars()
        .find(|c| !c.is_ascii_digit() && !('a'..='f').contains(c))
    {
        return Err(format!(
            "{name}: invalid hex character {:?} in {s:?}",
            c.to_string()
        ));
    }
    if hex.len() == 17 {
        if s != HASH_END {
            return Err(format!(
                "{name}: 17-digit hex value must be '{HASH_END}' (2^64), got {s:?}"
            ));
        }
    } else if hex.len() != 16 {
        let padded = format!("0x{}{hex}", "0".repeat(16 - hex.len()));
        return Err(format!(
            "{name} must be a 0x-prefixed 16-digit hex value, got {s:?} (did you mean {padded:?}?)"
        ));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fnv1a_hashes_as_go_does() {
        // hash/fnv's New64a of "" and of "a".
        assert_eq!(hash_field(""), "cbf29ce484222325");
        assert_eq!(hash_field("a"), "af63dc4c8601ec8c");
    }

    #[test]
    fn ranges_split_the_hash_space_and_echo_as_written() {
        let halves = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')";
        let selector = ShardSelector::parse(halves).unwrap();
        assert_eq!(selector.ranges.len(), 2);
        assert_eq!(selector.text(), halves);
        let object = json!({"metadata": {"uid": "0d3e2e3c-1111-4222-8333-444455556666"}});
        assert!(selector.matches(&object));
        let low = ShardSelector::parse(
            "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
        )
        .unwrap();
        let high = ShardSelector::parse(
            "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')",
        )
        .unwrap();
        assert_ne!(low.matches(&object), high.matches(&object));
    }

    #[test]
    fn a_selector_out_of_shape_is_refused_in_the_real_words() {
        let why = |s: &str| ShardSelector::parse(s).unwrap_err();
        assert_eq!(
            why("  "),
            "empty shard selector is not allowed; omit the parameter for unfiltered lists"
        );
        assert_eq!(
            why("shardRange(object.metadata.uid, '0x0', '0x8000000000000000')"),
            "hexStart must be a 0x-prefixed 16-digit hex value, got \"0x0\" (did you mean \"0x0000000000000000\"?)"
        );
        assert_eq!(
            why("shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')"),
            "unsupported field path \"object.metadata.name\"; supported: object.metadata.uid, object.metadata.namespace"
        );
        assert_eq!(
            why("shardRange(object.metadata.uid, '0x8000000000000000', '0x0000000000000000')"),
            "shard range start 0x8000000000000000 must be less than end 0x0000000000000000"
        );
        assert_eq!(
            why("size(object.metadata.uid)"),
            "unsupported function \"size\"; only shardRange() and || are allowed"
        );
        assert!(why("shardRange(").starts_with("CEL parse error: "));
    }
}
