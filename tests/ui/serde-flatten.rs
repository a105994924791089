use tool_core::{Argument, Tool};

/// Search for flights.
#[derive(Tool)]
struct SearchFlights {
    #[serde(flatten)]
    window: TimeWindow,
}

/// A time window.
#[derive(Argument)]
struct TimeWindow {
    earliest_hour: u8,
    latest_hour: u8,
}

fn main() {}
