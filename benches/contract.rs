//! Turning raw argument text into a checked value, three ways, on the same payloads:
//! `floor` (serde into a plain twin, no checks), `value_jsonschema` (parse to `Value`, validate
//! with `jsonschema`, `from_value`), and `parse_arguments` (the generated validator).

use std::hint::black_box;

use benches::{
    FLIGHTS_INVALID3, FLIGHTS_INVALID3_CONTAINER, FLIGHTS_VALID, FlightsTwin, INVOICE_INVALID3,
    INVOICE_VALID, InvoiceTwin, flights_64k, invoice_64k,
};
use criterion::{Criterion, criterion_group, criterion_main};
use examples::{CreateInvoice, SearchFlights};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tool_core::Tool;

/// The obvious approach: every error when invalid, the typed value when valid.
fn value_jsonschema<T: DeserializeOwned>(
    validator: &jsonschema::Validator,
    raw: &str,
) -> Result<T, Vec<String>> {
    let value: Value = serde_json::from_str(raw).map_err(|e| vec![e.to_string()])?;
    if validator.is_valid(&value) {
        serde_json::from_value(value).map_err(|e| vec![e.to_string()])
    } else {
        Err(validator
            .iter_errors(&value)
            .map(|error| format!("{}: {error}", error.instance_path()))
            .collect())
    }
}

fn payloads<T: Tool, Twin: DeserializeOwned>(
    c: &mut Criterion,
    tool: &str,
    cases: &[(&str, String)],
) {
    let validator = jsonschema::validator_for(T::input_schema()).expect("schema compiles");
    for (name, raw) in cases {
        let expect_valid = !name.starts_with("invalid3");
        assert_eq!(
            T::parse_arguments(raw).is_ok(),
            expect_valid,
            "{tool}/{name}"
        );
        if !expect_valid {
            assert_eq!(T::parse_arguments(raw).map(drop).unwrap_err().len(), 3);
            assert_eq!(
                value_jsonschema::<Twin>(&validator, raw)
                    .map(drop)
                    .unwrap_err()
                    .len(),
                3
            );
        }
        let mut group = c.benchmark_group(format!("{tool}/{name}"));
        group.bench_function("floor", |b| {
            b.iter(|| serde_json::from_str::<Twin>(black_box(raw)).is_ok())
        });
        group.bench_function("value_jsonschema", |b| {
            b.iter(|| value_jsonschema::<Twin>(&validator, black_box(raw)).is_ok())
        });
        group.bench_function("parse_arguments", |b| {
            b.iter(|| T::parse_arguments(black_box(raw)).is_ok())
        });
        group.finish();
    }
}

fn contract(c: &mut Criterion) {
    payloads::<CreateInvoice, InvoiceTwin>(
        c,
        "invoice",
        &[
            ("valid", INVOICE_VALID.to_owned()),
            ("invalid3", INVOICE_INVALID3.to_owned()),
            ("64k", invoice_64k()),
        ],
    );
    payloads::<SearchFlights, FlightsTwin>(
        c,
        "flights",
        &[
            ("valid", FLIGHTS_VALID.to_owned()),
            ("invalid3", FLIGHTS_INVALID3.to_owned()),
            ("invalid3_container", FLIGHTS_INVALID3_CONTAINER.to_owned()),
            ("64k", flights_64k()),
        ],
    );
}

criterion_group!(benches, contract);
criterion_main!(benches);
