use tool_core::Tool;

/// Formats and examples.
#[derive(Tool)]
struct Event {
    #[tool(format = "datetime")]
    start: String,
    #[tool(example = [1, 2])]
    count: u32,
    #[tool(example = json("{not json"))]
    data: String,
    #[tool(inner(length(min = 3, max = 1), description = "x"))]
    tags: Vec<String>,
}

fn main() {}
