//! Durations as Go writes them (`90s`, `1h30m`, `500ms`), as the
//! operator's configuration takes them.

/// A duration as Go writes one (`1h30m`, `90s`, `500ms`, `0`).
pub(super) fn go_duration(text: &str) -> Option<std::time::Duration> {
    let text = text.trim();
    if text == "0" {
        return Some(std::time::Duration::ZERO);
    }
    let mut rest = text;
    let mut total = std::time::Duration::ZERO;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit() && c != '.')?;
        let (number, tail) = rest.split_at(digits);
        let number: f64 = number.parse().ok()?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let seconds = match unit {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
        total += std::time::Duration::try_from_secs_f64(number * seconds).ok()?;
        rest = tail;
    }
    (!text.is_empty()).then_some(total)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::go_duration;

    #[test]
    fn go_durations_parse_as_go_writes_them() {
        assert_eq!(go_duration("90s"), Some(Duration::from_secs(90)));
        assert_eq!(go_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(go_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(go_duration("1.5h"), Some(Duration::from_secs(5400)));
        assert_eq!(go_duration("0"), Some(Duration::ZERO));
        for bad in ["", "10", "5 minutes", "1d", "m"] {
            assert_eq!(go_duration(bad), None, "{bad:?}");
        }
    }
}
