use tool_core::Tool;

/// Get the current weather for a city.
#[derive(Tool)]
struct GetWeather {
    city: String,
}

fn get_weather(args: GetWeather) -> u32 {
    let n: u32 = args.city;
    n
}

fn main() {
    let _ = get_weather;
}
