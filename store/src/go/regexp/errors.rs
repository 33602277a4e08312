//! Go's `regexp/syntax` errors, in its words (`error parsing regexp:
//! missing closing ]: `[a-z``).

/// A `syntax.Error` as Go writes it.
pub(crate) fn go_error(code: &str, expr: &str) -> String {
    format!("error parsing regexp: {code}: `{expr}`")
}

pub(crate) const MISSING_BRACKET: &str = "missing closing ]";

pub(crate) const MISSING_PAREN: &str = "missing closing )";

pub(crate) const UNEXPECTED_PAREN: &str = "unexpected )";

pub(crate) const INVALID_ESCAPE: &str = "invalid escape sequence";

pub(crate) const INVALID_RANGE: &str = "invalid character class range";

pub(crate) const INVALID_PERL_OP: &str = "invalid or unsupported Perl syntax";

pub(crate) const INVALID_NAMED_CAPTURE: &str = "invalid named capture";

pub(crate) const INVALID_REPEAT_OP: &str = "invalid nested repetition operator";

pub(crate) const INVALID_REPEAT_SIZE: &str = "invalid repeat count";

pub(crate) const MISSING_ARGUMENT: &str = "missing argument to repetition operator";

pub(crate) const TRAILING_BACKSLASH: &str = "trailing backslash at end of expression";
