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

mod parse;
#[cfg(test)]
mod tests;

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
pub(super) const MAX_INT64_FACTORS: i64 = 18;

/// `Nano`: the smallest scale Go keeps.
pub(super) const NANO: i64 = -9;

/// `Milli`: the scale a `ResourceList` is rounded up to.
pub(crate) const MILLI: i64 = -3;

impl Quantity {
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

    /// Go's `int64Amount` when the fast path parsed it: the signed value
    /// and its decimal scale (`value × 10^scale`); `None` for a quantity
    /// held as `inf.Dec`. CEL's `isInteger()` and arithmetic depend on it.
    pub(crate) fn int64_amount(&self) -> Option<(i64, i64)> {
        let scale = self.int_scale?;
        let magnitude: i64 = if self.digits.is_empty() {
            0
        } else {
            std::str::from_utf8(&self.digits).ok()?.parse().ok()?
        };
        let value = if self.negative { -magnitude } else { magnitude };
        // The digits are at `exp`; the amount's scale is the one parsed.
        let shift = u32::try_from(self.exp - scale).ok()?;
        Some((value.checked_mul(10i64.checked_pow(shift)?)?, scale))
    }

    /// The amount as `(negative, digits, exponent)`: `digits × 10^exponent`,
    /// the digits ASCII without leading zeros (empty for zero).
    pub(crate) fn decimal(&self) -> (bool, &[u8], i64) {
        (self.is_negative(), &self.digits, self.exp)
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

pub(super) fn mul_small(digits: &[u8], by: u32) -> Vec<u8> {
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
