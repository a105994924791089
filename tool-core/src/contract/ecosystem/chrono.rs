//! `chrono`'s dates and times.

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveTime, Utc};

use super::PARTIAL_TIME;
use super::formatted::{Shape, formatted};
use crate::contract::format::Format;

const DATE_TIME: Shape = Shape {
    format: Some(Format::DateTime),
    pattern: None,
    looks_like: "an RFC 3339 date-time such as 2025-01-31T09:30:00Z",
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

formatted! {
    #[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
    /// A string of format `date-time` (RFC 3339), converted to UTC: `2025-01-31T09:30:00+01:00`
    /// is 08:30 UTC. Every string of the format is accepted, as chrono reads it: a leap
    /// second (`23:59:60Z`, where the format allows one) is chrono's leap second, and digits
    /// of fraction past the ninth are dropped.
    DateTime<Utc> => DATE_TIME, |s| {
        DateTime::parse_from_rfc3339(s)
            .map(|at| at.with_timezone(&Utc))
            .map_err(|error| error.to_string())
    }, |at| Some(at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true));
    #[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
    /// A string of format `date-time` (RFC 3339), with its offset: as `DateTime<Utc>`, without
    /// the conversion.
    DateTime<FixedOffset> => DATE_TIME, |s| {
        DateTime::parse_from_rfc3339(s).map_err(|error| error.to_string())
    }, |at| Some(at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true));
    #[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
    /// A string of format `date`: `2025-01-31`; `2025-02-30` is refused.
    NaiveDate => DATE, |s| s.parse::<NaiveDate>().map_err(|error| error.to_string()),
        |day| Some(day.to_string());
    #[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
    /// A time of day without an offset, `09:30:00` or `09:30:00.250`: RFC 3339's
    /// `partial-time`, advertised as a `pattern` (the format `time` requires an offset).
    /// A leap second and more than nine digits of fraction are refused.
    NaiveTime => TIME, |s| s.parse::<NaiveTime>().map_err(|error| error.to_string()),
        |time| Some(time.to_string());
}
