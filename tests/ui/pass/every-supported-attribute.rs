use std::collections::BTreeMap;

use tool_core::{Argument, Tool};

/// Search for flights between two airports.
#[derive(Tool)]
#[tool(name = "search-flights_v2", crate = "tool_core")]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SearchFlights {
    /// IATA code of the departure airport.
    #[tool(length(equal = 3), pattern = "^[A-Z]+$")]
    origin: String,
    #[tool(
        regex(pattern = r"^[A-Z]{3}$"),
        description = "IATA code of the arrival airport"
    )]
    destination: Option<String>,
    #[tool(length(min = 1, max = 9))]
    passengers: Vec<Passenger>,
    #[tool(range(min = 1, max = 50))]
    limit: u32,
    #[tool(range(exclusive_min = 0, exclusive_max = 1e6))]
    max_price: Option<f64>,
    #[tool(range(min = -10, max = 10))]
    offset_days: i8,
    #[serde(rename = "cabinClass")]
    cabin: Cabin,
    #[serde(default)]
    #[tool(length(max = 5), keys(pattern = "^[a-z]+$", length(min = 1)))]
    tags: BTreeMap<String, String>,
    #[tool(inner(keys(regex(pattern = "^x"))))]
    #[serde(default)]
    extra: Vec<BTreeMap<String, u8>>,
    #[serde(default)]
    wait: Option<std::time::Duration>,
    #[serde(default = "yes")]
    refundable_only: bool,
    #[serde(skip)]
    cached: Vec<String>,
}

fn yes() -> bool {
    true
}

/// One traveller.
#[derive(Argument, Default)]
#[serde(default)]
struct Passenger {
    #[tool(range(max = 120))]
    age: u8,
    needs_seat: bool,
}

/// Cabin class.
#[derive(Argument)]
#[serde(rename_all = "snake_case")]
enum Cabin {
    Economy,
    PremiumEconomy,
    #[serde(rename = "biz")]
    Business,
    #[serde(skip)]
    First,
}

/// Ping.
#[derive(Tool)]
struct Ping {}

fn main() {
    assert_eq!(SearchFlights::NAME, "search-flights_v2");
    assert_eq!(Ping::NAME, "ping");
    let _ = (
        Cabin::Economy,
        Cabin::PremiumEconomy,
        Cabin::Business,
        Cabin::First,
    );
}
