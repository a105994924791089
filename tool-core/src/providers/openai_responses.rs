//! OpenAI Responses: `function_call` output items (whole or streamed), results back as
//! `function_call_output` items.
//!
//! The join key is the item's `call_id`, not its `fc_` item `id`. The API has no error flag on
//! a result: a failure is written into the `output` string. A leaked
//! `multi_tool_use.parallel` wrapper (a call named `parallel` whose arguments list other
//! calls) is not expanded: it comes out as the call the model made, so unless a tool of that
//! name was advertised the runtime refuses it as `unknown_tool`. Expanding it would invent
//! call ids the API never issued, which no result could answer.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::advertise::Advertised;
use super::call::{CallArguments, ParseError, ToolCall, make_ids_unique};
use super::encode::{EncodeError, WireResult, pair};
use super::format::{ProviderStream, WireFormat, default, refused};
use super::names::NameMap;
use super::request::{Body, Entry, RequestError, RequestOptions, bad_state, check_ids, entries};
use super::stream::{self, Caps, MAX_STATE_ITEMS, StreamError};
use super::target::Target;
use crate::Outcome;
use crate::model::{Provider, ProviderState, Turn, Usage};

#[derive(Deserialize)]
struct Response {
    #[serde(default)]
    output: Option<Vec<Item>>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
    #[serde(default)]
    status: Option<String>,
}

/// The `function_call` items of a response's `output`, in order.
pub fn parse_response(body: &Value, names: &NameMap) -> Result<Vec<ToolCall>, ParseError> {
    let response = Response::deserialize(body).map_err(ParseError::malformed)?;
    let mut calls = Vec::new();
    for item in response.output.unwrap_or_default() {
        if item.kind.as_deref() != Some("function_call") {
            continue;
        }
        let index = calls.len();
        let call_id = item.call_id.ok_or(ParseError::MissingField {
            index,
            field: "call_id",
        })?;
        let name = item.name.ok_or(ParseError::MissingField {
            index,
            field: "name",
        })?;
        calls.push(ToolCall::proposed(
            call_id,
            &name,
            CallArguments::openai_text(item.arguments.unwrap_or_default()),
            names,
        ));
    }
    make_ids_unique(&mut calls, &std::collections::HashSet::new());
    Ok(calls)
}

/// The `function_call_output` input items answering `calls`, one per call in call order.
pub fn output_items(calls: &[ToolCall], outcomes: &[Outcome]) -> Result<Vec<Value>, EncodeError> {
    Ok(pair(calls, outcomes)?
        .into_iter()
        .map(|(call, outcome)| {
            let output = WireResult::outcome(outcome).text();
            json!({ "type": "function_call_output", "call_id": call.wire_id(), "output": output })
        })
        .collect())
}

#[derive(Deserialize)]
struct Event {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    item: Option<Item>,
    #[serde(default)]
    item_id: Option<String>,
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(default)]
    delta: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
    #[serde(default)]
    response: Option<Response>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Debug)]
struct Partial {
    item_id: Option<String>,
    output_index: Option<u64>,
    call_id: String,
    name: String,
    arguments: String,
}

/// Tool calls out of a streamed response. `response.output_item.added` opens a call;
/// `response.function_call_arguments.delta` events add text; `response.function_call_arguments.done`
/// (whose `arguments` are authoritative) or `response.output_item.done` completes it, and an
/// item that was never added is a whole call by itself. A call the stream never completed is
/// taken from the output of `response.completed`.
///
/// Events name their item by `item_id`, by `output_index`, or by both; an open call is found
/// by either. An event naming neither, or naming an id and an index that belong to two
/// different items, is a [`StreamError::Protocol`].
///
/// Every output item of `response.output_item.done` (reasoning with its `encrypted_content`,
/// messages, calls) is kept, in output order, for [`provider_state`](Self::provider_state):
/// the next request sends them back unchanged.
#[derive(Debug)]
pub struct Stream {
    names: NameMap,
    caps: Caps,
    /// Open calls by the order they were opened: a truncated stream names the first.
    open: BTreeMap<u64, Partial>,
    by_item: HashMap<String, u64>,
    by_index: HashMap<u64, u64>,
    opened: u64,
    done_items: HashSet<String>,
    done_indexes: HashSet<u64>,
    done_calls: HashSet<String>,
    items: BTreeMap<u64, Value>,
    unindexed: Vec<Value>,
    state_lost: bool,
    text: String,
}

impl Stream {
    /// An accumulator decoding names with `names`, capping each call at
    /// [`DEFAULT_MAX_CALL_BYTES`](super::DEFAULT_MAX_CALL_BYTES).
    pub fn new(names: &NameMap) -> Self {
        Stream {
            names: names.clone(),
            caps: Caps::default(),
            open: BTreeMap::new(),
            by_item: HashMap::new(),
            by_index: HashMap::new(),
            opened: 0,
            done_items: HashSet::new(),
            done_indexes: HashSet::new(),
            done_calls: HashSet::new(),
            items: BTreeMap::new(),
            unindexed: Vec::new(),
            state_lost: false,
            text: String::new(),
        }
    }

    stream::caps_builders!("arguments");

    /// The output text received so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The output items completed so far (`response.output_item.done`), in output order, as
    /// the API sent them; `None` before the first, or when the turn has more than
    /// [`MAX_STATE_ITEMS`]. Store it with the assistant turn
    /// ([`Turn::provider`](crate::model::Turn::provider)) so that [`request`] sends reasoning
    /// items back unchanged.
    pub fn provider_state(&self) -> Option<ProviderState> {
        if self.state_lost || (self.items.is_empty() && self.unindexed.is_empty()) {
            return None;
        }
        let items = self
            .items
            .values()
            .chain(&self.unindexed)
            .cloned()
            .collect();
        Some(ProviderState::new(
            Provider::OpenAiResponses,
            Value::Array(items),
        ))
    }

    /// Takes one event (the JSON `data`; its `type` says what it is); returns the calls it
    /// completes. After an error, drop the stream.
    pub fn push(&mut self, event: &Value) -> Result<Vec<ToolCall>, StreamError> {
        self.caps.chunk()?;
        if event.get("type").and_then(Value::as_str) == Some("response.output_item.done")
            && let Some(item) = event.get("item").filter(|item| item.is_object())
        {
            if self.items.len() + self.unindexed.len() >= MAX_STATE_ITEMS {
                self.state_lost = true;
                self.items.clear();
                self.unindexed.clear();
            } else if !self.state_lost {
                match event.get("output_index").and_then(Value::as_u64) {
                    Some(index) => drop(self.items.insert(index, item.clone())),
                    None => self.unindexed.push(item.clone()),
                }
            }
        }
        let event = Event::deserialize(event).map_err(|e| StreamError::protocol(e.to_string()))?;
        match event.kind.as_str() {
            "response.output_item.added" => {
                let Some(item) = event
                    .item
                    .filter(|i| i.kind.as_deref() == Some("function_call"))
                else {
                    return Ok(Vec::new());
                };
                let call_id = item
                    .call_id
                    .clone()
                    .ok_or_else(|| StreamError::protocol("a function_call item without call_id"))?;
                let mut arguments = String::new();
                self.caps.append(
                    &mut arguments,
                    item.arguments.as_deref().unwrap_or_default(),
                    Some(&call_id),
                )?;
                self.open_call(Partial {
                    item_id: item.id,
                    output_index: event.output_index,
                    call_id,
                    name: item.name.unwrap_or_default(),
                    arguments,
                })?;
                Ok(Vec::new())
            }
            "response.function_call_arguments.delta" => {
                let item_id = event.item_id.as_deref();
                let Some(slot) = self.find(item_id, event.output_index)? else {
                    return Err(StreamError::protocol(format!(
                        "arguments for {}, which was never added",
                        describe(item_id, event.output_index)
                    )));
                };
                let delta = event.delta.unwrap_or_default();
                if let Some(partial) = self.open.get_mut(&slot) {
                    self.caps
                        .append(&mut partial.arguments, &delta, Some(&partial.call_id))?;
                }
                Ok(Vec::new())
            }
            "response.function_call_arguments.done" => {
                let item_id = event.item_id.as_deref();
                if self.is_done(item_id, event.output_index) {
                    return Ok(Vec::new());
                }
                let Some(slot) = self.find(item_id, event.output_index)? else {
                    return Err(StreamError::protocol(format!(
                        "{} completed but never added",
                        describe(item_id, event.output_index)
                    )));
                };
                self.complete(slot, event.arguments.as_deref(), None)
            }
            "response.output_item.done" => {
                let Some(item) = event
                    .item
                    .filter(|i| i.kind.as_deref() == Some("function_call"))
                else {
                    return Ok(Vec::new());
                };
                let item_id = item.id.as_deref();
                if self.is_done(item_id, event.output_index) {
                    return Ok(Vec::new());
                }
                let found = self.find(item_id, event.output_index)?;
                if item.status.as_deref() == Some("incomplete") {
                    let partial = found.and_then(|slot| self.take(slot));
                    return Err(truncated("incomplete", partial, &item));
                }
                let slot = match found {
                    Some(slot) => slot,
                    None => {
                        // Never announced: the item itself is the whole call.
                        let call_id = item.call_id.clone().ok_or_else(|| {
                            StreamError::protocol("a function_call item without call_id")
                        })?;
                        self.open_call(Partial {
                            item_id: item.id.clone(),
                            output_index: event.output_index,
                            call_id,
                            name: item.name.clone().unwrap_or_default(),
                            arguments: String::new(),
                        })?
                    }
                };
                self.complete(slot, item.arguments.as_deref(), item.name.as_deref())
            }
            "response.output_text.delta" => {
                self.text
                    .push_str(event.delta.as_deref().unwrap_or_default());
                Ok(Vec::new())
            }
            "response.incomplete" | "response.failed" => {
                let reason = event.kind.trim_start_matches("response.").to_owned();
                match self.first_open() {
                    Some(partial) => Err(StreamError::Truncated {
                        reason,
                        call_id: partial.call_id,
                        name: partial.name,
                        partial: partial.arguments,
                    }),
                    None => Ok(Vec::new()),
                }
            }
            "error" => Err(StreamError::Provider {
                message: event.message.unwrap_or_default(),
            }),
            "response.completed" => {
                // Items the stream never completed, if any, are in the final output.
                let mut calls = Vec::new();
                let output = event.response.and_then(|r| r.output).unwrap_or_default();
                for item in output {
                    if item.kind.as_deref() != Some("function_call") {
                        continue;
                    }
                    if item
                        .id
                        .as_ref()
                        .is_some_and(|id| self.done_items.contains(id))
                        || item
                            .call_id
                            .as_ref()
                            .is_some_and(|id| self.done_calls.contains(id))
                    {
                        continue;
                    }
                    let (Some(call_id), Some(name)) = (item.call_id, item.name) else {
                        continue;
                    };
                    let open = self
                        .open
                        .iter()
                        .find(|(_, p)| {
                            p.call_id == call_id || (p.item_id.is_some() && p.item_id == item.id)
                        })
                        .map(|(slot, _)| *slot);
                    if let Some(slot) = open {
                        self.take(slot);
                    }
                    if let Some(id) = item.id {
                        self.done_items.insert(id);
                    }
                    self.done_calls.insert(call_id.clone());
                    let arguments = item.arguments.unwrap_or_default();
                    self.caps.check(arguments.len(), Some(&call_id))?;
                    calls.push(ToolCall::proposed(
                        call_id,
                        &name,
                        CallArguments::openai_text(arguments),
                        &self.names,
                    ));
                }
                Ok(calls)
            }
            _ => Ok(Vec::new()),
        }
    }

    /// Opens a call under its item id and output index, at least one of which it must have.
    fn open_call(&mut self, partial: Partial) -> Result<u64, StreamError> {
        let (item_id, output_index) = (partial.item_id.as_deref(), partial.output_index);
        if item_id.is_none() && output_index.is_none() {
            return Err(StreamError::protocol(
                "a function_call item with neither an id nor an output_index",
            ));
        }
        if self.find(item_id, output_index)?.is_some() || self.is_done(item_id, output_index) {
            return Err(StreamError::protocol(format!(
                "{} was added twice",
                describe(item_id, output_index)
            )));
        }
        let slot = self.opened;
        self.opened += 1;
        if let Some(id) = &partial.item_id {
            self.by_item.insert(id.clone(), slot);
        }
        if let Some(index) = partial.output_index {
            self.by_index.insert(index, slot);
        }
        self.open.insert(slot, partial);
        Ok(slot)
    }

    /// The open call an event names by `item_id`, `output_index` or both. Naming neither, or
    /// naming two different items, is an error rather than a guess.
    fn find(
        &self,
        item_id: Option<&str>,
        output_index: Option<u64>,
    ) -> Result<Option<u64>, StreamError> {
        if item_id.is_none() && output_index.is_none() {
            return Err(StreamError::protocol(
                "an event naming neither an item_id nor an output_index",
            ));
        }
        let conflict = || {
            StreamError::protocol(format!(
                "{} names two different items",
                describe(item_id, output_index)
            ))
        };
        let by_item = item_id.and_then(|id| self.by_item.get(id).copied());
        let by_index = output_index.and_then(|index| self.by_index.get(&index).copied());
        let slot = match (by_item, by_index) {
            (Some(a), Some(b)) if a != b => return Err(conflict()),
            (Some(slot), _) | (None, Some(slot)) => slot,
            (None, None) => return Ok(None),
        };
        let partial = &self.open[&slot];
        let id_differs =
            matches!((item_id, partial.item_id.as_deref()), (Some(a), Some(b)) if a != b);
        let index_differs =
            matches!((output_index, partial.output_index), (Some(a), Some(b)) if a != b);
        if id_differs || index_differs {
            return Err(conflict());
        }
        Ok(Some(slot))
    }

    fn is_done(&self, item_id: Option<&str>, output_index: Option<u64>) -> bool {
        item_id.is_some_and(|id| self.done_items.contains(id))
            || output_index.is_some_and(|index| self.done_indexes.contains(&index))
    }

    fn take(&mut self, slot: u64) -> Option<Partial> {
        let partial = self.open.remove(&slot)?;
        if let Some(id) = &partial.item_id {
            self.by_item.remove(id);
        }
        if let Some(index) = partial.output_index {
            self.by_index.remove(&index);
        }
        Some(partial)
    }

    fn complete(
        &mut self,
        slot: u64,
        arguments: Option<&str>,
        name: Option<&str>,
    ) -> Result<Vec<ToolCall>, StreamError> {
        let Some(mut partial) = self.take(slot) else {
            return Ok(Vec::new());
        };
        if let Some(arguments) = arguments {
            self.caps
                .replace(&mut partial.arguments, arguments, Some(&partial.call_id))?;
        }
        if partial.name.is_empty()
            && let Some(name) = name
        {
            partial.name = name.to_owned();
        }
        if partial.name.is_empty() {
            return Err(StreamError::protocol(format!(
                "call {:?} has no name",
                partial.call_id
            )));
        }
        if let Some(id) = partial.item_id {
            self.done_items.insert(id);
        }
        if let Some(index) = partial.output_index {
            self.done_indexes.insert(index);
        }
        self.done_calls.insert(partial.call_id.clone());
        Ok(vec![ToolCall::proposed(
            partial.call_id,
            &partial.name,
            CallArguments::openai_text(partial.arguments),
            &self.names,
        )])
    }

    /// Takes out the call opened first among those still open.
    fn first_open(&mut self) -> Option<Partial> {
        let first = self.open.pop_first().map(|(_, partial)| partial);
        // The stream is over for every call still open; the first one is the one reported.
        self.open.clear();
        self.by_item.clear();
        self.by_index.clear();
        first
    }

    /// Ends the stream: an error if a call was opened and never completed.
    pub fn finish(mut self) -> Result<(), StreamError> {
        match self.first_open() {
            Some(partial) => Err(StreamError::Truncated {
                reason: "end of stream".to_owned(),
                call_id: partial.call_id,
                name: partial.name,
                partial: partial.arguments,
            }),
            None => Ok(()),
        }
    }

    /// All calls of a whole stream, in completion order.
    pub fn collect<'a>(
        names: &NameMap,
        events: impl IntoIterator<Item = &'a Value>,
    ) -> Result<Vec<ToolCall>, StreamError> {
        stream::collect(Stream::new(names), events, Stream::push, Stream::finish)
    }
}

/// How an event names its item, for error messages.
fn describe(item_id: Option<&str>, output_index: Option<u64>) -> String {
    match (item_id, output_index) {
        (Some(id), Some(index)) => format!("item {id:?} at output_index {index}"),
        (Some(id), None) => format!("item {id:?}"),
        (None, Some(index)) => format!("the item at output_index {index}"),
        (None, None) => "an unnamed item".to_owned(),
    }
}

fn truncated(reason: &str, partial: Option<Partial>, item: &Item) -> StreamError {
    let (call_id, name, partial) = match partial {
        Some(p) => (p.call_id, p.name, p.arguments),
        None => (
            item.call_id.clone().unwrap_or_default(),
            item.name.clone().unwrap_or_default(),
            item.arguments.clone().unwrap_or_default(),
        ),
    };
    StreamError::Truncated {
        reason: reason.to_owned(),
        call_id,
        name,
        partial,
    }
}

/// A whole response as an assistant [`Turn`]: the text of its `message` items, its
/// `function_call` calls, its token usage, and its `output` items kept as sent
/// ([`Provider::OpenAiResponses`]) so that [`request`] sends reasoning items (with their
/// `encrypted_content`) back unchanged.
pub fn parse_turn(body: &Value, names: &NameMap) -> Result<Turn, ParseError> {
    let calls = parse_response(body, names)?;
    let output = body.get("output").and_then(Value::as_array);
    let mut text: Option<String> = None;
    for item in output.into_iter().flatten() {
        if item["type"] != "message" {
            continue;
        }
        for part in item["content"].as_array().into_iter().flatten() {
            if part["type"] == "output_text"
                && let Some(more) = part["text"].as_str()
            {
                text.get_or_insert_with(String::new).push_str(more);
            }
        }
    }
    let usage = |key: &str| body["usage"][key].as_u64().unwrap_or(0);
    Ok(Turn {
        text,
        calls,
        usage: Usage {
            input_tokens: usage("input_tokens"),
            output_tokens: usage("output_tokens"),
        },
        provider: output.map(|items| {
            ProviderState::new(Provider::OpenAiResponses, Value::Array(items.clone()))
        }),
    })
}

/// The body of the next Responses request: `instructions`, the `input` items of `transcript`
/// and the `tools`, over `options`' settings (`model`, `tool_choice`, `store`, `include`, …).
///
/// A user's words are a `user` message. An assistant turn read by [`parse_turn`] or
/// [`Stream::provider_state`] is sent back as its output items, unchanged (reasoning items
/// keep their `encrypted_content`, which a request with `store: false` needs); any other is
/// an `assistant` message with its text, when it has one, and a `function_call` item per
/// call. Each result is a `function_call_output` for its `call_id`, in call order; the API has
/// no error flag, so a failure is written `code: message`.
pub fn request(
    transcript: &[crate::model::Message],
    tools: &Advertised,
    options: &RequestOptions,
) -> Result<Value, RequestError> {
    let mut body = Body::new(options, tools, "OpenAI Responses", |t| {
        matches!(t, Target::OpenAiResponses | Target::OpenAiResponsesStrict)
    })?;
    let mut input: Vec<Value> = Vec::new();
    for entry in entries(transcript)? {
        match entry {
            Entry::User(text, _) => input.push(json!({"role": "user", "content": text})),
            Entry::Assistant {
                turn,
                text,
                calls,
                state,
            } => match Entry::state_for(state, Provider::OpenAiResponses) {
                Some(content) => {
                    let items = content
                        .as_array()
                        .ok_or_else(|| bad_state(turn, "is not a list of output items"))?;
                    let ids = items
                        .iter()
                        .filter(|i| i["type"] == "function_call")
                        .map(|i| i["call_id"].as_str());
                    check_ids(turn, ids, calls, "function_call items")?;
                    input.extend(items.iter().cloned());
                }
                None => {
                    if let Some(text) = text {
                        input.push(json!({"role": "assistant", "content": text}));
                    }
                    for call in calls {
                        input.push(json!({
                            "type": "function_call",
                            "call_id": call.wire_id(),
                            "name": call.provider_name(),
                            "arguments": call.arguments_text(),
                        }));
                    }
                }
            },
            Entry::Results(pairs) => {
                for (call, result) in pairs {
                    input.push(json!({
                        "type": "function_call_output",
                        "call_id": call.wire_id(),
                        "output": WireResult::transcript(result).text(),
                    }));
                }
            }
        }
    }
    if let Some(system) = options.system_prompt() {
        body.put("instructions", Value::from(system))?;
    }
    body.put("input", Value::Array(input))?;
    body.tools(tools)?;
    Ok(body.finish())
}

/// OpenAI Responses as a [`WireFormat`] (`POST {base}/responses`). Key from `OPENAI_API_KEY`,
/// sent as `Authorization: Bearer`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Format;

impl WireFormat for Format {
    fn name(&self) -> &str {
        "OpenAI Responses"
    }

    fn default_target(&self) -> Target {
        Target::OpenAiResponses
    }

    super::format::module_format!();

    fn results(&self, calls: &[ToolCall], outcomes: &[Outcome]) -> Result<Value, EncodeError> {
        output_items(calls, outcomes).map(Value::Array)
    }

    fn default_base_url(&self) -> &str {
        "https://api.openai.com/v1"
    }

    fn key_variable(&self) -> &str {
        "OPENAI_API_KEY"
    }

    fn path(&self, _model: &str, _stream: bool) -> String {
        "/responses".to_owned()
    }

    fn headers(&self, key: Option<&str>) -> Vec<(&'static str, String)> {
        super::openai_chat::bearer(key)
    }

    fn complete_body(&self, body: &mut Map<String, Value>, model: &str, stream: bool) {
        default(body, "model", Value::from(model));
        body.insert("stream".to_owned(), Value::Bool(stream));
    }

    fn forbid_calls(&self, body: &mut Map<String, Value>) {
        body.insert("tool_choice".to_owned(), Value::from("none"));
    }
}

impl ProviderStream for Stream {
    super::format::module_stream!();

    fn provider_state(&self) -> Option<ProviderState> {
        Stream::provider_state(self)
    }

    fn meta(
        &mut self,
        event: &Value,
        usage: &mut Usage,
        ended: &mut bool,
    ) -> Result<(), StreamError> {
        match event["type"].as_str().unwrap_or_default() {
            // `{"type": "error", "code", "message"}`: refused here; a passing one `push` reports.
            "error" => match refused(&event["code"], &event["message"]) {
                Some(error) => Err(error),
                None => Ok(()),
            },
            "response.failed" => {
                let error = &event["response"]["error"];
                if let Some(refused) = refused(&error["code"], &error["message"]) {
                    return Err(refused);
                }
                let message = error["message"]
                    .as_str()
                    .or(error["code"].as_str())
                    .unwrap_or("the response failed");
                Err(StreamError::Provider {
                    message: message.to_owned(),
                })
            }
            "response.completed" | "response.incomplete" => {
                *ended = true;
                let counts = &event["response"]["usage"];
                *usage = Usage {
                    input_tokens: counts["input_tokens"].as_u64().unwrap_or(0),
                    output_tokens: counts["output_tokens"].as_u64().unwrap_or(0),
                };
                Ok(())
            }
            _ => Ok(()),
        }
    }
}
