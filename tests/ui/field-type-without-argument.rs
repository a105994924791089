use tool_core::Tool;

struct Window {
    earliest_hour: u8,
    latest_hour: u8,
}

/// Search for flights.
#[derive(Tool)]
struct SearchFlights {
    origin: String,
    window: Window,
}

fn main() {}
