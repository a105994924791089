use tool_core::Tool;

/// Search for flights.
#[derive(Tool)]
struct SearchFlights {
    #[tool(range(min = 50, max = 1))]
    limit: u32,
}

fn main() {}
