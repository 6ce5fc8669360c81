//! Parsing input values, with messages that name the input.

use super::error::ConfigError;
use std::time::Duration;

pub(crate) fn parse_bool(name: &str, value: &str) -> Result<bool, ConfigError> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(ConfigError::new(format!(
            "{name} must be true or false, not `{value}`"
        ))),
    }
}

/// Parses `90`, `90s`, `15m`, `1h` (humantime); between 1s and 24h.
pub(crate) fn parse_duration(name: &str, value: &str) -> Result<Duration, ConfigError> {
    let d = parse_duration_or_zero(name, value)?;
    if d.is_zero() {
        return Err(ConfigError::new(format!(
            "{name} must be between 1s and 24h"
        )));
    }
    Ok(d)
}

/// Like [`parse_duration`], but `0` is allowed (no delay).
pub(crate) fn parse_duration_or_zero(name: &str, value: &str) -> Result<Duration, ConfigError> {
    let d = if value.bytes().all(|b| b.is_ascii_digit()) {
        value
            .parse::<u64>()
            .map(Duration::from_secs)
            .map_err(|e| ConfigError::new(format!("{name}: {e}")))?
    } else {
        humantime::parse_duration(value).map_err(|e| {
            ConfigError::new(format!(
                "{name} must be a duration like 600, 10m or 1h: {e}"
            ))
        })?
    };
    if d > Duration::from_secs(24 * 3600) {
        return Err(ConfigError::new(format!("{name} must be at most 24h")));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("t", "90").unwrap(), Duration::from_secs(90));
        assert_eq!(
            parse_duration("t", "15m").unwrap(),
            Duration::from_secs(900)
        );
        assert!(parse_duration("t", "0").is_err());
        assert_eq!(parse_duration_or_zero("t", "0").unwrap(), Duration::ZERO);
    }
}
