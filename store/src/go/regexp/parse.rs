//! The translation of a Go pattern (`regexp/syntax/parse.go`): a walk over
//! the pattern that keeps, like Go's parser, a stack of open groups and the
//! operands a repetition can apply to, and writes each token in the regex
//! crate's syntax.

use super::class::{class, parse_escape, parse_repeat, perl_class, unicode_class};
use super::errors::{
    INVALID_ESCAPE, INVALID_NAMED_CAPTURE, INVALID_PERL_OP, INVALID_REPEAT_OP, INVALID_REPEAT_SIZE,
    MISSING_ARGUMENT, MISSING_PAREN, UNEXPECTED_PAREN, go_error,
};

/// One element of a sequence: something a repetition can apply to, or a
/// flag change (which Go does not push as an operand).
enum Piece {
    Item {
        text: String,
        /// The largest product of counted repeats inside (`repeatIsValid`).
        weight: u64,
        /// Whether `U` was on where the item stands.
        ungreedy: bool,
    },
    Flags(String),
}

/// An open group.
struct Frame {
    /// What opened it: `(`, `(?:`, `(?i:`.
    open: String,
    /// Whether `U` was on before it (flags set inside end with it).
    ungreedy_before: bool,
    /// Its finished alternatives.
    done: Vec<String>,
    /// The largest weight of the finished alternatives.
    weight: u64,
    /// The alternative being read.
    pieces: Vec<Piece>,
}

/// The translator: the pattern, whether `U` (ungreedy) is on, the open
/// groups (the first is the whole pattern). The other flags (`i`, `m`,
/// `s`) are written where they stand and need no tracking.
pub(super) struct Parser<'a> {
    s: &'a str,
    ungreedy: bool,
    frames: Vec<Frame>,
}

impl<'a> Parser<'a> {
    pub(super) fn new(s: &'a str) -> Self {
        let top = Frame {
            open: String::new(),
            ungreedy_before: false,
            done: Vec::new(),
            weight: 1,
            pieces: Vec::new(),
        };
        Parser {
            s,
            ungreedy: false,
            frames: vec![top],
        }
    }

    fn frame(&mut self) -> &mut Frame {
        self.frames
            .last_mut()
            .expect("the top frame is never popped")
    }

    fn push(&mut self, text: String) {
        let ungreedy = self.ungreedy;
        self.frame().pieces.push(Piece::Item {
            text,
            weight: 1,
            ungreedy,
        });
    }

    fn literal(&mut self, c: char) {
        self.push(regex::escape(c.encode_utf8(&mut [0; 4])));
    }

    /// The pattern in the regex crate's syntax, or Go's error.
    pub(super) fn translate(mut self) -> Result<String, String> {
        let s = self.s;
        let mut i = 0;
        let mut last_repeat: Option<usize> = None;
        while i < s.len() {
            let mut repeat = None;
            let c = s[i..].chars().next().expect("i is on a character");
            match c {
                '(' if s[i..].starts_with("(?") => i = self.perl_flags(i)?,
                '(' => {
                    self.open("(".into());
                    i += 1;
                }
                '|' => {
                    let frame = self.frame();
                    let alternative = join(&frame.pieces);
                    frame.weight = frame.weight.max(weight(&frame.pieces));
                    frame.done.push(alternative);
                    frame.pieces.clear();
                    i += 1;
                }
                ')' => {
                    self.close()?;
                    i += 1;
                }
                '^' | '$' | '.' => {
                    self.push(c.to_string());
                    i += 1;
                }
                '[' => {
                    let (class, next) = class(s, i)?;
                    self.push(class);
                    i = next;
                }
                '*' | '+' | '?' => {
                    let before = i;
                    i = self.repeat(&c.to_string(), None, before, before + 1, last_repeat)?;
                    repeat = Some(before);
                }
                '{' => match parse_repeat(&s[i..]) {
                    None => {
                        self.literal('{');
                        i += 1;
                    }
                    Some((min, max, len)) => {
                        if !(0..=1000).contains(&min) || max > 1000 || (max >= 0 && min > max) {
                            return Err(go_error(INVALID_REPEAT_SIZE, &s[i..i + len]));
                        }
                        let op = &s[i..i + len];
                        let before = i;
                        i = self.repeat(op, Some((min, max)), i, i + len, last_repeat)?;
                        repeat = Some(before);
                    }
                },
                '\\' => i = self.escape(i)?,
                _ => {
                    self.literal(c);
                    i += c.len_utf8();
                }
            }
            last_repeat = repeat;
        }
        if self.frames.len() != 1 {
            return Err(go_error(MISSING_PAREN, s));
        }
        let top = self.frames.pop().expect("one frame");
        let mut alternatives = top.done;
        alternatives.push(join(&top.pieces));
        Ok(alternatives.join("|"))
    }

    fn open(&mut self, open: String) {
        self.frames.push(Frame {
            open,
            ungreedy_before: self.ungreedy,
            done: Vec::new(),
            weight: 1,
            pieces: Vec::new(),
        });
    }

    fn close(&mut self) -> Result<(), String> {
        if self.frames.len() < 2 {
            return Err(go_error(UNEXPECTED_PAREN, self.s));
        }
        let frame = self.frames.pop().expect("two frames");
        let mut alternatives = frame.done;
        alternatives.push(join(&frame.pieces));
        let group_weight = frame.weight.max(weight(&frame.pieces));
        self.ungreedy = frame.ungreedy_before;
        let text = format!("{}{})", frame.open, alternatives.join("|"));
        self.push(text);
        if let Some(Piece::Item { weight, .. }) = self.frame().pieces.last_mut() {
            *weight = group_weight;
        }
        Ok(())
    }

    /// Applies a repetition operator to the last operand (`parser.repeat`).
    fn repeat(
        &mut self,
        op: &str,
        counts: Option<(i64, i64)>,
        before: usize,
        after: usize,
        last_repeat: Option<usize>,
    ) -> Result<usize, String> {
        let s = self.s;
        let mut after = after;
        let mut non_greedy = self.ungreedy;
        if s[after..].starts_with('?') {
            after += 1;
            non_greedy = !non_greedy;
        }
        if let Some(last) = last_repeat {
            return Err(go_error(INVALID_REPEAT_OP, &s[last..after]));
        }
        let missing = go_error(MISSING_ARGUMENT, &s[before..after]);
        let Some(Piece::Item {
            text,
            weight,
            ungreedy,
        }) = self
            .frame()
            .pieces
            .iter_mut()
            .rev()
            .find(|p| matches!(p, Piece::Item { .. }))
        else {
            return Err(missing);
        };
        if let Some((min, max)) = counts {
            let m = if max < 0 { min } else { max } as u64;
            if (min >= 2 || max >= 2) && m > 0 && m.saturating_mul(*weight) > 1000 {
                return Err(go_error(INVALID_REPEAT_SIZE, &s[before..after]));
            }
            *weight = if m == 0 { 1 } else { m * *weight };
        }
        let lazy = if non_greedy != *ungreedy { "?" } else { "" };
        *text = format!("(?:{text}){op}{lazy}");
        Ok(after)
    }

    /// `(?` groups: named captures, flags, non-capturing groups.
    fn perl_flags(&mut self, start: usize) -> Result<usize, String> {
        let s = self.s;
        let t = &s[start..];
        let with_p = t.len() > 4 && t[2..].starts_with("P<");
        let with_name = t.len() > 3 && t[2..].starts_with('<');
        if with_p || with_name {
            let name_start = if with_p { 4 } else { 3 };
            let Some(end) = t.find('>') else {
                return Err(go_error(INVALID_NAMED_CAPTURE, t));
            };
            let name = &t[name_start..end];
            if name.is_empty() || !name.chars().all(|c| c == '_' || c.is_alphanumeric()) {
                return Err(go_error(INVALID_NAMED_CAPTURE, &t[..=end]));
            }
            self.open("(".into());
            return Ok(start + end + 1);
        }
        let mut ungreedy = self.ungreedy;
        let (mut on, mut off) = (String::new(), String::new());
        let mut negated = false;
        let mut saw_flag = false;
        let mut i = start + 2;
        while let Some(c) = s[i..].chars().next() {
            i += c.len_utf8();
            match c {
                'i' | 'm' | 's' => {}
                'U' => ungreedy = !negated,
                '-' if !negated => {
                    negated = true;
                    saw_flag = false;
                    continue;
                }
                ':' | ')' if !negated || saw_flag => {
                    on.retain(|f| !off.contains(f));
                    let mut change = on;
                    if !off.is_empty() {
                        change = format!("{change}-{off}");
                    }
                    if c == ':' {
                        let open = if change.is_empty() {
                            "(?:".to_string()
                        } else {
                            format!("(?{change}:")
                        };
                        self.open(open);
                    } else if !change.is_empty() {
                        self.frame()
                            .pieces
                            .push(Piece::Flags(format!("(?{change})")));
                    }
                    self.ungreedy = ungreedy;
                    return Ok(i);
                }
                _ => break,
            }
            saw_flag = true;
            let set = if negated { &mut off } else { &mut on };
            if !set.contains(c) {
                set.push(c);
            }
        }
        Err(go_error(INVALID_PERL_OP, &s[start..i]))
    }

    /// A backslash outside a class.
    fn escape(&mut self, start: usize) -> Result<usize, String> {
        let s = self.s;
        let t = &s[start..];
        let assertion = match t.as_bytes().get(1) {
            Some(b'A') => Some(r"\A"),
            Some(b'z') => Some(r"\z"),
            Some(b'b') => Some(r"(?-u:\b)"),
            Some(b'B') => Some(r"(?-u:\B)"),
            _ => None,
        };
        if let Some(text) = assertion {
            self.push(text.to_string());
            return Ok(start + 2);
        }
        if t.starts_with(r"\C") {
            return Err(go_error(INVALID_ESCAPE, r"\C"));
        }
        if let Some(rest) = t.strip_prefix(r"\Q") {
            let (literal, consumed) = match rest.find(r"\E") {
                Some(end) => (&rest[..end], end + 2),
                None => (rest, rest.len()),
            };
            for c in literal.chars() {
                self.literal(c);
            }
            return Ok(start + 2 + consumed);
        }
        if let Some((class, next)) = unicode_class(s, start)? {
            self.push(class);
            return Ok(next);
        }
        if let Some((members, negated)) = perl_class(t) {
            self.push(format!("[{}{members}]", if negated { "^" } else { "" }));
            return Ok(start + 2);
        }
        let (c, next) = parse_escape(s, start)?;
        self.literal(c);
        Ok(next)
    }
}

/// The text of a sequence.
fn join(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Item { text, .. } => text.as_str(),
            Piece::Flags(text) => text.as_str(),
        })
        .collect()
}

/// The largest weight in a sequence (1 when empty).
fn weight(pieces: &[Piece]) -> u64 {
    pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Item { weight, .. } => Some(*weight),
            Piece::Flags(_) => None,
        })
        .max()
        .unwrap_or(1)
}
