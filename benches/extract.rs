//! `extract_json` throughput on 1 KiB, 64 KiB and 1 MiB inputs: an ordinary reply (prose
//! around one object that grows with the size) and adversarial ones (only `{`, only `[`, only
//! backticks, only quotes, `<tool_call>` tags never closed). Linear scaling shows as the same
//! bytes per second at every size.

use std::hint::black_box;

use benches::{EXTRACT_INPUTS, extract_input};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tool_core::extract::{ExtractError, Source, extract_json};

const SIZES: [(&str, usize); 3] = [("1KiB", 1 << 10), ("64KiB", 64 << 10), ("1MiB", 1 << 20)];

/// What each input must give, checked before it is measured.
fn expected(name: &str) -> Result<Source, ExtractError> {
    match name {
        "prose" => Ok(Source::Prose),
        "open_braces" => Err(ExtractError::Unterminated { opener: '{', at: 0 }),
        "open_brackets" => Err(ExtractError::Unterminated { opener: '[', at: 0 }),
        _ => Err(ExtractError::NotFound),
    }
}

fn bench(c: &mut Criterion) {
    for name in EXTRACT_INPUTS {
        let mut group = c.benchmark_group(format!("extract/{name}"));
        for (label, size) in SIZES {
            let text = extract_input(name, size);
            assert_eq!(
                extract_json(&text).map(|found| found.source()),
                expected(name),
                "{name} {label}"
            );
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_with_input(BenchmarkId::from_parameter(label), &text, |b, text| {
                b.iter(|| extract_json(black_box(text)).is_ok())
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
