use tool_core::Tool;

/// Get the current weather for a city.
#[derive(Tool)]
struct GetWeather {
    #[serde(deserialize_with = "trimmed")]
    city: String,
}

fn main() {}
