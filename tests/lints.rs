//! The derives expand to code that is warning-free under rustc and clippy pedantic: this file
//! denies both, and `cargo clippy --all-targets -- -D warnings` checks it.

#![deny(warnings)]
#![deny(clippy::pedantic)]
#![deny(
    unused_qualifications,
    missing_docs,
    unused_results,
    trivial_casts,
    trivial_numeric_casts
)]

use std::collections::BTreeMap;

use tool_core::{Argument, Tool};

/// Search for flights between two airports.
#[derive(Tool, Debug, PartialEq)]
#[tool(name = "search-flights")]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchFlights {
    /// IATA code of the departure airport.
    #[tool(length(equal = 3), pattern = "^[A-Z]+$")]
    pub origin: String,
    /// IATA code of the arrival airport.
    #[tool(regex(pattern = "^[A-Z]{3}$"))]
    pub destination: String,
    /// Return date, YYYY-MM-DD.
    #[tool(pattern = r"^\d{4}-\d{2}-\d{2}$")]
    pub return_date: Option<String>,
    /// Who is travelling.
    #[tool(length(min = 1, max = 9))]
    pub passengers: Vec<Passenger>,
    /// Cabin class.
    #[tool(description = "Cabin class; the description attribute wins over this comment")]
    #[serde(rename = "class")]
    pub cabin: Cabin,
    /// Most stops per direction.
    #[tool(range(max = 3))]
    pub max_stops: Option<u8>,
    /// Highest acceptable total price.
    #[tool(range(exclusive_min = 0, max = 1e6))]
    pub max_price: Option<f64>,
    /// Shift of the departure date, in days.
    #[tool(range(min = -3, max = 3))]
    #[serde(default)]
    pub flexible_days: i8,
    /// Free-form labels.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Only refundable fares.
    #[serde(default = "yes")]
    pub refundable_only: bool,
    /// Filled in by the handler, never by the model.
    #[serde(skip)]
    pub trace_id: Option<String>,
}

fn yes() -> bool {
    true
}

/// One traveller.
#[derive(Argument, Debug, Default, PartialEq)]
#[serde(default)]
pub struct Passenger {
    /// Age at the date of travel.
    #[tool(range(max = 120))]
    pub age: u8,
    /// Whether the passenger needs a seat.
    pub needs_seat: bool,
}

/// Cabin class.
#[derive(Argument, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Cabin {
    /// Economy.
    Economy,
    /// Premium economy.
    PremiumEconomy,
    /// Business.
    #[serde(rename = "biz")]
    Business,
    /// Not sold online.
    #[serde(skip)]
    First,
}

/// Answers.
#[derive(Tool, Debug)]
pub struct Ping {}

#[test]
fn parses_every_feature_of_the_lint_fixture() {
    let args = SearchFlights::parse_arguments(
        r#"{
            "origin": "CDG",
            "destination": "JFK",
            "passengers": [{"age": 34, "needs_seat": true}, {"needs_seat": false}],
            "class": "biz",
            "maxPrice": 900.5,
            "flexibleDays": -2,
            "tags": {"trip": "conference"}
        }"#,
    )
    .unwrap_or_else(|errors| panic!("{errors}"));
    assert_eq!(
        args,
        SearchFlights {
            origin: "CDG".to_owned(),
            destination: "JFK".to_owned(),
            return_date: None,
            passengers: vec![
                Passenger {
                    age: 34,
                    needs_seat: true
                },
                Passenger {
                    age: 0,
                    needs_seat: false
                },
            ],
            cabin: Cabin::Business,
            max_stops: None,
            max_price: Some(900.5),
            flexible_days: -2,
            tags: BTreeMap::from([("trip".to_owned(), "conference".to_owned())]),
            refundable_only: true,
            trace_id: None,
        }
    );
    assert_eq!(SearchFlights::NAME, "search-flights");
    assert_eq!(Ping::NAME, "ping");
    assert!(Ping::parse_arguments("{}").is_ok());
    let _ = (Cabin::Economy, Cabin::PremiumEconomy, Cabin::First);
}
