use tool_core::Tool;

/// Get the current weather for a city.
#[derive(Tool)]
#[tool(name = "get_the_current_weather_for_a_city_in_degrees_celsius_or_fahrenheit")]
struct GetWeather {
    city: String,
}

fn main() {}
