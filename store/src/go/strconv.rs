//! Go's `strconv`: strings quoted as `Quote` and `%q` quote them, runes as
//! the JSON scanner's `quoteChar`, floats formatted as `FormatFloat` with
//! the shortest digits (`%v`'s `'g'`, and the `'e'` and `'f'` forms it
//! picks between), and `IsPrint`.

/// A string as Go's `%q` writes it: double quotes, `\"` and `\\`, control
/// characters escaped, printable Unicode kept.
pub fn go_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    push_quoted(text, &mut out, |c, out| match c {
        '\u{7}' => out.push_str("\\a"),
        '\u{b}' => out.push_str("\\v"),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push(c),
    });
    out
}

/// `text` in double quotes with the escapes Go's `%q` and `encoding/json`
/// share (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`); `other` writes
/// every other character.
pub(crate) fn push_quoted(text: &str, out: &mut String, other: impl Fn(char, &mut String)) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c => other(c, out),
        }
    }
    out.push('"');
}

/// The shortest digits of a finite, non-zero float that read back, and its
/// decimal exponent: 1.5e-5 is ("15", -5).
fn shortest(value: f64) -> (bool, String, i32) {
    // Rust's `{:e}` gives the shortest round-trip digits.
    let scientific = format!("{:e}", value.abs());
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("scientific notation has an exponent");
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (
        value.is_sign_negative(),
        digits,
        exponent.parse().expect("an exponent"),
    )
}

/// `1.5e-05` (strconv's 'e' format: at least two exponenpub(crate) t digits).
pub(crate) fn exponent_form(value: f64) -> String {
    let (negative, digits, exponent) = shortest(value);
    let mut out = String::from(if negative { "-" } else { "" });
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    out.push_str(&format!("e{sign}{:02}", exponent.abs()));
    out
}

/// `0.000015` (strconv's 'f' format with the shortespub(crate) t digits).
pub(crate) fn decimal_form(value: f64) -> String {
    let (negative, digits, exponent) = shortest(value);
    let point = exponent + 1; // digits before the decimal point
    let mut out = String::from(if negative { "-" } else { "" });
    if point <= 0 {
        out.push_str("0.");
        out.push_str(&"0".repeat(point.unsigned_abs() as usize));
        out.push_str(&digits);
    } else if point as usize >= digits.len() {
        out.push_str(&digits);
        out.push_str(&"0".repeat(point as usize - digits.len()));
    } else {
        out.push_str(&digits[..point as usize]);
        out.push('.');
        out.push_str(&digits[point as usize..]);
    }
    out
}

/// A float as Go's `%v` writes it (`%g` with the shortest precision): the
/// shortest digits that read back, with an exponent (`1e+06`, `1.5e-05`)
/// when the decimal exponent is below -4 or at least 6.
pub fn go_float(value: f64) -> String {
    if value.is_nan() {
        return "NaN".into();
    }
    if value.is_infinite() {
        return if value > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if value == 0.0 {
        return if value.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let (_, _, exponent) = shortest(value);
    if !(-4..6).contains(&exponent) {
        exponent_form(value)
    } else {
        decimal_form(value)
    }
}

/// `unicode.IsPrint`, near enough: no controls, no spaces but ' ', no
/// fpub(crate) ormat or prpub(crate) ivate-use characters.
pub(crate) fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    let code = c as u32;
    let format = matches!(code,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x8E2 | 0x180E | 0x200B..=0x200F
        | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB
        | 0x110BD | 0x110CD | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A
        | 0xE0001 | 0xE0020..=0xE007F);
    let private_or_none = matches!(code,
        0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD | 0xFDD0..=0xFDEF)
        || code & 0xFFFE == 0xFFFE;
    !(c.is_control() || c.is_whitespace() || format || private_or_none)
}

/// Go's `quoteCharpub(crate) `: `'x'`, `pub(crate) '\''`, `'"'`, `'\n'`.
pub(crate) fn quote_char(c: char) -> String {
    match c {
        '\'' => "'\\''".into(),
        '"' => "'\"'".into(),
        '\n' => "'\\n'".into(),
        '\r' => "'\\r'".into(),
        '\t' => "'\\t'".into(),
        c if (c as u32) < 0x20 => format!("'\\x{:02x}'", c as u32),
        c => format!("'{c}'"),
    }
}
