//! Runs one way of reading the schemars benchmark's text `n` times, for instruction counting
//! under `valgrind --tool=callgrind` (see `BENCHMARKS.md`, "Types through schemars"): counts,
//! unlike times, do not drift with the load of a shared machine.

use std::hint::black_box;

use tool_core::Tool;

#[path = "../schemars_shapes.rs"]
mod shapes;

use shapes::{DerivedArgs, INVALID3, Plain, VALID, ViaSchemarsArgs};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (way, payload, n) = match args.as_slice() {
        [_, way, payload, n] => (way.as_str(), payload.as_str(), n.parse().unwrap_or(0)),
        _ => {
            eprintln!("usage: schemars_count serde|via_schemars|derived valid|invalid3 N");
            std::process::exit(2);
        }
    };
    let raw = if payload == "valid" { VALID } else { INVALID3 };
    let mut accepted = 0usize;
    for _ in 0..n {
        let ok = match way {
            "serde" => serde_json::from_str::<Plain>(black_box(raw)).is_ok(),
            "via_schemars" => ViaSchemarsArgs::parse_arguments(black_box(raw)).is_ok(),
            _ => DerivedArgs::parse_arguments(black_box(raw)).is_ok(),
        };
        accepted += usize::from(ok);
    }
    println!("{accepted}");
}
