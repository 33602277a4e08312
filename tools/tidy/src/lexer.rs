//! Rust source reduced to its code: comments and the insides of string and
//! character literals blanked out (newlines kept, so offsets and line
//! numbers still hold), and the spans of `#[cfg(test)]` modules found.

/// Rust source with comments and literals blanked out.
#[derive(Debug)]
pub struct Code {
    /// The code, as long as the source, with spaces where comments and
    /// literal contents were (attributes such as `#[path = "x.rs"]` keep
    /// their string: see [`Code::path_attribute`]).
    pub text: String,
    /// The source as read.
    pub source: String,
}

impl Code {
    /// Reads `source`.
    pub fn new(source: &str) -> Code {
        Code {
            text: blank(source),
            source: source.to_string(),
        }
    }

    /// The value of a `#[path = "..."]` attribute that ends right before
    /// `at` (a `mod` item's offset), if any.
    pub fn path_attribute(&self, at: usize) -> Option<String> {
        let before = self.text[..at].trim_end();
        let before = before.strip_suffix(']')?;
        let open = before.rfind("#[")?;
        let attribute = &self.source[open..before.len()];
        let rest = attribute.strip_prefix("#[")?.trim_start();
        let rest = rest.strip_prefix("path")?.trim_start();
        let rest = rest.strip_prefix('=')?.trim();
        Some(rest.trim_matches('"').to_string())
    }

    /// Whether the item at `at` carries `#[cfg(test)]` among the attributes
    /// right before it.
    pub fn is_cfg_test(&self, at: usize) -> bool {
        let mut before = self.text[..at].trim_end();
        while let Some(rest) = before.strip_suffix(']') {
            let Some(open) = rest.rfind("#[") else {
                return false;
            };
            let attribute: String = rest[open + 2..]
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            if attribute == "cfg(test)" {
                return true;
            }
            before = rest[..open].trim_end();
        }
        false
    }

    /// The 1-based line of the offset `at`.
    pub fn line_of(&self, at: usize) -> usize {
        self.text[..at].matches('\n').count() + 1
    }
}

/// Blanks comments and the contents of literals.
fn blank(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let wipe = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = source[i..].find('\n').map_or(bytes.len(), |n| i + n);
                wipe(&mut out, i, end);
                i = end;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                let mut j = i;
                while j < bytes.len() {
                    if bytes[j] == b'/' && bytes.get(j + 1) == Some(&b'*') {
                        depth += 1;
                        j += 2;
                    } else if bytes[j] == b'*' && bytes.get(j + 1) == Some(&b'/') {
                        depth -= 1;
                        j += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        j += 1;
                    }
                }
                wipe(&mut out, i, j);
                i = j;
            }
            b'r' | b'b' if raw_string_start(bytes, i).is_some() => {
                let (hashes, open) = raw_string_start(bytes, i).expect("checked above");
                let close = format!("\"{}", "#".repeat(hashes));
                let end = source[open..]
                    .find(&close)
                    .map_or(bytes.len(), |n| open + n + close.len());
                wipe(&mut out, open, end.saturating_sub(close.len()).max(open));
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                wipe(&mut out, i + 1, j.min(bytes.len()));
                i = j + 1;
            }
            b'\'' => match char_literal_end(source, i) {
                Some(end) => {
                    wipe(&mut out, i + 1, end - 1);
                    i = end;
                }
                None => i += 1,
            },
            _ if is_ident_byte(bytes[i]) => {
                // Skip a whole identifier so that `br` or `r` inside one is
                // not read as the start of a raw string.
                while i < bytes.len() && is_ident_byte(bytes[i]) {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).expect("only ASCII bytes were replaced, by ASCII spaces")
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// At a raw string literal (`r"`, `r#"`, `br#"`...): its number of `#` and
/// the offset after its opening quote.
fn raw_string_start(bytes: &[u8], i: usize) -> Option<(usize, usize)> {
    if i > 0 && is_ident_byte(bytes[i - 1]) {
        return None;
    }
    let mut j = i;
    if bytes[j] == b'b' {
        j += 1;
    }
    if bytes.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while bytes.get(j) == Some(&b'#') {
        hashes += 1;
        j += 1;
    }
    (bytes.get(j) == Some(&b'"')).then_some((hashes, j + 1))
}

/// The end (past the closing quote) of a character literal opening at `i`,
/// or `None` at a lifetime or label.
fn char_literal_end(source: &str, i: usize) -> Option<usize> {
    let rest = &source[i + 1..];
    let mut chars = rest.char_indices();
    let (_, first) = chars.next()?;
    if first == '\\' {
        // An escape: up to the next quote (`'\''`, `'\u{1F600}'`).
        let after = &rest[1..];
        let skip = usize::from(after.starts_with('\''));
        let close = after[skip..].find('\'')?;
        return Some(i + 1 + 1 + skip + close + 1);
    }
    let (next, second) = chars.next()?;
    (second == '\'').then_some(i + 1 + next + 1)
}

#[cfg(test)]
mod tests {
    use super::Code;

    #[test]
    fn comments_and_literals_are_blanked_and_lifetimes_kept() {
        let code = Code::new(
            "use a::b; // use c::*;\nfn f<'a>(x: &'a str) -> char { let s = \"use d::*;\"; let r = r#\"use e::*;\"#; '\\'' }\n/* use f::*; /* nested */ */ mod g;",
        );
        assert!(code.text.contains("use a::b;"));
        assert!(!code.text.contains("c::*"), "{}", code.text);
        assert!(!code.text.contains("d::*"), "{}", code.text);
        assert!(!code.text.contains("e::*"), "{}", code.text);
        assert!(!code.text.contains("f::*"), "{}", code.text);
        assert!(code.text.contains("&'a str"), "{}", code.text);
        assert!(code.text.contains("mod g;"), "{}", code.text);
        assert_eq!(code.text.len(), code.source.len());
    }

    #[test]
    fn attributes_are_read_before_an_item() {
        let source = "#[cfg(test)]\n#[path = \"x/y.rs\"]\nmod z;";
        let code = Code::new(source);
        let at = source.find("mod z").unwrap();
        assert_eq!(code.path_attribute(at).as_deref(), Some("x/y.rs"));
        assert!(code.is_cfg_test(at));
        assert!(!Code::new("#[cfg(feature = \"x\")]\nmod z;").is_cfg_test(23));
    }
}
