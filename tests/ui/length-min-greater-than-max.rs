use tool_core::Tool;

/// Get the current weather for a city.
#[derive(Tool)]
struct GetWeather {
    #[tool(length(min = 10, max = 2))]
    city: String,
}

fn main() {}
