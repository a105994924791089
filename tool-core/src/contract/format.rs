//! String formats (`format`): the names a schema advertises and the check each one asserts.

use std::fmt;
use std::sync::OnceLock;

use serde_json::{Value, json};

mod plain;

/// A JSON Schema string format (Draft 2020-12), asserted: a string that is not of its format
/// is refused with the keyword `format`.
///
/// Each format is checked exactly as the `jsonschema` crate checks it with format assertion
/// on (the check is that crate's own, so a standard validator and the typed parser agree on
/// every string):
///
/// | format | accepts |
/// | --- | --- |
/// | [`Date`](Format::Date) | RFC 3339 `full-date`, `2025-02-28`; `2025-02-30` is refused |
/// | [`DateTime`](Format::DateTime) | RFC 3339 `date-time`, `T`/`t` and `Z`/`z` in either case, any number of fraction digits, a leap second `:60` only where it falls at 23:59 UTC |
/// | [`Time`](Format::Time) | RFC 3339 `full-time`: a time of day with an offset, `12:30:00Z` |
/// | [`Duration`](Format::Duration) | RFC 3339 (ISO 8601) durations, `P1Y2M`, `PT30S`, `P2W` |
/// | [`Email`](Format::Email) | RFC 5321 addresses with an ASCII local part |
/// | [`Hostname`](Format::Hostname) | RFC 1123 host names, A-labels (`xn--`) checked as IDNA |
/// | [`Ipv4`](Format::Ipv4) | dotted-quad IPv4 addresses without leading zeros |
/// | [`Ipv6`](Format::Ipv6) | IPv6 addresses (RFC 4291 text forms), without a zone |
/// | [`Uri`](Format::Uri) | absolute URIs (RFC 3986), `mailto:` and `urn:` included |
/// | [`Uuid`](Format::Uuid) | hyphenated UUIDs `8-4-4-4-12`, hex digits in either case |
///
/// ```
/// use tool_core::contract::Format;
///
/// assert_eq!(Format::from_name("date-time"), Some(Format::DateTime));
/// assert_eq!(Format::DateTime.name(), "date-time");
/// assert!(Format::Date.is_valid("2024-02-29"));
/// assert!(!Format::Date.is_valid("2025-02-29"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// `date`: `2025-02-28`.
    Date,
    /// `date-time`: `2025-02-28T12:30:00Z`, `2025-02-28T12:30:00.5+01:00`.
    DateTime,
    /// `time`: `12:30:00Z`, `12:30:00-05:00`.
    Time,
    /// `duration`: `P3D`, `PT1H30M`.
    Duration,
    /// `email`: `someone@example.com`.
    Email,
    /// `hostname`: `api.example.com`.
    Hostname,
    /// `ipv4`: `192.0.2.1`.
    Ipv4,
    /// `ipv6`: `2001:db8::1`.
    Ipv6,
    /// `uri`: `https://example.com/a?b#c`.
    Uri,
    /// `uuid`: `67e55044-10b1-426f-9247-bb680e5fe0c8`.
    Uuid,
}

/// Every format, in declaration order.
const ALL: [Format; 10] = [
    Format::Date,
    Format::DateTime,
    Format::Time,
    Format::Duration,
    Format::Email,
    Format::Hostname,
    Format::Ipv4,
    Format::Ipv6,
    Format::Uri,
    Format::Uuid,
];

impl Format {
    /// The name a schema gives the format (`"date-time"`).
    pub const fn name(self) -> &'static str {
        match self {
            Format::Date => "date",
            Format::DateTime => "date-time",
            Format::Time => "time",
            Format::Duration => "duration",
            Format::Email => "email",
            Format::Hostname => "hostname",
            Format::Ipv4 => "ipv4",
            Format::Ipv6 => "ipv6",
            Format::Uri => "uri",
            Format::Uuid => "uuid",
        }
    }

    /// The format a schema names `name`, if it is one of these.
    pub const fn from_name(name: &str) -> Option<Format> {
        let mut i = 0;
        while i < ALL.len() {
            if eq_ascii(ALL[i].name().as_bytes(), name.as_bytes()) {
                return Some(ALL[i]);
            }
            i += 1;
        }
        None
    }

    /// Whether `text` is of this format, as a JSON Schema validator asserting formats decides.
    #[inline]
    pub fn is_valid(self, text: &str) -> bool {
        // The commonest shapes are decided here: every string a fast path accepts passes the
        // check below, which costs several times as much (property tests hold the two to
        // that). A fast path's `false` decides nothing.
        let plain = match self {
            Format::Email => plain::email(text),
            Format::DateTime => plain::date_time(text),
            Format::Uri => plain::uri(text),
            _ => false,
        };
        plain || (!self.plainly_not(text) && self.checked(text))
    }

    /// Whether `text` is of a shape the full check never accepts, decided without it: the
    /// commonest refusals (a name where an address belongs, a date-time with no offset).
    #[inline]
    fn plainly_not(self, text: &str) -> bool {
        match self {
            // Every address the check takes holds an `@`, display form included.
            Format::Email => !text.as_bytes().contains(&b'@'),
            // The shortest date-time the check takes is `YYYY-MM-DDTHH:MM:SSZ`: a date of
            // ten bytes, a separator, then a time of at least nine.
            Format::DateTime => text.len() < 20,
            _ => false,
        }
    }

    /// The full check of `text`.
    #[inline(never)]
    fn checked(self, text: &str) -> bool {
        match checker(self) {
            // The check takes a JSON value: a string is copied into one.
            Some(validator) => validator.is_valid(&Value::String(text.to_owned())),
            None => false,
        }
    }

    /// What a string of this format looks like, for a message.
    pub(crate) const fn looks_like(self) -> &'static str {
        match self {
            Format::Date => "a date YYYY-MM-DD",
            Format::DateTime => "an RFC 3339 date-time such as 2025-01-31T09:30:00Z",
            Format::Time => "an RFC 3339 time with an offset such as 09:30:00Z",
            Format::Duration => "an ISO 8601 duration such as P3D or PT1H30M",
            Format::Email => "an email address",
            Format::Hostname => "a host name",
            Format::Ipv4 => "an IPv4 address",
            Format::Ipv6 => "an IPv6 address",
            Format::Uri => "an absolute URI",
            Format::Uuid => "a hyphenated UUID",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

const fn eq_ascii(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The compiled check of `format`, built once: the `jsonschema` crate's own, so that the two
/// cannot drift apart. `None` only if that crate refused the one-keyword schema.
fn checker(format: Format) -> Option<&'static jsonschema::Validator> {
    static CHECKERS: [OnceLock<Option<jsonschema::Validator>>; ALL.len()] =
        [const { OnceLock::new() }; ALL.len()];
    CHECKERS
        .get(format as usize)?
        .get_or_init(|| {
            jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .should_validate_formats(true)
                .build(&json!({ "format": format.name() }))
                .ok()
        })
        .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for format in ALL {
            assert_eq!(Format::from_name(format.name()), Some(format));
            assert!(checker(format).is_some(), "{format}");
        }
        assert_eq!(Format::from_name("Date"), None);
        assert_eq!(Format::from_name("idn-email"), None);
    }

    #[test]
    fn checks_each_format() {
        let cases = [
            (Format::Date, "2024-02-29", "2025-02-29"),
            (
                Format::DateTime,
                "2025-01-01t10:00:00z",
                "2025-01-01 10:00:00Z",
            ),
            (Format::Time, "23:59:60Z", "12:00:60Z"),
            (Format::Duration, "P1W", "P1WT1H"),
            (Format::Email, "a@example.com", "a@@example.com"),
            (Format::Hostname, "example.com", "-example.com"),
            (Format::Ipv4, "192.0.2.1", "192.0.2.01"),
            (Format::Ipv6, "::1", "::1%eth0"),
            (Format::Uri, "mailto:a@example.com", "/relative"),
            (
                Format::Uuid,
                "67E55044-10B1-426F-9247-BB680E5FE0C8",
                "67e5504410b1426f9247bb680e5fe0c8",
            ),
        ];
        for (format, good, bad) in cases {
            assert!(format.is_valid(good), "{format}: {good}");
            assert!(!format.is_valid(bad), "{format}: {bad}");
        }
    }

    #[test]
    fn what_is_plainly_not_of_a_format_the_full_check_refuses_too() {
        let cases = [
            (Format::Email, "alan at example.org", true),
            (Format::Email, "Ada Lovelace <ada.example.com>", true),
            (Format::Email, "", true),
            (Format::Email, "\"a@b\"", false),
            (Format::Email, "Ada Lovelace <ada@example.com>", false),
            (Format::DateTime, "2026-03-02T09:30:00", true),
            (Format::DateTime, "2026-03-02T09:30Z", true),
            (Format::DateTime, "2026-03-02", true),
            (Format::DateTime, "2026-03-02T09:30:00Z", false),
            (Format::DateTime, "2026-03-02t09:30:00z", false),
            (Format::Uri, "x", false),
        ];
        for (format, text, plainly_not) in cases {
            assert_eq!(format.plainly_not(text), plainly_not, "{format}: {text}");
            if plainly_not {
                assert!(!format.checked(text), "{format}: {text}");
            }
        }
        assert!(Format::Email.checked("Ada Lovelace <ada@example.com>"));
        assert!(Format::DateTime.checked("2026-03-02t09:30:00z"));
    }
}
