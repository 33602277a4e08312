//! Go's `regexp`: its syntax (RE2, as `regexp.Compile` parses it with
//! the Perl flags), translated to the `regex` crate's syntax, with the
//! errors Go's parser gives for patterns it refuses
//! (`error parsing regexp: missing closing ]: `[a-z``).
//!
//! The translation follows `regexp/syntax/parse.go` token by token, so
//! that what Go reads as a literal stays one (`{`, `[` in a class, `\<`),
//! `\d`, `\s`, `\w` and `\b` keep Go's ASCII meaning, octal escapes and
//! `\Q...\E` are expanded, and the limits Go checks (a repeat count over
//! 1000, nested repetition operators) are refused with Go's words.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use regex::{Regex, RegexBuilder};

mod class;
mod errors;
mod parse;

use errors::go_error;
use parse::Parser;

/// Whether `text` contains a match of the Go pattern `pattern`; the Go
/// parser's error when the pattern does not compile.
pub(crate) fn is_match(pattern: &str, text: &str) -> Result<bool, String> {
    static CACHE: LazyLock<Mutex<HashMap<String, Result<Regex, String>>>> =
        LazyLock::new(|| Mutex::new(HashMap::new()));
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if cache.len() > 4096 {
        cache.clear();
    }
    let compiled = cache
        .entry(pattern.to_string())
        .or_insert_with(|| compile(pattern));
    match compiled {
        Ok(re) => Ok(re.is_match(text)),
        Err(e) => Err(e.clone()),
    }
}

/// Compiles a Go pattern.
pub(crate) fn compile(pattern: &str) -> Result<Regex, String> {
    let translated = Parser::new(pattern).translate()?;
    build(&translated).map_err(|_| go_error("expression too large", pattern))
}

/// Compiles a pattern of the regex crate, with Go's nesting limit.
pub(super) fn build(rust: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(rust)
        .size_limit(64 << 20)
        .nest_limit(1000)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        is_match(pattern, text).expect("the pattern compiles")
    }

    fn error(pattern: &str) -> String {
        compile(pattern).expect_err("the pattern is refused")
    }

    #[test]
    fn perl_classes_and_word_boundaries_are_ascii() {
        assert!(matches(r"^\d+$", "123"));
        assert!(!matches(r"^\d+$", "١٢٣"));
        assert!(!matches(r"^\w+$", "é"));
        assert!(matches(r"^\w+$", "a_1"));
        assert!(!matches(r"^\s$", "\u{b}"));
        assert!(matches(r"^[\s]$", "\t"));
        assert!(matches(r"^[^\d]$", "x"));
        assert!(matches(r"^[\D]$", "x"));
        assert!(!matches(r"^[\D]$", "1"));
        // é is not a word character to Go: no boundary before it.
        assert!(!matches(r"\bé", "é"));
        assert!(matches(r"\bx", "éx"));
        assert!(matches(r"a\b", "aé"));
    }

    #[test]
    fn what_go_reads_as_literals_stays_literal() {
        assert!(matches(r"^a{,3}$", "a{,3}"));
        assert!(matches(r"^a{01}$", "a{01}"));
        assert!(matches(r"^x{$", "x{"));
        assert!(matches(r"^[[a]+$", "[a["));
        assert!(matches(r"^[a&&b]+$", "&a"));
        assert!(matches(r"^[a-c-e]+$", "-e"));
        assert!(matches(r"^\<\>$", "<>"));
        assert!(matches(r"^\Q.*\E$", ".*"));
        assert!(matches(r"^\Qa.b", "a.b"));
        assert!(matches(r"^[]a]+$", "]a"));
        assert!(matches(r"^\101\x41\x{41}$", "AAA"));
        assert!(matches(r"^\0$", "\0"));
        assert!(matches(r"^a#b c$", "a#b c"));
        assert!(matches(r"^[[:alpha:]]+$", "abc"));
        assert!(matches(r"^[[:^digit:]]+$", "abc"));
        assert!(matches(r"^\pL\p{Greek}\P{L}$", "aα1"));
        assert!(matches(r"^\p{^L}$", "1"));
        assert!(matches(r"^[\d-z]+$", "1-z"));
    }

    #[test]
    fn unicode_names_are_loose_and_case_folds_like_go() {
        assert!(matches(r"^\p{Letter}+$", "abc"));
        assert!(matches(r"^\p{greek}+$", "α"));
        assert!(matches(r"(?i)^\w$", "\u{212A}"));
    }

    #[test]
    fn flags_groups_and_repetitions_translate() {
        assert!(matches(r"(?i)^abc$", "ABC"));
        assert!(matches(r"^a(?i:b)c$", "aBc"));
        assert!(!matches(r"^a(?i:b)c$", "aBC"));
        assert!(matches(r"^(?i)a(?-i)b$", "Ab"));
        assert!(!matches(r"^(?i)a(?-i)b$", "AB"));
        assert!(matches(r"^(?s).$", "\n"));
        assert!(matches(r"(?m)^b$", "a\nb"));
        assert!(matches(r"^(?P<x>a)(?<y>b)$", "ab"));
        assert!(matches(r"^(?:a|b)+$", "abba"));
        assert!(matches(r"^a{2,3}$", "aaa"));
        assert!(!matches(r"^a{2,3}$", "aaaa"));
        assert!(matches(r"^a*?b$", "aab"));
        assert!(matches(r"^(?U)a+$", "aa"));
        assert!(matches(r"(?)a", "a"));
        assert!(matches(r"(?ii-ss)A", "a"));
        assert!(matches(r"^(?i-i:a)$", "a"));
        assert!(matches(r"a(?i)*", "aaa"));
        assert!(matches(r"^*a", "a"));
        assert!(matches(r"^(a||b)$", ""));
        assert!(matches(r"^(a{1000})?$", ""));
    }

    #[test]
    fn refused_patterns_get_the_go_error() {
        assert_eq!(
            error("([a-z"),
            "error parsing regexp: missing closing ]: `[a-z`"
        );
        assert_eq!(
            error("+"),
            "error parsing regexp: missing argument to repetition operator: `+`"
        );
        assert_eq!(
            error("a**"),
            "error parsing regexp: invalid nested repetition operator: `**`"
        );
        assert_eq!(
            error("a*+?"),
            "error parsing regexp: invalid nested repetition operator: `*+?`"
        );
        assert_eq!(error("(a"), "error parsing regexp: missing closing ): `(a`");
        assert_eq!(error("a)"), "error parsing regexp: unexpected ): `a)`");
        assert_eq!(
            error("(?=a)"),
            "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"
        );
        assert_eq!(
            error("(?<=a)b"),
            "error parsing regexp: invalid named capture: `(?<=a)b`"
        );
        assert_eq!(
            error("(?P<1-x>a)"),
            "error parsing regexp: invalid named capture: `(?P<1-x>`"
        );
        assert_eq!(
            error(r"\e"),
            "error parsing regexp: invalid escape sequence: `\\e`"
        );
        assert_eq!(
            error(r"\1"),
            "error parsing regexp: invalid escape sequence: `\\1`"
        );
        assert_eq!(
            error(r"\C"),
            "error parsing regexp: invalid escape sequence: `\\C`"
        );
        assert_eq!(
            error("a\\"),
            "error parsing regexp: trailing backslash at end of expression: ``"
        );
        assert_eq!(
            error("[z-a]"),
            "error parsing regexp: invalid character class range: `z-a`"
        );
        assert_eq!(
            error("[[:foo:]]"),
            "error parsing regexp: invalid character class range: `[:foo:]`"
        );
        assert_eq!(
            error(r"\p{Nope}"),
            "error parsing regexp: invalid character class range: `\\p{Nope}`"
        );
        assert_eq!(
            error("a{1001}"),
            "error parsing regexp: invalid repeat count: `{1001}`"
        );
        assert_eq!(
            error("a{2,1}"),
            "error parsing regexp: invalid repeat count: `{2,1}`"
        );
        assert_eq!(
            error("(a{100}){20}"),
            "error parsing regexp: invalid repeat count: `{20}`"
        );
        assert_eq!(
            error("(?i)*"),
            "error parsing regexp: missing argument to repetition operator: `*`"
        );
        assert_eq!(
            error("a|*"),
            "error parsing regexp: missing argument to repetition operator: `*`"
        );
        assert_eq!(
            error("(?x)a"),
            "error parsing regexp: invalid or unsupported Perl syntax: `(?x`"
        );
        assert_eq!(
            error("(?i-)a"),
            "error parsing regexp: invalid or unsupported Perl syntax: `(?i-)`"
        );
        assert_eq!(
            error(r"\x{110000}"),
            "error parsing regexp: invalid escape sequence: `\\x{110000`"
        );
    }
}
