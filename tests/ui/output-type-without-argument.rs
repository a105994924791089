use tool_core::{Context, Tool, ToolDef, registry::ToolError};

/// Looks something up.
#[derive(Tool)]
struct Lookup {
    key: String,
}

#[derive(serde::Serialize)]
struct Found {
    value: String,
}

async fn lookup(args: Lookup, _cx: &Context) -> Result<Found, ToolError> {
    Ok(Found { value: args.key })
}

fn main() {
    let _ = ToolDef::new(lookup);
}
