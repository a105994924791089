//! Tool calls out of a streamed Gemini response: whole `functionCall` parts, and Vertex's
//! `partialArgs` (a JSONPath and a typed value each) filling a call's arguments.

use super::*;

#[derive(Debug)]
struct Open {
    id: Option<String>,
    name: String,
    signature: Option<String>,
    args: Value,
    continuing: HashSet<String>,
    bytes: usize,
}

/// Tool calls out of a streamed response. A whole `functionCall` (Gemini Developer API) is a
/// call at once. With Vertex's `streamFunctionCallArguments`, `{name, willContinue: true}`
/// opens a call, `partialArgs` entries (JSONPath, typed value, `willContinue` to concatenate
/// strings) fill its arguments, and a `functionCall` with nothing more to say closes it.
///
/// A `partialArgs` path may be at most [`MAX_DEPTH`] segments long, so the arguments built
/// are never nested deeper than the runtime's parser accepts; a longer path ends the stream
/// with [`StreamError::Protocol`].
#[derive(Debug)]
pub struct Stream {
    names: NameMap,
    caps: Caps,
    open: Option<Open>,
    text: String,
    parts: Vec<Value>,
    state_lost: bool,
}

impl Stream {
    /// An accumulator decoding names with `names`, capping each call at
    /// [`DEFAULT_MAX_CALL_BYTES`](crate::providers::DEFAULT_MAX_CALL_BYTES).
    pub fn new(names: &NameMap) -> Self {
        Stream {
            names: names.clone(),
            caps: Caps::default(),
            open: None,
            text: String::new(),
            parts: Vec::new(),
            state_lost: false,
        }
    }

    stream::caps_builders!("streamed arguments (the values and paths of its `partialArgs`)");

    /// The answer text so far (thought parts are not included).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The model turn's parts so far, in order, for the next request: text and thought parts
    /// as sent (each with its `thoughtSignature`; empty text without one left out), each
    /// completed call as one whole `functionCall` part with its signature; `None` before the
    /// first part, or when the turn has more than [`MAX_STATE_ITEMS`] parts. Store it with the
    /// assistant turn ([`Turn::provider`]) so that [`request`] sends it back.
    pub fn provider_state(&self) -> Option<ProviderState> {
        (!self.state_lost && !self.parts.is_empty())
            .then(|| ProviderState::new(Provider::Gemini, Value::Array(self.parts.clone())))
    }

    /// Takes one chunk (a `GenerateContentResponse`); returns the calls it completes. After an
    /// error, drop the stream.
    pub fn push(&mut self, chunk: &Value) -> Result<Vec<ToolCall>, StreamError> {
        self.caps.chunk()?;
        let raw_parts: Vec<Value> = chunk["candidates"]
            .as_array()
            .and_then(|list| list.iter().find(|c| c["index"].as_u64().unwrap_or(0) == 0))
            .and_then(|c| c["content"]["parts"].as_array())
            .cloned()
            .unwrap_or_default();
        let response =
            Response::deserialize(chunk).map_err(|e| StreamError::protocol(e.to_string()))?;
        let Some(candidate) = first_candidate(response) else {
            return Ok(Vec::new());
        };
        let mut done = Vec::new();
        let parts = candidate.content.and_then(|c| c.parts).unwrap_or_default();
        for (i, part) in parts.into_iter().enumerate() {
            let raw = raw_parts.get(i);
            if let Some(call) = part.function_call {
                let whole = call.name.as_ref().is_some_and(|n| !n.is_empty())
                    && call.partial_args.is_none()
                    && call.will_continue != Some(true);
                if let Some(complete) = self.function_call(call, part.thought_signature)? {
                    let part = match raw {
                        Some(raw) if whole => raw.clone(),
                        _ => call_part(&complete),
                    };
                    self.keep(part);
                    done.push(complete);
                }
            } else {
                if let Some(raw) = raw.filter(|raw| worth_sending(raw)) {
                    self.keep(raw.clone());
                }
                if let Some(text) = part.text
                    && part.thought != Some(true)
                {
                    self.text.push_str(&text);
                }
            }
        }
        if let Some(reason) = candidate.finish_reason
            && let Some(open) = self.open.take()
        {
            return Err(truncated(&reason, open));
        }
        Ok(done)
    }

    fn function_call(
        &mut self,
        call: FunctionCall,
        signature: Option<String>,
    ) -> Result<Option<ToolCall>, StreamError> {
        let continues = call.will_continue == Some(true);
        if let Some(name) = call.name.filter(|n| !n.is_empty()) {
            if self.open.is_some() {
                return Err(StreamError::protocol(format!(
                    "call to `{name}` began before the previous call ended"
                )));
            }
            let mut open = Open {
                id: call.id,
                name,
                signature,
                args: call.args.unwrap_or_else(|| Value::Object(Map::new())),
                continuing: HashSet::new(),
                bytes: 0,
            };
            if let Some(entries) = call.partial_args {
                self.apply(&mut open, entries)?;
            }
            if continues {
                self.open = Some(open);
                return Ok(None);
            }
            return Ok(Some(self.close(open)));
        }
        let Some(mut open) = self.open.take() else {
            if call.partial_args.is_some() {
                return Err(StreamError::protocol("partialArgs with no call open"));
            }
            // A closing `functionCall: {}` with nothing open: nothing to do.
            return Ok(None);
        };
        if open.signature.is_none() {
            open.signature = signature;
        }
        if let Some(entries) = call.partial_args {
            self.apply(&mut open, entries)?;
        }
        if continues {
            self.open = Some(open);
            return Ok(None);
        }
        Ok(Some(self.close(open)))
    }

    /// Keeps a part for the provider state, up to [`MAX_STATE_ITEMS`].
    fn keep(&mut self, part: Value) {
        if self.parts.len() >= MAX_STATE_ITEMS {
            self.state_lost = true;
            self.parts.clear();
        } else if !self.state_lost {
            self.parts.push(part);
        }
    }

    fn close(&self, open: Open) -> ToolCall {
        make_call(open.id, &open.name, open.args, open.signature, &self.names)
    }

    fn apply(&self, open: &mut Open, entries: Vec<PartialArg>) -> Result<(), StreamError> {
        for entry in entries {
            let path = entry.json_path.unwrap_or_default();
            let segments = parse_json_path(&path)?;
            let (value, size) = if let Some(text) = entry.string_value {
                let size = text.len();
                (Value::String(text), size)
            } else if let Some(number) = entry.number_value {
                (Value::Number(number), 8)
            } else if let Some(flag) = entry.bool_value {
                (Value::Bool(flag), 5)
            } else if entry.null_value.is_some() {
                (Value::Null, 4)
            } else {
                continue;
            };
            open.bytes += size + path.len();
            self.caps.check(open.bytes, open.id.as_deref())?;
            let append = open.continuing.contains(&path);
            set_at(&mut open.args, &segments, value, append)?;
            if entry.will_continue == Some(true) {
                open.continuing.insert(path);
            } else {
                open.continuing.remove(&path);
            }
        }
        Ok(())
    }

    /// Ends the stream: an error if a call was opened and never closed.
    pub fn finish(mut self) -> Result<(), StreamError> {
        match self.open.take() {
            Some(open) => Err(truncated("end of stream", open)),
            None => Ok(()),
        }
    }

    /// All calls of a whole stream, in order.
    pub fn collect<'a>(
        names: &NameMap,
        chunks: impl IntoIterator<Item = &'a Value>,
    ) -> Result<Vec<ToolCall>, StreamError> {
        stream::collect(Stream::new(names), chunks, Stream::push, Stream::finish)
    }
}

fn truncated(reason: &str, open: Open) -> StreamError {
    StreamError::Truncated {
        reason: reason.to_owned(),
        call_id: open.id.unwrap_or_default(),
        name: open.name,
        partial: open.args.to_string(),
    }
}

#[derive(Debug, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// `$.a.b[0]['c d']` into segments (the RFC 9535 subset Gemini emits), at most
/// [`MAX_DEPTH`] of them: each segment is one level of the value built.
fn parse_json_path(path: &str) -> Result<Vec<Segment>, StreamError> {
    let bad = || StreamError::protocol(format!("unsupported JSONPath {path:?}"));
    let mut rest = path.strip_prefix('$').ok_or_else(bad)?;
    let mut segments = Vec::new();
    while !rest.is_empty() {
        if segments.len() == MAX_DEPTH as usize {
            return Err(StreamError::protocol(format!(
                "partialArgs path nests deeper than {MAX_DEPTH} levels"
            )));
        }
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            if end == 0 {
                return Err(bad());
            }
            segments.push(Segment::Key(after[..end].to_owned()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            if let Some(quoted) = after.strip_prefix('\'').or_else(|| after.strip_prefix('"')) {
                let quote = after.as_bytes()[0] as char;
                let mut key = String::new();
                let mut chars = quoted.char_indices();
                let mut end = None;
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, escaped)) = chars.next() {
                                key.push(escaped);
                            }
                        }
                        c if c == quote => {
                            end = Some(i);
                            break;
                        }
                        c => key.push(c),
                    }
                }
                let end = end.ok_or_else(bad)?;
                rest = quoted[end + 1..].strip_prefix(']').ok_or_else(bad)?;
                segments.push(Segment::Key(key));
            } else {
                let end = after.find(']').ok_or_else(bad)?;
                let index = after[..end].trim().parse().map_err(|_| bad())?;
                segments.push(Segment::Index(index));
                rest = &after[end + 1..];
            }
        } else {
            return Err(bad());
        }
    }
    Ok(segments)
}

/// Puts `value` at `segments` under `root`, creating containers; a string continuation is
/// appended to the string already there.
fn set_at(
    root: &mut Value,
    segments: &[Segment],
    value: Value,
    append: bool,
) -> Result<(), StreamError> {
    let mut node = root;
    for segment in segments {
        node = match segment {
            Segment::Key(key) => {
                if !node.is_object() {
                    *node = Value::Object(Map::new());
                }
                match node {
                    Value::Object(map) => map.entry(key.clone()).or_insert(Value::Null),
                    _ => return Err(changed_type()),
                }
            }
            Segment::Index(index) => {
                if !node.is_array() {
                    *node = Value::Array(Vec::new());
                }
                let Value::Array(items) = node else {
                    return Err(changed_type());
                };
                if *index > items.len() {
                    return Err(StreamError::protocol(format!(
                        "array index {index} skips positions"
                    )));
                }
                if *index == items.len() {
                    items.push(Value::Null);
                }
                &mut items[*index]
            }
        };
    }
    match (node, value) {
        (Value::String(existing), Value::String(more)) if append => existing.push_str(&more),
        (slot, value) => *slot = value,
    }
    Ok(())
}

fn changed_type() -> StreamError {
    StreamError::protocol("argument container changed type")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_json_paths() {
        assert_eq!(
            parse_json_path("$.recipe.ingredients[0]['amount x']").unwrap(),
            [
                Segment::Key("recipe".into()),
                Segment::Key("ingredients".into()),
                Segment::Index(0),
                Segment::Key("amount x".into())
            ]
        );
        assert!(parse_json_path("location").is_err());
        assert!(parse_json_path("$..a").is_err());
        let at_limit = format!("${}", "[0]".repeat(MAX_DEPTH as usize));
        assert_eq!(parse_json_path(&at_limit).unwrap().len(), 127);
        assert!(parse_json_path(&format!("{at_limit}.a")).is_err());
    }

    #[test]
    fn builds_arguments_from_partial_values() {
        let mut root = Value::Object(Map::new());
        let path = parse_json_path("$.a[0].b").unwrap();
        set_at(&mut root, &path, Value::from("Bo"), false).unwrap();
        set_at(&mut root, &path, Value::from("ston"), true).unwrap();
        set_at(
            &mut root,
            &parse_json_path("$.n").unwrap(),
            Value::from(3),
            false,
        )
        .unwrap();
        assert_eq!(root, json!({"a": [{"b": "Boston"}], "n": 3}));
        assert!(
            set_at(
                &mut root,
                &parse_json_path("$.a[5]").unwrap(),
                Value::Null,
                false
            )
            .is_err()
        );
    }
}
