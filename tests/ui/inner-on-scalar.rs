use tool_core::Tool;

/// Items of a scalar.
#[derive(Tool)]
struct Search {
    #[tool(inner(length(max = 3)))]
    query: String,
    #[tool(inner(range(min = 1)))]
    tags: Vec<String>,
}

fn main() {}
