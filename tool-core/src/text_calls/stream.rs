//! Calls read from a reply as it streams in, each one as soon as it is complete.

use std::fmt;
use std::time::Duration;

use super::read::json_calls;
use super::scan::{Scanner, Seen};
use super::{Dialect, Dialects, ParsedCalls, TextCall, TextError, parse_in, scan, stray_marker};
use crate::providers::stream::{Caps, Limits};

/// The default cap on the whole reply: 8 MiB.
pub const DEFAULT_MAX_TEXT_BYTES: usize = 8 << 20;

/// Reads the calls of a reply that arrives in chunks (split anywhere, even inside a UTF-8
/// character or a marker) and hands each call over as soon as it is complete.
///
/// The tag dialects ([`Hermes`](Dialect::Hermes), [`Granite`](Dialect::Granite),
/// [`Llama3`](Dialect::Llama3) after `<|python_tag|>`, [`Mistral`](Dialect::Mistral),
/// [`DeepSeek`](Dialect::DeepSeek)) give each block of calls once it is closed: a Hermes call
/// once its `</tool_call>` has arrived, a Granite or Mistral call once its JSON is complete, a
/// DeepSeek call at its end marker. The whole-reply dialects ([`Json`](Dialect::Json),
/// [`Pythonic`](Dialect::Pythonic)) are only calls if nothing follows them, which is known at
/// the end, so their calls come from [`finish`](Self::finish).
///
/// [`finish`](Self::finish) reads the whole reply again by [`parse_calls`](super::parse_calls)'s rules and gives
/// the same result for every way the reply was cut into chunks.
///
/// **Which calls to run.** A call handed over by [`push`](Self::push) is complete and final:
/// if the reply is accepted, it is exactly the matching call among the first calls of
/// `finish`'s result. But the reply as a whole is accepted or refused only at its end, as
/// [`parse_calls`](super::parse_calls) reads it, and text after a call can still refuse it (the next call cut off
/// or malformed, another dialect's marker, a cap); a refused reply runs none of its calls,
/// including those already handed over. So run the calls of
/// [`StreamedReply::calls`], after `finish` succeeds, and use the early hand-over for what can
/// be dropped if the reply is refused: checking the arguments, authorizing, asking for
/// approval, showing progress. The stream refuses as soon as the text received decides it:
/// another dialect's marker after the dialect was detected fails the `push` that brings it,
/// and nothing is handed over after an error. [`TextModel`](super::TextModel) and the agent
/// loop read whole replies and never run a call of a refused one.
///
/// Caps: each call's bytes (from its opening marker) and the whole reply's, and optionally the
/// time from the first chunk.
///
/// ```
/// use tool_core::text_calls::{Dialect, TextCallStream};
///
/// let mut stream = TextCallStream::new(None);
/// let mut calls = Vec::new();
/// for chunk in ["Checking.\n<tool_", "call>{\"name\": \"get_weather\", \"argu", "ments\": {\"city\": \"Paris\"}}</tool_call", ">\nOne moment."] {
///     calls.extend(stream.push(chunk).unwrap());
/// }
/// assert_eq!(calls.len(), 1);
/// assert_eq!(calls[0].arguments(), r#"{"city": "Paris"}"#);
/// let reply = stream.finish().unwrap();
/// assert_eq!(reply.parsed().dialect(), Some(Dialect::Hermes));
/// assert!(reply.remaining().is_empty());
/// ```
#[derive(Debug)]
pub struct TextCallStream {
    dialects: Dialects,
    dialect: Option<Dialect>,
    detected: Option<Dialect>,
    text: String,
    partial: Vec<u8>,
    phase: Phase,
    yielded: Vec<TextCall>,
    /// Markers that close or divide a call, read outside any before a dialect was known.
    strays: Vec<(usize, Seen)>,
    /// The dialects of every marker read outside calls before a dialect was known.
    seen: Vec<Dialect>,
    /// Each call's bytes, the reply's, and its time.
    caps: Caps,
    failed: Option<TextError>,
}

/// Where the reader is in the reply.
#[derive(Debug)]
enum Phase {
    /// Looking for the next opening marker outside quotes.
    Seek(Scanner),
    /// Inside a block of calls, read by its dialect.
    Block(Box<dyn BlockStream>),
    /// Nothing more is read before the end.
    Rest,
}

/// What a stream reads after a dialect's opening marker.
pub(crate) enum Opened {
    /// A block of calls, read by its dialect as text arrives.
    Block(Box<dyn BlockStream>),
    /// No block: the next opening marker is looked for from this byte.
    Skip(usize),
    /// Nothing before the end: the calls are read from the whole reply.
    Rest,
}

/// A dialect's reader of one block of calls as the reply streams in.
pub(crate) trait BlockStream: fmt::Debug + Send + Sync {
    /// Reads on in `text` (the reply so far, which only grows between calls), adding the
    /// calls it completes to `out`.
    fn step(&mut self, text: &str, out: &mut Vec<TextCall>) -> Result<Step, TextError>;
}

/// How far a [`BlockStream`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// More text is needed; `Some(start)`: the call being read opened at `start`, and its
    /// size is capped from there.
    Wait(Option<usize>),
    /// It moved on and can read further.
    Again,
    /// The block ends here: the next opening marker is looked for from this byte.
    Done(usize),
}

impl TextCallStream {
    /// A stream of one reply in `dialect`, or in the dialect its markers name when `None`
    /// (see [`parse_calls`](super::parse_calls)).
    pub fn new(dialect: Option<Dialect>) -> Self {
        TextCallStream::in_dialects(Dialects::new(), dialect)
    }

    /// A stream of one reply read in `dialects` (see [`Dialects::stream`]).
    pub(crate) fn in_dialects(dialects: Dialects, dialect: Option<Dialect>) -> Self {
        let at_end = dialect
            .and_then(|dialect| dialects.reader(dialect).ok())
            .is_some_and(|reader| reader.calls_at_end());
        let phase = if at_end {
            Phase::Rest
        } else {
            Phase::Seek(Scanner::new(0))
        };
        TextCallStream {
            dialects,
            dialect,
            detected: dialect,
            text: String::new(),
            partial: Vec::new(),
            phase,
            yielded: Vec::new(),
            strays: Vec::new(),
            seen: Vec::new(),
            caps: {
                let mut limits = Limits::default();
                limits.set_max_total_bytes(DEFAULT_MAX_TEXT_BYTES);
                Caps::new(limits)
            },
            failed: None,
        }
    }

    /// Caps each call at `bytes`, counted from its opening marker (default
    /// [`DEFAULT_MAX_CALL_BYTES`](crate::providers::DEFAULT_MAX_CALL_BYTES)).
    pub fn max_call_bytes(mut self, bytes: usize) -> Self {
        self.caps.set_max_call_bytes(bytes);
        self
    }

    /// Caps the whole reply at `bytes` (default [`DEFAULT_MAX_TEXT_BYTES`]).
    pub fn max_text_bytes(mut self, bytes: usize) -> Self {
        self.caps.set_max_total_bytes(bytes);
        self
    }

    /// Fails a chunk that arrives more than `limit` after the first one.
    pub fn max_duration(mut self, limit: Duration) -> Self {
        self.caps.set_max_duration(limit);
        self
    }

    /// The text received so far (without an unfinished UTF-8 character at its end).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Adds a chunk; returns the calls it completed, in text order: to prepare, not yet to
    /// run (the reply may still be refused; see [`TextCallStream`]). After an error the
    /// stream is spent: every later call returns the same error.
    pub fn push(&mut self, chunk: impl AsRef<[u8]>) -> Result<Vec<TextCall>, TextError> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        let result = self.accept(chunk.as_ref()).and_then(|()| self.advance());
        if let Err(error) = &result {
            self.failed = Some(error.clone());
        }
        result
    }

    /// Ends the reply: reads it whole by [`parse_calls`](super::parse_calls)'s rules and returns the result with
    /// the calls not yet handed over.
    pub fn finish(self) -> Result<StreamedReply, TextError> {
        if let Some(error) = self.failed {
            return Err(error);
        }
        if !self.partial.is_empty() {
            return Err(TextError::Unterminated {
                at: self.text.len(),
                reason: "the text ends inside a UTF-8 character".into(),
            });
        }
        let parsed = parse_in(&self.dialects, &self.text, self.dialect)?;
        let handed = self.yielded.len();
        if let Some(at) = (0..handed).find(|&i| parsed.calls().get(i) != Some(&self.yielded[i])) {
            // Only a reply that changes its mind (a second Granite form after the first, say)
            // reads differently whole than block by block.
            return Err(TextError::Invalid {
                at: self.yielded[at].span.start,
                reason: "the reply read whole does not hold the calls read while it streamed"
                    .into(),
            });
        }
        Ok(StreamedReply {
            text: self.text,
            parsed,
            handed,
        })
    }

    /// Appends `chunk` to the text, keeping an unfinished UTF-8 character for the next one.
    fn accept(&mut self, chunk: &[u8]) -> Result<(), TextError> {
        if let Some(limit) = self.caps.time_over() {
            return Err(TextError::TimedOut { limit });
        }
        let total = self.text.len() + self.partial.len() + chunk.len();
        if let Some(limit) = self.caps.limits().total_over(total) {
            return Err(TextError::TooLarge {
                limit,
                what: "the reply",
            });
        }
        let joined;
        let bytes = if self.partial.is_empty() {
            chunk
        } else {
            self.partial.extend_from_slice(chunk);
            joined = std::mem::take(&mut self.partial);
            &joined[..]
        };
        let valid = match std::str::from_utf8(bytes) {
            Ok(text) => text,
            Err(error) if error.error_len().is_none() => {
                let (head, tail) = bytes.split_at(error.valid_up_to());
                self.partial = tail.to_vec();
                std::str::from_utf8(head).unwrap_or_default()
            }
            Err(error) => {
                return Err(TextError::Invalid {
                    at: self.text.len() + error.valid_up_to(),
                    reason: "the text is not UTF-8".into(),
                });
            }
        };
        self.text.push_str(valid);
        Ok(())
    }

    /// Reads as far as the text allows; returns the calls completed.
    fn advance(&mut self) -> Result<Vec<TextCall>, TextError> {
        let mut out = Vec::new();
        loop {
            let phase = std::mem::replace(&mut self.phase, Phase::Rest);
            let (next, progressed) = self.step(phase, &mut out)?;
            self.phase = next;
            if !progressed {
                break;
            }
        }
        self.yielded.extend(out.iter().cloned());
        Ok(out)
    }

    /// One step from `phase`: the next phase, and whether it moved on (else it waits for
    /// text).
    fn step(&mut self, phase: Phase, out: &mut Vec<TextCall>) -> Result<(Phase, bool), TextError> {
        let text = self.text.as_str();
        match phase {
            Phase::Rest => Ok((Phase::Rest, false)),
            Phase::Block(mut block) => match block.step(text, out)? {
                Step::Wait(start) => {
                    if let Some(start) = start {
                        self.check_call_size(start)?;
                    }
                    Ok((Phase::Block(block), false))
                }
                Step::Again => Ok((Phase::Block(block), true)),
                Step::Done(end) => Ok((seek(end), true)),
            },
            Phase::Seek(mut scanner) => {
                let found = loop {
                    let next = scanner.next(self.dialects.table(), text, false);
                    if let Some((_, marker)) = next {
                        match self.detected {
                            // Read whole, the reply is refused whatever follows: say so now,
                            // before more calls are handed over.
                            Some(dialect)
                                if self.dialect.is_none() && dialect != marker.dialect =>
                            {
                                return Err(ambiguous(&self.dialects, &[dialect, marker.dialect]));
                            }
                            None if !self.seen.contains(&marker.dialect) => {
                                self.seen.push(marker.dialect);
                            }
                            _ => {}
                        }
                    }
                    match next {
                        Some((at, marker))
                            if marker.opens
                                && self.detected.is_none_or(|d| d == marker.dialect) =>
                        {
                            break Some((at, marker));
                        }
                        Some((at, marker)) if marker.stray() => match self.detected {
                            Some(dialect) if dialect == marker.dialect => {
                                return Err(stray_marker(at, &marker));
                            }
                            Some(_) => {}
                            None => {
                                if !self.strays.iter().any(|(_, m)| m.dialect == marker.dialect) {
                                    self.strays.push((at, marker));
                                }
                            }
                        },
                        Some(_) => {}
                        None => break None,
                    }
                };
                if scanner.hidden().is_some() {
                    // A marker inside quotes: only the reply read whole tells a call that
                    // quotes it from prose.
                    return Ok((Phase::Rest, true));
                }
                let Some((at, marker)) = found else {
                    return Ok((Phase::Seek(scanner), false));
                };
                if self.detected.is_none() {
                    self.detected = Some(marker.dialect);
                    if self.seen.iter().any(|&d| d != marker.dialect) {
                        return Err(ambiguous(&self.dialects, &self.seen));
                    }
                    // A marker of this dialect read before, outside any call.
                    if let Some(&(at, stray)) = self
                        .strays
                        .iter()
                        .find(|(_, m)| m.dialect == marker.dialect)
                    {
                        return Err(stray_marker(at, &stray));
                    }
                }
                let Some(full) = marker.marker(self.dialects.table()) else {
                    return Err(stray_marker(at, &marker));
                };
                let next = match self.dialects.reader(marker.dialect)?.open(at, full) {
                    Opened::Block(block) => Phase::Block(block),
                    Opened::Skip(from) => seek(from),
                    Opened::Rest => Phase::Rest,
                };
                Ok((next, true))
            }
        }
    }

    fn check_call_size(&self, start: usize) -> Result<(), TextError> {
        if let Some(limit) = self.caps.limits().call_over(self.text.len() - start) {
            return Err(TextError::TooLarge {
                limit,
                what: "a call",
            });
        }
        Ok(())
    }
}

/// A refusal of a reply holding the markers of `dialects`.
fn ambiguous(set: &Dialects, dialects: &[Dialect]) -> TextError {
    TextError::Ambiguous {
        dialects: scan::in_order(set.table(), dialects),
    }
}

/// Looking for the next opening marker from `at`.
fn seek(at: usize) -> Phase {
    Phase::Seek(Scanner::new(at))
}

/// The first byte at or after `at` that is not whitespace (or the end of `text`).
pub(crate) fn skip_space(text: &str, at: usize) -> usize {
    let rest = &text[at..];
    at + (rest.len() - rest.trim_start().len())
}

/// Where a search for a marker of `len` bytes resumes so that one split across chunks is
/// found: `len - 1` bytes back from the end, on a character boundary.
pub(crate) fn back_off(text: &str, len: usize) -> usize {
    text.floor_char_boundary(text.len().saturating_sub(len - 1))
}

/// Call objects (or a list of them) streaming in, in a block opened at `start`.
#[derive(Debug)]
pub(crate) struct CallObjects {
    pub(crate) start: usize,
    json: JsonEnd,
}

impl CallObjects {
    /// The call objects from `from` (after whitespace), in the block opened at `start`.
    pub(crate) fn new(start: usize, from: usize) -> Self {
        CallObjects {
            start,
            json: JsonEnd::new(from),
        }
    }

    /// The calls and where they end, once all of them has arrived.
    pub(crate) fn read(&mut self, text: &str) -> Result<Option<(Vec<TextCall>, usize)>, TextError> {
        if self.json.advance(text)?.is_none() {
            return Ok(None);
        }
        json_calls(text, self.json.from).map(Some)
    }
}

/// Finds where a JSON object, array or string ends, reading each byte once however the text
/// arrives.
#[derive(Debug)]
pub(crate) struct JsonEnd {
    /// Where the value starts (whitespace before it included).
    pub(crate) from: usize,
    /// The next byte to read.
    at: usize,
    depth: usize,
    /// The quote of the string being read, and whether it is tripled (Python's strings
    /// inside a dict are read too).
    quote: Option<(u8, bool)>,
    escaped: bool,
}

impl JsonEnd {
    pub(crate) fn new(from: usize) -> Self {
        JsonEnd {
            from,
            at: from,
            depth: 0,
            quote: None,
            escaped: false,
        }
    }

    /// The end of the value once `text` holds all of it.
    pub(crate) fn advance(&mut self, text: &str) -> Result<Option<usize>, TextError> {
        let bytes = text.as_bytes();
        while self.at < bytes.len() {
            let byte = bytes[self.at];
            if let Some((quote, triple)) = self.quote {
                if self.escaped {
                    self.escaped = false;
                } else if byte == b'\\' {
                    self.escaped = true;
                } else if byte == quote {
                    if triple {
                        if self.at + 2 >= bytes.len() {
                            return Ok(None);
                        }
                        if bytes[self.at + 1] == quote && bytes[self.at + 2] == quote {
                            self.quote = None;
                            self.at += 2;
                        }
                    } else {
                        self.quote = None;
                    }
                    // A JSON string as the whole value (arguments written as a string).
                    if self.quote.is_none() && self.depth == 0 {
                        self.at += 1;
                        return Ok(Some(self.at));
                    }
                }
                self.at += 1;
                continue;
            }
            match byte {
                b'"' if self.depth == 0 => self.quote = Some((byte, false)),
                b'"' | b'\'' if self.depth > 0 => {
                    if self.at + 2 >= bytes.len() {
                        return Ok(None);
                    }
                    let triple = bytes[self.at + 1] == byte && bytes[self.at + 2] == byte;
                    self.quote = Some((byte, triple));
                    if triple {
                        self.at += 2;
                    }
                }
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' if self.depth > 0 => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        self.at += 1;
                        return Ok(Some(self.at));
                    }
                }
                b' ' | b'\t' | b'\n' | b'\r' if self.depth == 0 => {}
                _ if self.depth == 0 => {
                    return Err(TextError::Invalid {
                        at: self.at,
                        reason: "expected a call object or a list of them".into(),
                    });
                }
                _ => {}
            }
            self.at += 1;
        }
        Ok(None)
    }
}

/// A streamed reply read whole: the text, its calls and prose, and which calls were not yet
/// handed over while it streamed.
#[derive(Debug, Clone)]
pub struct StreamedReply {
    text: String,
    parsed: ParsedCalls,
    handed: usize,
}

impl StreamedReply {
    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Every call and the prose, as [`parse_calls`](super::parse_calls) reads the whole text.
    pub fn parsed(&self) -> &ParsedCalls {
        &self.parsed
    }

    /// Every call of the reply, the handed-over ones first: the calls to run.
    pub fn calls(&self) -> &[TextCall] {
        self.parsed.calls()
    }

    /// The calls [`TextCallStream::push`] did not hand over (all of them for the whole-reply
    /// dialects).
    pub fn remaining(&self) -> &[TextCall] {
        &self.parsed.calls()[self.handed..]
    }

    /// The prose, as text.
    pub fn prose(&self) -> impl Iterator<Item = &str> {
        self.parsed
            .prose()
            .iter()
            .map(|range| &self.text[range.clone()])
    }
}
