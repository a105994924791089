use tool_core::{Argument, Tool};

/// Search for flights.
#[derive(Tool)]
#[tool(name = "search flights")]
struct SearchFlights {
    #[tool(length(min = 5, max = 3))]
    origin: String,
    #[tool(pattern = "(unclosed")]
    destination: String,
    #[serde(alias = "more")]
    extra: Extra,
}

/// Extra options.
#[derive(Argument)]
struct Extra {
    refundable_only: bool,
}

// Uses of the type add no errors of their own.
fn main() {
    let _ = SearchFlights::NAME;
    let _ = SearchFlights::parse_arguments("{}");
}
