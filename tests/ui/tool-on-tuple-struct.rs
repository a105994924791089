use tool_core::Tool;

/// Get the current weather for a city.
#[derive(Tool)]
struct GetWeather(String);

fn main() {}
