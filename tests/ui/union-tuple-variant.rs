use tool_core::Argument;

// serde refuses tuple variants in internally tagged enums: there is no object for the tag.
#[derive(Argument)]
#[serde(tag = "type")]
enum Tagged {
    Pair(u8, u8),
}

#[derive(Argument)]
enum TooLong {
    Seven(u8, u8, u8, u8, u8, u8, u8),
}

#[derive(Argument)]
enum Constrained {
    Pair(#[tool(range(max = 9))] u8, u8),
}

struct NotAnArgument;

#[derive(Argument)]
enum Missing {
    Pair(u8, NotAnArgument),
}

fn main() {}
