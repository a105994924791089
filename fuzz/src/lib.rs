//! What the fuzz targets share: the layout of a provider target's input, splitting text at
//! fuzzer-chosen points, the four streaming accumulators behind one trait, and the checks
//! that a streamed call is the call the whole response holds.
//!
//! Every target panics only on purpose: a panic is a finding. A target returns early on
//! input it cannot use (text that is not UTF-8 where the entry point takes `&str`).

use serde_json::Value;
use tool_core::providers::{NameMap, NameRule, SseDecoder, SseEvent, StreamError, anthropic, gemini, openai_chat, openai_responses};
use tool_core::{CallArguments, ToolCall};

/// The largest input a target looks at. libFuzzer's `-max_len` keeps inputs below this
/// anyway; the cap keeps a hand-fed input from running for minutes.
pub const MAX_INPUT: usize = 1 << 16;

/// The input of a provider target:
///
/// | bytes | meaning |
/// |---|---|
/// | `0` | the mode: `mode % 3` is 0 for a whole response (JSON), 1 for an SSE body, 2 for JSON lines; bit 2 caps each call at 64 bytes; bits 3-7 are for the target |
/// | `1` | `n`: the number of split lengths that follow (`n % 16`) |
/// | `2..2 + n` | split lengths (0 counts as 1), used in turn to cut the body or an argument text into chunks |
/// | the rest | the body |
///
/// `make-seeds.py` writes the provider fixtures in this layout.
#[derive(Debug)]
pub struct Input<'a> {
    /// Byte 0.
    pub flags: u8,
    /// The split lengths, each at least 1.
    pub splits: Vec<usize>,
    /// Everything after the header.
    pub body: &'a [u8],
}

/// What a provider target does with the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The body is one whole response.
    Whole,
    /// The body is an SSE stream, fed to [`SseDecoder`] in chunks.
    Sse,
    /// The body holds one JSON event per line.
    Lines,
}

impl<'a> Input<'a> {
    /// Reads the header; a short input has no splits and an empty body.
    pub fn parse(data: &'a [u8]) -> Input<'a> {
        let data = &data[..data.len().min(MAX_INPUT)];
        let flags = data.first().copied().unwrap_or(0);
        let count = data.get(1).map_or(0, |n| usize::from(n % 16));
        let header = (2 + count).min(data.len());
        let splits = data
            .get(2..header)
            .unwrap_or_default()
            .iter()
            .map(|&b| usize::from(b).max(1))
            .collect();
        Input {
            flags,
            splits,
            body: data.get(header..).unwrap_or_default(),
        }
    }

    /// The mode, from byte 0.
    pub fn mode(&self) -> Mode {
        match self.flags % 3 {
            0 => Mode::Whole,
            1 => Mode::Sse,
            _ => Mode::Lines,
        }
    }

    /// The per-call byte cap the accumulators get: tiny when bit 2 is set, so that the
    /// over-cap paths run too.
    pub fn max_call_bytes(&self) -> usize {
        if self.flags & 4 != 0 {
            64
        } else {
            tool_core::providers::DEFAULT_MAX_CALL_BYTES
        }
    }

    /// Bit `bit` (3 to 7) of byte 0.
    pub fn flag(&self, bit: u8) -> bool {
        self.flags & (1 << bit) != 0
    }
}

/// `text` cut into pieces of the split lengths, in turn, each cut moved back to a character
/// boundary; one piece when there are no splits. `offset` rotates which length comes first,
/// so that two texts of one input are not cut alike.
pub fn split_str<'t>(text: &'t str, splits: &[usize], offset: usize) -> Vec<&'t str> {
    if splits.is_empty() || text.is_empty() {
        return vec![text];
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut turn = offset;
    while start < text.len() {
        let mut end = (start + splits[turn % splits.len()]).min(text.len());
        turn += 1;
        while !text.is_char_boundary(end) {
            end += 1;
        }
        pieces.push(&text[start..end]);
        start = end;
    }
    pieces
}

/// `bytes` cut into pieces of the split lengths, in turn (cuts may fall inside a UTF-8
/// sequence or a CRLF pair, which is the point).
pub fn split_bytes<'b>(bytes: &'b [u8], splits: &[usize]) -> Vec<&'b [u8]> {
    if splits.is_empty() || bytes.is_empty() {
        return vec![bytes];
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut turn = 0;
    while start < bytes.len() {
        let end = (start + splits[turn % splits.len()]).min(bytes.len());
        turn += 1;
        pieces.push(&bytes[start..end]);
        start = end;
    }
    pieces
}

/// The events of an SSE body fed in the given pieces; asserts they are the events of the
/// body fed at once (the decoder must not depend on where the network cut the bytes).
pub fn sse_events_split(body: &[u8], splits: &[usize]) -> Vec<SseEvent> {
    let mut whole = SseDecoder::new();
    let mut expected = whole.push(body);
    expected.extend(whole.finish());

    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    for piece in split_bytes(body, splits) {
        events.extend(decoder.push(piece));
    }
    events.extend(decoder.finish());
    assert_eq!(
        events, expected,
        "the SSE events depend on where the body was cut"
    );
    // A decoder that has finished starts afresh.
    assert_eq!(decoder.finish(), None, "finish twice yields an event");
    events
}

/// The JSON payloads of SSE events, up to `[DONE]`; events whose data is not JSON are
/// skipped, as a client that logs and goes on would.
pub fn event_values(events: &[SseEvent]) -> Vec<Value> {
    let mut values = Vec::new();
    for event in events {
        match event.json() {
            None => break,
            Some(Ok(value)) => values.push(value),
            Some(Err(_)) => {}
        }
    }
    values
}

/// The four streaming accumulators, behind one face.
pub trait Accumulator: Sized {
    /// A fresh accumulator.
    fn start(names: &NameMap, max_call_bytes: usize) -> Self;
    /// One event or chunk.
    fn push(&mut self, event: &Value) -> Result<Vec<ToolCall>, StreamError>;
    /// The end of the stream.
    fn finish(self) -> Result<(), StreamError>;
    /// The text so far.
    fn text(&self) -> &str;
}

macro_rules! accumulator {
    ($($stream:ty),*) => {$(
        impl Accumulator for $stream {
            fn start(names: &NameMap, max_call_bytes: usize) -> Self {
                <$stream>::new(names).max_call_bytes(max_call_bytes)
            }
            fn push(&mut self, event: &Value) -> Result<Vec<ToolCall>, StreamError> {
                <$stream>::push(self, event)
            }
            fn finish(self) -> Result<(), StreamError> {
                <$stream>::finish(self)
            }
            fn text(&self) -> &str {
                <$stream>::text(self)
            }
        }
    )*};
}

accumulator!(
    openai_chat::Stream,
    openai_responses::Stream,
    anthropic::Stream,
    gemini::Stream
);

/// What a stream gave: the calls in order, and the error that ended it, if any.
#[derive(Debug)]
pub struct Streamed {
    /// The calls yielded before the end or the error.
    pub calls: Vec<ToolCall>,
    /// The error from `push` or `finish`.
    pub error: Option<StreamError>,
}

/// Feeds `events` to a fresh accumulator, stopping at the first error as a caller must;
/// checks what every caller relies on: errors render, an over-cap error is `TooLarge`, and no
/// yielded call's text arguments exceed the cap.
pub fn stream<A: Accumulator>(events: &[Value], names: &NameMap, max_call_bytes: usize) -> Streamed {
    let mut accumulator = A::start(names, max_call_bytes);
    let mut calls = Vec::new();
    let mut error = None;
    for event in events {
        match accumulator.push(event) {
            Ok(done) => calls.extend(done),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let _ = accumulator.text().len();
    if error.is_none() {
        error = accumulator.finish().err();
    }
    if let Some(error) = &error {
        let message = error.to_string();
        assert!(!message.is_empty());
        let _ = error.code();
    }
    for call in &calls {
        check_call(call);
        if let CallArguments::Text(text) = call.raw_arguments() {
            assert!(
                text.len() <= max_call_bytes.max(2),
                "a streamed call's arguments ({} bytes) passed the {max_call_bytes}-byte cap",
                text.len()
            );
        }
    }
    Streamed { calls, error }
}

/// What holds for any parsed call: its accessors answer, and the arguments are JSON text or a
/// value.
pub fn check_call(call: &ToolCall) {
    let _ = (call.call_id(), call.name(), call.provider_name());
    let _ = (call.has_provider_id(), call.thought_signature());
    let _ = call.arguments_value();
    let _ = call.arguments();
}

/// Whether a streamed call is the call the whole response holds: same id, names, arguments
/// (as values when both parse, as text otherwise) and thought signature.
pub fn same_call(whole: &ToolCall, streamed: &ToolCall, compare_ids: bool) -> bool {
    let ids = !compare_ids || whole.call_id() == streamed.call_id();
    let arguments = match (whole.arguments_value(), streamed.arguments_value()) {
        (Some(a), Some(b)) => a == b,
        _ => whole.raw_arguments() == streamed.raw_arguments(),
    };
    ids && whole.name() == streamed.name()
        && whole.provider_name() == streamed.provider_name()
        && arguments
        && whole.thought_signature() == streamed.thought_signature()
}

/// Asserts that `streamed` is `whole`, call by call.
pub fn assert_same_calls(whole: &[ToolCall], streamed: &Streamed, compare_ids: bool, what: &str) {
    assert!(
        streamed.error.is_none(),
        "{what}: the stream of a parsed response failed: {:?}\nwhole: {whole:?}",
        streamed.error
    );
    assert_eq!(
        whole.len(),
        streamed.calls.len(),
        "{what}: the stream yields another number of calls\nwhole: {whole:?}\nstreamed: {:?}",
        streamed.calls
    );
    for (a, b) in whole.iter().zip(&streamed.calls) {
        assert!(
            same_call(a, b, compare_ids),
            "{what}: a streamed call differs from the whole one\nwhole: {a:?}\nstreamed: {b:?}"
        );
    }
}

/// A name map with the example tools and a dotted name, so that names are decoded too.
pub fn names(rule: NameRule) -> NameMap {
    NameMap::new(
        rule,
        ["get_weather", "create_invoice", "search_flights", "admin.tools.list"],
    )
    .unwrap_or_default()
}

/// The JSON value of a whole-response body, if it is one.
pub fn json_body(body: &[u8]) -> Option<Value> {
    serde_json::from_slice(body).ok()
}

/// The JSON values of a JSON-lines body, if it is one.
pub fn json_lines(body: &[u8]) -> Option<Vec<Value>> {
    let text = std::str::from_utf8(body).ok()?;
    tool_core::providers::json_lines(text).ok()
}

/// Whether some object in the JSON `text` repeats a key (`serde_json::Value` keeps the last
/// one silently; the strict parse refuses the text). `false` for text that is not JSON.
pub fn has_duplicate_keys(text: &str) -> bool {
    use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
    use std::collections::HashSet;
    use std::fmt;

    struct Walk<'f>(&'f mut bool);

    impl<'de> DeserializeSeed<'de> for Walk<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
            de.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Walk<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while seq.next_element_seed(Walk(&mut *self.0))?.is_some() {}
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut keys = HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if !keys.insert(key) {
                    *self.0 = true;
                }
                map.next_value_seed(Walk(&mut *self.0))?;
            }
            Ok(())
        }
    }

    let mut found = false;
    let mut de = serde_json::Deserializer::from_str(text);
    let _ = Walk(&mut found).deserialize(&mut de);
    found
}

/// The nesting depth of `value` (a scalar is 0), without recursion.
pub fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0)];
    while let Some((value, level)) = stack.pop() {
        deepest = deepest.max(level);
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, level + 1))),
            Value::Object(map) => stack.extend(map.values().map(|v| (v, level + 1))),
            _ => {}
        }
    }
    deepest
}
