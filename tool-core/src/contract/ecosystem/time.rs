//! `time`'s dates and times.

use time::format_description::well_known::Rfc3339;
use time::{Date, Month, OffsetDateTime, Time};

use super::formatted::{Shape, formatted};
use super::{NO_LEAP_SECOND, PARTIAL_TIME};
use crate::contract::format::Format;

const DATE_TIME: Shape = Shape {
    format: Some(Format::DateTime),
    pattern: Some(&NO_LEAP_SECOND),
    looks_like: "an RFC 3339 date-time without a leap second, such as 2025-01-31T09:30:00Z",
};

const DATE: Shape = Shape {
    format: Some(Format::Date),
    pattern: None,
    looks_like: "a date YYYY-MM-DD",
};

const TIME: Shape = Shape {
    format: None,
    pattern: Some(&PARTIAL_TIME),
    looks_like: "a time of day HH:MM:SS, with up to nine digits of fraction and no offset",
};

/// The number of the ASCII digits `digits`.
fn number(digits: &str) -> Result<u32, String> {
    digits
        .parse()
        .map_err(|_| format!("{digits:?} is not a number"))
}

fn date(s: &str) -> Result<Date, String> {
    let (Some(year), Some(month), Some(day)) = (s.get(..4), s.get(5..7), s.get(8..10)) else {
        return Err("not YYYY-MM-DD".to_owned());
    };
    let month = u8::try_from(number(month)?).map_err(|error| error.to_string())?;
    let month = Month::try_from(month).map_err(|error| error.to_string())?;
    let day = u8::try_from(number(day)?).map_err(|error| error.to_string())?;
    let year = i32::try_from(number(year)?).map_err(|error| error.to_string())?;
    Date::from_calendar_date(year, month, day).map_err(|error| error.to_string())
}

fn time_of_day(s: &str) -> Result<Time, String> {
    let (Some(hour), Some(minute), Some(second)) = (s.get(..2), s.get(3..5), s.get(6..8)) else {
        return Err("not HH:MM:SS".to_owned());
    };
    let fraction = s.get(9..).unwrap_or("");
    // Up to nine digits (the pattern), read as nanoseconds.
    let nanosecond = if fraction.is_empty() {
        0
    } else {
        number(fraction)? * 10u32.pow(9 - fraction.len().min(9) as u32)
    };
    let [hour, minute, second] = [hour, minute, second].map(number);
    let narrow =
        |n: Result<u32, String>| n.and_then(|n| u8::try_from(n).map_err(|e| e.to_string()));
    Time::from_hms_nano(narrow(hour)?, narrow(minute)?, narrow(second)?, nanosecond)
        .map_err(|error| error.to_string())
}

formatted! {
    #[cfg_attr(docsrs, doc(cfg(feature = "time")))]
    /// A string of format `date-time` (RFC 3339), read as `time`'s `Rfc3339` reads it (as
    /// `time::serde::rfc3339` does). `time` holds no leap second (it reads one as the
    /// nanosecond before, and only on the last day of a month): a seconds field of `60` is
    /// refused, and advertised so with a `pattern`. Digits of fraction past the ninth are
    /// dropped.
    OffsetDateTime => DATE_TIME, |s| {
        OffsetDateTime::parse(s, &Rfc3339).map_err(|error| error.to_string())
    }, |at| at.format(&Rfc3339).ok();
    #[cfg_attr(docsrs, doc(cfg(feature = "time")))]
    /// A string of format `date`: `2025-01-31`; `2025-02-30` is refused.
    Date => DATE, date, |day| {
        Some(format!("{:04}-{:02}-{:02}", day.year(), u8::from(day.month()), day.day()))
    };
    #[cfg_attr(docsrs, doc(cfg(feature = "time")))]
    /// A time of day without an offset, `09:30:00` or `09:30:00.250`: RFC 3339's
    /// `partial-time`, advertised as a `pattern` (the format `time` requires an offset).
    /// A leap second and more than nine digits of fraction are refused.
    Time => TIME, time_of_day, |time| {
        let (hour, minute, second, nanosecond) = time.as_hms_nano();
        let mut text = format!("{hour:02}:{minute:02}:{second:02}");
        if nanosecond != 0 {
            let fraction = format!("{nanosecond:09}");
            text.push('.');
            text.push_str(fraction.trim_end_matches('0'));
        }
        Some(text)
    };
}
