//! Unions, defaults and formats: the same argument text read three ways, `floor` (serde's own
//! derive into a twin of the same shape, no checks), `value_jsonschema` (parse to `Value`,
//! validate with `jsonschema`, formats asserted, `from_value`) and `parse_arguments` (the
//! generated validator), for a tool with a `Vec` of an internally tagged enum and one with
//! defaults and formats. `recursive_untagged/depth_30` reads a recursive untagged enum nested
//! 30 levels deep, whose first variants refuse each level only after reading what it holds.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde::de::DeserializeOwned;
use tool_core::{Argument, Tool};

#[path = "unions_shapes.rs"]
mod shapes;

use shapes::{
    CreateEvent, CreateEventTwin, EditFile, EditFileTwin, create_event_payloads,
    edit_file_payloads, validator, value_jsonschema,
};

fn payloads<T: Tool, Twin: DeserializeOwned>(
    c: &mut Criterion,
    tool: &str,
    cases: &[(&str, String)],
) {
    let validator = validator::<T>();
    for (name, raw) in cases {
        let expect_valid = *name != "invalid3";
        assert_eq!(
            T::parse_arguments(raw).is_ok(),
            expect_valid,
            "{tool}/{name}"
        );
        assert_eq!(
            value_jsonschema::<Twin>(&validator, raw).is_ok(),
            expect_valid,
            "{tool}/{name}"
        );
        if !expect_valid {
            assert_eq!(T::parse_arguments(raw).map(drop).unwrap_err().len(), 3);
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

fn unions(c: &mut Criterion) {
    payloads::<EditFile, EditFileTwin>(c, "edit_file", &edit_file_payloads());
    payloads::<CreateEvent, CreateEventTwin>(c, "create_event", &create_event_payloads());
}

/// An expression: a value without `op` is read as a `Call` before it is read as a `Group`.
#[allow(dead_code)]
#[derive(Argument, Debug)]
#[serde(untagged)]
enum Expr {
    Num(f64),
    Call { op: String, args: Vec<Expr> },
    Group { args: Vec<Expr> },
}

/// Evaluates an expression.
#[allow(dead_code)]
#[derive(Tool, Debug)]
struct Eval {
    expr: Expr,
}

fn recursive_untagged(c: &mut Criterion) {
    let depth = 30;
    let raw = format!(
        r#"{{"expr": {}1{}}}"#,
        r#"{"args": ["#.repeat(depth),
        "]}".repeat(depth)
    );
    assert!(Eval::parse_arguments(&raw).is_ok());
    let mut group = c.benchmark_group("recursive_untagged");
    group.bench_function("depth_30", |b| {
        b.iter(|| Eval::parse_arguments(black_box(&raw)).is_ok())
    });
    group.finish();
}

criterion_group!(benches, unions, recursive_untagged);
criterion_main!(benches);
