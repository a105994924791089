//! The seam for dialects: what a dialect is, and the set of dialects a reply is read in.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use super::dialects;
use super::read::{blocks, read_block};
use super::scan::Table;
use super::stream::{BlockStream, Opened, Step};
use super::{Dialect, ParsedCalls, TextCall, TextCallStream, TextError};
use crate::call::ToolCall;

/// What a marker does in its dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MarkerRole {
    /// It opens a block of calls, and so names its dialect.
    Opens,
    /// It closes or divides a call: outside one, the call it belongs to lost its opening
    /// marker, and the reply is refused.
    Closes,
    /// It may stand after all calls (a wrapper's end): outside a call it is left out of the
    /// prose.
    Trails,
}

/// A token of a dialect, such as `<tool_call>`. It starts with `<` or `[`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Marker {
    text: &'static str,
    role: MarkerRole,
}

impl Marker {
    /// A marker that opens a block of calls.
    pub const fn opens(text: &'static str) -> Marker {
        Marker {
            text,
            role: MarkerRole::Opens,
        }
    }

    /// A marker that closes or divides a call.
    pub const fn closes(text: &'static str) -> Marker {
        Marker {
            text,
            role: MarkerRole::Closes,
        }
    }

    /// A marker that may stand after all calls.
    pub const fn trails(text: &'static str) -> Marker {
        Marker {
            text,
            role: MarkerRole::Trails,
        }
    }

    /// The marker as written.
    pub const fn text(&self) -> &'static str {
        self.text
    }

    /// What it does.
    pub const fn role(&self) -> MarkerRole {
        self.role
    }
}

/// The calls of one block and where the block ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// The calls, in text order.
    pub calls: Vec<TextCall>,
    /// The byte just after the block (its closing marker included): where the search for the
    /// next opening marker resumes.
    pub end: usize,
}

/// A format of tool calls in text, added to the ones built in.
///
/// A dialect names its markers once, in [`markers`](Self::markers); the readers find them,
/// whole or streamed, by the rules every dialect shares: a marker inside a quoted string or
/// Markdown inline code opens nothing, a reply with the markers of two dialects is refused as
/// [`Ambiguous`](TextError::Ambiguous), and a closing marker outside any call is refused. The
/// dialect reads the block each opening marker starts
/// ([`read_block`](Self::read_block)) and writes calls back ([`render`](Self::render)). Add it
/// to a [`Dialects`] to read replies in it.
///
/// ```
/// use tool_core::ToolCall;
/// use tool_core::text_calls::{Block, Dialect, Dialects, Marker, TextDialect, TextError, read_call_objects};
///
/// /// `<call>{…}</call>`.
/// #[derive(Debug)]
/// struct Angle;
///
/// impl TextDialect for Angle {
///     fn name(&self) -> &'static str {
///         "angle"
///     }
///     fn markers(&self) -> &'static [Marker] {
///         const MARKERS: &[Marker] = &[Marker::opens("<call>"), Marker::closes("</call>")];
///         MARKERS
///     }
///     fn read_block(&self, text: &str, start: usize, _: &Marker, complete: bool) -> Result<Option<Block>, TextError> {
///         let (calls, end) = match read_call_objects(text, start + "<call>".len()) {
///             Err(TextError::Unterminated { .. }) if !complete => return Ok(None),
///             result => result?,
///         };
///         let rest = text[end..].trim_start();
///         if rest.starts_with("</call>") {
///             let end = text.len() - rest.len() + "</call>".len();
///             Ok(Some(Block { calls, end }))
///         } else if "</call>".starts_with(rest) && !complete {
///             Ok(None)
///         } else {
///             Err(TextError::Invalid { at: end, reason: "expected `</call>`".into() })
///         }
///     }
///     fn render(&self, calls: &[ToolCall]) -> Result<String, TextError> {
///         Ok(calls
///             .iter()
///             .map(|call| format!("<call>{{\"name\": {:?}, \"arguments\": {}}}</call>", call.name(), call.arguments_text()))
///             .collect())
///     }
/// }
///
/// let dialects = Dialects::new().with(Angle).unwrap();
/// let parsed = dialects.parse(r#"Sure. <call>{"name": "f", "arguments": {"a": 1}}</call>"#, None).unwrap();
/// assert_eq!(parsed.dialect(), Some(Dialect::Custom("angle")));
/// assert_eq!(parsed.calls()[0].arguments(), r#"{"a": 1}"#);
/// ```
pub trait TextDialect: fmt::Debug + Send + Sync + 'static {
    /// A short stable name, unique among the dialects it is read with; the reply's dialect is
    /// then [`Dialect::Custom`] with this name.
    fn name(&self) -> &'static str;

    /// Every marker of the dialect, the only list of them: detection, the scanner that skips
    /// strings and inline code, the stream and the check that a rendered tool name holds no
    /// marker all read it. Each starts with `<` or `[`, at least one opens calls, and none
    /// starts or is started by another dialect's marker.
    fn markers(&self) -> &'static [Marker];

    /// Reads the block that the opening `marker` at byte `start` of `text` starts. Returns
    /// its calls (each [`TextCall`] spanning what it was read from) and where it ends.
    ///
    /// `complete` tells whether `text` is the whole reply. When it is not (the reply is
    /// streaming), return `Ok(None)` where more text could finish the block; the stream calls
    /// again, from the same `start`, once more text has arrived. When it is, a block cut
    /// short is [`Unterminated`](TextError::Unterminated). A malformed block is
    /// [`Invalid`](TextError::Invalid): nothing of the reply is then used.
    fn read_block(
        &self,
        text: &str,
        start: usize,
        marker: &Marker,
        complete: bool,
    ) -> Result<Option<Block>, TextError>;

    /// Writes `calls` the way the model writes them, so that the dialect reads the text back
    /// as the same calls. No calls render as the empty text.
    fn render(&self, calls: &[ToolCall]) -> Result<String, TextError>;
}

/// The dialects a reply may be read in: the built-in ones, and those added with
/// [`with`](Self::with). Cloning is cheap.
///
/// [`parse`](Self::parse), [`stream`](Self::stream) and [`render`](Self::render) work as
/// [`parse_calls`](super::parse_calls), [`TextCallStream::new`] and
/// [`render_calls`](super::render_calls) do, over these dialects: detection knows every
/// added dialect's markers, and a reply mixing any two dialects is refused.
#[derive(Clone)]
pub struct Dialects {
    table: Table,
    added: Vec<Added>,
}

impl fmt::Debug for Dialects {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.table.iter().map(|(dialect, _)| dialect))
            .finish()
    }
}

impl Default for Dialects {
    fn default() -> Self {
        Dialects::new()
    }
}

impl Dialects {
    /// The built-in dialects.
    pub fn new() -> Self {
        Dialects {
            table: dialects::BUILT_IN_TABLE,
            added: Vec::new(),
        }
    }

    /// Adds `dialect`. Refused ([`TextError::Dialect`]) when its name is taken, or its markers
    /// break the rules of [`TextDialect::markers`].
    pub fn with(mut self, dialect: impl TextDialect) -> Result<Self, TextError> {
        let name = dialect.name();
        let refuse = |reason: String| TextError::Dialect {
            name: name.to_owned(),
            reason,
        };
        if self.table.iter().any(|(d, _)| d.name() == name) {
            return Err(refuse("the name is taken".into()));
        }
        let markers = dialect.markers();
        if !markers.iter().any(|m| m.role() == MarkerRole::Opens) {
            return Err(refuse("no marker opens calls".into()));
        }
        for (i, marker) in markers.iter().enumerate() {
            let text = marker.text();
            if !text.starts_with(['<', '[']) {
                return Err(refuse(format!("`{text}` does not start with `<` or `[`")));
            }
            let others = self
                .table
                .iter()
                .flat_map(|(_, markers)| markers.iter())
                .chain(markers[..i].iter());
            for other in others {
                if other.text().starts_with(text) || text.starts_with(other.text()) {
                    return Err(refuse(format!(
                        "`{text}` and `{}` start alike, so one would be read for the other",
                        other.text()
                    )));
                }
            }
        }
        self.table.push(Dialect::Custom(name), markers);
        self.added.push(Added(Arc::new(dialect)));
        Ok(self)
    }

    /// Reads the calls in `text`, in `dialect`, or in the dialect its markers name when `None`
    /// (see [`parse_calls`](super::parse_calls)).
    pub fn parse(&self, text: &str, dialect: Option<Dialect>) -> Result<ParsedCalls, TextError> {
        super::parse_in(self, text, dialect)
    }

    /// A stream of one reply in `dialect`, or in the dialect its markers name when `None`
    /// (see [`TextCallStream`]).
    pub fn stream(&self, dialect: Option<Dialect>) -> TextCallStream {
        TextCallStream::in_dialects(self.clone(), dialect)
    }

    /// Writes `calls` in `dialect` (see [`render_calls`](super::render_calls)); a tool name
    /// holding a marker of any of these dialects is refused.
    pub fn render(&self, dialect: Dialect, calls: &[ToolCall]) -> Result<String, TextError> {
        super::render::render_in(self, dialect, calls)
    }

    /// The markers, by dialect.
    pub(crate) fn table(&self) -> &Table {
        &self.table
    }

    /// The reader of `dialect`, built in or added; the refusal of a name not added.
    pub(crate) fn reader(&self, dialect: Dialect) -> Result<&dyn Reader, TextError> {
        if let Some(built_in) = dialects::BUILT_IN.iter().find(|b| b.dialect == dialect) {
            return Ok(built_in);
        }
        self.added
            .iter()
            .find(|added| Dialect::Custom(added.0.name()) == dialect)
            .map(|added| added as &dyn Reader)
            .ok_or_else(|| TextError::Dialect {
                name: dialect.name().to_owned(),
                reason: "no such dialect was added".into(),
            })
    }
}

/// A whole reply's calls, and the byte ranges they and their markers were read from.
pub(crate) type Read = (Vec<TextCall>, Vec<Range<usize>>);

/// What the readers ask of a dialect, built in or added: the one way the whole-reply reader,
/// the stream and the renderer reach a dialect. A built-in dialect implements it in its own
/// file and is listed once in the dialects' registry; an added one is read through its
/// [`TextDialect`].
pub(crate) trait Reader: Send + Sync {
    /// Every call of the whole reply `text` and the ranges they were read from. `detecting`:
    /// the dialect was detected, not named. `Ok(None)`: the reply, guessed to be in this
    /// dialect, is prose after all.
    fn read(&self, table: &Table, text: &str, detecting: bool) -> Result<Option<Read>, TextError>;

    /// Whether the calls are only known when the reply ends (a stream named this dialect
    /// reads nothing before then).
    fn calls_at_end(&self) -> bool {
        false
    }

    /// What a stream reads after the opening `marker` at byte `at`.
    fn open(&self, at: usize, marker: &'static Marker) -> Opened;

    /// Writes `calls` (at least one) to `out`.
    fn render(&self, out: &mut String, calls: &[ToolCall]) -> Result<(), TextError>;
}

/// An added dialect, read through its [`TextDialect`].
#[derive(Clone)]
struct Added(Arc<dyn TextDialect>);

impl Reader for Added {
    fn read(&self, table: &Table, text: &str, detecting: bool) -> Result<Option<Read>, TextError> {
        let dialect = Dialect::Custom(self.0.name());
        blocks(table, text, dialect, &*self.0, detecting).map(Some)
    }

    fn open(&self, at: usize, marker: &'static Marker) -> Opened {
        Opened::Block(Box::new(AddedBlock {
            dialect: Arc::clone(&self.0),
            start: at,
            marker,
            spent: 0,
        }))
    }

    fn render(&self, out: &mut String, calls: &[ToolCall]) -> Result<(), TextError> {
        out.push_str(&self.0.render(calls)?);
        Ok(())
    }
}

/// An added dialect's block opened by `marker` at `start`, read again as text arrives:
/// `spent` bytes were handed to its reader so far. A reader reads its block from the start
/// each time, so a new try waits until the block is long enough to pay for it (see
/// [`worth_trying`]), which keeps the work linear in the block's length whatever the
/// chunking.
#[derive(Debug)]
struct AddedBlock {
    dialect: Arc<dyn TextDialect>,
    start: usize,
    marker: &'static Marker,
    spent: usize,
}

impl BlockStream for AddedBlock {
    fn step(&mut self, text: &str, out: &mut Vec<TextCall>) -> Result<Step, TextError> {
        let length = text.len() - self.start;
        if !worth_trying(self.spent, length) {
            return Ok(Step::Wait(Some(self.start)));
        }
        self.spent = self.spent.saturating_add(length);
        match read_block(&*self.dialect, text, self.start, self.marker, false)? {
            None => Ok(Step::Wait(Some(self.start))),
            Some(block) => {
                out.extend(block.calls);
                Ok(Step::Done(block.end))
            }
        }
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
