use tool_core::Tool;

/// Store a value.
#[derive(Tool)]
struct Store<T> {
    value: T,
}

fn main() {}
