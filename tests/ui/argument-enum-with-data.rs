use tool_core::Argument;

/// Where to look.
#[derive(Argument)]
enum Location {
    City(String),
    Coordinates { latitude: f64, longitude: f64 },
    Here,
}

fn main() {}
