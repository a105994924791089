use tool_core::Tool;

/// Get the current weather for a city.
#[derive(Tool)]
#[tool(name = "get weather")]
struct GetWeather {
    city: String,
}

fn main() {}
