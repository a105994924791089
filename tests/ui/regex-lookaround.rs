use tool_core::Tool;

/// Set a password.
#[derive(Tool)]
struct SetPassword {
    #[tool(regex(pattern = "^(?=.*[0-9]).{8,}$"))]
    password: String,
}

fn main() {}
