//! The spans, events and metrics of an agent run, by the OpenTelemetry GenAI conventions:
//! `invoke_agent` > `chat`, `execute_tool` with the stages' decisions as events; no argument
//! value, pointer or invented tool name unless content capture is on. In a binary of its own:
//! `tracing` caches per-callsite interest process-wide, and content capture is a process-wide
//! switch.

#[path = "observed/scenario.rs"]
mod scenario;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context as LayerContext, Layer, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

#[derive(Debug, Clone)]
struct SpanData {
    name: &'static str,
    parent: Option<u64>,
    fields: BTreeMap<String, String>,
    events: Vec<BTreeMap<String, String>>,
}

#[derive(Debug, Default)]
struct Captured {
    spans: BTreeMap<u64, SpanData>,
    /// Events outside every span.
    loose: Vec<BTreeMap<String, String>>,
}

impl Captured {
    fn named(&self, name: &str) -> Vec<(u64, &SpanData)> {
        self.spans
            .iter()
            .filter(|(_, span)| span.name == name)
            .map(|(id, span)| (*id, span))
            .collect()
    }

    /// The `execute_tool` span of call `call_id` in run `run` (an `invoke_agent` span id).
    fn tool_span(&self, run: u64, call_id: &str) -> &SpanData {
        let found: Vec<_> = self
            .named("execute_tool")
            .into_iter()
            .filter(|(_, span)| {
                span.parent == Some(run)
                    && span.fields.get("gen_ai.tool.call.id").map(String::as_str) == Some(call_id)
            })
            .collect();
        assert_eq!(found.len(), 1, "{call_id}: {:#?}", self.spans);
        found[0].1
    }

    /// Every text a backend would receive: span fields and event fields.
    fn all_text(&self) -> String {
        format!("{:?}", (&self.spans, &self.loose))
    }
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Captured>>);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: LayerContext<'_, S>) {
        let parent = if attrs.is_root() {
            None
        } else if let Some(parent) = attrs.parent() {
            Some(parent.into_u64())
        } else {
            ctx.current_span().id().map(Id::into_u64)
        };
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let span = SpanData {
            name: attrs.metadata().name(),
            parent,
            fields,
            events: Vec::new(),
        };
        self.0.lock().unwrap().spans.insert(id.into_u64(), span);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: LayerContext<'_, S>) {
        let mut captured = self.0.lock().unwrap();
        if let Some(span) = captured.spans.get_mut(&id.into_u64()) {
            values.record(&mut Fields(&mut span.fields));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: LayerContext<'_, S>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        fields.insert("target".into(), event.metadata().target().into());
        let span = ctx.event_span(event).map(|span| span.id().into_u64());
        let mut captured = self.0.lock().unwrap();
        match span.and_then(|id| captured.spans.get_mut(&id)) {
            Some(span) => span.events.push(fields),
            None => captured.loose.push(fields),
        }
    }
}

/// The scenario under a capturing subscriber; every callsite enabled (as a layer at `TRACE`
/// would be) but the `content` target, left out as the documented filter does.
fn traced_scenario() -> Captured {
    let capture = Capture::default();
    let filter = tracing_subscriber::filter::filter_fn(|meta| {
        meta.target() != tool_core::observe::CONTENT_TARGET
    });
    let subscriber = tracing_subscriber::registry().with(capture.clone().with_filter(filter));
    tracing::subscriber::with_default(subscriber, || {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(scenario::run());
    });
    std::mem::take(&mut *capture.0.lock().unwrap())
}

fn stages(span: &SpanData) -> Vec<&str> {
    span.events
        .iter()
        .filter_map(|event| event.get("gen_ai.tool.stage").map(String::as_str))
        .collect()
}

fn field<'a>(span: &'a SpanData, name: &str) -> Option<&'a str> {
    span.fields.get(name).map(String::as_str)
}

#[test]
fn an_agent_run_is_traced_by_the_gen_ai_conventions_without_content() {
    tool_core::observe::set_capture_content(false);
    let captured = traced_scenario();
    let runs = captured.named("invoke_agent");
    assert_eq!(runs.len(), 2, "{:#?}", captured.spans);
    let (first, second) = (runs[0].0, runs[1].0);
    for (_, run) in &runs {
        assert_eq!(run.parent, None);
        assert_eq!(field(run, "gen_ai.operation.name"), Some("invoke_agent"));
        assert_eq!(field(run, "tool_core.agent.end"), Some("answered"));
    }
    assert_eq!(field(runs[0].1, "gen_ai.usage.input_tokens"), Some("320"));
    assert_eq!(field(runs[0].1, "gen_ai.usage.output_tokens"), Some("42"));

    // One chat span per model step, inside its run.
    let chats = captured.named("chat");
    assert_eq!(chats.len(), 4, "{:#?}", captured.spans);
    let in_first: Vec<_> = chats
        .iter()
        .filter(|(_, chat)| chat.parent == Some(first))
        .map(|(_, chat)| chat)
        .collect();
    assert_eq!(in_first.len(), 2);
    assert_eq!(field(in_first[0], "gen_ai.operation.name"), Some("chat"));
    assert_eq!(field(in_first[0], "gen_ai.usage.input_tokens"), Some("120"));
    assert_eq!(field(in_first[0], "gen_ai.usage.output_tokens"), Some("30"));
    assert_eq!(
        field(in_first[0], "gen_ai.response.finish_reasons"),
        Some("tool_calls")
    );
    assert_eq!(
        field(in_first[1], "gen_ai.response.finish_reasons"),
        Some("stop")
    );

    // The repaired call: its stages, and the repair told in the run.
    let weather = captured.tool_span(first, "w1");
    assert_eq!(
        field(weather, "otel.name"),
        Some("execute_tool get_weather")
    );
    assert_eq!(
        field(weather, "gen_ai.operation.name"),
        Some("execute_tool")
    );
    assert_eq!(field(weather, "gen_ai.tool.name"), Some("get_weather"));
    assert_eq!(field(weather, "gen_ai.tool.type"), Some("function"));
    assert_eq!(field(weather, "error.type"), None);
    assert_eq!(stages(weather), ["validated", "authorized", "claimed"]);
    let repaired: Vec<_> = captured.spans[&first]
        .events
        .iter()
        .filter(|event| event.get("gen_ai.tool.stage").map(String::as_str) == Some("repaired"))
        .collect();
    assert_eq!(repaired.len(), 1, "{:#?}", captured.spans[&first]);
    assert_eq!(repaired[0]["attempt"], "2");
    assert_eq!(repaired[0]["gen_ai.tool.call.id"], "w1");

    // The approved call.
    let invoice = captured.tool_span(first, "i1");
    assert_eq!(
        stages(invoice),
        ["validated", "authorized", "approved", "claimed"]
    );

    // The invented tool: refused, its name nowhere.
    let invented = captured.tool_span(first, "x1");
    assert_eq!(field(invented, "otel.name"), Some("execute_tool"));
    assert_eq!(field(invented, "gen_ai.tool.name"), None);
    assert_eq!(field(invented, "error.type"), Some("unknown_tool"));
    assert_eq!(field(invented, "otel.status_code"), Some("error"));

    // The replay after the restart.
    let replayed = captured.tool_span(second, "w1");
    assert_eq!(stages(replayed), ["validated", "authorized", "replayed"]);

    let text = captured.all_text();
    assert!(!text.contains(scenario::SECRET), "{text}");
    assert!(!text.contains(scenario::INVENTED), "{text}");
    assert!(!text.contains("kelvin"), "{text}");
    assert!(!text.contains("cus_42"), "{text}");
    assert!(!text.contains("gen_ai.tool.call.arguments"), "{text}");

    // Content capture on: the arguments, the result and the invented name are recorded.
    tool_core::observe::set_capture_content(true);
    let captured = traced_scenario();
    tool_core::observe::set_capture_content(false);
    let runs = captured.named("invoke_agent");
    let weather = captured.tool_span(runs[0].0, "w1");
    assert!(
        field(weather, "gen_ai.tool.call.arguments").is_some_and(|a| a.contains(scenario::SECRET)),
        "{weather:#?}"
    );
    assert!(
        field(weather, "gen_ai.tool.call.result").is_some_and(|r| r.contains("celsius")),
        "{weather:#?}"
    );
    let invented = captured.tool_span(runs[0].0, "x1");
    assert_eq!(
        field(invented, "gen_ai.tool.name"),
        Some(scenario::INVENTED)
    );
}

#[test]
fn an_agent_run_counts_by_tool_and_code_through_the_metrics_facade() {
    let recorder = metrics_util::debugging::DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    // Under a subscriber too: a callsite first seen with none would be cached as disabled
    // for the other test of this binary.
    let subscriber = tracing_subscriber::registry();
    tracing::subscriber::with_default(subscriber, || {
        metrics::with_local_recorder(&recorder, || {
            tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .unwrap()
                .block_on(scenario::run());
        });
    });
    let exported = snapshotter.snapshot().into_vec();
    let counter = |name: &str, labels: &[(&str, &str)]| -> u64 {
        exported
            .iter()
            .filter(|(key, ..)| {
                let key = key.key();
                key.name() == name
                    && labels.iter().all(|(k, v)| {
                        key.labels()
                            .any(|label| label.key() == *k && label.value() == *v)
                    })
            })
            .map(|(.., value)| match value {
                metrics_util::debugging::DebugValue::Counter(n) => *n,
                other => panic!("{other:?}"),
            })
            .sum()
    };
    // w1 twice (repaired, then replayed), i1 once, x1 once.
    assert_eq!(counter("tool_calls_total", &[("tool", "get_weather")]), 2);
    assert_eq!(
        counter("tool_calls_total", &[("tool", "create_invoice")]),
        1
    );
    assert_eq!(
        counter("tool_calls_repaired_total", &[("tool", "get_weather")]),
        1
    );
    assert_eq!(
        counter("tool_calls_first_pass_total", &[("tool", "get_weather")]),
        1
    );
    assert_eq!(
        counter(
            "tool_calls_failed_total",
            &[
                ("tool", tool_core::metrics::Metrics::UNREGISTERED),
                ("reason", "unknown_tool")
            ]
        ),
        1
    );
    // Labels are bounded by the registry: the invented name is none of them.
    let labels = format!("{exported:?}");
    assert!(!labels.contains(scenario::INVENTED), "{labels}");
}
