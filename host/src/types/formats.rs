//! Small readers and writers of values: a configuration share, a UTC
//! calendar time, bytes as hex, the host's own regex patterns.

use serde::Deserialize;

/// A share (0 to 1) in the configuration: anything else is a typo that
/// would silently turn a threshold off, so it is refused.
pub fn share<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let v = f64::deserialize(d)?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(serde::de::Error::custom(format!(
            "{v} is not a share: use a number from 0 to 1 (0.6 is 60%)"
        )))
    }
}

/// A calendar time in UTC, from seconds since the Unix epoch (proleptic
/// Gregorian; Howard Hinnant's civil-from-days).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtcTime {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
}

impl UtcTime {
    pub fn from_unix(secs: i64) -> Self {
        let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        UtcTime {
            year: yoe + era * 400 + i64::from(month <= 2),
            month,
            day: doy - (153 * mp + 2) / 5 + 1,
            hour: rem / 3_600,
            minute: rem % 3_600 / 60,
            second: rem % 60,
        }
    }
}

/// `bytes` as lowercase hex digits: how content hashes are written
/// (`sha256:` and these), and short ids cut from them.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// A regex from a pattern written in this crate's source (`'static`, so
/// never from input). The tests that use a pattern compile it, so a bad
/// one is a bug in the host: it panics, naming the pattern.
#[allow(
    clippy::expect_used,
    reason = "the pattern is a constant of the host, checked by its tests"
)]
pub(crate) fn constant_regex(pattern: &'static str) -> regex::Regex {
    regex::Regex::new(pattern).expect(pattern)
}
