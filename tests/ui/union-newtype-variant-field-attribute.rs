use tool_core::Argument;

#[derive(Argument)]
enum Contact {
    Email(#[tool(pattern = "^[^@]+@[^@]+$")] String),
}

fn main() {}
