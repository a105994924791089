use tool_core::Tool;

#[derive(Tool)]
struct GetWeather {
    city: String,
}

fn main() {}
