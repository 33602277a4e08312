//! The string form of a label selector, lexed and parsed as
//! `apimachinery/pkg/labels/selector.go` does, with its error words:
//! `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`,
//! `a<1`, separated by commas.

use super::Requirement;

/// A token of the selector's lexer.
#[derive(Clone, Debug, PartialEq)]
enum Token {
    Identifier(String),
    /// `!` (alone, before a key).
    Not,
    Open,
    Close,
    Comma,
    Equals,
    DoubleEquals,
    NotEquals,
    GreaterThan,
    LessThan,
    In,
    NotIn,
    End,
    /// Special symbols that make no operator.
    Error(String),
}

impl Token {
    /// The literal the real parser quotes in its errors.
    fn literal(&self) -> String {
        match self {
            Token::Identifier(s) | Token::Error(s) => s.clone(),
            Token::Not => "!".into(),
            Token::Open => "(".into(),
            Token::Close => ")".into(),
            Token::Comma => ",".into(),
            Token::Equals => "=".into(),
            Token::DoubleEquals => "==".into(),
            Token::NotEquals => "!=".into(),
            Token::GreaterThan => ">".into(),
            Token::LessThan => "<".into(),
            Token::In => "in".into(),
            Token::NotIn => "notin".into(),
            Token::End => String::new(),
        }
    }
}

fn special(c: char) -> bool {
    matches!(c, '=' | '!' | '(' | ')' | ',' | '>' | '<')
}

fn operator(text: &str) -> Option<Token> {
    Some(match text {
        "!" => Token::Not,
        "!=" => Token::NotEquals,
        "(" => Token::Open,
        ")" => Token::Close,
        "," => Token::Comma,
        "=" => Token::Equals,
        "==" => Token::DoubleEquals,
        ">" => Token::GreaterThan,
        "<" => Token::LessThan,
        _ => return None,
    })
}

/// The tokens of `s` (`Lexer.Lex`), ending with `End`.
fn lex(s: &str) -> Vec<Token> {
    let chars: Vec<char> = s.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    loop {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if i >= chars.len() {
            tokens.push(Token::End);
            return tokens;
        }
        if special(chars[i]) {
            // The longest run of special symbols that is an operator.
            let mut buffer = String::new();
            let mut last: Option<(Token, usize)> = None;
            while i < chars.len() && special(chars[i]) {
                buffer.push(chars[i]);
                match operator(&buffer) {
                    Some(token) => last = Some((token, i + 1)),
                    None if last.is_some() => break,
                    None => {}
                }
                i += 1;
            }
            match last {
                Some((token, end)) => {
                    i = end;
                    tokens.push(token);
                }
                None => tokens.push(Token::Error(format!(
                    "error expected: keyword found '{buffer}'"
                ))),
            }
            continue;
        }
        let start = i;
        while i < chars.len() && !chars[i].is_whitespace() && !special(chars[i]) {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        tokens.push(match word.as_str() {
            "in" => Token::In,
            "notin" => Token::NotIn,
            _ => Token::Identifier(word),
        });
    }
}

/// The parser over the tokens (`Parser`).
struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    /// The next token; as a value, `in` and `notin` are identifiers.
    fn peek(&self, value: bool) -> Token {
        let token = self.tokens.get(self.at).cloned().unwrap_or(Token::End);
        match token {
            Token::In | Token::NotIn if value => Token::Identifier(token.literal()),
            other => other,
        }
    }

    fn next(&mut self, value: bool) -> Token {
        let token = self.peek(value);
        self.at = (self.at + 1).min(self.tokens.len());
        token
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let mut negated = false;
        let mut token = self.next(true);
        if token == Token::Not {
            negated = true;
            token = self.next(true);
        }
        let Token::Identifier(key) = token else {
            return Err(format!("found '{}', expected: identifier", token.literal()));
        };
        if let Some(error) = super::key_error(&key) {
            return Err(format!("<nil>: Invalid value: \"{key}\": {error}"));
        }
        // `!key` takes no operator: whatever follows it is left to the
        // selector's parse, which wants a comma or the end
        // (`parseKeyAndInferOperator`, `parseRequirement`).
        if negated {
            return Ok(Requirement::NotExists(key));
        }
        if matches!(self.peek(true), Token::End | Token::Comma) {
            return Ok(Requirement::Exists(key));
        }
        let op = self.next(false);
        let values = match op {
            Token::In | Token::NotIn => self.values()?,
            Token::Equals
            | Token::DoubleEquals
            | Token::NotEquals
            | Token::GreaterThan
            | Token::LessThan => self.exact_value()?,
            other => {
                return Err(format!(
                    "found '{}', expected: in, notin, =, ==, !=, gt, lt",
                    other.literal()
                ));
            }
        };
        let mut errors = Vec::new();
        if matches!(op, Token::GreaterThan | Token::LessThan) {
            for (i, v) in values.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errors.push(format!(
                        "values[{i}]: Invalid value: \"{v}\": for 'Gt', 'Lt' operators, the value must be an integer"
                    ));
                }
            }
        }
        for (i, v) in values.iter().enumerate() {
            if let Some(error) = super::value_error(v) {
                errors.push(format!(
                    "values[{i}][{key}]: Invalid value: \"{v}\": {error}"
                ));
            }
        }
        match errors.len() {
            0 => {}
            1 => return Err(errors.remove(0)),
            _ => return Err(format!("[{}]", errors.join(", "))),
        }
        let first = || values.first().cloned().unwrap_or_default();
        Ok(match op {
            Token::In => Requirement::In(key, values),
            Token::NotIn => Requirement::NotIn(key, values),
            Token::NotEquals => Requirement::NotEquals(key, first()),
            Token::GreaterThan => Requirement::GreaterThan(key, first()),
            Token::LessThan => Requirement::LessThan(key, first()),
            _ => Requirement::Equals(key, first()),
        })
    }

    /// `(a,b)`: the values, sorted and once each (a Go string set).
    fn values(&mut self) -> Result<Vec<String>, String> {
        let token = self.next(true);
        if token != Token::Open {
            return Err(format!("found '{}' expected: '('", token.literal()));
        }
        let mut set = std::collections::BTreeSet::new();
        match self.peek(true) {
            Token::Identifier(_) | Token::Comma => loop {
                match self.next(true) {
                    Token::Identifier(v) => {
                        set.insert(v);
                        match self.peek(true) {
                            Token::Comma => {}
                            Token::Close => break,
                            other => {
                                return Err(format!(
                                    "found '{}', expected: ',' or ')'",
                                    other.literal()
                                ));
                            }
                        }
                    }
                    Token::Comma => {
                        if set.is_empty() {
                            set.insert(String::new());
                        }
                        match self.peek(true) {
                            Token::Close => {
                                set.insert(String::new());
                                break;
                            }
                            Token::Comma => {
                                self.next(true);
                                set.insert(String::new());
                            }
                            _ => {}
                        }
                    }
                    other => {
                        return Err(format!(
                            "found '{}', expected: ',', or identifier",
                            other.literal()
                        ));
                    }
                }
            },
            Token::Close => {
                set.insert(String::new());
            }
            other => {
                return Err(format!(
                    "found '{}', expected: ',', ')' or identifier",
                    other.literal()
                ));
            }
        }
        let close = self.next(true);
        if close != Token::Close {
            return Err(format!("found '{}', expected: ')'", close.literal()));
        }
        Ok(set.into_iter().collect())
    }

    /// The one value after `=`, `!=`, `>` or `<` (none: the empty one).
    fn exact_value(&mut self) -> Result<Vec<String>, String> {
        if matches!(self.peek(true), Token::End | Token::Comma) {
            return Ok(vec![String::new()]);
        }
        match self.next(true) {
            Token::Identifier(v) => Ok(vec![v]),
            other => Err(format!("found '{}', expected: identifier", other.literal())),
        }
    }
}

/// The requirements of `s`, or the real parser's error.
pub(super) fn parse(s: &str) -> Result<Vec<Requirement>, String> {
    let mut parser = Parser {
        tokens: lex(s),
        at: 0,
    };
    let mut requirements = Vec::new();
    loop {
        match parser.peek(true) {
            Token::Identifier(_) | Token::Not => {
                let requirement = parser
                    .requirement()
                    .map_err(|e| format!("unable to parse requirement: {e}"))?;
                requirements.push(requirement);
                match parser.next(true) {
                    Token::End => return Ok(requirements),
                    Token::Comma => {
                        let after = parser.peek(true);
                        if !matches!(after, Token::Identifier(_) | Token::Not) {
                            return Err(format!(
                                "found '{}', expected: identifier after ','",
                                after.literal()
                            ));
                        }
                    }
                    other => {
                        return Err(format!(
                            "found '{}', expected: ',' or 'end of string'",
                            other.literal()
                        ));
                    }
                }
            }
            Token::End => return Ok(requirements),
            other => {
                return Err(format!(
                    "found '{}', expected: !, identifier, or 'end of string'",
                    other.literal()
                ));
            }
        }
    }
}
