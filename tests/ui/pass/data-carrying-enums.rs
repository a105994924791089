use tool_core::{Argument, Tool};

/// Where to look.
#[derive(Argument)]
enum Location {
    City(String),
    Coordinates { latitude: f64, longitude: f64 },
    Pair(f64, f64),
    Here,
}

#[derive(Argument)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
enum Adjacent {
    Text(String),
    Point { x: i32, y: i32 },
    Span(u32, u32, Option<String>),
    Nothing,
}

#[derive(Argument)]
#[serde(untagged)]
enum Loose {
    Number(u32),
    Words(Vec<String>),
    Range(u32, u32),
}

#[derive(Argument)]
struct Inner {
    depth: u8,
}

/// Runs one operation.
#[derive(Tool)]
#[serde(tag = "op", rename_all_fields = "camelCase")]
enum Operate {
    /// Look somewhere.
    Look { place_name: Location, adjacent: Adjacent, loose: Option<Loose> },
    Dive(Inner),
    Stop,
}

fn main() {}
