use tool_core::Tool;

/// Search for flights.
#[derive(Tool)]
#[serde(rename_all = "camelCase")]
struct SearchFlights {
    departure_date: String,
    #[serde(rename = "departureDate")]
    date: String,
}

fn main() {}
