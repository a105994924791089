use tool_core::Tool;

/// Temperature units.
#[derive(Tool)]
enum Units {
    Celsius,
    Fahrenheit,
}

fn main() {}
