//! Tool calls written into a model's text, in the formats open models emit, parsed into calls
//! that then go through the runtime like any other.
//!
//! When a model runs behind a plain completion endpoint, its calls arrive as text in the
//! model's own format. [`parse_calls`] reads one reply in a named [`Dialect`], or detects the
//! dialect from the markers it uses, and returns every call with its byte span plus the prose
//! around them. It never guesses: a call cut short is [`TextError::Unterminated`], a reply with
//! the markers of two dialects is [`TextError::Ambiguous`], and Python arguments are read as
//! literals, never evaluated.
//!
//! | dialect | what it reads |
//! |---|---|
//! | [`Json`](Dialect::Json) | the whole reply (or a Markdown `json` fence) is one call object `{"name": …, "arguments" \| "parameters": {…}}` or a list of them; or a tool name on a line of its own, then its arguments object |
//! | [`Hermes`](Dialect::Hermes) | `<tool_call>{…}</tool_call>`, repeated for parallel calls (Hermes, Qwen) |
//! | [`Llama3`](Dialect::Llama3) | `<\|python_tag\|>` then call objects separated by `;`, or a reply that is one call object with `parameters` |
//! | [`Mistral`](Dialect::Mistral) | `[TOOL_CALLS][{…}, …]`, or `[TOOL_CALLS]name[ARGS]{…}` repeated (newer tokenizers) |
//! | [`Granite`](Dialect::Granite) | `<function_call>{…}` or `<\|tool_call\|>[{…}, …]`, repeated |
//! | [`DeepSeek`](Dialect::DeepSeek) | `<｜tool▁call▁begin｜>` … `<｜tool▁call▁end｜>` blocks, the name then the arguments as JSON, with or without a fence |
//! | [`Pythonic`](Dialect::Pythonic) | `get_weather(city="Paris")`, `[f(a=1), g(b=2)]`, `f(a=1); g(b=2)` or `['f(a=1)', 'g(b=2)']`, keyword and positional arguments, Python literals |
//!
//! A marker inside a quoted string never names a dialect or opens a call: a search whose
//! query quotes `<tool_call>{…}</tool_call>` is the search, in every dialect, read whole or
//! streamed. Prose is read as prose (its quotes are apostrophes); inside a bracketed group,
//! `{…}`, `[…]` or `name(…)`, quotes delimit strings, except an apostrophe between letters
//! (`they're`). A marker inside quotes in prose, outside any call, is refused rather than
//! guessed at, and so is an opening marker inside a bracketed group of prose, where a string
//! may have been misread. So is a marker that closes or divides a call
//! (`</tool_call>`, `[ARGS]`, DeepSeek's separator and end) standing outside any call: the
//! call it belongs to lost its opening marker, and the other calls are not run without it.
//!
//! Markdown inline code in prose (text between a run of backticks and the next run of as many
//! on the same line: `` `<tool_call>{…}</tool_call>` ``, ``` ``…`` ```) is an example shown to
//! the reader: the markers in it open, close and name nothing, so a reply that only shows calls
//! that way is prose, whole or streamed, and a call written outside the code is read as usual.
//! A call object or Python call that is the whole reply but sits in inline code is prose too.
//! A backtick with no partner on its line is a literal backtick, so a Markdown fence
//! (```` ``` ```` on lines of its own) still holds calls. One exception is refused rather than
//! read as prose: a span that holds an opening marker and ends inside the brackets or a
//! string after it, since its closing backtick may be one inside a call the model wrote
//! (`` Run `ls <function_call>{"arguments": {"cmd": "a`b"}} ``).
//!
//! A call object's arguments may also be a JSON string holding the object (as OpenAI's format
//! writes them); anything else is refused. The arguments of JSON dialects are passed on as the
//! exact text the model wrote, so the runtime's strict parser sees every duplicate key and
//! number as written.
//!
//! Besides their documented formats, models write a few others whose reading is never in
//! doubt; each is read by one rule, and everything near it that is not exactly it is prose
//! or refused:
//!
//! - xLAM's envelope, `{"tool_calls": [call objects]}`: an object whose only member is
//!   `tool_calls`, a list of call objects, is those calls (wherever a call object is read).
//! - A tool name alone on the first line, then its arguments as one JSON object (bare or in
//!   a fence) and nothing else, is that call ([`Json`](Dialect::Json)). The line must be a
//!   function's name of more than one word (letters, digits, `_`, `-`, `.`; lowercase first;
//!   `snake_case`, `dotted.name` or `camelCase`; not a file name such as `package.json`), so a
//!   title (`Result`, `Answer:`), a lone word (`json`, `search`) or a sentence is prose. This
//!   form is read only when the dialect is named: detection leaves it as prose, since a
//!   label over a JSON answer (`next_steps`) looks the same.
//! - A call object written as a Python dict, `{'name': 'f', 'arguments': {'a': None}}` (or a
//!   list of them), wherever a call object is read (`<tool_call>` blocks, say): a dict of
//!   literals with exactly `name` and `arguments` (or `parameters`), converted to JSON.
//! - Python calls separated by `;` or `,` without brackets, `f(a=1); g(b=2);`, are those
//!   calls; the reply must still be nothing but calls.
//! - A list whose items are strings, each holding exactly one Python call,
//!   `['get_hours(name="Tartine")']`, is those calls; a list of other strings is prose, and
//!   a list mixing both is refused.
//! - In a Python call's function or keyword name, `\_` (an underscore escaped for Markdown,
//!   never Python) reads as `_`.
//! - JSON's `true`, `false` and `null` as Python argument values read as `True`, `False` and
//!   `None`. Every other name, and every expression, stays refused.
//!
//! Not read, and so prose or refused: calls followed by prose that explains them, and a fence
//! of calls followed by more text (whether the text takes back or changes the calls is not
//! guessed).

use std::fmt;
use std::ops::Range;

use serde_json::{Map, Value};

use crate::call::ToolCall;
use crate::{Registry, registry::ToolInfo};
use read::unfenced;

mod dialect;
mod dialects;
mod model;
mod python;
mod quick;
mod read;
mod render;
mod scan;
mod stream;

pub use dialect::{Block, Dialects, Marker, MarkerRole, TextDialect};
pub use model::TextModel;
pub use render::render_calls;
pub use stream::{DEFAULT_MAX_TEXT_BYTES, StreamedReply, TextCallStream};

/// A format of tool calls in text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// Call objects as the whole reply: one, or a JSON list of them.
    Json,
    /// `<tool_call>` tags (Hermes, Qwen).
    Hermes,
    /// `<|python_tag|>` and JSON call objects (Llama 3.1 to 3.3).
    Llama3,
    /// `[TOOL_CALLS]` (Mistral).
    Mistral,
    /// `<function_call>` or `<|tool_call|>` (IBM Granite).
    Granite,
    /// DeepSeek's tool-call tokens.
    DeepSeek,
    /// Python call syntax (Llama 3.2 and 4 "pythonic", many fine-tunes).
    Pythonic,
    /// A dialect added with [`Dialects::with`], by its [`name`](TextDialect::name).
    Custom(&'static str),
}

impl Dialect {
    /// Every built-in dialect.
    pub const ALL: [Dialect; dialects::COUNT] = dialects::ALL;

    /// A short stable name, e.g. `"hermes"`.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Custom(name) => name,
            built_in => dialects::name(built_in),
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One call found in a text.
#[derive(Debug, Clone, PartialEq)]
pub struct TextCall {
    name: String,
    arguments: String,
    positional: Vec<Value>,
    span: Range<usize>,
}

impl TextCall {
    /// The tool's name as written.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The keyword arguments as a JSON object text: for JSON dialects the exact text the model
    /// wrote; for Python calls, the literals converted to JSON.
    pub fn arguments(&self) -> &str {
        &self.arguments
    }

    /// Positional arguments of a Python call, in order (empty for every other dialect).
    pub fn positional(&self) -> &[Value] {
        &self.positional
    }

    /// Where the call is in the text.
    pub fn span(&self) -> Range<usize> {
        self.span.clone()
    }

    /// The call as a [`ToolCall`] with id `call_id`, for the runtime. Positional arguments are
    /// given the names of the tool's parameters in their declared order (the order of
    /// `properties` in its input schema); that is refused when the tool is unknown, its schema
    /// has no plain `properties`, there are more positional arguments than parameters, or a
    /// parameter would be given twice.
    pub fn to_tool_call(
        &self,
        call_id: impl Into<String>,
        registry: &Registry,
    ) -> Result<ToolCall, TextError> {
        self.to_tool_call_for(call_id, registry.get(&self.name))
    }

    /// [`to_tool_call`](Self::to_tool_call) with the tool's description at hand (`None`: the
    /// tool is unknown).
    pub(crate) fn to_tool_call_for(
        &self,
        call_id: impl Into<String>,
        info: Option<&ToolInfo>,
    ) -> Result<ToolCall, TextError> {
        if self.positional.is_empty() {
            return Ok(ToolCall::new(
                call_id,
                self.name.clone(),
                self.arguments.as_str(),
            ));
        }
        let refuse = |reason: String| TextError::Positional {
            tool: self.name.clone(),
            reason,
        };
        let info = info.ok_or_else(|| {
            refuse("the tool is not registered, so its parameters' order is unknown".into())
        })?;
        let Some(properties) = info
            .input_schema()
            .get("properties")
            .and_then(Value::as_object)
            .filter(|_| {
                info.input_schema().get("oneOf").is_none()
                    && info.input_schema().get("anyOf").is_none()
            })
        else {
            return Err(refuse(
                "its parameters have no single declared order".into(),
            ));
        };
        if self.positional.len() > properties.len() {
            return Err(refuse(format!(
                "{} positional arguments for {} parameters",
                self.positional.len(),
                properties.len()
            )));
        }
        let mut keyword: Map<String, Value> = serde_json::from_str(&self.arguments)
            .map_err(|error| refuse(format!("the keyword arguments do not read back: {error}")))?;
        let mut merged = Map::new();
        for (name, value) in properties.keys().zip(&self.positional) {
            if keyword.contains_key(name) {
                return Err(refuse(format!(
                    "`{name}` is given both by position and by name"
                )));
            }
            merged.insert(name.clone(), value.clone());
        }
        merged.append(&mut keyword);
        let text = Value::Object(merged).to_string();
        Ok(ToolCall::new(call_id, self.name.clone(), text.as_str()))
    }
}

/// The calls in one reply and the prose around them.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedCalls {
    dialect: Option<Dialect>,
    calls: Vec<TextCall>,
    prose: Vec<Range<usize>>,
}

impl ParsedCalls {
    /// The dialect read (`None` when detection found no calls: the reply is prose).
    pub fn dialect(&self) -> Option<Dialect> {
        self.dialect
    }

    /// The calls, in text order.
    pub fn calls(&self) -> &[TextCall] {
        &self.calls
    }

    /// The byte ranges of the text outside the calls and their markers, without surrounding
    /// whitespace; empty ranges are left out.
    pub fn prose(&self) -> &[Range<usize>] {
        &self.prose
    }
}

/// Why a reply's calls could not be read. Nothing in a refused reply is returned as a call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TextError {
    /// The text ends inside a call (a cut-off reply): nothing of it is used.
    Unterminated {
        /// Where the unfinished part starts or ends.
        at: usize,
        /// What was missing.
        reason: String,
    },
    /// A call is malformed or is not a literal call.
    Invalid {
        /// Byte offset of the fault.
        at: usize,
        /// What is wrong.
        reason: String,
    },
    /// The reply carries the markers of more than one dialect.
    Ambiguous {
        /// The dialects whose markers are present.
        dialects: Vec<Dialect>,
    },
    /// A streamed reply or one of its calls grew past its cap.
    TooLarge {
        /// The cap, in bytes.
        limit: usize,
        /// What exceeded it: `"a call"` or `"the reply"`.
        what: &'static str,
    },
    /// A streamed reply ran longer than its time cap.
    TimedOut {
        /// The cap.
        limit: std::time::Duration,
    },
    /// A dialect could not be added to a [`Dialects`], or is not one of them.
    Dialect {
        /// The dialect's name.
        name: String,
        /// Why.
        reason: String,
    },
    /// Positional arguments could not be named.
    Positional {
        /// The tool.
        tool: String,
        /// Why.
        reason: String,
    },
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TextError::Unterminated { at, reason } => {
                write!(f, "the tool call is cut off at byte {at}: {reason}")
            }
            TextError::Invalid { at, reason } => {
                write!(f, "the tool call at byte {at} is not valid: {reason}")
            }
            TextError::Ambiguous { dialects } => {
                let names: Vec<&str> = dialects.iter().map(|d| d.name()).collect();
                write!(
                    f,
                    "the reply mixes the tool-call formats {}; which one is meant is not guessed",
                    names.join(", ")
                )
            }
            TextError::TooLarge { limit, what } => write!(f, "{what} exceeds {limit} bytes"),
            TextError::TimedOut { limit } => {
                write!(f, "the reply ran longer than {} ms", limit.as_millis())
            }
            TextError::Dialect { name, reason } => write!(f, "the dialect `{name}`: {reason}"),
            TextError::Positional { tool, reason } => {
                write!(
                    f,
                    "the positional arguments of `{tool}` cannot be named: {reason}"
                )
            }
        }
    }
}

impl std::error::Error for TextError {}

/// Reads the calls in `text`, in `dialect`, or in the dialect its markers name when `None`.
///
/// Detection: the first marker of a tag dialect outside quotes and inline code decides (another dialect's
/// marker outside quotes too: refused as ambiguous); without markers, a reply that is wholly a call object or a list of them (bare
/// or in one Markdown `json` fence) is [`Json`](Dialect::Json), one that is wholly a Python
/// call or a list of them is [`Pythonic`](Dialect::Pythonic), and anything else is prose with
/// no calls. A reply guessed to be JSON whose value is no call object (an answer written as
/// JSON, `{"summary": …}`) is prose too. A reply that starts like a call but does not finish is
/// [`Unterminated`](TextError::Unterminated), never prose.
///
/// ```
/// use tool_core::text_calls::{Dialect, parse_calls};
///
/// let reply = "Let me check both.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>";
/// let parsed = parse_calls(reply, None).unwrap();
/// assert_eq!(parsed.dialect(), Some(Dialect::Hermes));
/// assert_eq!(parsed.calls().len(), 2);
/// assert_eq!(parsed.calls()[1].arguments(), r#"{"city": "Oslo"}"#);
/// assert_eq!(&reply[parsed.prose()[0].clone()], "Let me check both.");
///
/// let parsed = parse_calls("[get_weather(city='Paris', days=3)]", None).unwrap();
/// assert_eq!(parsed.dialect(), Some(Dialect::Pythonic));
/// assert_eq!(parsed.calls()[0].arguments(), r#"{"city":"Paris","days":3}"#);
///
/// assert!(parse_calls("get_weather(city='Par", None).is_err());
/// ```
pub fn parse_calls(text: &str, dialect: Option<Dialect>) -> Result<ParsedCalls, TextError> {
    parse_in(&Dialects::new(), text, dialect)
}

/// [`parse_calls`] over `set`.
pub(crate) fn parse_in(
    set: &Dialects,
    text: &str,
    dialect: Option<Dialect>,
) -> Result<ParsedCalls, TextError> {
    let table = set.table();
    let named = dialect;
    let dialect = match dialect {
        Some(dialect) => dialect,
        None => match detect(table, text)? {
            Some(dialect) => dialect,
            None => {
                return Ok(ParsedCalls {
                    dialect: None,
                    calls: Vec::new(),
                    prose: prose(text, &[]),
                });
            }
        },
    };
    let detecting = named.is_none();
    let read = match set.reader(dialect)?.read(table, text, detecting) {
        // A reply guessed to be in a dialect that reads it as no call at all (an answer
        // written as JSON, `{"summary": …}`, say) is prose, not a broken call.
        Ok(None) => {
            return Ok(ParsedCalls {
                dialect: None,
                calls: Vec::new(),
                prose: prose(text, &[]),
            });
        }
        Ok(Some(read)) => Ok(read),
        Err(error) => Err(error),
    };
    let (calls, used) = match read {
        Ok(read) => read,
        Err(error) => {
            // A reply in two dialects that fails in the first is refused as ambiguous.
            let dialects = scan::dialects_outside_quotes(table, text);
            if detecting && dialects.len() > 1 {
                return Err(TextError::Ambiguous { dialects });
            }
            return Err(error);
        }
    };
    Ok(ParsedCalls {
        dialect: Some(dialect),
        prose: prose(text, &used),
        calls,
    })
}

/// The dialect named by the first opening marker outside quotes, or the marker-less dialect
/// `text` is wholly written in.
fn detect(table: &scan::Table, text: &str) -> Result<Option<Dialect>, TextError> {
    let mut scanner = scan::Scanner::new(0);
    let mut stray = None;
    while let Some((at, marker)) = scanner.next(table, text, true) {
        if marker.opens {
            return Ok(Some(marker.dialect));
        }
        if marker.stray() {
            stray = stray.or(Some((at, marker)));
        }
    }
    if let Some((at, marker)) = stray {
        return Err(stray_marker(at, &marker));
    }
    match whole_dialect(text) {
        None if let Some(at) = scanner.hidden() => Err(quoted_marker(at)),
        found => Ok(found),
    }
}

/// Call objects at byte `at` of `text` (after whitespace), for a [`TextDialect`]'s
/// [`read_block`](TextDialect::read_block): one object `{"name": …, "arguments" |
/// "parameters": {…}}`, a JSON list of them, xLAM's `{"tool_calls": […]}`, or the same written
/// as Python literals. Returns the calls and where they end. The arguments are kept as the
/// exact text written (or the object inside a JSON string). A value cut short is
/// [`Unterminated`](TextError::Unterminated).
pub fn read_call_objects(text: &str, at: usize) -> Result<(Vec<TextCall>, usize), TextError> {
    if at > text.len() || !text.is_char_boundary(at) {
        return Err(TextError::Invalid {
            at,
            reason: "not at a character boundary".into(),
        });
    }
    read::json_calls(text, at)
}

/// A closing or inner marker with no call open: the call it belongs to lost its opening
/// marker, and is not guessed at.
pub(crate) fn stray_marker(at: usize, marker: &scan::Seen) -> TextError {
    TextError::Invalid {
        at,
        reason: format!(
            "`{}` stands outside any call: the marker that opens its call is missing",
            marker.text
        ),
    }
}

/// A marker inside quotes in prose: text that quotes it, or a call whose quotes were misread.
fn quoted_marker(at: usize) -> TextError {
    TextError::Invalid {
        at,
        reason: "a tool-call marker inside quotes outside any call; whether a call is meant is not guessed".into(),
    }
}

/// The marker-less dialect `text` is wholly written in, if any.
fn whole_dialect(text: &str) -> Option<Dialect> {
    let trimmed = unfenced(text).0.trim_start();
    dialects::BUILT_IN
        .iter()
        .find(|built_in| (built_in.claims_whole)(trimmed))
        .map(|built_in| built_in.dialect)
}

/// Finds a dialect's markers outside quotes in the prose between its blocks, and notes what
/// else the prose holds.
pub(crate) struct Seeker<'a> {
    table: &'a scan::Table,
    text: &'a str,
    dialect: Dialect,
    /// Other dialects whose opening markers stand in the prose.
    others: Vec<Dialect>,
    hidden: Option<usize>,
}

impl<'a> Seeker<'a> {
    pub(crate) fn new(table: &'a scan::Table, text: &'a str, dialect: Dialect) -> Self {
        Seeker {
            table,
            text,
            dialect,
            others: Vec::new(),
            hidden: None,
        }
    }

    /// The next marker of the dialect outside quotes at or after `from` that may stand
    /// outside a call; one that closes or divides a call is refused as stray.
    pub(crate) fn opener(&mut self, from: usize) -> Result<Option<(usize, scan::Seen)>, TextError> {
        match self.next(from) {
            Some((at, marker)) if marker.stray() => Err(stray_marker(at, &marker)),
            found => Ok(found),
        }
    }

    /// The next marker of the dialect outside quotes at or after `from`.
    pub(crate) fn next(&mut self, from: usize) -> Option<(usize, scan::Seen)> {
        let mut scanner = scan::Scanner::new(from);
        let found = loop {
            match scanner.next(self.table, self.text, true) {
                Some((at, marker)) if marker.dialect == self.dialect => break Some((at, marker)),
                Some((_, marker)) => {
                    if !self.others.contains(&marker.dialect) {
                        self.others.push(marker.dialect);
                    }
                }
                None => break None,
            }
        };
        self.hidden = self.hidden.or(scanner.hidden());
        found
    }

    /// Refuses a reply whose prose holds another dialect's markers (when the dialect was
    /// detected) or a marker inside quotes.
    pub(crate) fn finish(self, detecting: bool) -> Result<(), TextError> {
        if detecting && !self.others.is_empty() {
            let mut found = self.others;
            found.push(self.dialect);
            return Err(TextError::Ambiguous {
                dialects: scan::in_order(self.table, &found),
            });
        }
        match self.hidden {
            Some(at) => Err(quoted_marker(at)),
            None => Ok(()),
        }
    }
}

/// The parts of `text` outside `used`, trimmed, non-empty.
pub(crate) fn prose(text: &str, used: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut from = 0;
    let mut push = |range: Range<usize>| {
        let part = &text[range.clone()];
        let start = range.start + (part.len() - part.trim_start().len());
        let end = range.end - (part.len() - part.trim_end().len());
        if start < end {
            out.push(start..end);
        }
    };
    for range in used {
        if range.start > from {
            push(from..range.start);
        }
        from = from.max(range.end);
    }
    if from < text.len() {
        push(from..text.len());
    }
    out
}
