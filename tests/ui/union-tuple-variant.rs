use tool_core::Argument;

#[derive(Argument)]
enum Shape {
    Rect(u32, u32),
}

#[derive(Argument)]
#[serde(tag = "type")]
enum Tagged {
    Pair(u8, u8),
}

fn main() {}
