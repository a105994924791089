use tool_core::Argument;

#[derive(Argument)]
#[serde(tag = "type")]
enum Value {
    Number(u32),
}

fn main() {}
