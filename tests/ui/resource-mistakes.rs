use tool_core::{Argument, Tool};

/// Moves money between two accounts.
#[derive(Tool, Debug)]
struct Transfer {
    #[tool(resource = "Account")]
    from: String,
    #[tool(resource = "Account")]
    to: String,
}

/// A type name that is no entity type.
#[derive(Tool, Debug)]
struct Quoted {
    #[tool(resource = "Account\"; permit")]
    id: String,
}

/// Not a tool: nothing asks for its resource.
#[derive(Argument, Debug)]
struct Nested {
    #[tool(resource = "Account")]
    id: String,
}

fn main() {}
