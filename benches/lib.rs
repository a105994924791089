//! Payloads and baselines shared by the benchmarks: serde twins of the example tools (plain
//! `#[derive(Deserialize)]`, no checks) and the argument texts measured.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

/// `create_invoice` as a plain serde struct: the floor.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceTwin {
    /// Customer id.
    pub customer_id: String,
    /// Amount.
    pub amount: f64,
    /// Currency.
    pub currency: CurrencyTwin,
}

/// Currency.
#[derive(Deserialize, Debug)]
#[allow(clippy::upper_case_acronyms, missing_docs)]
pub enum CurrencyTwin {
    USD,
    EUR,
    GBP,
}

/// `search_flights` as a plain serde struct: the floor.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct FlightsTwin {
    pub origin: String,
    pub destination: String,
    pub departure_date: String,
    pub return_date: Option<String>,
    pub passengers: Vec<PassengerTwin>,
    pub cabin: CabinTwin,
    pub max_stops: Option<u8>,
    pub max_price: Option<PriceTwin>,
    #[serde(default)]
    pub preferred_airlines: Vec<String>,
    #[serde(default)]
    pub refundable_only: bool,
    pub departure_window: Option<WindowTwin>,
    pub limit: u32,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct PassengerTwin {
    pub age: u8,
    #[serde(default)]
    pub needs_seat: bool,
    #[serde(default)]
    pub checked_bags: u8,
}

#[derive(Deserialize, Debug)]
#[allow(missing_docs)]
pub struct PriceTwin {
    pub amount: f64,
    pub currency: CurrencyTwin,
}

#[derive(Deserialize, Debug)]
#[allow(missing_docs)]
pub struct WindowTwin {
    pub earliest_hour: u8,
    pub latest_hour: u8,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum CabinTwin {
    Economy,
    PremiumEconomy,
    Business,
    First,
}

/// A string of the zero-copy twins: borrowed from the argument text when it has no escapes,
/// owned when serde_json had to unescape it. (serde's own `Cow<str>` borrows only as a direct
/// field; inside an `Option`, a `Vec` or a map it always copies.)
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Text<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

/// `create_invoice` as a serde struct that borrows its strings from the argument text where it
/// has no escapes: the zero-copy line, checking no more than the floor.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct InvoiceBorrowed<'a> {
    #[serde(borrow)]
    pub customer_id: Text<'a>,
    pub amount: f64,
    pub currency: CurrencyTwin,
}

/// `search_flights` as a serde struct that borrows its strings from the argument text where it
/// has no escapes: the zero-copy line, checking no more than the floor.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct FlightsBorrowed<'a> {
    #[serde(borrow)]
    pub origin: Text<'a>,
    #[serde(borrow)]
    pub destination: Text<'a>,
    #[serde(borrow)]
    pub departure_date: Text<'a>,
    #[serde(borrow)]
    pub return_date: Option<Text<'a>>,
    pub passengers: Vec<PassengerTwin>,
    pub cabin: CabinTwin,
    pub max_stops: Option<u8>,
    pub max_price: Option<PriceTwin>,
    #[serde(default, borrow)]
    pub preferred_airlines: Vec<Text<'a>>,
    #[serde(default)]
    pub refundable_only: bool,
    pub departure_window: Option<WindowTwin>,
    pub limit: u32,
    #[serde(default, borrow)]
    pub tags: BTreeMap<Text<'a>, Text<'a>>,
}

/// A valid `create_invoice` call.
pub const INVOICE_VALID: &str = r#"{"customerId":"cus_42","amount":120.5,"currency":"USD"}"#;

/// `create_invoice` with three violations: a wrong type, a bad enum value, a missing field.
pub const INVOICE_INVALID3: &str = r#"{"amount":"120.5","currency":"dollars"}"#;

/// A valid `search_flights` call using every field.
pub const FLIGHTS_VALID: &str = r#"{"origin":"CDG","destination":"JFK","departureDate":"2026-12-01","returnDate":"2026-12-15","passengers":[{"age":34,"checkedBags":1},{"age":2,"needsSeat":false}],"cabin":"premium_economy","maxStops":1,"maxPrice":{"amount":1450.0,"currency":"EUR"},"preferredAirlines":["AF","DL"],"refundableOnly":true,"departureWindow":{"earliest_hour":8,"latest_hour":20},"limit":10,"tags":{"trip":"conference"}}"#;

/// `search_flights` with three violations: a wrong type, a bad enum value, a missing field.
pub const FLIGHTS_INVALID3: &str = r#"{"origin":"CDG","departureDate":"2026-12-01","passengers":[{"age":34}],"cabin":"luxury","limit":"10"}"#;

/// `search_flights` with three violations whose wrong type is a container's: a number where
/// the `maxPrice` object goes, a bad enum value, a missing field.
pub const FLIGHTS_INVALID3_CONTAINER: &str = r#"{"origin":"CDG","departureDate":"2026-12-01","passengers":[{"age":34}],"cabin":"luxury","maxPrice":5,"limit":10}"#;

/// A valid `create_invoice` call of about 64 KiB (a long customer id).
pub fn invoice_64k() -> String {
    format!(
        r#"{{"customerId":"{}","amount":120.5,"currency":"USD"}}"#,
        "c".repeat(64 * 1024)
    )
}

/// A valid `search_flights` call of about 64 KiB (many tags).
pub fn flights_64k() -> String {
    let tags: Vec<String> = (0..2600)
        .map(|i| format!(r#""tag{i:05}":"value{i:05}""#))
        .collect();
    format!(
        r#"{{"origin":"CDG","destination":"JFK","departureDate":"2026-12-01","passengers":[{{"age":34}}],"cabin":"economy","limit":10,"tags":{{{}}}}}"#,
        tags.join(",")
    )
}

/// The inputs of the `extract_json` benchmarks: an ordinary reply, then five adversarial ones.
pub const EXTRACT_INPUTS: [&str; 6] = [
    "prose",
    "open_braces",
    "open_brackets",
    "backticks",
    "quotes",
    "unclosed_tags",
];

/// The `extract_json` benchmark input `name` (one of [`EXTRACT_INPUTS`]), at most `size` bytes
/// long: for `prose`, a reply with one object of about `size` bytes between two sentences,
/// whose strings hold braces, brackets, escaped quotes and backticks, as arguments often do;
/// otherwise only `{`, only `[`, only backticks, only quotes, or `<tool_call>` tags never
/// closed.
pub fn extract_input(name: &str, size: usize) -> String {
    let repeated = |unit: &str| unit.repeat(size / unit.len());
    match name {
        "prose" => extract_prose(size),
        "open_braces" => repeated("{"),
        "open_brackets" => repeated("["),
        "backticks" => repeated("`"),
        "quotes" => repeated("\""),
        "unclosed_tags" => repeated("<tool_call>"),
        _ => String::new(),
    }
}

fn extract_prose(size: usize) -> String {
    const BEFORE: &str = "Sure! Here is the call you asked for: ";
    const AFTER: &str = " Let me know if anything else is needed.";
    let mut object = String::from(r#"{"query": "orders {open} [recent]", "items": ["#);
    let mut id = 0;
    while BEFORE.len() + object.len() + AFTER.len() + 120 < size {
        if id > 0 {
            object.push_str(", ");
        }
        object.push_str(&format!(
            r#"{{"id": {id}, "name": "item \"{id}\"", "tags": ["a", "b"], "note": "```x``` {{}}"}}"#
        ));
        id += 1;
    }
    object.push_str("]}");
    format!("{BEFORE}{object}{AFTER}")
}
