use tool_core::Tool;

/// Get the current weather for a city.
#[derive(Tool)]
struct GetWeather {
    city: String,
}

fn get_weather(args: GetWeather) -> String {
    format!("sunny in {}", args.town)
}

fn main() {
    let _ = get_weather;
}
