//! `text_calls::parse_calls` throughput on real replies: the BFCL v4 ground-truth calls
//! rendered in every dialect (as `tests/text_calls.rs` renders them, prose around the calls
//! where the dialect allows it) and BFCL's user requests as prose replies with no call. Each
//! dialect's replies are read with the dialect named and with it detected; then the whole mix,
//! detected. Throughput is bytes of reply read per second.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tests::replies::{Reply, bfcl_replies};
use tool_core::text_calls::{Dialect, parse_calls};

/// Reads every reply, `named` or detected; returns how many were read without refusal, so
/// the work cannot be optimized away.
fn read_all(replies: &[&Reply], named: bool) -> usize {
    replies
        .iter()
        .filter(|reply| {
            let dialect = if named { reply.dialect } else { None };
            parse_calls(black_box(&reply.text), dialect).is_ok()
        })
        .count()
}

fn bench(c: &mut Criterion) {
    let replies = bfcl_replies();
    let bytes = |set: &[&Reply]| set.iter().map(|r| r.text.len() as u64).sum::<u64>();
    let mut group = c.benchmark_group("text_calls_corpus");
    for dialect in Dialect::ALL {
        let set: Vec<&Reply> = replies
            .iter()
            .filter(|r| r.dialect == Some(dialect))
            .collect();
        group.throughput(Throughput::Bytes(bytes(&set)));
        group.bench_function(format!("named/{dialect}"), |b| {
            b.iter(|| read_all(&set, true))
        });
        group.bench_function(format!("detected/{dialect}"), |b| {
            b.iter(|| read_all(&set, false))
        });
    }
    let prose: Vec<&Reply> = replies.iter().filter(|r| r.dialect.is_none()).collect();
    group.throughput(Throughput::Bytes(bytes(&prose)));
    group.bench_function("detected/prose", |b| b.iter(|| read_all(&prose, false)));
    let all: Vec<&Reply> = replies.iter().collect();
    group.throughput(Throughput::Bytes(bytes(&all)));
    group.bench_function("named/all", |b| b.iter(|| read_all(&all, true)));
    group.bench_function("detected/all", |b| b.iter(|| read_all(&all, false)));
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
