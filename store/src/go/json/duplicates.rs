//! Duplicate fields in a JSON body. A JSON parser keeps the last of two
//! fields with one name; the real server's strict decoder also says which
//! (`strict decoding error: duplicate field "spec.size"`), as
//! `fieldValidation` asks: refused with `Strict`, a warning with `Warn`.

/// The paths of the fields `body` gives more than once, in the order they
/// repeat: `spec.size`, `spec.ports[0].name`. Empty for a body that is not
/// JSON (YAML bodies are read without this check, as the real server's
/// YAML decoder does).
pub fn duplicate_fields(body: &[u8]) -> Vec<String> {
    let mut scanner = Scanner {
        text: body,
        at: 0,
        found: Vec::new(),
    };
    scanner.skip_space();
    if scanner.value(&mut String::new()).is_none() {
        return Vec::new();
    }
    scanner.found
}

struct Scanner<'a> {
    text: &'a [u8],
    at: usize,
    found: Vec<String>,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.skip_space();
        (self.peek() == Some(byte)).then(|| self.at += 1)
    }

    /// A string, unescaped.
    fn string(&mut self) -> Option<String> {
        self.expect(b'"')?;
        let mut bytes = Vec::new();
        loop {
            let c = self.peek()?;
            self.at += 1;
            match c {
                b'"' => return String::from_utf8(bytes).ok(),
                b'\\' => {
                    let escaped = self.peek()?;
                    self.at += 1;
                    match escaped {
                        b'n' => bytes.push(b'\n'),
                        b't' => bytes.push(b'\t'),
                        b'r' => bytes.push(b'\r'),
                        b'b' => bytes.push(8),
                        b'f' => bytes.push(12),
                        b'u' => {
                            let hex =
                                std::str::from_utf8(self.text.get(self.at..self.at + 4)?).ok()?;
                            self.at += 4;
                            let code = u32::from_str_radix(hex, 16).ok()?;
                            let c = char::from_u32(code).unwrap_or('\u{fffd}');
                            let mut buf = [0; 4];
                            bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                        }
                        other => bytes.push(other),
                    }
                }
                other => bytes.push(other),
            }
        }
    }

    /// One value at `path` (kept as it was on return); `None` when the
    /// text is not JSON.
    fn value(&mut self, path: &mut String) -> Option<()> {
        self.skip_space();
        match self.peek()? {
            b'{' => {
                self.at += 1;
                let mut seen: Vec<String> = Vec::new();
                self.skip_space();
                if self.peek() == Some(b'}') {
                    self.at += 1;
                    return Some(());
                }
                let at = path.len();
                loop {
                    let key = self.string()?;
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(&key);
                    if seen.contains(&key) {
                        if !self.found.contains(path) {
                            self.found.push(path.clone());
                        }
                    } else {
                        seen.push(key);
                    }
                    self.expect(b':')?;
                    self.value(path)?;
                    path.truncate(at);
                    self.skip_space();
                    match self.peek()? {
                        b',' => self.at += 1,
                        b'}' => {
                            self.at += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.at += 1;
                self.skip_space();
                if self.peek() == Some(b']') {
                    self.at += 1;
                    return Some(());
                }
                let at = path.len();
                let mut index = 0;
                loop {
                    use std::fmt::Write as _;
                    let _ = write!(path, "[{index}]");
                    self.value(path)?;
                    path.truncate(at);
                    index += 1;
                    self.skip_space();
                    match self.peek()? {
                        b',' => self.at += 1,
                        b']' => {
                            self.at += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => self.string().map(|_| ()),
            _ => {
                // A number, true, false or null.
                let start = self.at;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'+' | b'.'))
                {
                    self.at += 1;
                }
                (self.at > start).then_some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_fields_are_found_with_their_paths() {
        let body = br#"{"a": 1, "spec": {"size": "s", "ports": [{"name": "x", "name": "y"}], "size": "l"}, "a": 2}"#;
        assert_eq!(
            duplicate_fields(body),
            ["spec.ports[0].name", "spec.size", "a"]
        );
        assert!(duplicate_fields(br#"{"a": {"b": 1}, "c": {"b": 2}}"#).is_empty());
        assert!(
            duplicate_fields(b"a: 1\na: 2\n").is_empty(),
            "YAML is not checked"
        );
        assert!(duplicate_fields(br#"{"a": "\"x\\", "b": [1, -2.5e3, true, null]}"#).is_empty());
    }
}
