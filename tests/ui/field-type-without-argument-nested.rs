use tool_core::Tool;

struct Window {
    earliest_hour: u8,
    latest_hour: u8,
}

/// Search for flights.
#[derive(Tool)]
struct SearchFlights {
    #[tool(length(max = 3))]
    windows: Vec<Window>,
    #[serde(default)]
    preferred: Option<Window>,
}

fn main() {}
