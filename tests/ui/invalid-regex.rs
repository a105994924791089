use tool_core::Tool;

/// Look up an airport.
#[derive(Tool)]
struct FindAirport {
    #[tool(pattern = "[a-")]
    code: String,
}

fn main() {}
