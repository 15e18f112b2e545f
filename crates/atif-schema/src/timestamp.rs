//! `check_timestamp`: the one timestamp checker of the workspace. It accepts what Harbor and
//! the PyPI `atif` package accept, which is `datetime.fromisoformat(ts.replace("Z", "+00:00"))`
//! on CPython 3.11 and later.
//!
//! This is an emulation of CPython's C parser (`Modules/_datetimemodule.c`), not of ISO 8601:
//! it accepts what Python accepts (any single character between date and time, ISO week dates,
//! basic and extended forms, fractions cut after six digits, offsets up to ±23:59:59.999999) and
//! rejects what Python rejects (lower-case `z`, `24:00`, leap seconds, a missing time after the
//! separator). Reads past the end of the text behave like C reading the terminating NUL byte.

use std::borrow::Cow;

use crate::{Error, Result};

/// Checks that `text` is a step timestamp that the ATIF references accept: an ISO 8601 date or
/// date-time as Python's `datetime.fromisoformat` reads it after replacing `Z` with `+00:00`
/// (e.g. `2025-10-16T14:30:00Z`, `2025-10-16 14:30:00.123+05:30`, `2025-10-16`).
///
/// This is the check behind the validator's `timestamp` rule; a producer that keeps only the
/// timestamps it accepts never writes an invalid one.
///
/// ```
/// assert!(atif_schema::check_timestamp("2025-10-16T14:30:00Z").is_ok());
/// let err = atif_schema::check_timestamp("2025-10-16T24:00:00Z").unwrap_err();
/// assert!(err.to_string().contains("hour must be 0..23"));
/// ```
///
/// # Errors
///
/// [`Error::Timestamp`] with the text and what is wrong with it (e.g. `hour must be 0..23`,
/// `not a date`).
pub fn check_timestamp(text: &str) -> Result<()> {
    check(text).map_err(|reason| Error::Timestamp { text: text.to_owned(), reason })
}

/// Checks `text` the way the Python references do; `Err` says what is wrong.
fn check(text: &str) -> Result<(), &'static str> {
    let replaced: Cow<'_, str> = if text.contains('Z') {
        Cow::Owned(text.replace('Z', "+00:00"))
    } else {
        Cow::Borrowed(text)
    };
    // Python counts characters, not bytes, for its minimum length.
    if replaced.chars().count() < 7 {
        return Err("too short for a date");
    }
    from_iso_format(replaced.as_bytes())
}

/// The bytes of the text, read as C reads a NUL-terminated string.
struct Text<'a>(&'a [u8]);

impl Text<'_> {
    fn at(&self, index: usize) -> u8 {
        self.0.get(index).copied().unwrap_or(0)
    }

    /// Parses `count` ASCII digits from `*pos`, advancing it.
    fn digits(&self, pos: &mut usize, count: usize) -> Option<u32> {
        let mut value: u32 = 0;
        for _ in 0..count {
            let digit = self.at(*pos).wrapping_sub(b'0');
            if digit > 9 {
                return None;
            }
            value = value.saturating_mul(10).saturating_add(u32::from(digit));
            *pos += 1;
        }
        Some(value)
    }
}

fn from_iso_format(bytes: &[u8]) -> Result<(), &'static str> {
    let text = Text(bytes);
    let len = bytes.len();
    let separator = find_separator(&text, len).ok_or("not a date")?;
    let (year, month, day) = parse_date(&text, separator)?;
    let mut time = Time::default();
    if len > separator {
        // Skip the separator, which may be any character (one to four UTF-8 bytes).
        let lead = text.at(separator);
        let width = match lead {
            _ if lead & 0x80 == 0 => 1,
            _ if lead & 0xF0 == 0xE0 => 3,
            _ if lead & 0xF0 == 0xF0 => 4,
            _ => 2,
        };
        time = parse_time(&text, separator + width, len)?;
    }
    check_date(year, month, day)?;
    if time.hour > 23 {
        return Err("hour must be 0..23");
    }
    if time.minute > 59 {
        return Err("minute must be 0..59");
    }
    if time.second > 59 {
        return Err("second must be 0..59");
    }
    if time.offset_micros.unsigned_abs() >= 86_400_000_000 {
        return Err("UTC offset must be less than 24 hours");
    }
    Ok(())
}

/// Where the date ends, as CPython decides it from the first characters.
fn find_separator(text: &Text<'_>, len: usize) -> Option<usize> {
    if len == 7 {
        return Some(7);
    }
    if text.at(4) == b'-' {
        if text.at(5) != b'W' {
            return Some(10); // YYYY-MM-DD
        }
        if len > 8 && text.at(8) == b'-' {
            if len == 9 {
                return None;
            }
            if len > 10 && text.at(10).is_ascii_digit() {
                return Some(8); // YYYY-Www-HH...: a hyphen as the separator
            }
            return Some(10); // YYYY-Www-D
        }
        return Some(8); // YYYY-Www
    }
    if text.at(4) == b'W' {
        let mut index = 7;
        while index < len && text.at(index).is_ascii_digit() {
            index += 1;
        }
        if index < 9 {
            return Some(index);
        }
        return Some(if index % 2 == 0 { 7 } else { 8 });
    }
    Some(8) // YYYYMMDD
}

fn parse_date(text: &Text<'_>, len: usize) -> Result<(u32, u32, u32), &'static str> {
    let mut pos = 0;
    let year = text.digits(&mut pos, 4).ok_or("not a date: expected a four-digit year")?;
    let dashes = text.at(pos) == b'-';
    if dashes {
        pos += 1;
    }
    if text.at(pos) == b'W' {
        pos += 1;
        let week = text.digits(&mut pos, 2).ok_or("not an ISO week date")?;
        let mut weekday = 1;
        if pos < len {
            if dashes {
                if text.at(pos) != b'-' {
                    return Err("inconsistent use of dashes in the date");
                }
                pos += 1;
            }
            weekday = text.digits(&mut pos, 1).ok_or("not an ISO week date")?;
        }
        return week_date(year, week, weekday);
    }
    let month = text.digits(&mut pos, 2).ok_or("not a date: expected a two-digit month")?;
    if dashes {
        if text.at(pos) != b'-' {
            return Err("inconsistent use of dashes in the date");
        }
        pos += 1;
    }
    let day = text.digits(&mut pos, 2).ok_or("not a date: expected a two-digit day")?;
    Ok((year, month, day))
}

/// An ISO week date as a calendar date (only its validity matters here).
fn week_date(year: u32, week: u32, weekday: u32) -> Result<(u32, u32, u32), &'static str> {
    if !(1..=9999).contains(&year) {
        return Err("year must be 1..9999");
    }
    let first_weekday = (ordinal(year, 1, 1) + 6) % 7; // 0 = Monday
    let long_year = first_weekday == 3 || (first_weekday == 2 && is_leap(year));
    if week == 0 || week > 53 || (week == 53 && !long_year) {
        return Err("week number out of range");
    }
    if !(1..=7).contains(&weekday) {
        return Err("weekday must be 1..7");
    }
    let first_day = ordinal(year, 1, 1);
    let mut week1_monday = first_day - first_weekday;
    if first_weekday > 3 {
        week1_monday += 7;
    }
    let day = week1_monday + (week - 1) * 7 + weekday - 1;
    if day > ordinal(9999, 12, 31) {
        return Err("year must be 1..9999");
    }
    // The calendar date itself is in range; report a date that passes the later check.
    Ok((year.min(9999), 1, 1))
}

fn check_date(year: u32, month: u32, day: u32) -> Result<(), &'static str> {
    if !(1..=9999).contains(&year) {
        return Err("year must be 1..9999");
    }
    if !(1..=12).contains(&month) {
        return Err("month must be 1..12");
    }
    if day == 0 || day > days_in_month(year, month) {
        return Err("day is out of range for the month");
    }
    Ok(())
}

fn is_leap(year: u32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 0001-01-01 plus one (proleptic Gregorian), as Python's `toordinal`.
fn ordinal(year: u32, month: u32, day: u32) -> u32 {
    let y = year - 1;
    let before_year = y * 365 + y / 4 - y / 100 + y / 400;
    let before_month: u32 = (1..month).map(|m| days_in_month(year, m)).sum();
    before_year + before_month + day
}

#[derive(Debug, Default)]
struct Time {
    hour: u32,
    minute: u32,
    second: u32,
    offset_micros: i64,
}

/// `HH[:MM[:SS[.ffffff]]]` from `start` to `end`, then an optional `+HH[:MM[:SS[.ffffff]]]`
/// or `-…` offset up to `end` (after the `Z` replacement there is never a `Z` left).
fn parse_time(text: &Text<'_>, start: usize, end: usize) -> Result<Time, &'static str> {
    // C's do-while looks at the first byte even when the time is empty.
    let mut tz = start;
    loop {
        if matches!(text.at(tz), b'Z' | b'+' | b'-') {
            break;
        }
        tz += 1;
        if tz >= end {
            break;
        }
    }
    let (more, hour, minute, second, _) = hh_mm_ss_ff(text, start, tz)?;
    let mut time = Time { hour, minute, second, offset_micros: 0 };
    if tz == end {
        return if more { Err("unexpected characters after the time") } else { Ok(time) };
    }
    if text.at(tz) == b'Z' {
        return if text.at(tz + 1) != 0 { Err("characters after Z") } else { Ok(time) };
    }
    let sign: i64 = if text.at(tz) == b'-' { -1 } else { 1 };
    let (more, hours, minutes, seconds, micros) =
        hh_mm_ss_ff(text, tz + 1, end).map_err(|_| "malformed UTC offset")?;
    if more {
        return Err("malformed UTC offset");
    }
    let seconds_total = i64::from(hours) * 3600 + i64::from(minutes) * 60 + i64::from(seconds);
    time.offset_micros = sign * (seconds_total * 1_000_000 + i64::from(micros));
    Ok(time)
}

/// Parses `HH[:?MM[:?SS[{.,}fff[fff]]]]` between `start` and `end`; the flag says whether text
/// is left over (C's "not at the terminating NUL").
fn hh_mm_ss_ff(
    text: &Text<'_>,
    start: usize,
    end: usize,
) -> Result<(bool, u32, u32, u32, u32), &'static str> {
    let mut values = [0u32; 3];
    let mut pos = start;
    let mut colons = true;
    for (index, value) in values.iter_mut().enumerate() {
        *value = text.digits(&mut pos, 2).ok_or("not a time: expected two-digit fields")?;
        let next = text.at(pos);
        pos += 1;
        if index == 0 {
            colons = next == b':';
        }
        if pos >= end {
            let [hour, minute, second] = values;
            return Ok((next != 0, hour, minute, second, 0));
        } else if colons && next == b':' {
            continue;
        } else if next == b'.' || next == b',' {
            break;
        } else if !colons {
            pos -= 1;
        } else {
            return Err("malformed time separator");
        }
    }
    let to_parse = (end - pos).min(6);
    let mut micros = text.digits(&mut pos, to_parse).ok_or("malformed fraction of a second")?;
    if to_parse < 6 {
        micros *= 10u32.pow((6 - to_parse) as u32);
    }
    while text.at(pos).is_ascii_digit() {
        pos += 1;
    }
    let [hour, minute, second] = values;
    Ok((text.at(pos) != 0, hour, minute, second, micros))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each case was checked against CPython 3.11.7:
    /// `datetime.fromisoformat(s.replace("Z", "+00:00"))`.
    const CASES: &[(&str, bool)] = &[
        ("2025-10-16T14:30:00Z", true),
        ("2025-10-16T14:30:00.123456789Z", true),
        ("2025-10-16 14:30:00", true),
        ("2025-10-16", true),
        ("2025-10-16T14", true),
        ("2025-10-16T14:30", true),
        ("20251016T143000Z", true),
        ("2025-W42-4", true),
        ("2025W424", true),
        ("2025-W42", true),
        ("2025W42", true),
        ("2025-10-16T14:30:00+0530", true),
        ("2025-10-16T14:30:00+05", true),
        ("2025-10-16T14:30:00,5", true),
        ("2025-10-16T14:30:00 +00:00", true),
        ("2025-10-16x14:30:00", true),
        ("2025-10-16\u{e9}14:30:00", true),
        ("2025-10-16T14:30:00-23:59:59.999999", true),
        ("2024-02-29", true),
        ("2020-W53-7", true),
        ("2025-10-16T14:30:00z", false),
        ("2025-10-16T24:00:00", false),
        ("2025-10-16T14:30:60", false),
        ("2025-10-16T14:30:00+24:00", false),
        ("2025-10-16T14:30:00+25:00", false),
        ("2025-10-16T14:30:00ZZ", false),
        (" 2025-10-16", false),
        ("not a date", false),
        ("1697466600", false),
        ("2025-10-16T", false),
        ("2025-1016", false),
        ("2025-13-01", false),
        ("2023-02-29", false),
        ("2025-W53-1", false),
        ("2025-W42-8", false),
        ("0000-01-01", false),
        ("2025-10-16T14:3", false),
        ("2025-10-16T14:30:00.", false),
        ("2025-10-16T14:30:00Z+01:00", false),
        ("2025-10-1", false),
        ("", false),
        ("Z", false),
    ];

    #[test]
    fn timestamps_are_judged_as_python_judges_them() {
        for &(text, accepted) in CASES {
            assert_eq!(check(text).is_ok(), accepted, "{text:?}: {:?}", check(text));
        }
    }

    #[test]
    fn the_public_check_names_the_text_and_the_reason() {
        let err = check_timestamp("2025-10-16T14:30:60Z").unwrap_err();
        assert!(
            matches!(&err, Error::Timestamp { text, reason: "second must be 0..59" } if text == "2025-10-16T14:30:60Z"),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "\"2025-10-16T14:30:60Z\" is not an ISO 8601 date-time as Python's \
             datetime.fromisoformat reads it after Z → +00:00 (second must be 0..59); expected \
             e.g. \"2025-10-16T14:30:00Z\""
        );
        assert!(err.is_invalid_input());
        assert!(check_timestamp("2025-10-16T14:30:59Z").is_ok());
    }
}
