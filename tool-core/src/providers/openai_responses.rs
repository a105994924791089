//! OpenAI Responses: `function_call` output items (whole or streamed), results back as
//! `function_call_output` items.
//!
//! The join key is the item's `call_id`, not its `fc_` item `id`. The API has no error flag on
//! a result: a failure is written into the `output` string. A leaked
//! `multi_tool_use.parallel` wrapper (a call named `parallel` whose arguments list other
//! calls) is not expanded: it comes out as the call the model made, so unless a tool of that
//! name was advertised the runtime refuses it as `unknown_tool`. Expanding it would invent
//! call ids the API never issued, which no result could answer.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;
use serde_json::{Value, json};

use super::call::{CallArguments, ParseError, ToolCall};
use super::encode::{EncodeError, failure_text, pair};
use super::names::NameMap;
use super::stream::{self, Caps, StreamError};
use crate::Outcome;

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
    Ok(calls)
}

/// The `function_call_output` input items answering `calls`, one per call in call order.
pub fn output_items(calls: &[ToolCall], outcomes: &[Outcome]) -> Result<Vec<Value>, EncodeError> {
    Ok(pair(calls, outcomes)?
        .into_iter()
        .map(|(call, outcome)| {
            let output = match outcome.result() {
                Ok(output) => output.as_str().to_owned(),
                Err(failure) => failure_text(failure),
            };
            json!({ "type": "function_call_output", "call_id": call.call_id(), "output": output })
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
    call_id: String,
    name: String,
    arguments: String,
    /// When it was opened, counting from 0: a truncated stream names the first call open.
    opened: u64,
}

/// Tool calls out of a streamed response. `response.output_item.added` opens a call;
/// `response.function_call_arguments.delta` events, which name it by `item_id` only, add
/// text; `response.function_call_arguments.done` (whose `arguments` are authoritative) or
/// `response.output_item.done` completes it, and an item that was never added is a whole call
/// by itself. A call the stream never completed is taken from the output of
/// `response.completed`.
#[derive(Debug)]
pub struct Stream {
    names: NameMap,
    caps: Caps,
    open: HashMap<String, Partial>,
    opened: u64,
    done: HashSet<String>,
    text: String,
}

impl Stream {
    /// An accumulator decoding names with `names`, capping each call at
    /// [`DEFAULT_MAX_CALL_BYTES`](super::DEFAULT_MAX_CALL_BYTES).
    pub fn new(names: &NameMap) -> Self {
        Stream {
            names: names.clone(),
            caps: Caps::default(),
            open: HashMap::new(),
            opened: 0,
            done: HashSet::new(),
            text: String::new(),
        }
    }

    /// Caps each call's arguments at `bytes`.
    pub fn max_call_bytes(mut self, bytes: usize) -> Self {
        self.caps.set_max_call_bytes(bytes);
        self
    }

    /// Gives up on the stream (with [`StreamError::TimedOut`]) when a chunk arrives more than
    /// `limit` after the first one. Pair it with a read timeout for a stream that stalls.
    pub fn max_duration(mut self, limit: std::time::Duration) -> Self {
        self.caps.set_max_duration(limit);
        self
    }

    /// The output text received so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Takes one event (the JSON `data`; its `type` says what it is); returns the calls it
    /// completes. After an error, drop the stream.
    pub fn push(&mut self, event: &Value) -> Result<Vec<ToolCall>, StreamError> {
        self.caps.chunk()?;
        let event = Event::deserialize(event).map_err(|e| StreamError::protocol(e.to_string()))?;
        let key =
            |item_id: Option<&String>, output_index: Option<u64>| match (item_id, output_index) {
                (Some(id), _) => id.clone(),
                (None, Some(index)) => format!("#{index}"),
                (None, None) => String::new(),
            };
        match event.kind.as_str() {
            "response.output_item.added" => {
                let Some(item) = event
                    .item
                    .filter(|i| i.kind.as_deref() == Some("function_call"))
                else {
                    return Ok(Vec::new());
                };
                let key = key(item.id.as_ref(), event.output_index);
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
                self.open.insert(
                    key,
                    Partial {
                        call_id,
                        name: item.name.unwrap_or_default(),
                        arguments,
                        opened: self.opened,
                    },
                );
                self.opened += 1;
                Ok(Vec::new())
            }
            "response.function_call_arguments.delta" => {
                let key = key(event.item_id.as_ref(), event.output_index);
                let partial = self.open.get_mut(&key).ok_or_else(|| {
                    StreamError::protocol(format!(
                        "arguments for item {key:?}, which was never added"
                    ))
                })?;
                let delta = event.delta.unwrap_or_default();
                self.caps
                    .append(&mut partial.arguments, &delta, Some(&partial.call_id))?;
                Ok(Vec::new())
            }
            "response.function_call_arguments.done" => {
                let key = key(event.item_id.as_ref(), event.output_index);
                self.complete(&key, event.arguments.as_deref(), None)
            }
            "response.output_item.done" => {
                let Some(item) = event
                    .item
                    .filter(|i| i.kind.as_deref() == Some("function_call"))
                else {
                    return Ok(Vec::new());
                };
                let key = key(item.id.as_ref(), event.output_index);
                if self.done.contains(&key) {
                    return Ok(Vec::new());
                }
                if item.status.as_deref() == Some("incomplete") {
                    let partial = self.open.remove(&key);
                    return Err(truncated("incomplete", partial, &item));
                }
                if !self.open.contains_key(&key) {
                    // Never announced: the item itself is the whole call.
                    let call_id = item.call_id.clone().ok_or_else(|| {
                        StreamError::protocol("a function_call item without call_id")
                    })?;
                    self.open.insert(
                        key.clone(),
                        Partial {
                            call_id,
                            name: item.name.clone().unwrap_or_default(),
                            arguments: String::new(),
                            opened: self.opened,
                        },
                    );
                    self.opened += 1;
                }
                self.complete(&key, item.arguments.as_deref(), item.name.as_deref())
            }
            "response.output_text.delta" => {
                self.text
                    .push_str(event.delta.as_deref().unwrap_or_default());
                Ok(Vec::new())
            }
            "response.incomplete" | "response.failed" => {
                let reason = event.kind.trim_start_matches("response.").to_owned();
                match self.first_open() {
                    Some((_, partial)) => Err(StreamError::Truncated {
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
                    let key = key(item.id.as_ref(), None);
                    if self.done.contains(&key)
                        || item
                            .call_id
                            .as_ref()
                            .is_some_and(|id| self.done.contains(&format!("call:{id}")))
                    {
                        continue;
                    }
                    let (Some(call_id), Some(name)) = (item.call_id, item.name) else {
                        continue;
                    };
                    self.open.remove(&key);
                    self.done.insert(key);
                    self.done.insert(format!("call:{call_id}"));
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

    fn complete(
        &mut self,
        key: &str,
        arguments: Option<&str>,
        name: Option<&str>,
    ) -> Result<Vec<ToolCall>, StreamError> {
        if self.done.contains(key) {
            return Ok(Vec::new());
        }
        let Some(mut partial) = self.open.remove(key) else {
            return Err(StreamError::protocol(format!(
                "item {key:?} completed but never added"
            )));
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
        self.done.insert(key.to_owned());
        self.done.insert(format!("call:{}", partial.call_id));
        Ok(vec![ToolCall::proposed(
            partial.call_id,
            &partial.name,
            CallArguments::openai_text(partial.arguments),
            &self.names,
        )])
    }

    /// Takes out the call opened first among those still open.
    fn first_open(&mut self) -> Option<(String, Partial)> {
        let key = self
            .open
            .iter()
            .min_by_key(|(_, partial)| partial.opened)
            .map(|(key, _)| key.clone())?;
        let first = self.open.remove_entry(&key);
        // The stream is over for every call still open; the first one is the one reported.
        self.open.clear();
        first
    }

    /// Ends the stream: an error if a call was opened and never completed.
    pub fn finish(mut self) -> Result<(), StreamError> {
        match self.first_open() {
            Some((_, partial)) => Err(StreamError::Truncated {
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
