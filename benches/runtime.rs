//! The runtime's own cost: `Runtime::invoke` with a no-op authorization policy and a no-op
//! handler, against `parse_arguments` alone, on the valid `create_invoice` payload.

use std::hint::black_box;
use std::time::{Duration, Instant};

use benches::INVOICE_VALID;
use criterion::{Criterion, criterion_group, criterion_main};
use examples::CreateInvoice;
use tool_core::{Context, Tool, repair::RepairLoop};

#[path = "pipeline.rs"]
mod pipeline;

use pipeline::{Fixed, INVOICE_BROKEN, registry, runtime};

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a Tokio runtime");
    let registry = registry();
    let cx = Context::builder("bench").build();
    let check = rt.block_on(runtime(&registry).invoke("c", "create_invoice", INVOICE_VALID, &cx));
    assert!(check.is_ok(), "{check:?}");

    let mut group = c.benchmark_group("invoice/valid");
    group.bench_function("parse_arguments", |b| {
        b.iter(|| CreateInvoice::parse_arguments(black_box(INVOICE_VALID)).is_ok())
    });
    // A run: a fresh runtime for every 64 calls (its creation is timed too), distinct call ids
    // made before the clock starts.
    group.bench_function("invoke_runs_of_64", |b| {
        b.iter_custom(|iters| {
            let ids: Vec<String> = (0..iters).map(|i| format!("call_{i}")).collect();
            rt.block_on(async {
                let started = Instant::now();
                for run in ids.chunks(64) {
                    let runtime = runtime(&registry);
                    for id in run {
                        let outcome = runtime
                            .invoke(id, "create_invoice", black_box(INVOICE_VALID), &cx)
                            .await;
                        black_box(outcome.is_ok());
                    }
                }
                started.elapsed()
            })
        })
    });
    // One long session: one runtime for the whole batch (tens of thousands of calls), so the
    // duplicate-id journal grows large.
    group.bench_function("invoke_one_session", |b| {
        b.iter_custom(|iters| {
            let runtime = runtime(&registry);
            let ids: Vec<String> = (0..iters).map(|i| format!("call_{i}")).collect();
            rt.block_on(async {
                let started = Instant::now();
                for id in &ids {
                    let outcome = runtime
                        .invoke(id, "create_invoice", black_box(INVOICE_VALID), &cx)
                        .await;
                    black_box(outcome.is_ok());
                }
                started.elapsed()
            })
        })
    });
    group.finish();

    // The repair loop's own cost: a call valid on the first pass, and one repaired on the
    // second attempt by a model that answers at once.
    let mut group = c.benchmark_group("invoice/repair");
    for (name, first) in [
        ("first_pass", INVOICE_VALID),
        ("two_attempts", INVOICE_BROKEN),
    ] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let ids: Vec<String> = (0..iters).map(|i| format!("call_{i}")).collect();
                rt.block_on(async {
                    let started = Instant::now();
                    for run in ids.chunks(64) {
                        let repair = RepairLoop::new(runtime(&registry), Fixed);
                        for id in run {
                            let result = repair
                                .call(id, "create_invoice", black_box(first), &cx)
                                .await;
                            black_box(result.outcome().is_ok());
                        }
                    }
                    started.elapsed()
                })
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);
