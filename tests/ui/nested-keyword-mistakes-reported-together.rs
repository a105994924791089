use tool_core::Tool;

/// Get the current weather for a city.
#[derive(Tool)]
struct GetWeather {
    #[tool(length(foo = 1), range(bar = 2), bogus)]
    city: String,
}

fn main() {}
