use tool_core::Argument;

#[derive(Argument)]
#[serde(untagged)]
enum Units {
    Celsius,
    Fahrenheit,
}

fn main() {}
