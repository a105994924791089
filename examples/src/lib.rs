//! Example tools: the argument types the examples, tests and benchmarks share.
//!
//! Each type is the whole contract of its tool: `#[derive(Tool)]` turns the doc comments,
//! field types and attributes into the advertised JSON Schema and the checked parser.

#[cfg(feature = "otel")]
pub mod otel;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use tool_core::{Argument, Context, Tool, registry::ToolError};

/// Get the current weather for a city.
#[derive(Tool, Debug, Clone, PartialEq)]
pub struct GetWeather {
    /// City name, e.g. "Paris".
    #[tool(length(min = 1))]
    pub city: String,
    /// Temperature units.
    pub units: Units,
}

/// Temperature units.
#[derive(Argument, Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Units {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
}

/// Create an invoice for a customer.
#[derive(Tool, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CreateInvoice {
    /// The customer's id, e.g. "cus_42".
    #[tool(length(min = 1))]
    pub customer_id: String,
    /// Amount in the currency's major unit, e.g. 120.5.
    #[tool(range(exclusive_min = 0))]
    pub amount: f64,
    /// ISO 4217 currency code.
    pub currency: Currency,
}

/// A currency the billing system accepts.
#[derive(Argument, Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Currency {
    /// US dollar.
    USD,
    /// Euro.
    EUR,
    /// Pound sterling.
    GBP,
}

/// Search for flights between two airports.
#[derive(Tool, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SearchFlights {
    /// IATA code of the departure airport, e.g. "CDG".
    #[tool(pattern = "^[A-Z]{3}$")]
    pub origin: String,
    /// IATA code of the arrival airport.
    #[tool(pattern = "^[A-Z]{3}$")]
    pub destination: String,
    /// Departure date, YYYY-MM-DD.
    #[tool(pattern = r"^\d{4}-\d{2}-\d{2}$")]
    pub departure_date: String,
    /// Return date for a round trip, YYYY-MM-DD.
    #[tool(pattern = r"^\d{4}-\d{2}-\d{2}$")]
    pub return_date: Option<String>,
    /// Who is travelling.
    #[tool(length(min = 1, max = 9))]
    pub passengers: Vec<Passenger>,
    /// Cabin class.
    pub cabin: Cabin,
    /// Most stops per direction.
    #[tool(range(max = 3))]
    pub max_stops: Option<u8>,
    /// Highest acceptable total price.
    pub max_price: Option<Price>,
    /// Airline codes to prefer.
    #[tool(length(max = 5))]
    #[serde(default)]
    pub preferred_airlines: Vec<String>,
    /// Only refundable fares.
    #[serde(default)]
    pub refundable_only: bool,
    /// Departure time window in local time.
    pub departure_window: Option<TimeWindow>,
    /// How many results to return.
    #[tool(range(min = 1, max = 50))]
    pub limit: u32,
    /// Free-form labels passed through to the booking system.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

/// One traveller.
#[derive(Argument, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Passenger {
    /// Age at the date of travel.
    #[tool(range(max = 120))]
    pub age: u8,
    /// Whether the passenger needs a seat (infants may travel on a lap).
    #[serde(default = "yes")]
    pub needs_seat: bool,
    /// Checked bags.
    #[tool(range(max = 4))]
    #[serde(default)]
    pub checked_bags: u8,
}

fn yes() -> bool {
    true
}

/// A price ceiling.
#[derive(Argument, Debug, Clone, PartialEq)]
pub struct Price {
    /// Amount in the currency's major unit.
    #[tool(range(exclusive_min = 0, max = 1000000))]
    pub amount: f64,
    /// Currency of the amount.
    pub currency: Currency,
}

/// A time window within a day.
#[derive(Argument, Debug, Clone, PartialEq)]
pub struct TimeWindow {
    /// Earliest hour, 0 to 23.
    #[tool(range(max = 23))]
    pub earliest_hour: u8,
    /// Latest hour, 0 to 23.
    #[tool(range(max = 23))]
    pub latest_hour: u8,
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
    Business,
    /// First.
    First,
}

/// The weather report `get_weather` returns.
#[derive(Argument, Serialize, Debug, Clone, PartialEq)]
pub struct Weather {
    /// The city asked about.
    pub city: String,
    /// The temperature now.
    pub temperature: f64,
    /// The units of `temperature`.
    pub units: Units,
}

/// The handler of `get_weather`: a stand-in for a weather API. A city named "Atlantis"
/// takes a minute to answer, to show timeouts.
pub async fn get_weather(args: GetWeather, _cx: &Context) -> Result<Weather, ToolError> {
    if args.city == "Atlantis" {
        tokio::time::sleep(Duration::from_secs(60)).await;
    }
    let celsius = 14.5 + (args.city.len() % 10) as f64;
    let temperature = match args.units {
        Units::Celsius => celsius,
        Units::Fahrenheit => celsius * 9.0 / 5.0 + 32.0,
    };
    Ok(Weather {
        city: args.city,
        temperature,
        units: args.units,
    })
}

/// The invoice `create_invoice` returns.
#[derive(Argument, Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Invoice {
    /// The new invoice's id.
    #[tool(length(min = 1))]
    pub invoice_id: String,
    /// The customer billed.
    pub customer_id: String,
    /// The amount billed.
    pub amount: f64,
    /// The currency of `amount`.
    pub currency: Currency,
}

/// The handler of `create_invoice`: a stand-in for a billing API.
pub async fn create_invoice(args: CreateInvoice, cx: &Context) -> Result<Invoice, ToolError> {
    if args.customer_id == "cus_closed" {
        // The model sees the public message; the detail, which names the account, goes to the
        // outcome and to `DEBUG` logs only.
        return Err(ToolError::public("that customer account is closed")
            .with_detail(format!("billing API: account {} closed", args.customer_id)));
    }
    Ok(Invoice {
        invoice_id: format!("inv_{}", cx.call_id().unwrap_or("local")),
        customer_id: args.customer_id,
        amount: args.amount,
        currency: args.currency,
    })
}
