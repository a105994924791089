use tool_core::Tool;

/// Search for flights.
#[derive(Tool)]
struct SearchFlights {
    #[tool(length(max = 50))]
    limit: u32,
}

fn main() {}
