use tool_core::Tool;

/// Search for flights.
#[derive(Tool)]
#[serde(rename_all = "camel_case")]
struct SearchFlights {
    departure_date: String,
}

fn main() {}
