use tool_core::{Argument, Tool};

#[derive(Argument)]
struct Paging {
    page: u32,
}

#[derive(Argument)]
struct Sorting {
    by: String,
}

/// Two flattened fields.
#[derive(Tool)]
struct Twice {
    #[serde(flatten)]
    paging: Paging,
    #[serde(flatten)]
    sorting: Sorting,
}

/// A flattened field with constraints.
#[derive(Tool)]
struct Constrained {
    #[serde(flatten)]
    #[tool(length(max = 3))]
    paging: Paging,
}

/// A flattened scalar.
#[derive(Tool)]
struct Scalar {
    #[serde(flatten)]
    page: u32,
}

fn main() {}
