//! What the dialects share: call objects in JSON (or written as Python dicts), their
//! arguments, Markdown fences around a whole reply, and tagged blocks.

use std::ops::Range;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::quick::Quick;
use super::scan::Table;
use super::{Dialect, Seeker, TextCall, TextDialect, TextError, python};
use crate::extract::fence;

/// The labels of a fence that is the whole reply and holds calls: none, `json` or `python`
/// (in any case). A fence in another language holds something else, and is read as text.
pub(crate) const CALL_FENCE_LABELS: &[&str] = &["", "json", "python"];

/// The text inside one Markdown fence that is the whole reply, with its offset; else the text.
pub(crate) fn unfenced(text: &str) -> (&str, usize) {
    fence::whole(text, CALL_FENCE_LABELS).unwrap_or((text, 0))
}

/// xLAM's envelope: an object whose only member is a list of call objects.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    #[serde(borrow)]
    tool_calls: Vec<&'a RawValue>,
}

/// Call objects at `at`: one object, a JSON list of them, or an object whose only member
/// `tool_calls` lists them (xLAM); a Python dict or list of dicts written the same way. Returns
/// them and where they end.
pub(crate) fn json_calls(text: &str, at: usize) -> Result<(Vec<TextCall>, usize), TextError> {
    match plain_json_calls(text, at) {
        Some(found) => Ok(found),
        None => json_calls_in_full(text, at),
    }
}

/// [`json_calls`] for every shape, with the reason when the text holds no calls.
fn json_calls_in_full(text: &str, at: usize) -> Result<(Vec<TextCall>, usize), TextError> {
    let (raw, end) = match json_value(text, at) {
        Ok(found) => found,
        Err(error @ TextError::Invalid { .. }) => {
            return python_calls(text, at).ok_or(error);
        }
        Err(error) => return Err(error),
    };
    if may_be_envelope(raw)
        && let Ok(envelope) = serde_json::from_str::<Envelope<'_>>(raw)
    {
        let calls = envelope
            .tool_calls
            .into_iter()
            .map(|item| call_object(item.get(), at..end))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok((calls, end));
    }
    let calls = match raw.trim_start().as_bytes().first() {
        Some(b'[') => {
            let items: Vec<&RawValue> =
                serde_json::from_str(raw).map_err(|error| TextError::Invalid {
                    at,
                    reason: format!("not a list of call objects: {error}"),
                })?;
            items
                .into_iter()
                .map(|item| call_object(item.get(), at..end))
                .collect::<Result<Vec<_>, _>>()?
        }
        _ => vec![call_object(raw, at..end)?],
    };
    Ok((calls, end))
}

/// [`json_calls`] in one pass, for the commonest shapes: one call object, or a list of them,
/// each with a string `name` and `arguments` or `parameters` (not both) that is a JSON object
/// or a string holding one. Anything else (an envelope, an error, a Python literal) is `None`,
/// and read as before, which reads every shape this one does to the same calls.
fn plain_json_calls(text: &str, at: usize) -> Option<(Vec<TextCall>, usize)> {
    quick_json_calls(text, at).or_else(|| serde_json_calls(text, at))
}

/// [`plain_json_calls`] without serde_json, for call objects of plain JSON (see
/// [`quick`](super::quick)); `None` leaves the text to serde_json.
fn quick_json_calls(text: &str, at: usize) -> Option<(Vec<TextCall>, usize)> {
    let mut quick = Quick::new(text, at);
    quick.space();
    let mut calls = Vec::new();
    quick.calls(|call| {
        calls.push(TextCall {
            name: text[call.name].to_owned(),
            arguments: arguments_text(&text[call.arguments]).ok()?,
            positional: Vec::new(),
            // Set below, when the end is known.
            span: at..at,
        });
        Some(())
    })?;
    let end = quick.at();
    for call in &mut calls {
        call.span.end = end;
    }
    Some((calls, end))
}

/// [`plain_json_calls`] by serde_json.
fn serde_json_calls(text: &str, at: usize) -> Option<(Vec<TextCall>, usize)> {
    let rest = text.get(at..)?;
    let lead = rest.len() - rest.trim_start_matches([' ', '\t', '\n', '\r']).len();
    let mut stream =
        serde_json::Deserializer::from_str(&rest[lead..]).into_iter::<PlainCalls<'_>>();
    let PlainCalls(objects) = stream.next()?.ok()?;
    let end = at + lead + stream.byte_offset();
    let calls = objects
        .into_iter()
        .map(|object| {
            let arguments = object.arguments_text().ok()?;
            Some(TextCall {
                name: object.name,
                arguments,
                positional: Vec::new(),
                span: at..end,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some((calls, end))
}

/// The call objects of [`plain_json_calls`]: one, or a list of them.
struct PlainCalls<'a>(Vec<CallObject<'a>>);

impl<'de> Deserialize<'de> for PlainCalls<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_any(PlainCallsVisitor)
    }
}

struct PlainCallsVisitor;

impl<'de> serde::de::Visitor<'de> for PlainCallsVisitor {
    type Value = PlainCalls<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a call object or a list of them")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let object = PlainObject::read(map)?;
        Ok(PlainCalls(vec![object]))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut objects = Vec::new();
        while let Some(PlainObject(object)) = seq.next_element()? {
            objects.push(object);
        }
        Ok(PlainCalls(objects))
    }
}

/// One call object read as [`CallObject`] reads it, refusing a first key that may open an
/// [`Envelope`] (which is read as before).
struct PlainObject<'a>(CallObject<'a>);

impl<'de> PlainObject<'de> {
    fn read<A: serde::de::MapAccess<'de>>(mut map: A) -> Result<CallObject<'de>, A::Error> {
        use serde::de::{Error, IgnoredAny};
        let mut name: Option<String> = None;
        let mut arguments: Option<Option<&'de RawValue>> = None;
        let mut parameters: Option<Option<&'de RawValue>> = None;
        let mut first = true;
        while let Some(key) = map.next_key::<PlainKey>()? {
            // An envelope's only member; any other first key rules one out.
            if first && key == PlainKey::ToolCalls {
                return Err(A::Error::custom("may be an envelope"));
            }
            first = false;
            let slot = match key {
                PlainKey::Name => {
                    if name.replace(map.next_value()?).is_some() {
                        return Err(A::Error::duplicate_field("name"));
                    }
                    continue;
                }
                PlainKey::Arguments => &mut arguments,
                PlainKey::Parameters => &mut parameters,
                PlainKey::ToolCalls | PlainKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if slot.replace(map.next_value()?).is_some() {
                return Err(A::Error::custom("a repeated member"));
            }
        }
        Ok(CallObject {
            name: name.ok_or_else(|| A::Error::missing_field("name"))?,
            arguments: arguments.flatten(),
            parameters: parameters.flatten(),
        })
    }
}

/// The members of a call object that [`PlainObject`] tells apart, read without a copy.
#[derive(PartialEq, Eq)]
enum PlainKey {
    Name,
    Arguments,
    Parameters,
    ToolCalls,
    Other,
}

impl<'de> Deserialize<'de> for PlainKey {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct Key;
        impl serde::de::Visitor<'_> for Key {
            type Value = PlainKey;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }

            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<PlainKey, E> {
                Ok(match key {
                    "name" => PlainKey::Name,
                    "arguments" => PlainKey::Arguments,
                    "parameters" => PlainKey::Parameters,
                    "tool_calls" => PlainKey::ToolCalls,
                    _ => PlainKey::Other,
                })
            }
        }
        de.deserialize_identifier(Key)
    }
}

impl<'de> Deserialize<'de> for PlainObject<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct Object;
        impl<'de> serde::de::Visitor<'de> for Object {
            type Value = CallObject<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a call object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                PlainObject::read(map)
            }
        }
        de.deserialize_map(Object).map(PlainObject)
    }
}

/// Whether the JSON value `raw` may read as an [`Envelope`]: an object whose first key may be
/// `tool_calls`, or a list whose first item is a list (serde reads a struct from a sequence of
/// its fields too). Anything else fails to, and is not tried.
fn may_be_envelope(raw: &str) -> bool {
    let after = |open: usize| raw[open..].trim_start_matches([' ', '\t', '\n', '\r']);
    match raw.as_bytes().first() {
        Some(b'{') => after(1).strip_prefix('"').is_none_or(|key| {
            key.starts_with("tool_calls\"")
                || key.split('"').next().is_some_and(|k| k.contains('\\'))
        }),
        Some(b'[') => after(1).starts_with('['),
        _ => true,
    }
}

/// Call objects written as Python literals at `at` (after whitespace): a dict
/// `{'name': …, 'arguments': {…}}` or a list of them, with nothing in it but literals. `None`
/// when that is not what stands there.
pub(crate) fn python_calls(text: &str, at: usize) -> Option<(Vec<TextCall>, usize)> {
    let mut reader = python::Reader::new(text, at);
    reader.skip_space();
    let start = reader.at();
    if !matches!(text.as_bytes().get(start), Some(b'{' | b'[')) {
        return None;
    }
    let value = reader.value().ok()?;
    let end = reader.at();
    let items = match value {
        Value::Array(items) => items,
        object => vec![object],
    };
    let mut calls = Vec::new();
    for item in items {
        let Value::Object(mut object) = item else {
            return None;
        };
        let name = match object.remove("name") {
            Some(Value::String(name)) => name,
            _ => return None,
        };
        let arguments = match (object.remove("arguments"), object.remove("parameters")) {
            (Some(Value::Object(arguments)), None) | (None, Some(Value::Object(arguments))) => {
                arguments
            }
            _ => return None,
        };
        if !object.is_empty() {
            return None;
        }
        calls.push(TextCall {
            name,
            arguments: object_text(&arguments),
            positional: Vec::new(),
            span: start..end,
        });
    }
    Some((calls, end))
}

/// A JSON object's text, as `Value::Object(map).to_string()` writes it, written to memory
/// directly rather than through `fmt`.
pub(crate) fn object_text(map: &serde_json::Map<String, Value>) -> String {
    // A map of JSON values (string keys, finite numbers) always serializes.
    serde_json::to_string(map).unwrap_or_default()
}

/// One JSON value at `at` (after whitespace), borrowed from `text`, and where it ends.
pub(crate) fn json_value(text: &str, at: usize) -> Result<(&str, usize), TextError> {
    match quick_json_value(text, at) {
        Some(found) => Ok(found),
        None => serde_json_value(text, at),
    }
}

/// [`json_value`] without serde_json, for a value of plain JSON that ends with its own
/// delimiter (as serde_json's stream reads one, with no check of what follows); others are
/// `None`.
fn quick_json_value(text: &str, at: usize) -> Option<(&str, usize)> {
    let mut quick = Quick::new(text, at);
    quick.space();
    let start = quick.at();
    if !matches!(text.as_bytes().get(start), Some(b'{' | b'[' | b'"')) {
        return None;
    }
    quick.value(0)?;
    Some((&text[start..quick.at()], quick.at()))
}

/// [`json_value`] by serde_json.
fn serde_json_value(text: &str, at: usize) -> Result<(&str, usize), TextError> {
    let rest = &text[at..];
    // JSON's own whitespace, as the stream's reader skips it.
    let lead = rest.len() - rest.trim_start_matches([' ', '\t', '\n', '\r']).len();
    let mut stream = serde_json::Deserializer::from_str(&rest[lead..]).into_iter::<&RawValue>();
    match stream.next() {
        Some(Ok(raw)) => Ok((raw.get(), at + lead + stream.byte_offset())),
        Some(Err(error)) if error.is_eof() => Err(TextError::Unterminated {
            at: at + lead,
            reason: "the JSON of the call is cut off".into(),
        }),
        Some(Err(error)) => Err(TextError::Invalid {
            at: at + lead,
            reason: format!("the call is not valid JSON: {error}"),
        }),
        None => Err(TextError::Unterminated {
            at: at + lead,
            reason: "no call where one was announced".into(),
        }),
    }
}

#[derive(Deserialize)]
struct CallObject<'a> {
    name: String,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    parameters: Option<&'a RawValue>,
}

impl CallObject<'_> {
    /// The text of the arguments, given as `arguments` or as `parameters` (not both).
    fn arguments_text(&self) -> Result<String, String> {
        let raw = match (self.arguments, self.parameters) {
            (Some(raw), None) | (None, Some(raw)) => raw,
            (Some(_), Some(_)) => return Err("both `arguments` and `parameters` are given".into()),
            (None, None) => {
                return Err("the call object has no `arguments` or `parameters`".into());
            }
        };
        arguments_text(raw.get())
    }
}

/// A call object `{"name": …, "arguments" | "parameters": …}` (other members are ignored).
pub(crate) fn call_object(raw: &str, span: Range<usize>) -> Result<TextCall, TextError> {
    let invalid = |reason: String| TextError::Invalid {
        at: span.start,
        reason,
    };
    let object: CallObject<'_> = serde_json::from_str(raw)
        .map_err(|error| invalid(format!("not a call object: {error}")))?;
    let arguments = object.arguments_text().map_err(invalid)?;
    Ok(TextCall {
        name: object.name,
        arguments,
        positional: Vec::new(),
        span,
    })
}

/// The arguments as a JSON object text: the object as written, or the object inside a JSON
/// string.
pub(crate) fn arguments_text(raw: &str) -> Result<String, String> {
    let text = raw.trim();
    match text.as_bytes().first() {
        Some(b'{') => Ok(text.to_owned()),
        Some(b'"') => {
            let inner: String = serde_json::from_str(text).map_err(|error| error.to_string())?;
            match inner.trim_start().as_bytes().first() {
                Some(b'{') => {
                    // It must be one whole JSON value.
                    serde_json::from_str::<&RawValue>(&inner).map_err(|error| {
                        format!("the arguments string is not a JSON object: {error}")
                    })?;
                    Ok(inner.trim().to_owned())
                }
                _ => Err("the arguments string does not hold a JSON object".into()),
            }
        }
        _ => Err("the arguments are not a JSON object".into()),
    }
}

/// Blocks opened by any of `opens`, each holding one call object (or a list of them) and
/// closed by `close`; with no `close`, a block ends with its JSON.
pub(crate) fn tagged(
    table: &Table,
    text: &str,
    dialect: Dialect,
    opens: &[&str],
    close: Option<&str>,
    detecting: bool,
) -> Result<(Vec<TextCall>, Vec<Range<usize>>), TextError> {
    let mut calls = Vec::new();
    let mut used = Vec::new();
    let mut seeker = Seeker::new(table, text, dialect);
    let mut from = 0;
    while let Some((start, marker)) = seeker.opener(from)? {
        let body = start + marker.text.len();
        let (mut found_calls, end) = json_calls(text, body)?;
        let mut block_end = end;
        if let Some(close) = close {
            let after = &text[end..];
            let gap = after.len() - after.trim_start().len();
            if after[gap..].starts_with(close) {
                block_end = end + gap + close.len();
            } else if after[gap..].is_empty() || close.starts_with(&after[gap..]) {
                return Err(TextError::Unterminated {
                    at: end,
                    reason: format!("`{close}` is missing"),
                });
            } else if !opens.iter().any(|open| after[gap..].starts_with(open)) {
                return Err(TextError::Invalid {
                    at: end + gap,
                    reason: format!("expected `{close}` after the call"),
                });
            }
        }
        calls.append(&mut found_calls);
        used.push(start..block_end);
        from = block_end;
    }
    seeker.finish(detecting)?;
    Ok((calls, used))
}

/// Whether `name` is written as tool names are: letters, digits, `_`, `-` and `.`.
pub(crate) fn tool_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
}

/// An added dialect's blocks: each opening marker outside quotes starts one, which the
/// dialect reads.
pub(crate) fn blocks(
    table: &Table,
    text: &str,
    dialect: Dialect,
    reader: &dyn TextDialect,
    detecting: bool,
) -> Result<(Vec<TextCall>, Vec<Range<usize>>), TextError> {
    let mut calls = Vec::new();
    let mut used = Vec::new();
    let mut seeker = Seeker::new(table, text, dialect);
    let mut from = 0;
    while let Some((start, seen)) = seeker.opener(from)? {
        let end = start + seen.text.len();
        let Some(marker) = seen.marker(table).filter(|_| seen.opens) else {
            // A marker that may stand after all calls is left out of the prose.
            used.push(start..end);
            from = end;
            continue;
        };
        let block = read_block(reader, text, start, marker, true)?.ok_or_else(|| {
            TextError::Unterminated {
                at: text.len(),
                reason: format!("the block `{}` opens is cut off", marker.text()),
            }
        })?;
        calls.extend(block.calls);
        used.push(start..block.end);
        from = block.end;
    }
    seeker.finish(detecting)?;
    Ok((calls, used))
}

/// The block an added dialect reads at `start`, checked: it ends after its opening marker
/// and within the text, and its calls lie within it, so a faulty dialect cannot stall the
/// readers or make them slice out of bounds.
pub(crate) fn read_block(
    reader: &dyn TextDialect,
    text: &str,
    start: usize,
    marker: &crate::text_calls::Marker,
    complete: bool,
) -> Result<Option<crate::text_calls::Block>, TextError> {
    let Some(block) = reader.read_block(text, start, marker, complete)? else {
        return Ok(None);
    };
    let fits = |range: &Range<usize>| {
        range.start >= start
            && range.start <= range.end
            && range.end <= block.end
            && text.is_char_boundary(range.start)
            && text.is_char_boundary(range.end)
    };
    if block.end <= start
        || block.end > text.len()
        || !text.is_char_boundary(block.end)
        || !block.calls.iter().all(|call| fits(&call.span()))
    {
        return Err(TextError::Invalid {
            at: start,
            reason: format!(
                "the dialect `{}` read a block that is not within the text after its marker",
                reader.name()
            ),
        });
    }
    Ok(Some(block))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass reading gives what the full one gives, or leaves the text to it.
    #[test]
    fn plain_calls_read_as_the_full_reading_does() {
        let plain = [
            r#"{"name": "f", "arguments": {"a": 1}}"#,
            r#"  {"name": "f", "parameters": {"a": [1, {"b": "}"}]}, "id": 7} tail"#,
            r#"[{"name": "f", "arguments": {}}, {"arguments": "{\"x\": 2}", "name": "g"}]"#,
            r#"[]"#,
            r#"{"na\u006de": "f", "arguments": {"a": 1}}"#,
            r#"{"name": "f", "arguments": null, "parameters": {"a": 1}}"#,
            r#"{"name": "f\n", "arguments": {"a": "\u00e9"}}"#,
        ];
        let left_to_the_full_reading = [
            r#"{"tool_calls": [{"name": "f", "arguments": {}}]}"#,
            r#"[[{"name": "f", "arguments": {}}]]"#,
            r#"{"name": "f", "arguments": {}, "parameters": {}}"#,
            r#"{"name": "f", "name": "g", "arguments": {}}"#,
            r#"{"name": "f", "arguments": {}, "arguments": {}}"#,
            r#"{"name": 1, "arguments": {}}"#,
            r#"{"arguments": {}}"#,
            r#"{"name": "f"}"#,
            r#"{"name": "f", "arguments": [1]}"#,
            r#"{"name": "f", "arguments": "not json"}"#,
            r#"[{"name": "f", "arguments": {}}, 3]"#,
            r#"{"name": "f", "arguments": {"a": 1}"#,
            r#"{'name': 'f', 'arguments': {'a': 1}}"#,
            r#"{}"#,
            "7",
            "",
        ];
        for text in plain {
            assert!(plain_json_calls(text, 0).is_some(), "{text}");
            assert_eq!(
                format!("{:?}", json_calls(text, 0)),
                format!("{:?}", json_calls_in_full(text, 0)),
                "{text}"
            );
        }
        for text in left_to_the_full_reading {
            assert!(plain_json_calls(text, 0).is_none(), "{text}");
        }
    }

    /// Where the reading without serde_json answers, serde_json's reading answers the same.
    fn quick_agrees(text: &str) {
        if let Some(quick) = quick_json_calls(text, 0) {
            assert_eq!(Some(quick), serde_json_calls(text, 0), "calls in {text:?}");
        }
        if let Some(quick) = quick_json_value(text, 0) {
            assert_eq!(
                format!("{:?}", Ok::<_, TextError>(quick)),
                format!("{:?}", serde_json_value(text, 0)),
                "value in {text:?}"
            );
        }
    }

    #[test]
    fn the_quick_reading_gives_serde_jsons_answers() {
        let answered = [
            r#"{"name": "f", "arguments": {"a": 1}}"#,
            r#" [ {"name":"f","arguments":{}} , {"parameters":"{\"x\": [1, 2.5e-3]}","name":"g"} ] x"#,
            r#"{"id": {"tool_calls": []}, "name": "f", "arguments": null, "parameters": {"a": "\u00e9\n"}}"#,
            r#"{"name": "é", "arguments": {"a": [true, false, null, -0, 0.0, 1E+2, "\/"]}}"#,
            r#"{"name": "f", "arguments": {"a": 1}} {"name": "g", "arguments": {}}"#,
            r#"{"name": "f", "x": [1e400, -123456789012345678901234567890], "arguments": {"a": 1E-400}}"#,
            "[]",
        ];
        let left_to_serde_json = [
            r#"{"name": "f", "arguments": {"a": "\ud83d\ude00"}}"#,
            r#"{"name": "f\n", "arguments": {}}"#,
            r#"{"name": "f", "arguments": {"a": 01}}"#,
            r#"{"name": "f", "arguments": {"a": 1.}}"#,
            r#"{"name": "f", "arguments": {"a": 1e}}"#,
            r#"{"name": "f", "arguments": {"a": -}}"#,
            r#"{"name": "f", "arguments": {"a": 1,}}"#,
            r#"{"name": "f", "arguments": {"a": [1,]}}"#,
            "{\"name\": \"f\", \"arguments\": {\"a\": \"\u{1}\"}}",
            r#"{"name": "f", "arguments": {"a": "\x"}}"#,
            r#"{"name": "f", "arguments": {"a": nul}}"#,
            r#"{"name": "f", "arguments": {}, "parameters": {}}"#,
            r#"{"tool_calls": [{"name": "f", "arguments": {}}]}"#,
            r#"{"tool_calls": [], "name": "f", "arguments": {}}"#,
            r#"{"name": "f", "arguments": {"a": 1}"#,
            // Control characters where eight bytes are passed over at once.
            "{\"name\": \"f\", \"arguments\": {\"a\": \"xy\tzzzzzzzzzzzz\"}}",
            "{\"name\": \"f\u{1f}gggggggggg\", \"arguments\": {}}",
        ];
        for (texts, quick) in [(&answered[..], true), (&left_to_serde_json[..], false)] {
            for text in texts {
                assert_eq!(quick_json_calls(text, 0).is_some(), quick, "{text}");
                quick_agrees(text);
            }
        }
        let deep = format!(
            "{{\"name\": \"f\", \"arguments\": {{\"a\": {}1{}}}}}",
            "[".repeat(70),
            "]".repeat(70)
        );
        assert!(quick_json_calls(&deep, 0).is_none());
        quick_agrees(&deep);
        // Strings of every length to 20 with a quote, an escape, a control character or
        // non-ASCII text at every place, where bytes are passed over eight at a time.
        for len in 0..20 {
            for at in 0..=len {
                for special in [
                    "\\\"", "\\\\", "\\n", "\u{1}", "\u{1f}", "\t", "é", "\u{7f}", " ",
                ] {
                    let mut value = "x".repeat(len);
                    value.insert_str(at, special);
                    let text =
                        format!(r#"{{"name": "f{value}", "arguments": {{"{value}": "{value}"}}}}"#);
                    quick_agrees(&text);
                    let plain = !special.starts_with(['\\', '\u{1}', '\u{1f}', '\t']);
                    assert_eq!(quick_json_calls(&text, 0).is_some(), plain, "{text:?}");
                }
            }
        }
    }

    mod generated {
        use super::quick_agrees;
        use proptest::prelude::*;

        /// Texts made of JSON's pieces, call objects' keys among them.
        fn pieces() -> impl Strategy<Value = String> {
            crate::json_pieces::json_pieces(
                &[
                    "\"name\":",
                    "\"arguments\":",
                    "\"parameters\":",
                    "\"tool_calls\":",
                    "\"f\"",
                    "\"{\\\"a\\\": 1}\"",
                ],
                28,
            )
        }

        /// Call objects and lists of them, written out, with values of any shape.
        fn calls() -> impl Strategy<Value = String> {
            let leaf = prop_oneof![
                Just("null".to_owned()),
                Just("false".to_owned()),
                any::<i64>().prop_map(|n| n.to_string()),
                any::<f64>()
                    .prop_filter("finite", |f| f.is_finite())
                    .prop_map(|f| f.to_string()),
                any::<String>().prop_map(|s| serde_json::to_string(&s).unwrap_or_default()),
            ];
            let value = crate::json_pieces::json_values(leaf);
            let key = prop_oneof![
                Just("name"),
                Just("arguments"),
                Just("parameters"),
                Just("tool_calls"),
                Just("id")
            ];
            let object = proptest::collection::vec((key, value), 0..4).prop_map(|members| {
                let members: Vec<String> = members
                    .into_iter()
                    .map(|(key, value)| format!("\"{key}\" : {value}"))
                    .collect();
                format!("{{{}}}", members.join(" ,"))
            });
            prop_oneof![
                object.clone(),
                proptest::collection::vec(object, 0..3)
                    .prop_map(|items| format!("[{}]", items.join(", "))),
            ]
        }

        /// Well-formed calls: a string name and object arguments, perhaps with other members.
        fn good_calls() -> impl Strategy<Value = String> {
            (
                "[a-z_\\\\\"é]{1,6}",
                proptest::collection::vec(("[a-c]{1,2}", "[0-9a-z\\\\\" ]{0,8}"), 0..4),
                any::<bool>(),
            )
                .prop_map(|(name, members, as_string)| {
                    let arguments: serde_json::Map<String, serde_json::Value> = members
                        .into_iter()
                        .map(|(key, value)| (key, serde_json::Value::String(value)))
                        .collect();
                    let arguments = serde_json::to_string(&arguments).unwrap_or_default();
                    let arguments = if as_string {
                        serde_json::to_string(&arguments).unwrap_or_default()
                    } else {
                        arguments
                    };
                    let name = serde_json::to_string(&name).unwrap_or_default();
                    format!(r#"{{"name": {name}, "arguments": {arguments}}}"#)
                })
        }

        proptest! {
            #[test]
            fn on_any_text(text in pieces()) {
                quick_agrees(&text);
            }

            #[test]
            fn on_call_objects(text in calls()) {
                quick_agrees(&text);
            }

            #[test]
            fn on_call_objects_cut_short(text in good_calls(), cut in any::<prop::sample::Index>()) {
                let mut end = cut.index(text.len() + 1);
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                quick_agrees(&text[..end]);
            }

            #[test]
            fn on_well_formed_calls(text in good_calls()) {
                quick_agrees(&text);
                prop_assert!(super::serde_json_calls(&text, 0).is_some());
                // A name without escapes is read without serde_json.
                let escaped = text.split("\"arguments\"").next().is_some_and(|name| name.contains('\\'));
                prop_assert!(escaped || super::quick_json_calls(&text, 0).is_some(), "{}", text);
            }
        }
    }
}
