use tool_core::Tool;

/// Get the current weather for a city.
#[derive(Tool)]
struct GetWeather {
    #[tool(min_length = 1)]
    city: String,
}

fn main() {}
