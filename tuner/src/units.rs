//! How times read in the tuner's output, and how a duration a user gives reads.

use std::time::Duration;

/// A time with a unit that keeps three significant digits.
pub fn seconds(t: f64) -> String {
    match t {
        t if t >= 1.0 => format!("{t:.3} s"),
        t if t >= 1e-3 => format!("{:.3} ms", t * 1e3),
        t => format!("{:.3} µs", t * 1e6),
    }
}

/// A duration as budgets and limits are given: `90s`, `30m`, `8h`, `1.5h`
/// (a bare number is seconds); the message says what was expected.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len()));
    let n: f64 =
        number.parse().map_err(|_| format!("`{text}`: expected a duration such as 90s, 30m or 8h"))?;
    let seconds = match unit {
        "s" | "" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("`{text}`: unknown unit `{unit}` (use s, m or h)")),
    };
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_duration("8h").unwrap(), Duration::from_secs(8 * 3600));
        assert_eq!(parse_duration("1.5h").unwrap(), Duration::from_secs(5400));
        assert!(parse_duration("8 days").is_err());
        assert!(parse_duration("h").is_err());
    }
}
