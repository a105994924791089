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

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::call::ToolCall;
use crate::{Registry, registry::ToolInfo};

mod model;
mod python;
mod render;
mod scan;
mod stream;

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
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 7] = [
        Dialect::Json,
        Dialect::Hermes,
        Dialect::Llama3,
        Dialect::Mistral,
        Dialect::Granite,
        Dialect::DeepSeek,
        Dialect::Pythonic,
    ];

    /// A short stable name, e.g. `"hermes"`.
    pub const fn name(self) -> &'static str {
        match self {
            Dialect::Json => "json",
            Dialect::Hermes => "hermes",
            Dialect::Llama3 => "llama3",
            Dialect::Mistral => "mistral",
            Dialect::Granite => "granite",
            Dialect::DeepSeek => "deepseek",
            Dialect::Pythonic => "pythonic",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

const DS_CALLS_BEGIN: &str = "<｜tool▁calls▁begin｜>";
const DS_CALLS_END: &str = "<｜tool▁calls▁end｜>";
const DS_CALL_BEGIN: &str = "<｜tool▁call▁begin｜>";
const DS_CALL_END: &str = "<｜tool▁call▁end｜>";
const DS_SEP: &str = "<｜tool▁sep｜>";

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
    let named = dialect;
    let dialect = match dialect {
        Some(dialect) => dialect,
        None => match detect(text)? {
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
    let read = match dialect {
        // A reply guessed to be JSON (no dialect named) whose first value is no call object at
        // all, `{"summary": …}` say, is an answer in JSON: prose, not a broken call.
        Dialect::Json if detecting => match json_reply(text) {
            Err(TextError::Invalid { .. }) if !call_shaped(text) => {
                return Ok(ParsedCalls {
                    dialect: None,
                    calls: Vec::new(),
                    prose: prose(text, &[]),
                });
            }
            result => result,
        },
        Dialect::Json => json_reply(text),
        Dialect::Hermes => tagged(
            text,
            dialect,
            &["<tool_call>"],
            Some("</tool_call>"),
            detecting,
        ),
        Dialect::Granite => tagged(
            text,
            dialect,
            &["<function_call>", "<|tool_call|>"],
            None,
            detecting,
        ),
        Dialect::Llama3 => llama3(text, detecting),
        Dialect::Mistral => mistral(text, detecting),
        Dialect::DeepSeek => deepseek(text, detecting),
        Dialect::Pythonic => pythonic(text, detecting),
    };
    let (calls, used) = match read {
        Ok(read) => read,
        Err(error) => {
            // A reply in two dialects that fails in the first is refused as ambiguous.
            let dialects = scan::dialects_outside_quotes(text);
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
fn detect(text: &str) -> Result<Option<Dialect>, TextError> {
    let mut scanner = scan::Scanner::new(0);
    let mut stray = None;
    while let Some((at, marker)) = scanner.next(text, true) {
        if marker.opens {
            return Ok(Some(marker.dialect));
        }
        if marker.stray() {
            stray = stray.or(Some((at, marker)));
        }
    }
    if let Some((at, marker)) = stray {
        return Err(stray_marker(at, marker));
    }
    match whole_dialect(text) {
        None if let Some(at) = scanner.hidden() => Err(quoted_marker(at)),
        found => Ok(found),
    }
}

/// A closing or inner marker with no call open: the call it belongs to lost its opening
/// marker, and is not guessed at.
pub(crate) fn stray_marker(at: usize, marker: &scan::Marker) -> TextError {
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
    match trimmed.bytes().next() {
        Some(b'{') => Some(Dialect::Json),
        Some(b'[') => {
            // A list of call objects, of Python calls, or of strings holding Python calls.
            let inner = trimmed[1..].trim_start();
            let quoted = inner
                .strip_prefix(['\'', '"'])
                .is_some_and(python_call_start);
            if inner.starts_with('{') || inner.starts_with(']') {
                Some(Dialect::Json)
            } else if python_call_start(inner) || quoted {
                Some(Dialect::Pythonic)
            } else {
                None
            }
        }
        Some(_) if python_call_start(trimmed) && looks_whole_call(trimmed) => {
            Some(Dialect::Pythonic)
        }
        _ => None,
    }
}

/// Finds a dialect's markers outside quotes in the prose between its blocks, and notes what
/// else the prose holds.
struct Seeker<'a> {
    text: &'a str,
    dialect: Dialect,
    /// Other dialects whose opening markers stand in the prose.
    others: Vec<Dialect>,
    hidden: Option<usize>,
}

impl<'a> Seeker<'a> {
    fn new(text: &'a str, dialect: Dialect) -> Self {
        Seeker {
            text,
            dialect,
            others: Vec::new(),
            hidden: None,
        }
    }

    /// The next marker of the dialect outside quotes at or after `from` that may stand
    /// outside a call; one that closes or divides a call is refused as stray.
    fn opener(&mut self, from: usize) -> Result<Option<(usize, &'static scan::Marker)>, TextError> {
        match self.next(from) {
            Some((at, marker)) if marker.stray() => Err(stray_marker(at, marker)),
            found => Ok(found),
        }
    }

    /// The next marker of the dialect outside quotes at or after `from`.
    fn next(&mut self, from: usize) -> Option<(usize, &'static scan::Marker)> {
        let mut scanner = scan::Scanner::new(from);
        let found = loop {
            match scanner.next(self.text, true) {
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
    fn finish(self, detecting: bool) -> Result<(), TextError> {
        if detecting && !self.others.is_empty() {
            let mut found = self.others;
            found.push(self.dialect);
            let dialects = Dialect::ALL
                .into_iter()
                .filter(|d| found.contains(d))
                .collect();
            return Err(TextError::Ambiguous { dialects });
        }
        match self.hidden {
            Some(at) => Err(quoted_marker(at)),
            None => Ok(()),
        }
    }
}

/// Whether the reply's first JSON value looks meant as calls: an object with a `name`, or a
/// list holding one.
fn call_shaped(text: &str) -> bool {
    let body = unfenced(text).0.trim_start();
    let first = serde_json::Deserializer::from_str(body)
        .into_iter::<Value>()
        .next();
    let named = |value: &Value| value.get("name").is_some();
    match first {
        Some(Ok(Value::Object(object))) => {
            object.contains_key("name") || object.contains_key("tool_calls")
        }
        Some(Ok(Value::Array(items))) => items.is_empty() || items.iter().any(named),
        // Not one whole JSON value: it may be a call cut short or written wrong.
        _ => true,
    }
}

/// Whether `text` starts with `name(` (the name possibly dotted).
fn python_call_start(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    if !(b
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        || b.starts_with(b"\\_"))
    {
        return false;
    }
    while i < b.len() {
        if b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.' {
            i += 1;
        } else if b[i] == b'\\' && b.get(i + 1) == Some(&b'_') {
            i += 2;
        } else {
            break;
        }
    }
    b.get(i) == Some(&b'(')
}

/// Whether a text starting with `name(` is meant as nothing but calls: it ends with `)` or
/// `);` (or is cut off inside the call, which then reads as unterminated). Prose that merely
/// starts with a word and a parenthesis (`Note (see below): …`) does not.
fn looks_whole_call(text: &str) -> bool {
    let trimmed = text.trim_end();
    if trimmed.trim_end_matches(';').trim_end().ends_with(')') || !trimmed.contains(')') {
        return true;
    }
    // A literal call and a separator: calls (the next one perhaps cut off).
    let mut reader = python::Reader::new(trimmed, 0);
    reader.call().is_ok() && {
        reader.skip_space();
        matches!(trimmed.as_bytes().get(reader.at()), Some(b';' | b','))
    }
}

/// A reply whose first line is a tool name alone and whose rest is one JSON object (bare or
/// in a fence): the name, and where the object (or its fence) starts.
fn name_line(text: &str) -> Option<(&str, usize)> {
    let start = text.len() - text.trim_start().len();
    let rest = &text[start..];
    let line = rest.find('\n')?;
    let name = rest[..line].trim_end();
    // A function's name, not a title or a word (`Result`, `json`, `search`): lowercase first,
    // and more than one word (`snake_case`, `dotted.name`, `camelCase`).
    let first = name.bytes().next()?;
    let words = name
        .bytes()
        .skip(1)
        .any(|c| matches!(c, b'_' | b'.') || c.is_ascii_uppercase());
    if !(first.is_ascii_lowercase() || first == b'_') || !words || !tool_name(name) {
        return None;
    }
    // A file's name over its contents is not a call.
    const FILES: [&str; 14] = [
        "json", "jsonl", "yaml", "yml", "toml", "txt", "md", "py", "js", "ts", "rs", "csv", "xml",
        "html",
    ];
    if let Some((_, extension)) = name.rsplit_once('.')
        && FILES
            .iter()
            .any(|file| extension.eq_ignore_ascii_case(file))
    {
        return None;
    }
    let after = &rest[line..];
    let object = start + line + (after.len() - after.trim_start().len());
    let body = unfenced(&text[object..]).0.trim_start();
    body.starts_with('{').then_some((name, object))
}

/// The text inside one Markdown fence that is the whole reply, with its offset; else the text.
fn unfenced(text: &str) -> (&str, usize) {
    let trimmed = text.trim();
    let start = text.len() - text.trim_start().len();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return (text, 0);
    };
    let Some(line) = rest.find('\n') else {
        return (text, 0);
    };
    let label = rest[..line].trim_end_matches('\r').trim();
    let known = ["", "json", "python"]
        .iter()
        .any(|name| label.eq_ignore_ascii_case(name));
    let open = 3 + line + 1;
    match trimmed[open..].strip_suffix("```") {
        Some(body) if known && !body.contains("```") => (body, start + open),
        _ => (text, 0),
    }
}

/// The whole reply as call objects (one, or a list).
fn json_reply(text: &str) -> Result<(Vec<TextCall>, Vec<Range<usize>>), TextError> {
    let (body, offset) = unfenced(text);
    if let Some((name, object)) = name_line(body) {
        return name_line_call(text, name, offset + object);
    }
    let trimmed = body.trim_start();
    let at = offset + (body.len() - trimmed.len());
    let (calls, end) = json_calls(text, at)?;
    if !text[end..].trim().is_empty() && text[end..].trim() != "```" {
        let rest = end + (text[end..].len() - text[end..].trim_start().len());
        return Err(TextError::Invalid {
            at: rest,
            reason: "text after the calls in a reply that is only calls".into(),
        });
    }
    Ok((calls, std::iter::once(0..text.len()).collect()))
}

/// A reply that is a tool name on a line of its own, then its arguments as a JSON object
/// (bare or in a fence) at `object`.
fn name_line_call(
    text: &str,
    name: &str,
    object: usize,
) -> Result<(Vec<TextCall>, Vec<Range<usize>>), TextError> {
    let (inner, inner_offset) = unfenced(&text[object..]);
    let at = object + inner_offset + (inner.len() - inner.trim_start().len());
    let (raw, end) = json_value(text, at)?;
    let arguments = arguments_text(raw).map_err(|reason| TextError::Invalid { at, reason })?;
    let rest = text[end..].trim();
    if !rest.is_empty() && rest != "```" && rest.replace(char::is_whitespace, "") != "``````" {
        return Err(TextError::Invalid {
            at: end + (text[end..].len() - text[end..].trim_start().len()),
            reason: "text after the call in a reply that is only a call".into(),
        });
    }
    let start = text.len() - text.trim_start().len();
    let call = TextCall {
        name: name.to_owned(),
        arguments,
        positional: Vec::new(),
        span: start..end,
    };
    Ok((vec![call], std::iter::once(0..text.len()).collect()))
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
fn json_calls(text: &str, at: usize) -> Result<(Vec<TextCall>, usize), TextError> {
    let (raw, end) = match json_value(text, at) {
        Ok(found) => found,
        Err(error @ TextError::Invalid { .. }) => {
            return python_calls(text, at).ok_or(error);
        }
        Err(error) => return Err(error),
    };
    if let Ok(envelope) = serde_json::from_str::<Envelope<'_>>(raw.get()) {
        let calls = envelope
            .tool_calls
            .into_iter()
            .map(|item| call_object(item, at..end))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok((calls, end));
    }
    let calls = match raw.get().trim_start().as_bytes().first() {
        Some(b'[') => {
            let items: Vec<&RawValue> =
                serde_json::from_str(raw.get()).map_err(|error| TextError::Invalid {
                    at,
                    reason: format!("not a list of call objects: {error}"),
                })?;
            items
                .into_iter()
                .map(|item| call_object(item, at..end))
                .collect::<Result<Vec<_>, _>>()?
        }
        _ => vec![call_object(raw, at..end)?],
    };
    Ok((calls, end))
}

/// Call objects written as Python literals at `at` (after whitespace): a dict
/// `{'name': …, 'arguments': {…}}` or a list of them, with nothing in it but literals. `None`
/// when that is not what stands there.
fn python_calls(text: &str, at: usize) -> Option<(Vec<TextCall>, usize)> {
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
            arguments: Value::Object(arguments).to_string(),
            positional: Vec::new(),
            span: start..end,
        });
    }
    Some((calls, end))
}

/// One JSON value at `at` (after whitespace), borrowed from `text`, and where it ends.
fn json_value(text: &str, at: usize) -> Result<(&RawValue, usize), TextError> {
    let rest = &text[at..];
    // JSON's own whitespace, as the stream's reader skips it.
    let lead = rest.len() - rest.trim_start_matches([' ', '\t', '\n', '\r']).len();
    let mut stream = serde_json::Deserializer::from_str(&rest[lead..]).into_iter::<&RawValue>();
    match stream.next() {
        Some(Ok(raw)) => Ok((raw, at + lead + stream.byte_offset())),
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

/// A call object `{"name": …, "arguments" | "parameters": …}` (other members are ignored).
fn call_object(raw: &RawValue, span: Range<usize>) -> Result<TextCall, TextError> {
    let invalid = |reason: String| TextError::Invalid {
        at: span.start,
        reason,
    };
    let object: CallObject<'_> = serde_json::from_str(raw.get())
        .map_err(|error| invalid(format!("not a call object: {error}")))?;
    let arguments = match (object.arguments, object.parameters) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "both `arguments` and `parameters` are given".into(),
            ));
        }
        (Some(raw), None) | (None, Some(raw)) => raw,
        (None, None) => {
            return Err(invalid(
                "the call object has no `arguments` or `parameters`".into(),
            ));
        }
    };
    let arguments = arguments_text(arguments).map_err(invalid)?;
    Ok(TextCall {
        name: object.name,
        arguments,
        positional: Vec::new(),
        span,
    })
}

/// The arguments as a JSON object text: the object as written, or the object inside a JSON
/// string.
fn arguments_text(raw: &RawValue) -> Result<String, String> {
    let text = raw.get().trim();
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
fn tagged(
    text: &str,
    dialect: Dialect,
    opens: &[&str],
    close: Option<&str>,
    detecting: bool,
) -> Result<(Vec<TextCall>, Vec<Range<usize>>), TextError> {
    let mut calls = Vec::new();
    let mut used = Vec::new();
    let mut seeker = Seeker::new(text, dialect);
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

/// Llama 3: `<|python_tag|>` then call objects separated by `;` (repeated); or a reply that is
/// one call object.
fn llama3(text: &str, detecting: bool) -> Result<(Vec<TextCall>, Vec<Range<usize>>), TextError> {
    let mut seeker = Seeker::new(text, Dialect::Llama3);
    let mut calls = Vec::new();
    let mut used = Vec::new();
    let mut from = 0;
    while let Some((start, marker)) = seeker.opener(from)? {
        let mut at = start + marker.text.len();
        loop {
            let (mut found, end) = json_calls(text, at)?;
            calls.append(&mut found);
            at = end;
            let rest = &text[at..];
            let gap = rest.len() - rest.trim_start().len();
            if rest[gap..].starts_with(';') {
                at += gap + 1;
                if text[at..].trim().is_empty() {
                    break;
                }
                continue;
            }
            break;
        }
        let mut end = at;
        for token in ["<|eom_id|>", "<|eot_id|>"] {
            let rest = &text[end..];
            let gap = rest.len() - rest.trim_start().len();
            if rest[gap..].starts_with(token) {
                end += gap + token.len();
            }
        }
        used.push(start..end);
        from = end;
    }
    if used.is_empty() {
        return json_reply(text);
    }
    seeker.finish(detecting)?;
    Ok((calls, used))
}

/// Mistral: `[TOOL_CALLS]` then a JSON list of call objects, or `name[ARGS]{…}` (repeated
/// with more `[TOOL_CALLS]` markers).
fn mistral(text: &str, detecting: bool) -> Result<(Vec<TextCall>, Vec<Range<usize>>), TextError> {
    let mut calls = Vec::new();
    let mut used = Vec::new();
    let mut seeker = Seeker::new(text, Dialect::Mistral);
    let mut from = 0;
    while let Some((start, marker)) = seeker.opener(from)? {
        let body = start + marker.text.len();
        let rest = text[body..].trim_start();
        let end = if rest.starts_with('[') || rest.starts_with('{') {
            let (mut found, end) = json_calls(text, body)?;
            calls.append(&mut found);
            end
        } else {
            let Some(args) = text[body..].find("[ARGS]") else {
                return Err(TextError::Unterminated {
                    at: body,
                    reason: "`[ARGS]` is missing after the tool's name".into(),
                });
            };
            let name = mistral_name(text, body, body + args)?;
            let call = mistral_call(text, start, name, body + args + "[ARGS]".len())?;
            let end = call.span.end;
            calls.push(call);
            end
        };
        used.push(start..end);
        from = end;
    }
    seeker.finish(detecting)?;
    Ok((calls, used))
}

/// The tool name of a Mistral `name[ARGS]` call, written from `body` to `args` (where
/// `[ARGS]` starts).
fn mistral_name(text: &str, body: usize, args: usize) -> Result<String, TextError> {
    let name = text[body..args].trim();
    if !tool_name(name) {
        return Err(TextError::Invalid {
            at: body,
            reason: format!("{name:?} is not a tool name"),
        });
    }
    Ok(name.to_owned())
}

/// Whether `name` is written as tool names are: letters, digits, `_`, `-` and `.`.
fn tool_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
}

/// A Mistral `name[ARGS]{…}` call opened at `start`, its arguments from `at`.
fn mistral_call(text: &str, start: usize, name: String, at: usize) -> Result<TextCall, TextError> {
    let (raw, end) = json_value(text, at)?;
    let arguments = arguments_text(raw).map_err(|reason| TextError::Invalid { at, reason })?;
    Ok(TextCall {
        name,
        arguments,
        positional: Vec::new(),
        span: start..end,
    })
}

/// DeepSeek: `<｜tool▁call▁begin｜>[function<｜tool▁sep｜>]name` then the arguments as JSON (in
/// a fence or bare) and `<｜tool▁call▁end｜>`, inside optional
/// `<｜tool▁calls▁begin｜>`…`<｜tool▁calls▁end｜>`.
fn deepseek(text: &str, detecting: bool) -> Result<(Vec<TextCall>, Vec<Range<usize>>), TextError> {
    let mut calls = Vec::new();
    let mut used = Vec::new();
    let mut seeker = Seeker::new(text, Dialect::DeepSeek);
    let mut from = 0;
    let (mut opened, mut closed) = (false, false);
    while let Some((start, marker)) = seeker.opener(from)? {
        let end = start + marker.text.len();
        match marker.text {
            DS_CALL_BEGIN => {
                let call = deepseek_call(text, start)?;
                used.push(call.span());
                from = call.span.end;
                calls.push(call);
                continue;
            }
            // The wrapper's tokens are left out of the prose.
            DS_CALLS_BEGIN => {
                opened = true;
                used.push(start..end);
            }
            DS_CALLS_END => {
                closed = true;
                used.push(start..end);
            }
            _ => {}
        }
        from = end;
    }
    if opened && !closed && calls.is_empty() {
        return Err(TextError::Unterminated {
            at: text.len(),
            reason: format!("`{DS_CALLS_END}` is missing"),
        });
    }
    seeker.finish(detecting)?;
    Ok((calls, used))
}

/// The most bytes from a DeepSeek call's begin marker to its arguments.
const DS_MAX_HEAD: usize = 1024;

/// The head of a DeepSeek call opened at `start`: its tool name, where its arguments start,
/// and whether they are in a fence. `None`: the text ends before that is known and more may
/// come (never when `complete`).
fn deepseek_head(
    text: &str,
    start: usize,
    complete: bool,
) -> Result<Option<(String, usize, bool)>, TextError> {
    let body = start + DS_CALL_BEGIN.len();
    let invalid = |at: usize, reason: String| TextError::Invalid { at, reason };
    let short = |at: usize, what: &str| {
        if complete {
            Err(TextError::Unterminated {
                at,
                reason: format!("the call ends before {what}"),
            })
        } else {
            Ok(None)
        }
    };
    let capped = text.len() > body + DS_MAX_HEAD;
    let window = &text[body..text.floor_char_boundary(text.len().min(body + DS_MAX_HEAD))];
    let name_byte = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.');
    // The name (or `function`) up to the separator.
    let q = window
        .bytes()
        .position(|c| !(name_byte(c) || c == b' ' || c == b'\t'))
        .unwrap_or(window.len());
    if !window[q..].starts_with(DS_SEP) {
        if !capped && DS_SEP.starts_with(&window[q..]) {
            return short(text.len(), &format!("`{DS_SEP}`"));
        }
        return Err(invalid(
            body,
            format!("`{DS_SEP}` is missing after the tool's name"),
        ));
    }
    let before = window[..q].trim();
    let mut at = q + DS_SEP.len();
    // V3 writes `function<sep>name\n```json\n{…}\n```; later ones `name<sep>{…}`.
    let name = if before == "function" {
        let rest = &window[at..];
        let len = rest
            .bytes()
            .position(|c| !name_byte(c))
            .unwrap_or(rest.len());
        if len == rest.len() && !capped {
            return short(text.len(), "the arguments");
        }
        at += len;
        &rest[..len]
    } else {
        before
    };
    if !tool_name(name) {
        return Err(invalid(body, format!("{name:?} is not a tool name")));
    }
    let rest = &window[at..];
    at += rest.len() - rest.trim_start().len();
    let rest = &window[at..];
    let fenced = rest.starts_with("```");
    if fenced {
        at += 3;
        let label = window[at..]
            .bytes()
            .take_while(u8::is_ascii_alphabetic)
            .count();
        if at + label == window.len() && !capped {
            return short(text.len(), "the arguments");
        }
        if !(label == 0 || window[at..at + label].eq_ignore_ascii_case("json")) {
            return Err(invalid(
                body + at,
                "the arguments' fence is not JSON".into(),
            ));
        }
        at += label;
    } else if rest.is_empty() || "```".starts_with(rest) {
        if !capped {
            return short(text.len(), "the arguments");
        }
        return Err(invalid(body, "the call's head is too long".into()));
    }
    Ok(Some((name.to_owned(), body + at, fenced)))
}

/// One DeepSeek call opened at `start` (its begin marker), read up to its end marker.
fn deepseek_call(text: &str, start: usize) -> Result<TextCall, TextError> {
    let Some((name, args_at, fenced)) = deepseek_head(text, start, true)? else {
        return Err(TextError::Unterminated {
            at: text.len(),
            reason: "the call is cut off".into(),
        });
    };
    let (raw, mut at) = json_value(text, args_at)?;
    let arguments = arguments_text(raw).map_err(|reason| TextError::Invalid {
        at: args_at,
        reason,
    })?;
    let mut expect = |token: &str| {
        let rest = &text[at..];
        let rest_at = at + (rest.len() - rest.trim_start().len());
        let rest = &text[rest_at..];
        if rest.starts_with(token) {
            at = rest_at + token.len();
            Ok(())
        } else if token.starts_with(rest) {
            Err(TextError::Unterminated {
                at: rest_at,
                reason: format!("`{token}` is missing"),
            })
        } else {
            Err(TextError::Invalid {
                at: rest_at,
                reason: format!("expected `{token}` after the arguments"),
            })
        }
    };
    if fenced {
        expect("```")?;
    }
    expect(DS_CALL_END)?;
    Ok(TextCall {
        name,
        arguments,
        positional: Vec::new(),
        span: start..at,
    })
}

/// Python calls: the whole reply (or its one fence) is a call or a list of calls, or the
/// calls stand after `<|python_start|>` (up to an optional `<|python_end|>`).
fn pythonic(text: &str, detecting: bool) -> Result<(Vec<TextCall>, Vec<Range<usize>>), TextError> {
    let mut seeker = Seeker::new(text, Dialect::Pythonic);
    let (start, used_from) = match seeker.next(0) {
        Some((at, marker)) if marker.opens => {
            // The prose before the marker holds no other call.
            seeker.finish(detecting)?;
            (at + marker.text.len(), at)
        }
        _ => {
            let (body, offset) = unfenced(text);
            (offset + (body.len() - body.trim_start().len()), 0)
        }
    };
    let mut reader = python::Reader::new(text, start);
    let calls = reader.calls()?;
    let end = reader.at();
    let rest = &text[end..];
    let rest = rest.trim_start();
    let allowed_after = ["", "```", "<|python_end|>", "<|eom|>", "<|eot|>"];
    if !allowed_after.iter().any(|tail| rest.trim_end() == *tail) {
        return Err(TextError::Invalid {
            at: text.len() - rest.len(),
            reason: "text after the calls in a reply that is only calls".into(),
        });
    }
    let calls = calls
        .into_iter()
        .map(|call| TextCall {
            name: call.name,
            arguments: Value::Object(call.keyword).to_string(),
            positional: call.positional,
            span: call.span,
        })
        .collect();
    Ok((calls, std::iter::once(used_from..text.len()).collect()))
}

/// The parts of `text` outside `used`, trimmed, non-empty.
fn prose(text: &str, used: &[Range<usize>]) -> Vec<Range<usize>> {
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
