//! `text_calls::parse_calls` throughput per dialect, on 1 KiB and 64 KiB replies: an ordinary
//! one (a sentence of prose, then two calls, the second carrying a long string argument, as a
//! file-writing tool would) and adversarial ones (markers that open and never close, and
//! nesting as deep as the text is long). Linear scaling shows as the same bytes per second at
//! both sizes. The dialect is detected, as it is when it is not named.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use tool_core::text_calls::{Dialect, TextCallStream, parse_calls};

const SIZES: [(&str, usize); 2] = [("1KiB", 1 << 10), ("64KiB", 64 << 10)];

/// Two calls in `dialect`, the second's `content` argument filling the reply to about `size`.
fn ordinary(dialect: Dialect, size: usize) -> String {
    let filler = "The quick brown fox jumps over the lazy dog. ".repeat(size / 45 + 1);
    let content = &filler[..size.saturating_sub(200).min(filler.len())];
    let first = json!({"path": "notes/today.md"});
    let second = json!({"path": "notes/today.md", "content": content});
    let object = |name: &str, args: &serde_json::Value, key: &str| {
        json!({"name": name, key: args}).to_string()
    };
    match dialect {
        Dialect::Json => format!(
            "[{}, {}]",
            object("read_file", &first, "arguments"),
            object("write_file", &second, "arguments")
        ),
        Dialect::Hermes => format!(
            "Let me update it.\n<tool_call>\n{}\n</tool_call>\n<tool_call>\n{}\n</tool_call>",
            object("read_file", &first, "arguments"),
            object("write_file", &second, "arguments")
        ),
        Dialect::Llama3 => format!(
            "<|python_tag|>{}; {}<|eom_id|>",
            object("read_file", &first, "parameters"),
            object("write_file", &second, "parameters")
        ),
        Dialect::Mistral => format!(
            "[TOOL_CALLS][{}, {}]",
            object("read_file", &first, "arguments"),
            object("write_file", &second, "arguments")
        ),
        Dialect::Granite => format!(
            "<function_call> {}\n<function_call> {}",
            object("read_file", &first, "arguments"),
            object("write_file", &second, "arguments")
        ),
        Dialect::DeepSeek => format!(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n```json\n{first}\n```<｜tool▁call▁end｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>write_file\n```json\n{second}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
        ),
        _ => format!(
            "[read_file(path='notes/today.md'), write_file(path='notes/today.md', content='{content}')]"
        ),
    }
}

/// Replies that try to make a reader backtrack or recurse: `(name, text, whether it parses)`.
fn adversarial(size: usize) -> Vec<(&'static str, String)> {
    vec![
        (
            "hermes_never_closed",
            "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": \"".to_owned() + &"x".repeat(size),
        ),
        (
            "deepseek_never_closed",
            format!(
                "<｜tool▁call▁begin｜>f<｜tool▁sep｜>{}",
                "{\"a\": 1} ".repeat(size / 10)
            ),
        ),
        (
            "json_deep_brackets",
            format!("[{{\"name\": \"f\", \"arguments\": {}", "[".repeat(size)),
        ),
        ("python_deep_brackets", format!("f(a={}", "[".repeat(size))),
        ("python_long_string", format!("f(a='{}", "y".repeat(size))),
    ]
}

/// Pushes `text` to a stream in `chunk`-byte pieces and finishes it; returns how many calls it
/// read.
fn streamed(text: &str, chunk: usize) -> Result<usize, tool_core::text_calls::TextError> {
    let mut stream = TextCallStream::new(None);
    let mut handed = 0;
    for piece in text.as_bytes().chunks(chunk) {
        handed += stream.push(piece)?.len();
    }
    Ok(handed + stream.finish()?.remaining().len())
}

/// The same replies streamed in 16-byte chunks (a few tokens each), and the adversarial ones.
fn bench_stream(c: &mut Criterion) {
    for dialect in Dialect::ALL {
        let mut group = c.benchmark_group(format!("text_calls_stream/{dialect}"));
        for (label, size) in SIZES {
            let text = ordinary(dialect, size);
            assert_eq!(streamed(&text, 16).ok(), Some(2), "{dialect} {label}");
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_with_input(BenchmarkId::from_parameter(label), &text, |b, text| {
                b.iter(|| streamed(black_box(text), 16).is_ok())
            });
        }
        group.finish();
    }
    for (label, size) in SIZES {
        for (name, text) in adversarial(size) {
            assert!(streamed(&text, 16).is_err(), "{name} is refused");
            let mut group = c.benchmark_group(format!("text_calls_stream/adversarial/{name}"));
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_with_input(BenchmarkId::from_parameter(label), &text, |b, text| {
                b.iter(|| streamed(black_box(text), 16).is_err())
            });
            group.finish();
        }
    }
}

fn bench(c: &mut Criterion) {
    for dialect in Dialect::ALL {
        let mut group = c.benchmark_group(format!("text_calls/{dialect}"));
        for (label, size) in SIZES {
            let text = ordinary(dialect, size);
            let parsed = parse_calls(&text, None).expect("the reply parses");
            assert_eq!(
                (parsed.dialect(), parsed.calls().len()),
                (Some(dialect), 2),
                "{dialect} {label}"
            );
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_with_input(BenchmarkId::from_parameter(label), &text, |b, text| {
                b.iter(|| parse_calls(black_box(text), None).is_ok())
            });
        }
        group.finish();
    }
    for (label, size) in SIZES {
        for (name, text) in adversarial(size) {
            assert!(parse_calls(&text, None).is_err(), "{name} is refused");
            let mut group = c.benchmark_group(format!("text_calls/adversarial/{name}"));
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_with_input(BenchmarkId::from_parameter(label), &text, |b, text| {
                b.iter(|| parse_calls(black_box(text), None).is_err())
            });
            group.finish();
        }
    }
}

criterion_group!(benches, bench, bench_stream);
criterion_main!(benches);
