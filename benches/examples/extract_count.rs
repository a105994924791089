//! Runs `extract_json` N times on one benchmark input, for instruction counts:
//! `extract_count <input> <size in bytes> <N>` (inputs as in `benches::EXTRACT_INPUTS`).

use std::hint::black_box;

use benches::extract_input;
use tool_core::extract::extract_json;

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_default();
    let size: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1024);
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1);
    let text = extract_input(&name, size);
    for _ in 0..n {
        black_box(extract_json(black_box(&text)).is_ok());
    }
    println!("{}", text.len());
}
