use tool_core::Tool;

/// Find repeated words.
#[derive(Tool)]
struct FindRepeats {
    #[tool(pattern = r"(\w+) \1")]
    text: String,
}

fn main() {}
