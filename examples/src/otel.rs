//! Spans exported to an OpenTelemetry backend over OTLP (HTTP/protobuf), configured by the
//! standard environment variables (feature `otel`).
//!
//! ```no_run
//! # fn main() -> Result<(), examples::otel::Error> {
//! // OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:6006 OTEL_SERVICE_NAME=weather-agent
//! let otel = examples::otel::init()?;
//! // ... run agents: every run, model step and tool call is a span ...
//! otel.shutdown()?; // sends what is still buffered
//! # Ok(())
//! # }
//! ```
//!
//! Spans are batched and sent from a thread of the exporter's own: a call never waits for the
//! backend. The variables read: `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`,
//! `OTEL_RESOURCE_ATTRIBUTES`, and `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`
//! (`true` turns [content capture](tool_core::observe::set_capture_content) on).

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::registry::LookupSpan;

/// The error of setting the pipeline up or of flushing it.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// The installed pipeline: [`flush`](Self::flush) or [`shutdown`](Self::shutdown) it before
/// the process ends, or the last spans are lost.
#[derive(Debug, Clone)]
pub struct Otel {
    provider: SdkTracerProvider,
}

impl Otel {
    /// A pipeline exporting to the endpoint the environment names (`http://localhost:4318`
    /// when none), not installed anywhere yet: see [`layer`](Self::layer) and [`init`].
    pub fn from_env() -> Result<Otel, Error> {
        if std::env::var("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
            .is_ok_and(|value| value.eq_ignore_ascii_case("true"))
        {
            tool_core::observe::set_capture_content(true);
        }
        let exporter = Otel::exporter().build()?;
        Ok(Otel::with_exporter(exporter, Resource::builder().build()))
    }

    /// A pipeline exporting to `traces_url` (the full URL, `…/v1/traces`) as `service`,
    /// whatever the environment says.
    pub fn to_endpoint(traces_url: &str, service: &str) -> Result<Otel, Error> {
        let exporter = Otel::exporter().with_endpoint(traces_url).build()?;
        let resource = Resource::builder()
            .with_service_name(service.to_owned())
            .build();
        Ok(Otel::with_exporter(exporter, resource))
    }

    fn exporter()
    -> opentelemetry_otlp::SpanExporterBuilder<opentelemetry_otlp::HttpExporterBuilderSet> {
        // The exporter's HTTP client needs a TLS crypto provider if the build's reqwest has
        // none of its own; one installed before is kept.
        let _ = rustls::crypto::ring::default_provider().install_default();
        SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
    }

    fn with_exporter(exporter: SpanExporter, resource: Resource) -> Otel {
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        Otel { provider }
    }

    /// The `tracing` layer turning the spans of `tool_core` and of these examples into
    /// OpenTelemetry spans, their `DEBUG` events (the stages' decisions) included, and leaving
    /// out the events that quote arguments ([`CONTENT_TARGET`](tool_core::observe::CONTENT_TARGET))
    /// unless content capture is on.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    {
        let tracer = self.provider.tracer("tool-core");
        let filter = tracing_subscriber::filter::filter_fn(|meta| {
            let target = meta.target();
            let ours = target.starts_with("tool_core") || target.starts_with("examples");
            ours && *meta.level() <= tracing::Level::DEBUG
                && (target != tool_core::observe::CONTENT_TARGET
                    || tool_core::observe::captures_content())
        });
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_filter(filter)
    }

    /// Sends every span ended so far, waiting for the backend's answer.
    pub fn flush(&self) -> Result<(), Error> {
        Ok(self.provider.force_flush()?)
    }

    /// Sends what is buffered and stops the exporter.
    pub fn shutdown(&self) -> Result<(), Error> {
        Ok(self.provider.shutdown()?)
    }
}

/// Installs the pipeline of [`Otel::from_env`] as the process's `tracing` subscriber, and the
/// W3C trace context propagator (`traceparent`) as the global one.
pub fn init() -> Result<Otel, Error> {
    let otel = Otel::from_env()?;
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let subscriber = tracing_subscriber::registry().with(otel.layer());
    tracing::subscriber::set_global_default(subscriber)?;
    Ok(otel)
}
