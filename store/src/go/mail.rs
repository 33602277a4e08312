//! The `email` format: `strfmt.IsEmail`, that is Go 1.26's
//! `mail.ParseAddress` (`net/mail/message.go`) succeeding. It takes a bare
//! `user@domain`, a display name with an angle address (`Name <a@b.c>`), a
//! trailing comment as a name (`a@b.c (Name)`), a group of one address,
//! quoted local parts and domain literals (`a@[1.2.3.4]`, `a@[::1]`; not
//! RFC 5321's `a@[IPv6:::1]`, which Go 1.26 refuses). RFC 2047
//! encoded words in a name are decoded, and one in a charset Go cannot
//! read is an error when it is the name's first word or in a comment.

use super::net;

/// Whether `mail.ParseAddress(s)` succeeds.
pub(crate) fn is_email(s: &str) -> bool {
    let mut p = Parser { s };
    p.single_address().is_some()
}

struct Parser<'a> {
    s: &'a str,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().first().copied()
    }

    fn consume(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.s = &self.s[1..];
            return true;
        }
        false
    }

    fn skip_space(&mut self) {
        self.s = self.s.trim_start_matches([' ', '\t']);
    }

    /// `parseSingleAddress`.
    fn single_address(&mut self) -> Option<()> {
        let count = self.address(true)?;
        (self.skip_cfws() && self.s.is_empty() && count == 1).then_some(())
    }

    /// `parseAddress`: the number of addresses read.
    fn address(&mut self, handle_group: bool) -> Option<usize> {
        self.skip_space();
        if self.s.is_empty() {
            return None;
        }
        if self.addr_spec().is_some() {
            self.skip_space();
            if self.peek() == Some(b'(') {
                self.display_name_comment()?;
            }
            return Some(1);
        }
        if self.peek() != Some(b'<') {
            self.phrase()?;
        }
        self.skip_space();
        if handle_group && self.consume(b':') {
            return self.group_list();
        }
        if !self.consume(b'<') {
            return None;
        }
        self.addr_spec()?;
        self.consume(b'>').then_some(1)
    }

    /// `consumeGroupList`.
    fn group_list(&mut self) -> Option<usize> {
        self.skip_space();
        if self.consume(b';') {
            return self.skip_cfws().then_some(0);
        }
        let mut count = 0;
        loop {
            self.skip_space();
            count += self.address(false)?;
            if !self.skip_cfws() {
                return None;
            }
            if self.consume(b';') {
                return self.skip_cfws().then_some(count);
            }
            if !self.consume(b',') {
                return None;
            }
        }
    }

    /// `consumeAddrSpec`: `local@domain`; on failure nothing is consumed.
    fn addr_spec(&mut self) -> Option<()> {
        let orig = self.s;
        let result = self.addr_spec_inner();
        if result.is_none() {
            self.s = orig;
        }
        result
    }

    fn addr_spec_inner(&mut self) -> Option<()> {
        self.skip_space();
        match self.peek()? {
            b'"' => {
                if self.quoted_string()?.is_empty() {
                    return None;
                }
            }
            _ => {
                self.atom(true, false)?;
            }
        }
        if !self.consume(b'@') {
            return None;
        }
        self.skip_space();
        match self.peek()? {
            b'[' => self.domain_literal(),
            _ => self.atom(true, false).map(|_| ()),
        }
    }

    /// `consumePhrase`: words (atoms or quoted strings), at least one.
    fn phrase(&mut self) -> Option<()> {
        let mut words = 0;
        let mut failed = false;
        loop {
            if words > 0 && !self.skip_cfws() {
                return None;
            }
            self.skip_space();
            let Some(first) = self.peek() else {
                break;
            };
            let word = if first == b'"' {
                self.quoted_string().map(|_| ())
            } else {
                self.atom(true, true).and_then(decode_word)
            };
            if word.is_none() {
                failed = true;
                break;
            }
            words += 1;
        }
        (!failed || words > 0).then_some(())
    }

    /// `consumeQuotedString`: the unquoted text.
    fn quoted_string(&mut self) -> Option<String> {
        let mut text = String::new();
        let mut escaped = false;
        let mut chars = self.s.char_indices().skip(1);
        loop {
            let (i, c) = chars.next()?;
            if escaped {
                if !is_vchar(c) && !is_wsp(c) {
                    return None;
                }
                text.push(c);
                escaped = false;
            } else if is_qtext(c) || is_wsp(c) {
                text.push(c);
            } else if c == '"' {
                self.s = &self.s[i + 1..];
                return Some(text);
            } else if c == '\\' {
                escaped = true;
            } else {
                return None;
            }
        }
    }

    /// `consumeAtom`: a run of atext (with dots when `dot`); unless
    /// `permissive`, no leading, trailing or double dot.
    fn atom(&mut self, dot: bool, permissive: bool) -> Option<&str> {
        let end = self
            .s
            .char_indices()
            .find(|&(_, c)| !is_atext(c, dot))
            .map_or(self.s.len(), |(i, _)| i);
        if end == 0 {
            return None;
        }
        let (atom, rest) = self.s.split_at(end);
        self.s = rest;
        if !permissive && (atom.starts_with('.') || atom.contains("..") || atom.ends_with('.')) {
            return None;
        }
        Some(atom)
    }

    /// `consumeDomainLiteral`: an IP address in brackets.
    fn domain_literal(&mut self) -> Option<()> {
        if !self.consume(b'[') {
            return None;
        }
        let end = self.s.find(']')?;
        let dtext = &self.s[..end];
        if !dtext.chars().all(is_dtext) {
            return None;
        }
        self.s = &self.s[end + 1..];
        net::parse_ip(dtext).map(|_| ())
    }

    /// `consumeDisplayNameComment`.
    fn display_name_comment(&mut self) -> Option<()> {
        if !self.consume(b'(') {
            return None;
        }
        let comment = self.comment()?;
        comment
            .split([' ', '\t'])
            .filter(|w| !w.is_empty())
            .try_for_each(decode_word)
    }

    /// `skipCFWS`: spaces and comments.
    fn skip_cfws(&mut self) -> bool {
        self.skip_space();
        while self.consume(b'(') {
            if self.comment().is_none() {
                return false;
            }
            self.skip_space();
        }
        true
    }

    /// `consumeComment`, after its `(`: the text up to the matching `)`,
    /// backslashes removed; none when it is not closed.
    fn comment(&mut self) -> Option<String> {
        let bytes = self.s.as_bytes();
        let mut depth = 1;
        let mut text = Vec::new();
        let mut i = 0;
        while i < bytes.len() && depth > 0 {
            if bytes[i] == b'\\' && bytes.len() - i > 1 {
                i += 1;
            } else if bytes[i] == b'(' {
                depth += 1;
            } else if bytes[i] == b')' {
                depth -= 1;
            }
            if depth > 0 {
                text.push(bytes[i]);
            }
            i += 1;
        }
        self.s = &self.s[i..];
        (depth == 0).then(|| String::from_utf8_lossy(&text).into_owned())
    }
}

/// `decodeRFC2047Word`: fails only for a well-formed encoded word in a
/// charset other than UTF-8, ISO-8859-1 and US-ASCII (other malformed
/// words are kept as text).
fn decode_word(word: &str) -> Option<()> {
    let encoded = word.len() >= 8
        && word.starts_with("=?")
        && word.ends_with("?=")
        && word.matches('?').count() == 4;
    if !encoded {
        return Some(());
    }
    let inner = &word[2..word.len() - 2];
    let (charset, rest) = inner.split_once('?').unwrap_or((inner, ""));
    let (encoding, text) = rest.split_once('?').unwrap_or((rest, ""));
    let decodes = match encoding {
        "B" | "b" => base64_ok(text),
        "Q" | "q" => q_ok(text),
        _ => false,
    };
    if charset.is_empty() || !decodes {
        return Some(());
    }
    // strings.EqualFold: the long s folds to s.
    let charset = charset.to_ascii_lowercase().replace('\u{17F}', "s");
    matches!(charset.as_str(), "utf-8" | "iso-8859-1" | "us-ascii").then_some(())
}

/// Whether `base64.StdEncoding.DecodeString` accepts `text` (newlines
/// ignored, padding required and only at the end).
fn base64_ok(text: &str) -> bool {
    let b: Vec<u8> = text.bytes().filter(|&c| c != b'\r' && c != b'\n').collect();
    if !b.len().is_multiple_of(4) {
        return false;
    }
    let alphabet = |c: &u8| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/';
    let padding = b.iter().rev().take_while(|&&c| c == b'=').count();
    padding <= 2 && b[..b.len() - padding].iter().all(alphabet)
}

/// Whether the Q encoding of `text` is valid (`qDecode`).
fn q_ok(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'=' => {
                if i + 2 >= b.len()
                    || !b[i + 1].is_ascii_hexdigit()
                    || !b[i + 2].is_ascii_hexdigit()
                {
                    return false;
                }
                i += 2;
            }
            b'_' | b'\n' | b'\r' | b'\t' | b' '..=b'~' => {}
            _ => return false,
        }
        i += 1;
    }
    true
}

fn is_vchar(c: char) -> bool {
    ('!'..='~').contains(&c) || c as u32 >= 0x80
}

fn is_wsp(c: char) -> bool {
    c == ' ' || c == '\t'
}

fn is_atext(c: char, dot: bool) -> bool {
    match c {
        '.' => dot,
        '(' | ')' | '<' | '>' | '[' | ']' | ':' | ';' | '@' | '\\' | ',' | '"' => false,
        _ => is_vchar(c),
    }
}

fn is_qtext(c: char) -> bool {
    c != '\\' && c != '"' && is_vchar(c)
}

fn is_dtext(c: char) -> bool {
    c != '[' && c != ']' && c != '\\' && is_vchar(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_follow_net_mail() {
        let cases = [
            ("a@b.c", true),
            ("first.last@example.com", true),
            ("Barry Gibbs <bg@example.com>", true),
            ("<bg@example.com>", true),
            ("a@b.c (Name)", true),
            ("\"quoted local\"@example.com", true),
            ("group: a@b.c;", true),
            ("a@[1.2.3.4]", true),
            ("a@[::1]", true),
            ("a@[IPv6:::1]", false),
            ("not-an-email", false),
            ("a@", false),
            ("@b.c", false),
            (".a@b.c", false),
            ("a..b@c.d", false),
            ("a@b.c extra", false),
            ("group: a@b.c, d@e.f;", false),
            ("empty: ;", false),
            ("\"\"@example.com", false),
            ("Name <a@b.c", false),
            ("=?koi8-r?q?x?= <a@b.c>", false),
            ("Name =?koi8-r?q?x?= <a@b.c>", true),
            ("=?utf-8?q?J=C3=BCrgen?= <a@b.c>", true),
            ("a@b.c (=?koi8-r?b?eA==?=)", false),
            ("a@b.c (unclosed", false),
        ];
        for (address, valid) in cases {
            assert_eq!(is_email(address), valid, "{address:?}");
        }
    }
}
