//! The plural rule of resource names (`App` -> `apps`, `Policy` ->
//! `policies`), at run time and, for the derive's `PLURAL`, at compile
//! time: one rule for both.

/// The usual resource name of a kind: lower case, plural (`App` -> `apps`,
/// `Policy` -> `policies`, `Ingress` -> `ingresses`); the rule of
/// `#[derive(CustomResource)]` when no `plural` is given.
pub fn plural(kind: &str) -> String {
    let mut out = vec![0; kind.len() + 2];
    let len = __private::plural_into(kind.as_bytes(), &mut out);
    out.truncate(len);
    String::from_utf8(out).expect("lower-casing ASCII letters keeps UTF-8 valid")
}

/// What `#[derive(CustomResource)]` emits refers to. Not a public API.
#[doc(hidden)]
pub mod __private {
    /// Writes the plural of `kind` (see [`super::plural`]) into `out`
    /// (room for `kind.len() + 2` bytes); returns its length. A `const fn`
    /// so that the derive's `PLURAL` follows the same rule.
    pub const fn plural_into(kind: &[u8], out: &mut [u8]) -> usize {
        let mut len = kind.len();
        let mut i = 0;
        while i < len {
            out[i] = kind[i].to_ascii_lowercase();
            i += 1;
        }
        if len == 0 {
            return 0;
        }
        let last = out[len - 1];
        let before = if len >= 2 { out[len - 2] } else { 0 };
        let suffix: &[u8] = if last == b'y' && !matches!(before, b'a' | b'e' | b'i' | b'o' | b'u') {
            len -= 1;
            b"ies"
        } else if last == b's' || last == b'x' || (last == b'h' && before == b'c') {
            b"es"
        } else {
            b"s"
        };
        let mut k = 0;
        while k < suffix.len() {
            out[len + k] = suffix[k];
            k += 1;
        }
        len + suffix.len()
    }

    /// The plural of `kind` in an `N`-byte buffer, and its length.
    pub const fn plural<const N: usize>(kind: &str) -> ([u8; N], usize) {
        let mut out = [0; N];
        let len = plural_into(kind.as_bytes(), &mut out);
        (out, len)
    }

    /// The first `len` bytes of `bytes`, as a string.
    pub const fn as_str(bytes: &'static [u8], len: usize) -> &'static str {
        match core::str::from_utf8(bytes.split_at(len).0) {
            Ok(s) => s,
            Err(_) => panic!("the plural of a UTF-8 kind is UTF-8"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plural_rule_is_the_same_at_compile_time_and_run_time() {
        for (kind, plural_name) in [
            ("App", "apps"),
            ("Policy", "policies"),
            ("Gateway", "gateways"),
            ("Ingress", "ingresses"),
            ("Box", "boxes"),
            ("Match", "matches"),
            ("Y", "ies"),
            ("", ""),
        ] {
            assert_eq!(plural(kind), plural_name, "{kind}");
            let (buf, len) = __private::plural::<16>(kind);
            assert_eq!(std::str::from_utf8(&buf[..len]), Ok(plural_name), "{kind}");
        }
    }
}
