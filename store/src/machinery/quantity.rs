//! `resource.Quantity` (apimachinery's `pkg/api/resource`): how the real
//! server parses a quantity (`1500m`, `1Gi`, `1e3`), the words of its
//! refusal, the canonical form it stores and serves, and comparisons.
//!
//! A quantity that does not parse is a decoding error, not a validation
//! one: the real server answers `400 BadRequest` with
//! `ResourceQuota in version "v1" cannot be handled as a ResourceQuota:
//! quantities must match the regular expression '...'` ([`ParseError`]'s
//! words after `builtin::decode`'s prefix).
//!
//! What is stored is Go's `Quantity.String()`: the text as it came when it
//! was already canonical (`1Ki`, `12e6`, `+1`, `01`: Go keeps the string
//! it parsed on its fast path), else the canonical form (`1000m` → `1`,
//! `0.5` → `500m`, `1024Mi` → `1Gi`, `1.5Gi` → `1536Mi`, `1e20` →
//! `100e18`). In a `ResourceList` (requests, limits, quota) values are
//! first rounded up to milli-units (`SetDefaults_ResourceList`: `1n` →
//! `1m`): [`default_resource_list`].
//!
//! Numbers are held exactly, as decimal digits and a power of ten, so a
//! quantity of any size (`1e1000`) reads and compares as Go's `inf.Dec`.

use std::cmp::Ordering;

use serde_json::Value;

/// How a quantity is written (`resource.Format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// `1e3`, `12e-3`.
    DecimalExponent,
    /// `1Ki`, `5Gi`.
    BinarySI,
    /// `1k`, `500m`, `1`.
    DecimalSI,
}

/// Why a quantity does not parse (`ErrFormatWrong`, `ErrNumeric`, `ErrSuffix`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParseError {
    /// `ErrFormatWrong`.
    Format,
    /// `ErrNumeric`.
    Numeric,
    /// `ErrSuffix`.
    Suffix,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ParseError::Format => {
                "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
            }
            ParseError::Numeric => "unable to parse numeric part of quantity",
            ParseError::Suffix => "unable to parse quantity's suffix",
        })
    }
}

/// A parsed quantity: `digits × 10^exp`, with its sign and format.
#[derive(Clone, Debug)]
pub(crate) struct Quantity {
    negative: bool,
    /// ASCII digits, no leading zeros; empty for zero.
    digits: Vec<u8>,
    exp: i64,
    format: Format,
    /// The text Go keeps when it was already canonical.
    cached: Option<String>,
    /// The scale of Go's `int64Amount` when the fast path parsed it (the
    /// `inf.Dec` path has none): rounding to a coarser scale keeps `cached`.
    int_scale: Option<i64>,
}

/// `maxInt64Factors`: the decimal digits an int64 always holds.
const MAX_INT64_FACTORS: i64 = 18;

/// `Nano`: the smallest scale Go keeps.
const NANO: i64 = -9;

/// `Milli`: the scale a `ResourceList` is rounded up to.
pub(crate) const MILLI: i64 = -3;

impl Quantity {
    /// `resource.ParseQuantity`.
    pub(crate) fn parse(text: &str) -> Result<Quantity, ParseError> {
        if text.is_empty() {
            return Err(ParseError::Format);
        }
        if text == "0" {
            return Ok(Quantity::zero(Format::DecimalSI, Some("0".into())));
        }
        let parts = split(text)?;
        let (base, exponent, format) = interpret(parts.suffix).ok_or(ParseError::Suffix)?;
        let num_len = parts.num.len() as i64;
        let denom_len = parts.denom.len() as i64;
        // Go's fast path: an int64 amount, its text kept when canonical.
        let mut mantissa_shift = 0u32;
        let precision = match format {
            Format::DecimalExponent | Format::DecimalSI => {
                MAX_INT64_FACTORS - (num_len + denom_len)
            }
            Format::BinarySI if exponent >= 0 && parts.denom.is_empty() => {
                mantissa_shift = exponent as u32;
                // int32(float32(exponent)*3/10): exponents are multiples of 10.
                15 - num_len - (exponent as i64 * 3 / 10) - 1
            }
            Format::BinarySI => -1,
        };
        if precision >= 0 {
            let scale = match format {
                Format::BinarySI => 0,
                _ => exponent as i64,
            } - denom_len;
            if scale >= NANO {
                let shifted = format!("{}{}", parts.num, parts.denom);
                let value: i64 = shifted.parse().map_err(|_| ParseError::Numeric)?;
                let result = if mantissa_shift > 0 {
                    value
                        .checked_mul(1i64.checked_shl(mantissa_shift).unwrap_or(0))
                        .filter(|_| mantissa_shift < 63)
                } else {
                    Some(value)
                };
                if let Some(result) = result {
                    let canonical = match format {
                        Format::BinarySI => exponent % 10 == 0 && value & 0x07 != 0,
                        _ => {
                            scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0')
                        }
                    };
                    let mut q = Quantity::from_int(result.unsigned_abs() as u128, scale, format);
                    q.negative = !parts.positive && !q.digits.is_empty();
                    q.int_scale = Some(scale);
                    if canonical {
                        q.cached = Some(text.to_string());
                    }
                    return Ok(q);
                }
            }
        }
        // Go's `inf.Dec` path.
        let mut q = Quantity::from_decimal(parts.value).ok_or(ParseError::Numeric)?;
        q.format = format;
        if base == 10 {
            q.exp += exponent as i64;
        } else {
            for _ in 0..exponent {
                q.digits = mul_small(&q.digits, 2);
            }
        }
        // Anything non-zero is rounded up to a nano-unit at least.
        q.round_magnitude(NANO);
        if format == Format::BinarySI
            && q.cmp_magnitude(&Quantity::from_int(i64::MAX as u128, 0, format))
                == Ordering::Greater
        {
            let negative = q.negative;
            q = Quantity::from_int(i64::MAX as u128, 0, format);
            q.negative = negative;
        }
        if format == Format::BinarySI
            && !q.digits.is_empty()
            && q.cmp_magnitude(&Quantity::from_int(1, 0, format)) == Ordering::Less
        {
            q.format = Format::DecimalSI;
        }
        Ok(q)
    }

    /// A quantity as it comes in JSON (`UnmarshalJSON`): a string (spaces
    /// around it trimmed), a number (its text), or `null` (zero).
    pub(crate) fn from_json(value: &Value) -> Result<Quantity, ParseError> {
        match value {
            Value::Null => Ok(Quantity::zero(Format::DecimalExponent, None)),
            Value::String(s) => Quantity::parse(s.trim()),
            Value::Number(n) => Quantity::parse(&n.to_string()),
            // Go hands the JSON text itself to the parser, which refuses it.
            _ => Err(ParseError::Format),
        }
    }

    fn zero(format: Format, cached: Option<String>) -> Quantity {
        Quantity {
            negative: false,
            digits: Vec::new(),
            exp: 0,
            format,
            cached,
            int_scale: Some(0),
        }
    }

    fn from_int(value: u128, exp: i64, format: Format) -> Quantity {
        let digits = if value == 0 {
            Vec::new()
        } else {
            value.to_string().into_bytes()
        };
        Quantity {
            negative: false,
            digits,
            exp,
            format,
            cached: None,
            int_scale: None,
        }
    }

    /// `inf.Dec.SetString` of `[+-]digits[.digits]`.
    fn from_decimal(text: &str) -> Option<Quantity> {
        let (negative, rest) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let (int, frac) = rest.split_once('.').unwrap_or((rest, ""));
        if int.is_empty() && frac.is_empty()
            || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let mut digits: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
        let leading = digits.iter().take_while(|&&d| d == b'0').count();
        digits.drain(..leading);
        Some(Quantity {
            negative: negative && !digits.is_empty(),
            digits,
            exp: -(frac.len() as i64),
            format: Format::DecimalSI,
            cached: None,
            int_scale: None,
        })
    }

    /// Rounds the magnitude up (away from zero) to a multiple of `10^scale`.
    fn round_magnitude(&mut self, scale: i64) {
        if self.exp >= scale {
            return;
        }
        let drop = (scale - self.exp) as usize;
        let keep = self.digits.len().saturating_sub(drop);
        let inexact = self.digits[keep..].iter().any(|&d| d != b'0');
        self.digits.truncate(keep);
        if inexact {
            self.digits = add_one(&self.digits);
        }
        self.exp = scale;
        trim_leading(&mut self.digits);
        if self.digits.is_empty() {
            self.negative = false;
        }
    }

    /// `Quantity.RoundUp(scale)`: rounds up (away from zero) to `10^scale`;
    /// the text Go kept stays when the amount is already that coarse.
    pub(crate) fn round_up(&mut self, scale: i64) {
        if let Some(int_scale) = self.int_scale
            && int_scale >= scale
        {
            return;
        }
        self.cached = None;
        self.round_magnitude(scale);
        if self.int_scale.is_some() {
            self.int_scale = Some(scale);
        }
    }

    /// Whether it is zero.
    pub(crate) fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// Whether it is below zero.
    pub(crate) fn is_negative(&self) -> bool {
        self.negative && !self.digits.is_empty()
    }

    /// `MilliValue() % 1000 == 0`: a whole number once rounded up to a
    /// milli-unit (the check of integer resources such as `pods`).
    pub(crate) fn is_whole_in_millis(&self) -> bool {
        let mut q = self.clone();
        q.round_magnitude(MILLI);
        q.strip_zeros();
        q.exp >= 0 || q.digits.is_empty()
    }

    fn strip_zeros(&mut self) {
        while self.digits.last() == Some(&b'0') {
            self.digits.pop();
            self.exp += 1;
        }
        if self.digits.is_empty() {
            self.exp = 0;
        }
    }

    fn cmp_magnitude(&self, other: &Quantity) -> Ordering {
        let (mut a, mut b) = (self.clone(), other.clone());
        a.strip_zeros();
        b.strip_zeros();
        match (a.digits.is_empty(), b.digits.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        let top = |q: &Quantity| q.digits.len() as i64 + q.exp;
        top(&a).cmp(&top(&b)).then_with(|| {
            let n = a.digits.len().max(b.digits.len());
            let pad = |d: &[u8]| {
                let mut d = d.to_vec();
                d.resize(n, b'0');
                d
            };
            pad(&a.digits).cmp(&pad(&b.digits))
        })
    }

    /// The text Go serves: the one it parsed when canonical, else the
    /// canonical form (`CanonicalizeBytes`).
    pub(crate) fn text(&self) -> String {
        match &self.cached {
            Some(text) => text.clone(),
            None => self.canonical(),
        }
    }

    fn canonical(&self) -> String {
        if self.is_zero() {
            return "0".to_string();
        }
        let sign = if self.negative { "-" } else { "" };
        let mut q = self.clone();
        q.strip_zeros();
        let mut format = q.format;
        if format == Format::BinarySI {
            let magnitude = Quantity::from_int(1024, 0, format);
            if q.cmp_magnitude(&magnitude) == Ordering::Less || q.exp < 0 {
                format = Format::DecimalSI;
            } else {
                // Capped at int64 when parsed: it fits.
                let mut whole: String = String::from_utf8_lossy(&q.digits).into_owned();
                whole.extend(std::iter::repeat_n('0', q.exp as usize));
                let mut value: u128 = whole.parse().unwrap_or(u128::MAX);
                let mut times = 0;
                while value != 0 && value.is_multiple_of(1024) {
                    value /= 1024;
                    times += 1;
                }
                let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
                    .get(times)
                    .copied()
                    .unwrap_or("");
                return format!("{sign}{value}{suffix}");
            }
        }
        // A multiple of three for the exponent, rounding it down.
        while q.exp.rem_euclid(3) != 0 {
            q.digits.push(b'0');
            q.exp -= 1;
        }
        let number = String::from_utf8_lossy(&q.digits);
        let suffix = match format {
            Format::DecimalExponent if q.exp == 0 => String::new(),
            Format::DecimalExponent => format!("e{}", q.exp),
            // An exponent without a suffix (`1000E`) loses it, as in Go.
            _ => match q.exp {
                -9 => "n",
                -6 => "u",
                -3 => "m",
                3 => "k",
                6 => "M",
                9 => "G",
                12 => "T",
                15 => "P",
                18 => "E",
                _ => "",
            }
            .to_string(),
        };
        format!("{sign}{number}{suffix}")
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    /// By value (`Quantity.Cmp`), whatever the format.
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.is_negative(), other.is_negative()) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => self.cmp_magnitude(other),
            (true, true) => other.cmp_magnitude(self),
        }
    }
}

impl std::fmt::Display for Quantity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

/// The parts of a quantity's text (`parseQuantityString`).
struct Parts<'a> {
    positive: bool,
    value: &'a str,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

fn split(text: &str) -> Result<Parts<'_>, ParseError> {
    let bytes = text.as_bytes();
    let end = bytes.len();
    let mut pos = 0;
    let mut positive = true;
    match bytes.first() {
        Some(b'-') => {
            positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    let whole = |num: &'static str| Parts {
        positive,
        value: text,
        num,
        denom: "",
        suffix: "",
    };
    while pos < end && bytes[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Ok(whole("0"));
    }
    let start = pos;
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    let mut num = &text[start..pos];
    if pos >= end {
        return Ok(Parts {
            positive,
            value: text,
            num,
            denom: "",
            suffix: "",
        });
    }
    if num.is_empty() {
        num = "0";
    }
    let mut denom = "";
    if bytes[pos] == b'.' {
        pos += 1;
        let start = pos;
        while pos < end && bytes[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &text[start..pos];
        if pos >= end {
            return Ok(Parts {
                positive,
                value: text,
                num,
                denom,
                suffix: "",
            });
        }
    }
    let value = &text[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&bytes[pos]) {
        pos += 1;
    }
    if pos < end && matches!(bytes[pos], b'-' | b'+') {
        pos += 1;
    }
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(ParseError::Format);
    }
    Ok(Parts {
        positive,
        value,
        num,
        denom,
        suffix: &text[suffix_start..],
    })
}

/// `suffixHandler.interpret`: base, exponent and format of a suffix.
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    let decimal = match suffix {
        "n" => Some(-9),
        "u" => Some(-6),
        "m" => Some(-3),
        "" => Some(0),
        "k" => Some(3),
        "M" => Some(6),
        "G" => Some(9),
        "T" => Some(12),
        "P" => Some(15),
        "E" => Some(18),
        _ => None,
    };
    if let Some(exponent) = decimal {
        return Some((10, exponent, Format::DecimalSI));
    }
    let binary = match suffix {
        "Ki" => Some(10),
        "Mi" => Some(20),
        "Gi" => Some(30),
        "Ti" => Some(40),
        "Pi" => Some(50),
        "Ei" => Some(60),
        _ => None,
    };
    if let Some(exponent) = binary {
        return Some((2, exponent, Format::BinarySI));
    }
    let rest = suffix.strip_prefix(['e', 'E'])?;
    if rest.is_empty() {
        return None;
    }
    // strconv.ParseInt(.., 10, 64), then int32(..) as Go truncates it.
    let parsed: i64 = rest.parse().ok()?;
    Some((10, parsed as i32, Format::DecimalExponent))
}

fn mul_small(digits: &[u8], by: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(digits.len() + 1);
    let mut carry = 0u32;
    for &d in digits.iter().rev() {
        let v = u32::from(d - b'0') * by + carry;
        out.push(b'0' + (v % 10) as u8);
        carry = v / 10;
    }
    while carry > 0 {
        out.push(b'0' + (carry % 10) as u8);
        carry /= 10;
    }
    out.reverse();
    trim_leading(&mut out);
    out
}

fn add_one(digits: &[u8]) -> Vec<u8> {
    let mut out = digits.to_vec();
    for d in out.iter_mut().rev() {
        if *d == b'9' {
            *d = b'0';
        } else {
            *d += 1;
            return out;
        }
    }
    out.insert(0, b'1');
    out
}

fn trim_leading(digits: &mut Vec<u8>) {
    let leading = digits.iter().take_while(|&&d| d == b'0').count();
    digits.drain(..leading);
}

/// `SetDefaults_ResourceList`: each value rounded up to a milli-unit and
/// written as the real server serves it. Values that do not parse are left
/// (they were refused when decoded).
pub(crate) fn default_resource_list(list: Option<&mut Value>) {
    let Some(list) = list.and_then(Value::as_object_mut) else {
        return;
    };
    for value in list.values_mut() {
        if let Ok(mut q) = Quantity::from_json(value) {
            q.round_up(MILLI);
            *value = Value::String(q.text());
        }
    }
}

/// A lone quantity (outside a `ResourceList`) written as the real server
/// serves it, without rounding.
pub(crate) fn default_quantity(value: Option<&mut Value>) {
    if let Some(value) = value
        && let Ok(q) = Quantity::from_json(value)
    {
        *value = Value::String(q.text());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As a real kube-apiserver 1.36 stores them in a ResourceQuota's
    /// `spec.hard` (rounded up to milli-units, then served).
    #[test]
    fn stored_as_the_real_server_stores_them() {
        let cases = [
            ("1000m", "1"),
            ("0.5", "500m"),
            ("1024Mi", "1Gi"),
            ("1e3", "1e3"),
            ("1.5", "1500m"),
            ("100", "100"),
            ("0.1", "100m"),
            ("1k", "1k"),
            ("2000Ki", "2000Ki"),
            ("1.5Gi", "1536Mi"),
            ("0.000001", "1m"),
            ("1n", "1m"),
            ("1u", "1m"),
            ("1e-3", "1e-3"),
            ("+1", "+1"),
            ("01", "01"),
            ("1.0", "1"),
            ("1E3", "1E3"),
            ("1000000", "1M"),
            ("12e6", "12e6"),
            ("0.5e3", "500"),
            ("5e-1", "500e-3"),
            ("1.25", "1250m"),
            ("1.2345m", "2m"),
            ("1Ei", "1Ei"),
            ("1e18", "1e18"),
            ("100000k", "100M"),
            ("1500m", "1500m"),
            ("1048576", "1048576"),
            ("1e-10", "1e-3"),
            ("0.0", "0"),
            ("-0", "0"),
            ("1.5Ki", "1536"),
            ("0.5Ki", "512"),
            ("1023Ki", "1023Ki"),
            ("1.1k", "1100"),
            ("999999999999999999999", "999999999999999999999"),
            ("1e20", "100e18"),
            ("1.", "1."),
            (".5", "500m"),
            ("1000E", "1"),
            ("1e21", "1e21"),
            ("1.G", "1.G"),
            ("8Ki", "8Ki"),
            ("0.5Gi", "512Mi"),
            ("0.1Ki", "102400m"),
            ("8Ei", "9223372036854775807"),
            ("7Ei", "7Ei"),
            ("0.5m", "1m"),
            ("2.0", "2"),
            ("1e1000", "10e999"),
            ("00.5", "500m"),
            ("1e+3", "1e+3"),
            ("-1.5Gi", "-1536Mi"),
        ];
        for (given, stored) in cases {
            let mut q = Quantity::parse(given).unwrap_or_else(|e| panic!("{given}: {e}"));
            q.round_up(MILLI);
            assert_eq!(q.text(), stored, "{given}");
        }
    }

    #[test]
    fn refused_with_the_real_servers_words() {
        for (given, error) in [
            ("lots", ParseError::Format),
            ("1K", ParseError::Suffix),
            ("1e", ParseError::Suffix),
            ("1ki", ParseError::Suffix),
            ("1.5e3m", ParseError::Format),
            ("1e9m", ParseError::Format),
            ("1_0", ParseError::Format),
            ("", ParseError::Format),
            ("1.5.5", ParseError::Format),
        ] {
            assert_eq!(Quantity::parse(given).err(), Some(error), "{given}");
        }
        assert_eq!(
            ParseError::Format.to_string(),
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        );
    }

    #[test]
    fn json_values() {
        let text = |v: Value| Quantity::from_json(&v).map(|q| q.text());
        assert_eq!(text(serde_json::json!(1.5)), Ok("1500m".into()));
        assert_eq!(text(serde_json::json!(2)), Ok("2".into()));
        assert_eq!(text(Value::Null), Ok("0".into()));
        assert_eq!(text(serde_json::json!(" 1 ")), Ok("1".into()));
        assert_eq!(text(serde_json::json!(true)), Err(ParseError::Format));
    }

    #[test]
    fn compared_by_value() {
        let q = |s: &str| Quantity::parse(s).unwrap();
        assert_eq!(q("1"), q("1000m"));
        assert!(q("1Gi") > q("1G"));
        assert!(q("-1") < q("0"));
        assert!(q("-2") < q("-1"));
        assert!(q("500m") < q("1"));
        assert!(q("1e1000") > q("8Ei"));
        assert!(q("1").is_whole_in_millis());
        assert!(!q("1.5").is_whole_in_millis());
        assert!(q("1.9999").is_whole_in_millis());
        assert!(q("-1").is_negative());
        assert!(!q("-0").is_negative());
    }
}
