//! Wall-clock stamps for the database: RFC 3339, UTC, always with
//! milliseconds (`2026-11-30T05:36:27.123Z`).
//!
//! One fixed width and one time zone matter more than looks here: the
//! ledger groups and filters rows by comparing these strings (`2026-11` is a
//! month, `2026-11-30` a day), which is only right when every stamp is
//! spelled the same way. The conversion, both ways (reading a stamp back
//! serves ages and durations), is a few lines of calendar arithmetic, so
//! the crate carries no date library.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, in the database's spelling.
#[must_use]
pub fn now_rfc3339() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    rfc3339(since.as_secs(), since.subsec_millis())
}

/// The `YYYY-MM` month a stamp from [`now_rfc3339`] falls in.
#[must_use]
pub fn month_of(stamp: &str) -> &str {
    stamp.get(..7).unwrap_or(stamp)
}

/// Seconds and milliseconds since the Unix epoch, as a UTC stamp.
#[must_use]
pub fn rfc3339(secs: u64, millis: u32) -> String {
    let (year, month, day) = date_of_day(secs / 86_400);
    let time = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        time / 3_600,
        time / 60 % 60,
        time % 60
    )
}

/// Milliseconds since the Unix epoch of a stamp spelled as
/// [`now_rfc3339`] spells it (`2026-11-30T05:36:27.123Z`); `None` for any
/// other spelling, including dates before 1970.
#[must_use]
pub fn millis_of(stamp: &str) -> Option<u64> {
    let bytes = stamp.as_bytes();
    let shape = bytes.len() == 24
        && bytes[23] == b'Z'
        && [
            (4, b'-'),
            (7, b'-'),
            (10, b'T'),
            (13, b':'),
            (16, b':'),
            (19, b'.'),
        ]
        .iter()
        .all(|&(at, sep)| bytes[at] == sep);
    if !shape {
        return None;
    }
    let number = |from: usize, to: usize| -> Option<u64> {
        let digits = stamp.get(from..to)?;
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    };
    let (year, month, day) = (number(0, 4)?, number(5, 7)?, number(8, 10)?);
    let (hour, minute, second) = (number(11, 13)?, number(14, 16)?, number(17, 19)?);
    let millis = number(20, 23)?;
    if year < 1970
        || !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let days = day_of_date(year, month, day);
    Some((((days * 24 + hour) * 60 + minute) * 60 + second) * 1_000 + millis)
}

/// Days from 1970-01-01 to a Gregorian date from 1970 on: the inverse of
/// [`date_of_day`], after Hinnant's `days_from_civil`.
fn day_of_date(year: u64, month: u64, day: u64) -> u64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year / 400;
    let year_of_era = year % 400;
    let month_from_march = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The Gregorian date of a day counted from 1970-01-01, after Howard
/// Hinnant's `civil_from_days`: shift to a year starting in March so the
/// leap day comes last, then split into 400-year eras.
fn date_of_day(days: u64) -> (u64, u64, u64) {
    let shifted = days + 719_468;
    let era = shifted / 146_097;
    let day_of_era = shifted % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants_are_spelled_exactly() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(rfc3339(951_868_799, 999), "2000-02-29T23:59:59.999Z");
        assert_eq!(rfc3339(1_796_016_987, 123), "2026-11-30T05:36:27.123Z");
        assert_eq!(rfc3339(4_107_542_400, 0), "2100-03-01T00:00:00.000Z");
    }

    #[test]
    fn stamps_read_back_to_the_instant_they_spell() {
        for (secs, millis) in [
            (0, 0),
            (951_782_400, 5),
            (951_868_799, 999),
            (1_796_016_987, 123),
            (4_107_542_400, 0),
        ] {
            let stamp = rfc3339(secs, millis);
            assert_eq!(
                millis_of(&stamp),
                Some(secs * 1_000 + u64::from(millis)),
                "{stamp}"
            );
        }
        for bad in [
            "",
            "2026-11-30",
            "2026-11-30T05:36:27Z",
            "2026-11-30T05:36:27.123+01:00",
            "2026-13-30T05:36:27.123Z",
            "2026-11-30T05:36:2x.123Z",
            "1969-12-31T23:59:59.999Z",
            "2026-11-30T05:36:27.1\u{e9}Z",
        ] {
            assert_eq!(millis_of(bad), None, "{bad}");
        }
    }

    #[test]
    fn now_has_the_fixed_shape_and_a_month() {
        let now = now_rfc3339();
        assert_eq!(now.len(), 24, "{now}");
        assert!(now.ends_with('Z'), "{now}");
        assert_eq!(month_of(&now), &now[..7]);
        assert_eq!(month_of("2026-11-30T05:36:27.123Z"), "2026-11");
    }
}
