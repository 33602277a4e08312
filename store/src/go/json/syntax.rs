//! Go's `encoding/json` syntax errors, in its words: the scanner's
//! `invalid character 'x' looking for beginning of value`, `invalid
//! character 'o' in literal null (expecting 'u')`, `unexpected end of JSON
//! input` (what a real server answers a patch that is not JSON with).

use crate::go::strconv::quote_char;

/// Where the scanner is.
#[derive(Clone, Copy, PartialEq)]
enum State {
    /// A value may start (`looking for beginning of value`).
    BeginValue,
    /// A value or `]` (just after `[`).
    BeginValueOrEmpty,
    /// A key string or `}` (just after `{`).
    BeginKeyOrEmpty,
    /// A key string (after `,` in an object).
    BeginKey,
    /// After a value: `,`, `:`, `}`, `]` or the end, by context.
    EndValue,
    /// Inside a string.
    InString,
    /// After `\` in a string.
    InStringEsc,
    /// Inside `\uXXXX`, `n` digits read.
    InStringEscU(u8),
    /// After `-`.
    Neg,
    /// After `0` (or `-0`).
    Zero,
    /// In the integer digits.
    Digits,
    /// After `.`.
    Dot,
    /// In the fraction digits.
    DotDigits,
    /// After `e` or `E`.
    E,
    /// After the exponent's sign.
    ESign,
    /// In the exponent digits.
    EDigits,
    /// In a literal (`true`, `false`, `null`), the letters still expected.
    Literal(&'static str, &'static str),
    /// After the top-level value.
    End,
}

/// What encloses the scanner: an object key, an object value, an array.
#[derive(Clone, Copy, PartialEq)]
enum Parse {
    ObjectKey,
    ObjectValue,
    ArrayValue,
}

/// The state after a `}` or `]` closes what `stack` has open: the end of
/// the input when nothing encloses it any more.
fn close(stack: &mut Vec<Parse>) -> State {
    stack.pop();
    if stack.is_empty() {
        State::End
    } else {
        State::EndValue
    }
}

/// Why Go's `json.Unmarshal` refuses `body` as JSON, if it does.
pub fn syntax_error(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let mut state = State::BeginValue;
    let mut stack: Vec<Parse> = Vec::new();
    let invalid =
        |c: char, context: &str| Some(format!("invalid character {} {context}", quote_char(c)));
    for c in text.chars() {
        let space = matches!(c, ' ' | '\t' | '\r' | '\n');
        // A number or literal ends at the first character that cannot
        // continue it; that character is then read as after a value.
        let mut c_again = true;
        while c_again {
            c_again = false;
            match state {
                State::BeginValue | State::BeginValueOrEmpty => {
                    if space {
                        break;
                    }
                    if state == State::BeginValueOrEmpty && c == ']' {
                        state = close(&mut stack);
                        break;
                    }
                    state = match c {
                        '{' => {
                            stack.push(Parse::ObjectKey);
                            State::BeginKeyOrEmpty
                        }
                        '[' => {
                            stack.push(Parse::ArrayValue);
                            State::BeginValueOrEmpty
                        }
                        '"' => State::InString,
                        '-' => State::Neg,
                        '0' => State::Zero,
                        '1'..='9' => State::Digits,
                        't' => State::Literal("true", "rue"),
                        'f' => State::Literal("false", "alse"),
                        'n' => State::Literal("null", "ull"),
                        c => return invalid(c, "looking for beginning of value"),
                    };
                }
                State::BeginKeyOrEmpty | State::BeginKey => {
                    if space {
                        break;
                    }
                    if state == State::BeginKeyOrEmpty && c == '}' {
                        state = close(&mut stack);
                        break;
                    }
                    if c != '"' {
                        return invalid(c, "looking for beginning of object key string");
                    }
                    state = State::InString;
                }
                State::EndValue => {
                    if space {
                        break;
                    }
                    match (stack.last().copied(), c) {
                        (None, _) => {
                            state = State::End;
                            c_again = true;
                        }
                        (Some(Parse::ObjectKey), ':') => {
                            stack.pop();
                            stack.push(Parse::ObjectValue);
                            state = State::BeginValue;
                        }
                        (Some(Parse::ObjectKey), c) => return invalid(c, "after object key"),
                        (Some(Parse::ObjectValue), ',') => {
                            stack.pop();
                            stack.push(Parse::ObjectKey);
                            state = State::BeginKey;
                        }
                        (Some(Parse::ObjectValue), '}') => {
                            state = close(&mut stack);
                        }
                        (Some(Parse::ObjectValue), c) => {
                            return invalid(c, "after object key:value pair");
                        }
                        (Some(Parse::ArrayValue), ',') => state = State::BeginValue,
                        (Some(Parse::ArrayValue), ']') => {
                            state = close(&mut stack);
                        }
                        (Some(Parse::ArrayValue), c) => return invalid(c, "after array element"),
                    }
                }
                State::End => {
                    if !space {
                        return invalid(c, "after top-level value");
                    }
                }
                State::InString => match c {
                    '"' => {
                        state = if stack.is_empty() {
                            State::End
                        } else {
                            State::EndValue
                        }
                    }
                    '\\' => state = State::InStringEsc,
                    c if (c as u32) < 0x20 => return invalid(c, "in string literal"),
                    _ => {}
                },
                State::InStringEsc => match c {
                    'b' | 'f' | 'n' | 'r' | 't' | '\\' | '/' | '"' => state = State::InString,
                    'u' => state = State::InStringEscU(0),
                    c => return invalid(c, "in string escape code"),
                },
                State::InStringEscU(n) => {
                    if !c.is_ascii_hexdigit() {
                        return invalid(c, "in \\u hexadecimal character escape");
                    }
                    state = if n == 3 {
                        State::InString
                    } else {
                        State::InStringEscU(n + 1)
                    };
                }
                State::Neg => match c {
                    '0' => state = State::Zero,
                    '1'..='9' => state = State::Digits,
                    c => return invalid(c, "in numeric literal"),
                },
                State::Zero | State::Digits => match c {
                    '0'..='9' if state == State::Digits => {}
                    '.' => state = State::Dot,
                    'e' | 'E' => state = State::E,
                    _ => {
                        state = if stack.is_empty() {
                            State::End
                        } else {
                            State::EndValue
                        };
                        c_again = true;
                    }
                },
                State::Dot => match c {
                    '0'..='9' => state = State::DotDigits,
                    c => return invalid(c, "after decimal point in numeric literal"),
                },
                State::DotDigits => match c {
                    '0'..='9' => {}
                    'e' | 'E' => state = State::E,
                    _ => {
                        state = if stack.is_empty() {
                            State::End
                        } else {
                            State::EndValue
                        };
                        c_again = true;
                    }
                },
                State::E => match c {
                    '+' | '-' => state = State::ESign,
                    '0'..='9' => state = State::EDigits,
                    c => return invalid(c, "in exponent of numeric literal"),
                },
                State::ESign => match c {
                    '0'..='9' => state = State::EDigits,
                    c => return invalid(c, "in exponent of numeric literal"),
                },
                State::EDigits => match c {
                    '0'..='9' => {}
                    _ => {
                        state = if stack.is_empty() {
                            State::End
                        } else {
                            State::EndValue
                        };
                        c_again = true;
                    }
                },
                State::Literal(word, rest) => {
                    let mut expected = rest.chars();
                    let want = expected.next().unwrap_or_default();
                    if c != want {
                        return invalid(
                            c,
                            &format!("in literal {word} (expecting {})", quote_char(want)),
                        );
                    }
                    let rest = expected.as_str();
                    state = if rest.is_empty() {
                        if stack.is_empty() {
                            State::End
                        } else {
                            State::EndValue
                        }
                    } else {
                        State::Literal(word, rest)
                    };
                }
            }
        }
    }
    // A number at the very end is complete; anything else unfinished is
    // the end coming too soon.
    let complete = matches!(state, State::End)
        || (stack.is_empty()
            && matches!(
                state,
                State::Zero | State::Digits | State::DotDigits | State::EDigits
            ));
    if complete {
        None
    } else {
        Some("unexpected end of JSON input".into())
    }
}

#[cfg(test)]
mod tests {
    use super::syntax_error;

    #[test]
    fn go_s_words_for_json_that_is_not() {
        let cases = [
            (r#"{"a": 1}"#, None),
            ("[1, 2.5e-3, true, null, \"x\\u00e9\"]", None),
            ("42", None),
            (
                r#"{"spec": {"replicas": 2}"#,
                Some("unexpected end of JSON input"),
            ),
            ("", Some("unexpected end of JSON input")),
            (
                "nope",
                Some("invalid character 'o' in literal null (expecting 'u')"),
            ),
            (
                "xx",
                Some("invalid character 'x' looking for beginning of value"),
            ),
            (
                r#"{a: 1}"#,
                Some("invalid character 'a' looking for beginning of object key string"),
            ),
            (r#"{"a" 1}"#, Some("invalid character '1' after object key")),
            (
                r#"{"a": 1 "b": 2}"#,
                Some("invalid character '\"' after object key:value pair"),
            ),
            ("[1 2]", Some("invalid character '2' after array element")),
            ("{} x", Some("invalid character 'x' after top-level value")),
            ("[01]", Some("invalid character '1' after array element")),
            (
                "[1.]",
                Some("invalid character ']' after decimal point in numeric literal"),
            ),
            ("[-x]", Some("invalid character 'x' in numeric literal")),
            (
                "\"a\\qb\"",
                Some("invalid character 'q' in string escape code"),
            ),
        ];
        for (json, want) in cases {
            assert_eq!(syntax_error(json.as_bytes()).as_deref(), want, "{json}");
        }
    }
}
