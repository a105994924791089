//! Runs one way of checking one payload `n` times, for instruction counting under
//! `valgrind --tool=callgrind` (see `benches/instructions.py`): counts, unlike times, do not
//! drift with the load of a shared machine.

use std::hint::black_box;

use benches::{
    FLIGHTS_INVALID3, FLIGHTS_INVALID3_CONTAINER, FLIGHTS_VALID, FlightsTwin, INVOICE_INVALID3,
    INVOICE_VALID, InvoiceTwin, flights_64k, invoice_64k,
};
use examples::{CreateInvoice, SearchFlights};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tool_core::Tool;

fn run<T: Tool, Twin: DeserializeOwned>(way: &str, raw: &str, n: usize) -> usize {
    let validator = jsonschema::validator_for(T::input_schema()).expect("schema compiles");
    let mut ok = 0;
    for _ in 0..n {
        let accepted = match way {
            "floor" => serde_json::from_str::<Twin>(black_box(raw)).is_ok(),
            "value_jsonschema" => {
                let parsed = serde_json::from_str::<Value>(black_box(raw));
                parsed.is_ok_and(|value| {
                    if validator.is_valid(&value) {
                        serde_json::from_value::<Twin>(value).is_ok()
                    } else {
                        let errors: Vec<String> = validator
                            .iter_errors(&value)
                            .map(|e| format!("{}: {e}", e.instance_path()))
                            .collect();
                        black_box(errors).is_empty()
                    }
                })
            }
            "parse_arguments" => T::parse_arguments(black_box(raw)).is_ok(),
            other => panic!("unknown way {other}"),
        };
        ok += usize::from(accepted);
    }
    ok
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, way, tool, payload, n] = args.as_slice() else {
        panic!("usage: count WAY TOOL PAYLOAD N");
    };
    let n: usize = n.parse().expect("N is a count");
    let raw = match (tool.as_str(), payload.as_str()) {
        ("invoice", "valid") => INVOICE_VALID.to_owned(),
        ("invoice", "invalid3") => INVOICE_INVALID3.to_owned(),
        ("invoice", "64k") => invoice_64k(),
        ("flights", "valid") => FLIGHTS_VALID.to_owned(),
        ("flights", "invalid3") => FLIGHTS_INVALID3.to_owned(),
        ("flights", "invalid3_container") => FLIGHTS_INVALID3_CONTAINER.to_owned(),
        ("flights", "64k") => flights_64k(),
        other => panic!("unknown payload {other:?}"),
    };
    let ok = match tool.as_str() {
        "invoice" => run::<CreateInvoice, InvoiceTwin>(way, &raw, n),
        _ => run::<SearchFlights, FlightsTwin>(way, &raw, n),
    };
    println!("{ok}");
}
