use std::collections::BTreeMap;

use tool_core::Tool;

/// Keys take the string keywords, checked as on a string.
#[derive(Tool)]
struct Labels {
    #[tool(keys(range(max = 3)))]
    counts: BTreeMap<String, u32>,
    #[tool(keys(length(min = 4, max = 2)))]
    tags: BTreeMap<String, bool>,
}

fn main() {}
