//! Runs one way of reading one payload of the unions, defaults and formats benchmark `n`
//! times, for instruction counting under `valgrind --tool=callgrind` (see
//! `benches/unions_instructions.py`): `unions_count WAY TOOL PAYLOAD N`, with WAY one of
//! `floor`, `value_jsonschema`, `parse_arguments`, TOOL `edit_file` or `create_event`, and
//! PAYLOAD a name from `edit_file_payloads` or `create_event_payloads`.

use std::hint::black_box;

use serde::de::DeserializeOwned;
use tool_core::Tool;

#[path = "../unions_shapes.rs"]
mod shapes;

use shapes::{
    CreateEvent, CreateEventTwin, EditFile, EditFileTwin, create_event_payloads,
    edit_file_payloads, validator, value_jsonschema,
};

fn run<T: Tool, Twin: DeserializeOwned>(way: &str, raw: &str, n: usize) -> usize {
    let validator = validator::<T>();
    let mut accepted = 0;
    for _ in 0..n {
        let ok = match way {
            "floor" => serde_json::from_str::<Twin>(black_box(raw)).is_ok(),
            "value_jsonschema" => value_jsonschema::<Twin>(&validator, black_box(raw)).is_ok(),
            "parse_arguments" => T::parse_arguments(black_box(raw)).is_ok(),
            other => panic!("unknown way {other}"),
        };
        accepted += usize::from(ok);
    }
    accepted
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, way, tool, payload, n] = args.as_slice() else {
        panic!("usage: unions_count WAY TOOL PAYLOAD N");
    };
    let n: usize = n.parse().expect("N is a count");
    let payloads = match tool.as_str() {
        "edit_file" => edit_file_payloads(),
        "create_event" => create_event_payloads(),
        other => panic!("unknown tool {other}"),
    };
    let (_, raw) = payloads
        .iter()
        .find(|(name, _)| name == payload)
        .unwrap_or_else(|| panic!("unknown payload {payload}"));
    let accepted = match tool.as_str() {
        "edit_file" => run::<EditFile, EditFileTwin>(way, raw, n),
        _ => run::<CreateEvent, CreateEventTwin>(way, raw, n),
    };
    println!("{accepted}");
}
