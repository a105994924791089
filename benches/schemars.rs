//! One value through `ViaSchemars` against plain serde: the same argument text read by
//! `serde_json::from_str` into a plain `Deserialize` type (no checks), by a tool whose field
//! is `ViaSchemars<Window>` (strict JSON into a `Value`, the `jsonschema` check against
//! schemars' schema, then serde), and by a tool whose field derives `Argument` for the same
//! shape (the generated one-pass validator), for scale.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use tool_core::Tool;

#[path = "schemars_shapes.rs"]
mod shapes;

use shapes::{DerivedArgs, INVALID3, Plain, VALID, ViaSchemarsArgs};

fn schemars(c: &mut Criterion) {
    assert!(serde_json::from_str::<Plain>(VALID).is_ok());
    assert!(ViaSchemarsArgs::parse_arguments(VALID).is_ok());
    assert!(DerivedArgs::parse_arguments(VALID).is_ok());
    assert_eq!(
        ViaSchemarsArgs::parse_arguments(INVALID3)
            .unwrap_err()
            .len(),
        3
    );
    assert_eq!(DerivedArgs::parse_arguments(INVALID3).unwrap_err().len(), 3);
    for (name, raw) in [("valid", VALID), ("invalid3", INVALID3)] {
        let mut group = c.benchmark_group(format!("schemars/{name}"));
        group.bench_function("serde", |b| {
            b.iter(|| serde_json::from_str::<Plain>(black_box(raw)).is_ok())
        });
        group.bench_function("via_schemars", |b| {
            b.iter(|| ViaSchemarsArgs::parse_arguments(black_box(raw)).is_ok())
        });
        group.bench_function("derived", |b| {
            b.iter(|| DerivedArgs::parse_arguments(black_box(raw)).is_ok())
        });
        group.finish();
    }
}

criterion_group!(benches, schemars);
criterion_main!(benches);
