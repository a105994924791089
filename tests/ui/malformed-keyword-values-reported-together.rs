use tool_core::Tool;

/// Get the current weather for a city.
#[derive(Tool)]
struct GetWeather {
    #[tool(length(min = "one", max = 2 3), pattern = 5, description = "The city")]
    city: String,
    #[serde(rename(serialise = "where"), default = days)]
    country: String,
}

fn main() {}
