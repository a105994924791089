//! Calls read from a reply as it streams in, each one as soon as it is complete.

use std::time::{Duration, Instant};

use super::dialects::deepseek::{
    DS_CALL_BEGIN, DS_CALL_END, DS_CALLS_BEGIN, deepseek_call, deepseek_head,
};
use super::dialects::granite::{FUNCTION_CALL, TOOL_CALL};
use super::dialects::hermes::{CLOSE, OPEN};
use super::dialects::llama3::PYTHON_TAG;
use super::dialects::mistral::{ARGS, TOOL_CALLS, mistral_call, mistral_name};
use super::read::{json_calls, read_block};
use super::scan::{Scanner, Seen};
use super::{
    Dialect, Dialects, Marker, ParsedCalls, TextCall, TextError, parse_in, scan, stray_marker,
};

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
    scan: usize,
    yielded: Vec<TextCall>,
    /// Markers that close or divide a call, read outside any before a dialect was known.
    strays: Vec<(usize, Seen)>,
    /// The dialects of every marker read outside calls before a dialect was known.
    seen: Vec<Dialect>,
    max_call_bytes: usize,
    max_text_bytes: usize,
    max_duration: Option<Duration>,
    started: Option<Instant>,
    failed: Option<TextError>,
}

/// Where the reader is in the reply.
#[derive(Debug)]
enum Phase {
    /// Looking for the next opening marker outside quotes.
    Seek(Scanner),
    /// A JSON value of the block opened at `start`; `json` tracks where it ends.
    Value {
        start: usize,
        json: JsonEnd,
        then: Then,
    },
    /// Hermes: the block's calls are read; its `</tool_call>` is awaited from `at`.
    Close { at: usize, calls: Vec<TextCall> },
    /// Llama 3: after a call (whitespace read up to `at`), a `;` and another call, or the end
    /// of the calls.
    Separator { at: usize },
    /// Llama 3: after a `;` (ending at `body`; whitespace read up to `at`), another call or
    /// the end of the calls.
    Semicolon { body: usize, at: usize },
    /// Mistral: after `[TOOL_CALLS]` (ending at `body`), a list of calls or `name[ARGS]`.
    Mistral { start: usize, body: usize },
    /// Mistral: a tool name from `body` up to `[ARGS]`.
    MistralName { start: usize, body: usize },
    /// DeepSeek: a call opened at `start`, up to its arguments.
    DeepSeek { start: usize },
    /// DeepSeek: after the arguments (whitespace read up to `at`), the fence's end if
    /// `fenced`, then the end marker.
    DeepSeekTail {
        start: usize,
        at: usize,
        fenced: bool,
    },
    /// An added dialect's block opened by `marker` at `start`, read again as text arrives:
    /// `spent` bytes were handed to its reader so far. A reader reads its block from the start
    /// each time, so a new try waits until the block is long enough to pay for it (see
    /// [`worth_trying`]), which keeps the work linear in the block's length whatever the
    /// chunking.
    Block {
        start: usize,
        marker: &'static Marker,
        spent: usize,
    },
    /// Nothing more is read before the end.
    Rest,
}

/// What a complete JSON value is.
#[derive(Debug)]
enum Then {
    /// A call object or a list of them, closed by `</tool_call>`.
    Hermes,
    /// A call object or list, after which another block may open.
    Seek,
    /// Llama 3's calls, separated by `;`.
    Separator,
    /// The arguments of a Mistral `name[ARGS]` call.
    MistralArgs { name: String },
    /// The arguments of a DeepSeek call.
    DeepSeek { fenced: bool },
}

impl TextCallStream {
    /// A stream of one reply in `dialect`, or in the dialect its markers name when `None`
    /// (see [`parse_calls`](super::parse_calls)).
    pub fn new(dialect: Option<Dialect>) -> Self {
        TextCallStream::in_dialects(Dialects::new(), dialect)
    }

    /// A stream of one reply read in `dialects` (see [`Dialects::stream`]).
    pub(crate) fn in_dialects(dialects: Dialects, dialect: Option<Dialect>) -> Self {
        let phase = match dialect {
            Some(Dialect::Json | Dialect::Pythonic) => Phase::Rest,
            _ => Phase::Seek(Scanner::new(0)),
        };
        TextCallStream {
            dialects,
            dialect,
            detected: dialect,
            text: String::new(),
            partial: Vec::new(),
            phase,
            scan: 0,
            yielded: Vec::new(),
            strays: Vec::new(),
            seen: Vec::new(),
            max_call_bytes: crate::providers::DEFAULT_MAX_CALL_BYTES,
            max_text_bytes: DEFAULT_MAX_TEXT_BYTES,
            max_duration: None,
            started: None,
            failed: None,
        }
    }

    /// Caps each call at `bytes`, counted from its opening marker (default
    /// [`DEFAULT_MAX_CALL_BYTES`](crate::providers::DEFAULT_MAX_CALL_BYTES)).
    pub fn max_call_bytes(mut self, bytes: usize) -> Self {
        self.max_call_bytes = bytes;
        self
    }

    /// Caps the whole reply at `bytes` (default [`DEFAULT_MAX_TEXT_BYTES`]).
    pub fn max_text_bytes(mut self, bytes: usize) -> Self {
        self.max_text_bytes = bytes;
        self
    }

    /// Fails a chunk that arrives more than `limit` after the first one.
    pub fn max_duration(mut self, limit: Duration) -> Self {
        self.max_duration = Some(limit);
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
        if let Some(limit) = self.max_duration {
            let started = *self.started.get_or_insert_with(Instant::now);
            if started.elapsed() > limit {
                return Err(TextError::TimedOut { limit });
            }
        }
        if self.text.len() + self.partial.len() + chunk.len() > self.max_text_bytes {
            return Err(TextError::TooLarge {
                limit: self.max_text_bytes,
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
            Phase::Block {
                start,
                marker,
                spent,
            } => {
                let Some(reader) = self.dialects.added(marker_dialect_name(self.detected)) else {
                    return Ok((Phase::Rest, true));
                };
                let length = text.len() - start;
                if !worth_trying(spent, length) {
                    self.check_call_size(start)?;
                    return Ok((
                        Phase::Block {
                            start,
                            marker,
                            spent,
                        },
                        false,
                    ));
                }
                let spent = spent.saturating_add(length);
                match read_block(reader, text, start, marker, false)? {
                    None => {
                        self.check_call_size(start)?;
                        Ok((
                            Phase::Block {
                                start,
                                marker,
                                spent,
                            },
                            false,
                        ))
                    }
                    Some(block) => {
                        out.extend(block.calls);
                        Ok((seek(block.end), true))
                    }
                }
            }
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
                let body = at + marker.text.len();
                if let Dialect::Custom(_) = marker.dialect {
                    let Some(marker) = marker.marker(self.dialects.table()) else {
                        return Err(stray_marker(at, &marker));
                    };
                    self.scan = body;
                    return Ok((
                        Phase::Block {
                            start: at,
                            marker,
                            spent: 0,
                        },
                        true,
                    ));
                }
                let next = match marker.text {
                    OPEN => value(at, body, Then::Hermes),
                    FUNCTION_CALL | TOOL_CALL => value(at, body, Then::Seek),
                    PYTHON_TAG => value(at, body, Then::Separator),
                    TOOL_CALLS => Phase::Mistral { start: at, body },
                    DS_CALL_BEGIN => Phase::DeepSeek { start: at },
                    DS_CALLS_BEGIN => seek(body),
                    // `<|python_start|>`: Python calls, read at the end.
                    _ => Phase::Rest,
                };
                self.scan = body;
                Ok((next, true))
            }
            Phase::Value {
                start,
                mut json,
                then,
            } => {
                let Some(end) = json.advance(text)? else {
                    self.check_call_size(start)?;
                    return Ok((Phase::Value { start, json, then }, false));
                };
                let next = match then {
                    Then::MistralArgs { name } => {
                        out.push(mistral_call(text, start, name, json.from)?);
                        seek(end)
                    }
                    Then::DeepSeek { fenced } => Phase::DeepSeekTail {
                        start,
                        at: end,
                        fenced,
                    },
                    then => {
                        let (calls, end) = json_calls(text, json.from)?;
                        self.scan = end;
                        match then {
                            Then::Hermes => Phase::Close { at: end, calls },
                            Then::Separator => {
                                out.extend(calls);
                                Phase::Separator { at: end }
                            }
                            _ => {
                                out.extend(calls);
                                seek(end)
                            }
                        }
                    }
                };
                Ok((next, true))
            }
            Phase::Close { at, calls } => {
                let at = skip_space(text, at);
                let rest = &text[at..];
                if rest.starts_with(CLOSE) {
                    out.extend(calls);
                    Ok((seek(at + CLOSE.len()), true))
                } else if rest.starts_with(OPEN) {
                    out.extend(calls);
                    Ok((seek(at), true))
                } else if CLOSE.starts_with(rest) || OPEN.starts_with(rest) {
                    self.check_call_size(calls.first().map_or(at, |c| c.span.start))?;
                    Ok((Phase::Close { at, calls }, false))
                } else {
                    Err(TextError::Invalid {
                        at,
                        reason: format!("expected `{CLOSE}` after the call"),
                    })
                }
            }
            Phase::Separator { at } => {
                let at = skip_space(text, at);
                match text.as_bytes().get(at) {
                    None => Ok((Phase::Separator { at }, false)),
                    Some(b';') => Ok((
                        Phase::Semicolon {
                            body: at + 1,
                            at: at + 1,
                        },
                        true,
                    )),
                    Some(_) => Ok((seek(at), true)),
                }
            }
            Phase::Semicolon { body, at } => {
                let at = skip_space(text, at);
                if at == text.len() {
                    // Whitespace, or the end of the calls: decided by what comes.
                    return Ok((Phase::Semicolon { body, at }, false));
                }
                Ok((value(body, body, Then::Separator), true))
            }
            Phase::Mistral { start, body } => {
                let at = skip_space(text, self.scan.max(body));
                match text.as_bytes().get(at) {
                    None => {
                        self.scan = at;
                        Ok((Phase::Mistral { start, body }, false))
                    }
                    Some(b'[' | b'{') => Ok((value(start, body, Then::Seek), true)),
                    Some(_) => {
                        self.scan = at;
                        Ok((Phase::MistralName { start, body }, true))
                    }
                }
            }
            Phase::MistralName { start, body } => {
                let from = self.scan.max(body);
                let Some(found) = text[from..].find(ARGS) else {
                    self.scan = back_off(text, ARGS.len()).max(body);
                    self.check_call_size(start)?;
                    return Ok((Phase::MistralName { start, body }, false));
                };
                let args = from + found;
                let name = mistral_name(text, body, args)?;
                let args_at = args + ARGS.len();
                Ok((value(start, args_at, Then::MistralArgs { name }), true))
            }
            Phase::DeepSeek { start } => match deepseek_head(text, start, false)? {
                None => {
                    self.check_call_size(start)?;
                    Ok((Phase::DeepSeek { start }, false))
                }
                Some((_, args, fenced)) => {
                    Ok((value(start, args, Then::DeepSeek { fenced }), true))
                }
            },
            Phase::DeepSeekTail { start, at, fenced } => {
                let at = skip_space(text, at);
                let rest = &text[at..];
                let token = if fenced { "```" } else { DS_CALL_END };
                if rest.starts_with(token) {
                    if fenced {
                        let at = at + token.len();
                        return Ok((
                            Phase::DeepSeekTail {
                                start,
                                at,
                                fenced: false,
                            },
                            true,
                        ));
                    }
                    let call = deepseek_call(text, start)?;
                    let end = call.span.end;
                    out.push(call);
                    Ok((seek(end), true))
                } else if token.starts_with(rest) {
                    self.check_call_size(start)?;
                    Ok((Phase::DeepSeekTail { start, at, fenced }, false))
                } else {
                    Err(TextError::Invalid {
                        at,
                        reason: format!("expected `{token}` after the arguments"),
                    })
                }
            }
        }
    }

    fn check_call_size(&self, start: usize) -> Result<(), TextError> {
        if self.text.len() - start > self.max_call_bytes {
            return Err(TextError::TooLarge {
                limit: self.max_call_bytes,
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

/// The name of the added dialect being read (none other opens a block).
fn marker_dialect_name(detected: Option<Dialect>) -> &'static str {
    match detected {
        Some(Dialect::Custom(name)) => name,
        _ => "",
    }
}

/// Looking for the next opening marker from `at`.
fn seek(at: usize) -> Phase {
    Phase::Seek(Scanner::new(at))
}

/// A JSON value from `from` (after whitespace) that closes the block opened at `start`.
fn value(start: usize, from: usize, then: Then) -> Phase {
    Phase::Value {
        start,
        json: JsonEnd::new(from),
        then,
    }
}

/// The first byte at or after `at` that is not whitespace (or the end of `text`).
fn skip_space(text: &str, at: usize) -> usize {
    let rest = &text[at..];
    at + (rest.len() - rest.trim_start().len())
}

/// Where a search for a marker of `len` bytes resumes so that one split across chunks is
/// found: `len - 1` bytes back from the end, on a character boundary.
fn back_off(text: &str, len: usize) -> usize {
    text.floor_char_boundary(text.len().saturating_sub(len - 1))
}

/// Finds where a JSON object, array or string ends, reading each byte once however the text
/// arrives.
#[derive(Debug)]
struct JsonEnd {
    /// Where the value starts (whitespace before it included).
    from: usize,
    /// The next byte to read.
    at: usize,
    depth: usize,
    /// The quote of the string being read, and whether it is tripled (Python's strings
    /// inside a dict are read too).
    quote: Option<(u8, bool)>,
    escaped: bool,
}

impl JsonEnd {
    fn new(from: usize) -> Self {
        JsonEnd {
            from,
            at: from,
            depth: 0,
            quote: None,
            escaped: false,
        }
    }

    /// The end of the value once `text` holds all of it.
    fn advance(&mut self, text: &str) -> Result<Option<usize>, TextError> {
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

/// Whether an added dialect's block of `length` bytes is read again, its reader having been
/// handed `spent` bytes so far: only while the reading stays within four times the block's
/// length. Every try before is paid for by the bytes that arrived since, so streaming a block
/// costs at most four times its length in reading however small the chunks; a call whose end
/// has arrived is handed over once the text grows by a third more, or at `finish`.
fn worth_trying(spent: usize, length: usize) -> bool {
    spent.saturating_add(length) <= length.saturating_mul(4)
}
