use tool_core::Tool;

/// Search for flights.
#[derive(Tool)]
struct SearchFlights {
    #[tool(pattern = "^[A-Z]{2}$")]
    airlines: Vec<String>,
}

fn main() {}
