use tool_core::Tool;

/// Get the current weather for a city.
#[derive(Tool)]
struct GetWeather {
    #[serde(alias = "town")]
    city: String,
}

fn main() {}
