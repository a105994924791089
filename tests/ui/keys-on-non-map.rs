use tool_core::Tool;

/// `keys` constrains the property names of a map.
#[derive(Tool)]
struct Labels {
    #[tool(keys(pattern = "^[a-z]+$"))]
    names: Vec<String>,
}

fn main() {}
