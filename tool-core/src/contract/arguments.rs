//! A proposed call's arguments as they arrive: text or an already-parsed value.

use std::io;

use serde_json::Value;

/// A proposed call's arguments: JSON text (OpenAI sends a string) or an already-parsed JSON
/// value (Anthropic, Gemini and MCP send an object).
#[derive(Debug, Clone, Copy)]
pub enum Arguments<'a> {
    /// JSON text, parsed strictly.
    Text(&'a str),
    /// A parsed value. One that nests objects and arrays deeper than
    /// [`MAX_DEPTH`](crate::contract::MAX_DEPTH) is refused with `invalid_arguments` before anything
    /// walks it, as the parser refuses text nested that deep.
    Json(&'a Value),
}

impl<'a> From<&'a str> for Arguments<'a> {
    fn from(raw: &'a str) -> Self {
        Arguments::Text(raw)
    }
}

impl<'a> From<&'a String> for Arguments<'a> {
    fn from(raw: &'a String) -> Self {
        Arguments::Text(raw)
    }
}

impl<'a> From<&'a Value> for Arguments<'a> {
    fn from(value: &'a Value) -> Self {
        Arguments::Json(value)
    }
}

impl Arguments<'_> {
    /// The length as JSON text, counted up to just past `limit`.
    pub(crate) fn len_up_to(self, limit: usize) -> usize {
        match self {
            Arguments::Text(raw) => raw.len(),
            Arguments::Json(value) => json_len(value, limit),
        }
    }

    pub(crate) fn to_value(self) -> Value {
        match self {
            Arguments::Json(value) => value.clone(),
            // Already validated, so this parses; keep the text if it somehow does not.
            Arguments::Text(raw) => {
                serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))
            }
        }
    }
}

/// Whether `value` nests objects and arrays more than `limit` deep. Found without recursion,
/// holding one iterator per level, at most `limit` of them.
pub(crate) fn deeper_than(value: &Value, limit: u32) -> bool {
    enum Children<'a> {
        Items(std::slice::Iter<'a, Value>),
        Values(serde_json::map::Values<'a>),
    }
    fn children(value: &Value) -> Option<Children<'_>> {
        match value {
            Value::Array(items) => Some(Children::Items(items.iter())),
            Value::Object(map) => Some(Children::Values(map.values())),
            _ => None,
        }
    }
    let mut levels: Vec<Children<'_>> = children(value).into_iter().collect();
    while let Some(level) = levels.last_mut() {
        let next = match level {
            Children::Items(items) => items.next(),
            Children::Values(values) => values.next(),
        };
        match next {
            Some(child) => {
                if let Some(grandchildren) = children(child) {
                    if levels.len() >= limit as usize {
                        return true;
                    }
                    levels.push(grandchildren);
                }
            }
            None => {
                levels.pop();
            }
        }
    }
    false
}

/// The length of `value` as compact JSON text, counted up to just past `limit`.
pub(crate) fn json_len(value: &Value, limit: usize) -> usize {
    struct Counter {
        bytes: usize,
        limit: usize,
    }
    impl io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.bytes += buf.len();
            if self.bytes > self.limit {
                Err(io::Error::other("over the limit"))
            } else {
                Ok(buf.len())
            }
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter { bytes: 0, limit };
    let _ = serde_json::to_writer(&mut counter, value);
    counter.bytes
}
