//! A model that writes its calls as text, made into one the agent loop can run.

use super::{Dialect, Dialects};
use crate::model::ModelError;
use crate::model::{Model, ModelRequest, Turn};

/// Runs a model whose turns are plain text (a completion endpoint, a server without a tool-call
/// parser) in the agent loop: each turn's text is read with [`parse_calls`](super::parse_calls), in the dialect
/// given or the one its markers name, and the calls found become the turn's calls.
///
/// - The turn's text becomes the prose around the calls (`None` when there is none), so the
///   transcript holds each call once, as a call.
/// - Each call gets a fresh random id (`call_` and 24 hex digits), unique across runs, so a
///   durable ledger never mistakes one run's call for another's.
/// - Positional Python arguments are named from the tool's declared parameter order
///   ([`TextCall::to_tool_call`](super::TextCall::to_tool_call)).
/// - A turn that already carries calls is passed on as it is.
/// - The inner model is given the transcript with calls as calls; to show a completion model
///   its earlier calls as it wrote them, write them into its prompt with
///   [`render_calls`](super::render_calls).
/// - A reply whose calls cannot be read (cut off, malformed, in two dialects at once,
///   positional arguments that cannot be named) fails the step with a [`ModelError`] that says
///   why; nothing of it runs.
///
/// The calls then go through the runtime like any other: unknown tools are refused, arguments
/// are validated, and the repair loop sends field-level errors back to the model.
///
/// ```
/// use tool_core::agent::{Agent, RunEnd};
/// use tool_core::model::{Message, Turn};
/// use tool_core::testing::ScriptedTurns;
/// use tool_core::text_calls::TextModel;
/// use tool_core::{Context, Registry, Runtime, ToolDef};
/// # use tool_core::{Tool, registry::ToolError};
/// # /// Get the weather.
/// # #[derive(Tool)]
/// # struct GetWeather { city: String }
/// # async fn get_weather(args: GetWeather, _cx: &Context) -> Result<String, ToolError> {
/// #     Ok(format!("sunny in {}", args.city))
/// # }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mut registry = Registry::new();
/// registry.register(ToolDef::new(get_weather)).unwrap();
/// let model = TextModel::new(
///     ScriptedTurns::new()
///         .turn(Turn::answer("[get_weather('Paris'), get_weather(city='Oslo')]"))
///         .turn(Turn::answer("Sunny in both.")),
///     None,
/// );
/// let agent = Agent::new(Runtime::new(registry), model);
/// let transcript = vec![Message::User { text: "Weather in Paris and Oslo?".into() }];
/// let report = agent.run(transcript, &Context::builder("user:1").build()).await;
/// assert_eq!(report.end, RunEnd::Answered);
/// assert_eq!(report.outcomes.len(), 2);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct TextModel<M> {
    inner: M,
    dialect: Option<Dialect>,
    dialects: Dialects,
}

impl<M> TextModel<M> {
    /// Reads `inner`'s turns in `dialect`, or in the dialect each turn's markers name when
    /// `None`.
    pub fn new(inner: M, dialect: Option<Dialect>) -> Self {
        TextModel {
            inner,
            dialect,
            dialects: Dialects::new(),
        }
    }

    /// Reads the turns in `dialects` (built-in and added ones) instead of the built-in ones.
    pub fn with_dialects(mut self, dialects: Dialects) -> Self {
        self.dialects = dialects;
        self
    }

    /// The model whose text is read.
    pub fn inner(&self) -> &M {
        &self.inner
    }
}

impl<M: Model> Model for TextModel<M> {
    async fn respond(&self, request: &ModelRequest<'_>) -> Result<Turn, ModelError> {
        let mut turn = self.inner.respond(request).await?;
        if !turn.calls.is_empty() {
            return Ok(turn);
        }
        let Some(text) = turn.text.take() else {
            return Ok(turn);
        };
        let parsed = self
            .dialects
            .parse(&text, self.dialect)
            .map_err(|error| ModelError::new(format!("the model's reply: {error}")))?;
        if parsed.calls().is_empty() {
            turn.text = Some(text);
            return Ok(turn);
        }
        for call in parsed.calls() {
            // The declared tools: on the wrap-up turn none are offered, but a call there still
            // needs its parameters named before the loop drops it.
            let info = request
                .declared_tools()
                .iter()
                .find(|tool| tool.name() == call.name())
                .copied();
            let call = call
                .to_tool_call_for(crate::call::fresh_call_id(), info)
                .map_err(|error| ModelError::new(format!("the model's reply: {error}")))?;
            turn.calls.push(call);
        }
        // What the provider sent with the text is not the turn the transcript now holds.
        turn.provider = None;
        let prose: Vec<&str> = parsed
            .prose()
            .iter()
            .map(|range| &text[range.clone()])
            .collect();
        turn.text = (!prose.is_empty()).then(|| prose.join("\n"));
        Ok(turn)
    }
}
