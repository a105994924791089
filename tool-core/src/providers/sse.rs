//! Server-sent events framing (`text/event-stream`), fed bytes as they arrive.
//!
//! Follows the WHATWG rules a provider stream needs: lines end with `\n`, `\r\n` or `\r`;
//! `event:` names the event, `data:` lines are joined with `\n`, a line starting with `:` is a
//! comment, one space after the colon is dropped, and a blank line dispatches the event. A
//! last event not followed by a blank line is dispatched by [`SseDecoder::finish`]. Memory
//! holds one unfinished line and one unfinished event; work is linear in the bytes fed.

use serde_json::Value;

/// One event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field, if any (`response.output_item.added`, `content_block_delta`).
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

impl SseEvent {
    /// Whether this is OpenAI's end-of-stream marker, `data: [DONE]`.
    pub fn is_done(&self) -> bool {
        self.data.trim() == "[DONE]"
    }

    /// The data parsed as JSON; `None` for `[DONE]`.
    pub fn json(&self) -> Option<Result<Value, serde_json::Error>> {
        if self.is_done() {
            None
        } else {
            Some(serde_json::from_str(&self.data))
        }
    }
}

/// An incremental SSE parser.
///
/// ```
/// use tool_core::providers::SseDecoder;
///
/// let mut decoder = SseDecoder::new();
/// let mut events = decoder.push(b"event: ping\ndata: {\"type\"");
/// assert!(events.is_empty()); // the event is not finished
/// events.extend(decoder.push(b": \"ping\"}\n\ndata: [DONE]"));
/// events.extend(decoder.finish()); // the last event had no blank line after it
/// assert_eq!(events[0].event.as_deref(), Some("ping"));
/// assert_eq!(events[0].data, r#"{"type": "ping"}"#);
/// assert!(events[1].is_done());
/// ```
#[derive(Debug, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    after_cr: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        SseDecoder::default()
    }

    /// Feeds bytes; returns the events they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        for &byte in bytes {
            match byte {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\n' | b'\r' => {
                    self.after_cr = byte == b'\r';
                    let line = std::mem::take(&mut self.line);
                    if let Some(event) = self.line_done(&line) {
                        events.push(event);
                    }
                }
                _ => {
                    self.after_cr = false;
                    self.line.push(byte);
                }
            }
        }
        events
    }

    /// Ends the stream: the unfinished line and event, if any.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let line = std::mem::take(&mut self.line);
        let from_line = if line.is_empty() {
            None
        } else {
            self.line_done(&line)
        };
        from_line.or_else(|| self.dispatch())
    }

    fn line_done(&mut self, line: &[u8]) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        let line = String::from_utf8_lossy(line);
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        })
    }
}

/// Every event of a complete SSE body.
pub fn sse_events(body: &str) -> Vec<SseEvent> {
    let mut decoder = SseDecoder::new();
    let mut events = decoder.push(body.as_bytes());
    events.extend(decoder.finish());
    events
}

/// Every JSON value of a body holding one JSON event per line (the `data:` payloads without
/// the SSE framing); blank lines are skipped, `[DONE]` ends it.
pub fn json_lines(body: &str) -> Result<Vec<Value>, serde_json::Error> {
    let mut values = Vec::new();
    for line in body.lines().map(str::trim).filter(|line| !line.is_empty()) {
        if line == "[DONE]" {
            break;
        }
        values.push(serde_json::from_str(line)?);
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_events_across_any_split() {
        let body = "event: a\r\ndata: 1\r\ndata: 2\r\n\r\n: comment\n\ndata:3\n\ndata: 4";
        let whole = sse_events(body);
        assert_eq!(whole.len(), 3);
        assert_eq!(whole[0].data, "1\n2");
        assert_eq!(whole[1].data, "3");
        assert_eq!(whole[2].data, "4");
        for split in 0..body.len() {
            let mut decoder = SseDecoder::new();
            let mut events = decoder.push(&body.as_bytes()[..split]);
            events.extend(decoder.push(&body.as_bytes()[split..]));
            events.extend(decoder.finish());
            assert_eq!(events, whole, "split at {split}");
        }
    }
}
