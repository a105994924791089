use tool_core::Tool;

/// Searches.
#[derive(Tool, serde::Deserialize, schemars::JsonSchema)]
#[tool(schemars)]
struct Search {
    #[tool(length(max = 3))]
    query: String,
}

/// Field-level schemars.
#[derive(Tool)]
struct Other {
    #[tool(schemars)]
    query: String,
}

fn main() {}
