use tool_core::Tool;

/// Look up a name.
#[derive(Tool)]
struct LookUp {
    /// Letters, then an `x`: a count this large over a wide class does not fit the engine's
    /// size limit (a whole pattern `^X{m,n}$` over one class would, being counted instead).
    #[tool(pattern = r"^\p{L}{1,300}x$")]
    name: String,
}

fn main() {}
