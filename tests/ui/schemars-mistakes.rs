use tool_core::Tool;

/// Searches.
#[derive(Tool, serde::Deserialize, schemars::JsonSchema)]
#[tool(schemars)]
struct Search {
    #[tool(length(max = 3))]
    query: String,
}

/// A field's schema comes from schemars: constraints of the derive's do not apply to it.
#[derive(Tool)]
struct Other {
    #[tool(schemars, length(max = 3))]
    query: String,
}

struct NoSchema;

/// A `#[tool(schemars)]` field's type must implement `schemars::JsonSchema`.
#[derive(Tool)]
struct Missing {
    #[tool(schemars)]
    value: NoSchema,
}

fn main() {}
