//! The classes and escapes of a Go pattern (`parser.parseClass`,
//! `parseEscape`, `parseUnicodeClass`, `parsePerlClassEscape`,
//! `parseRepeat`), written in the regex crate's syntax with Go's meaning:
//! Perl classes are ASCII, every class member is spelled out so that what
//! Go reads literally (`[`, `&&`, `--`) stays literal.

use super::build;
use super::errors::{INVALID_ESCAPE, INVALID_RANGE, MISSING_BRACKET, TRAILING_BACKSLASH, go_error};

/// The POSIX class names Go knows (`[:alpha:]`, or `[:^alpha:]` negated).
const POSIX: [&str; 14] = [
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct",
    "space", "upper", "word", "xdigit",
];

/// Go's Perl classes, ASCII only: (letter, members).
const PERL: [(char, &str); 3] = [
    ('d', "0-9"),
    ('s', r"\x{9}\x{A}\x{C}\x{D}\x{20}"),
    ('w', r"0-9A-Za-z\x{5F}"),
];

/// A bracketed class (`parser.parseClass`), as a class of the regex
/// crate with every member spelled out.
pub(super) fn class(s: &str, start: usize) -> Result<(String, usize), String> {
    let whole = &s[start..];
    let mut t = start + 1;
    let mut out = String::from("[");
    if s[t..].starts_with('^') {
        out.push('^');
        t += 1;
    }
    let mut first = true;
    while t >= s.len() || !s[t..].starts_with(']') || first {
        first = false;
        if s[t..].starts_with("[:")
            && let Some(end) = s[t + 2..].find(":]")
        {
            let name = &s[t..t + 2 + end + 2];
            let inner = &name[2..name.len() - 2];
            let known = |n: &str| POSIX.contains(&n);
            if !known(inner) && !inner.strip_prefix('^').is_some_and(known) {
                return Err(go_error(INVALID_RANGE, name));
            }
            out.push_str(name);
            t += name.len();
            continue;
        }
        if let Some((class, next)) = unicode_class(s, t)? {
            out.push_str(&class);
            t = next;
            continue;
        }
        if let Some((members, negated)) = perl_class(&s[t..]) {
            if negated {
                out.push_str(&format!("[^{members}]"));
            } else {
                out.push_str(members);
            }
            t += 2;
            continue;
        }
        let range_start = t;
        let (lo, next) = class_char(s, t, whole)?;
        t = next;
        let mut hi = lo;
        if s[t..].len() >= 2 && s[t..].starts_with('-') && !s[t + 1..].starts_with(']') {
            let (h, next) = class_char(s, t + 1, whole)?;
            t = next;
            hi = h;
            if hi < lo {
                return Err(go_error(INVALID_RANGE, &s[range_start..t]));
            }
        }
        out.push_str(&class_member(lo));
        if hi != lo {
            out.push('-');
            out.push_str(&class_member(hi));
        }
    }
    out.push(']');
    Ok((out, t + 1))
}

/// A character in a class, escaped unless it is a letter or a digit.
fn class_member(c: char) -> String {
    if c.is_ascii_alphanumeric() {
        c.to_string()
    } else {
        format!("\\x{{{:X}}}", c as u32)
    }
}

/// `\d`, `\s`, `\w` and their negations: (members, negated).
pub(super) fn perl_class(t: &str) -> Option<(&'static str, bool)> {
    let mut chars = t.chars();
    if chars.next() != Some('\\') {
        return None;
    }
    let c = chars.next()?;
    PERL.iter()
        .find(|(letter, _)| *letter == c.to_ascii_lowercase())
        .filter(|_| c.is_ascii_alphabetic())
        .map(|(_, members)| (*members, c.is_ascii_uppercase()))
}

/// `\pL`, `\p{Greek}`, `\P{^Lu}` (`parser.parseUnicodeClass`), checked
/// against the regex crate's tables.
pub(super) fn unicode_class(s: &str, start: usize) -> Result<Option<(String, usize)>, String> {
    let t = &s[start..];
    let negated = match t.get(..2) {
        Some(r"\p") => false,
        Some(r"\P") => true,
        _ => return Ok(None),
    };
    let rest = &t[2..];
    let (seq, name) = match rest.chars().next() {
        Some('{') => {
            let Some(end) = t.find('}') else {
                return Err(go_error(INVALID_RANGE, t));
            };
            (&t[..=end], &t[3..end])
        }
        Some(c) => (&t[..2 + c.len_utf8()], &rest[..c.len_utf8()]),
        None => (t, ""),
    };
    let (negated, name) = match name.strip_prefix('^') {
        Some(name) => (!negated, name),
        None => (negated, name),
    };
    let class = format!("\\{}{{{name}}}", if negated { 'P' } else { 'p' });
    if name.is_empty() || build(&class).is_err() {
        return Err(go_error(INVALID_RANGE, seq));
    }
    Ok(Some((class, start + seq.len())))
}

/// One character of a class (`parseClassChar`): a literal or an escape;
/// at the end of the pattern the class is missing its `]`.
fn class_char(s: &str, t: usize, whole: &str) -> Result<(char, usize), String> {
    match s[t..].chars().next() {
        None => Err(go_error(MISSING_BRACKET, whole)),
        Some('\\') => parse_escape(s, t),
        Some(c) => Ok((c, t + c.len_utf8())),
    }
}

/// A single-character escape (`parser.parseEscape`).
pub(super) fn parse_escape(s: &str, start: usize) -> Result<(char, usize), String> {
    let t = &s[start + 1..];
    let Some(c) = t.chars().next() else {
        return Err(go_error(TRAILING_BACKSLASH, ""));
    };
    let mut i = start + 1 + c.len_utf8();
    let invalid = |end: usize| Err(go_error(INVALID_ESCAPE, &s[start..end]));
    let octal = |b: Option<&u8>| b.is_some_and(|b| (b'0'..=b'7').contains(b));
    match c {
        '1'..='7' if !octal(s.as_bytes().get(i)) => invalid(i),
        '0'..='7' => {
            let mut r = c as u32 - '0' as u32;
            for _ in 1..3 {
                if !octal(s.as_bytes().get(i)) {
                    break;
                }
                r = r * 8 + u32::from(s.as_bytes()[i] - b'0');
                i += 1;
            }
            Ok((char::from_u32(r).expect("an octal escape is below 512"), i))
        }
        'x' => {
            let Some(c) = s[i..].chars().next() else {
                return invalid(i);
            };
            i += c.len_utf8();
            if c == '{' {
                let mut r: u32 = 0;
                let mut digits = 0;
                loop {
                    let Some(c) = s[i..].chars().next() else {
                        return invalid(i);
                    };
                    i += c.len_utf8();
                    if c == '}' {
                        break;
                    }
                    let Some(v) = c.to_digit(16) else {
                        return invalid(i);
                    };
                    r = r * 16 + v;
                    if r > 0x10FFFF {
                        return invalid(i);
                    }
                    digits += 1;
                }
                return match char::from_u32(r) {
                    Some(c) if digits > 0 => Ok((c, i)),
                    _ => invalid(i),
                };
            }
            let Some(y) = s[i..].chars().next() else {
                return invalid(i);
            };
            i += y.len_utf8();
            match (c.to_digit(16), y.to_digit(16)) {
                (Some(x), Some(y)) => Ok((char::from_u32(x * 16 + y).expect("a byte"), i)),
                _ => invalid(i),
            }
        }
        'a' => Ok(('\u{7}', i)),
        'f' => Ok(('\u{c}', i)),
        'n' => Ok(('\n', i)),
        'r' => Ok(('\r', i)),
        't' => Ok(('\t', i)),
        'v' => Ok(('\u{b}', i)),
        c if c.is_ascii() && !c.is_ascii_alphanumeric() => Ok((c, i)),
        _ => invalid(i),
    }
}

/// `parser.parseRepeat`: `{n}`, `{n,}`, `{n,m}` at the start of `t`, as
/// (min, max, length); max is -1 when open; a number too large is -1.
pub(super) fn parse_repeat(t: &str) -> Option<(i64, i64, usize)> {
    let rest = t.strip_prefix('{')?;
    let (min, rest) = parse_int(rest)?;
    let (max, min, rest) = if let Some(rest) = rest.strip_prefix(',') {
        if let Some(rest) = rest.strip_prefix('}') {
            return Some((min, -1, t.len() - rest.len()));
        }
        let (max, rest) = parse_int(rest)?;
        (max, if max < 0 { -1 } else { min }, rest)
    } else {
        (min, min, rest)
    };
    let rest = rest.strip_prefix('}')?;
    Some((min, max, t.len() - rest.len()))
}

/// `parser.parseInt`: decimal digits without a leading zero; -1 when the
/// number reaches 1e8.
fn parse_int(t: &str) -> Option<(i64, &str)> {
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || (digits >= 2 && t.starts_with('0')) {
        return None;
    }
    let mut n: i64 = 0;
    for b in t[..digits].bytes() {
        if n >= 100_000_000 {
            n = -1;
            break;
        }
        n = n * 10 + i64::from(b - b'0');
    }
    Some((n, &t[digits..]))
}
