use tool_core::Tool;

/// Set the volume.
#[derive(Tool)]
struct SetVolume {
    /// No `u8` is 300 or more.
    #[tool(range(min = 300))]
    level: u8,
    /// No `u32` is negative.
    #[tool(range(max = -1))]
    steps: u32,
    /// No integer lies strictly between 0 and 1.
    #[tool(range(exclusive_min = 0, exclusive_max = 1))]
    fraction: Option<i64>,
    /// No `f32` is this large.
    #[tool(range(min = 1e39))]
    gain: f32,
}

fn main() {}
