//! Time per `Runtime::invoke` with no subscriber, with a `fmt` subscriber writing to nowhere,
//! and with the OTLP exporter (batching) of `examples::otel`: `cargo run --release --example
//! otel_overhead --features otel -- <calls> <traces URL>` (the URL of a running backend, e.g.
//! `http://127.0.0.1:6006/v1/traces` for Phoenix). Prints the mean time per call of each, the
//! best of five rounds.

use std::time::{Duration, Instant};

use examples::get_weather;
use tool_core::{Context, Registry, Runtime, ToolDef};
use tracing_subscriber::layer::SubscriberExt as _;

const ARGUMENTS: &str = r#"{"city":"Paris","units":"celsius"}"#;

fn per_call(rt: &tokio::runtime::Runtime, calls: usize) -> Duration {
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(get_weather))
        .expect("registers");
    let runtime = Runtime::new(registry);
    let cx = Context::builder("bench").build();
    let ids: Vec<String> = (0..calls).map(|i| format!("call_{i}")).collect();
    let started = Instant::now();
    rt.block_on(async {
        for id in &ids {
            let outcome = runtime.invoke(id, "get_weather", ARGUMENTS, &cx).await;
            assert!(outcome.is_ok(), "{outcome:?}");
        }
    });
    started.elapsed() / u32::try_from(calls).unwrap_or(u32::MAX)
}

fn best(rounds: usize, mut f: impl FnMut() -> Duration) -> Duration {
    (0..rounds).map(|_| f()).min().unwrap_or_default()
}

fn main() -> Result<(), examples::otel::Error> {
    let mut args = std::env::args().skip(1);
    let calls: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(10_000);
    let url = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:6006/v1/traces".to_owned());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;

    let none = best(5, || per_call(&rt, calls));
    let fmt = tracing_subscriber::fmt()
        .with_writer(std::io::sink)
        .with_max_level(tracing::Level::INFO)
        .finish();
    let with_fmt = tracing::subscriber::with_default(fmt, || best(5, || per_call(&rt, calls)));
    let otel = examples::otel::Otel::to_endpoint(&url, "otel-overhead")?;
    let subscriber = tracing_subscriber::registry().with(otel.layer());
    let with_otlp =
        tracing::subscriber::with_default(subscriber, || best(5, || per_call(&rt, calls)));
    otel.shutdown()?;
    println!("calls per round: {calls}, best of 5 rounds, mean per call");
    println!("no subscriber: {:.2} µs", none.as_secs_f64() * 1e6);
    println!(
        "fmt subscriber (INFO, to a sink): {:.2} µs",
        with_fmt.as_secs_f64() * 1e6
    );
    println!(
        "OTLP exporter (DEBUG events, batching): {:.2} µs",
        with_otlp.as_secs_f64() * 1e6
    );
    Ok(())
}
