//! A CronJob's schedule as the real server parses it (`robfig/cron`'s
//! standard parser: five fields or a descriptor), with its error words.

use super::strconv::go_quote;
use super::time::duration;

/// The bounds and names of one field.
struct Bounds {
    min: u32,
    max: u32,
    names: &'static [(&'static str, u32)],
}

const MINUTES: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
};
const DAYS: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const WEEKDAYS: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ],
};

/// Why `schedule` does not parse, in the parser's words.
pub(crate) fn schedule_error(schedule: &str) -> Option<String> {
    if schedule.is_empty() {
        return Some("empty spec string".to_string());
    }
    let mut spec = schedule;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        // A zone the parser loads; the real server refuses TZ apart.
        let Some(space) = spec.find(' ') else {
            return Some("provided bad location".to_string());
        };
        spec = spec[space..].trim();
    }
    if let Some(descriptor) = spec.strip_prefix('@') {
        return descriptor_error(descriptor, spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Some(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    for (field, bounds) in fields.iter().zip([MINUTES, HOURS, DAYS, MONTHS, WEEKDAYS]) {
        for range in field.split(',').filter(|r| !r.is_empty()) {
            if let Err(error) = check_range(range, &bounds) {
                return Some(error);
            }
        }
    }
    None
}

fn descriptor_error(descriptor: &str, spec: &str) -> Option<String> {
    match descriptor {
        "yearly" | "annually" | "monthly" | "weekly" | "daily" | "midnight" | "hourly" => None,
        _ => match descriptor.strip_prefix("every ") {
            Some(duration) => duration::parse_duration(duration)
                .err()
                .map(|why| format!("failed to parse duration {spec}: {why}")),
            None => Some(format!("unrecognized descriptor: {spec}")),
        },
    }
}

/// `getRange`: `*`, `?`, `n`, `a-b`, each with an optional `/step`.
fn check_range(expr: &str, bounds: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_and_high.len() == 1;
    let (start, mut end);
    if low_and_high[0] == "*" || low_and_high[0] == "?" {
        start = bounds.min;
        end = bounds.max;
    } else {
        start = int_or_name(low_and_high[0], bounds)?;
        end = match low_and_high.len() {
            1 => start,
            2 => int_or_name(low_and_high[1], bounds)?,
            _ => return Err(format!("too many hyphens: {expr}")),
        };
    }
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = must_parse_int(range_and_step[1])?;
            if single {
                end = bounds.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < bounds.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            bounds.min
        ));
    }
    if end > bounds.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            bounds.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

fn int_or_name(expr: &str, bounds: &Bounds) -> Result<u32, String> {
    let lower = expr.to_lowercase();
    if let Some((_, value)) = bounds.names.iter().find(|(name, _)| *name == lower) {
        return Ok(*value);
    }
    must_parse_int(expr)
}

/// `mustParseInt`: `strconv.Atoi`, not negative.
fn must_parse_int(expr: &str) -> Result<u32, String> {
    let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {}: invalid syntax",
            go_quote(expr)
        ));
    }
    let value: i64 = match expr.parse() {
        Ok(v) => v,
        Err(_) => {
            return Err(format!(
                "failed to parse int from {expr}: strconv.Atoi: parsing {}: value out of range",
                go_quote(expr)
            ));
        }
    };
    if value < 0 {
        return Err(format!("negative number ({value}) not allowed: {expr}"));
    }
    Ok(u32::try_from(value).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::schedule_error;

    #[test]
    fn schedules_read_as_the_real_server_reads_them() {
        for good in [
            "*/5 * * * *",
            "0 9-17/2 1,15 JAN-jun mon-FRI",
            "@hourly",
            "@every 1h30m",
            "*/15 ? * * ?",
            "0 0 1 1 *",
        ] {
            assert_eq!(schedule_error(good), None, "{good}");
        }
        for (bad, error) in [
            (
                "every day",
                "expected exactly 5 fields, found 2: [every day]",
            ),
            ("60 * * * *", "end of range (60) above maximum (59): 60"),
            ("0 0 0 * *", "beginning of range (0) below minimum (1): 0"),
            (
                "0 x * * *",
                "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax",
            ),
            (
                "0 5-2 * * *",
                "beginning of range (5) beyond end of range (2): 5-2",
            ),
            ("@fortnightly", "unrecognized descriptor: @fortnightly"),
        ] {
            assert_eq!(schedule_error(bad).as_deref(), Some(error), "{bad}");
        }
    }
}
