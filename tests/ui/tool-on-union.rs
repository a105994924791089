use tool_core::Tool;

/// A number.
#[derive(Tool)]
union Number {
    int: u64,
    float: f64,
}

fn main() {}
