//! Finding the one JSON value a model meant in its free text: the whole reply, a
//! `<tool_call>` tag, a Markdown fence or a span of prose, and refusing to guess when there
//! is more than one, or to hand back a part of a larger value.
//!
//! This is for tool calls a model writes into its text. Arguments a provider delivers in a
//! structured field are already one JSON text and go straight to
//! [`parse_arguments`](crate::Tool::parse_arguments), which stays strict.

pub(crate) mod fence;
mod scan;

use std::fmt;
use std::ops::Range;

use serde::de::IgnoredAny;

use self::fence::FenceKind;
use self::scan::Scan;

/// Where [`extract_json`] found the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Source {
    /// The whole text, without the whitespace around it, is the value.
    Whole,
    /// Between `<tool_call>` and `</tool_call>`.
    Tag,
    /// Inside a Markdown fence labelled `json`, or unlabelled.
    Fence,
    /// In prose.
    Prose,
}

/// The one JSON value found in a text by [`extract_json`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted<'a> {
    json: &'a str,
    source: Source,
    span: Range<usize>,
}

impl<'a> Extracted<'a> {
    /// The value's text, a slice of the input: a JSON object or array, ready for
    /// [`parse_arguments`](crate::Tool::parse_arguments).
    pub fn json(&self) -> &'a str {
        self.json
    }

    /// Where it was found.
    pub fn source(&self) -> Source {
        self.source
    }

    /// Its byte range in the input.
    pub fn span(&self) -> Range<usize> {
        self.span.clone()
    }
}

/// Why [`extract_json`] found no single value. `Display` gives a short line to send back to
/// the model.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExtractError {
    /// No JSON object or array where the text was searched.
    NotFound,
    /// More than one JSON value: which one the model meant is not guessed.
    Ambiguous {
        /// How many there are (at least 2).
        count: usize,
        /// The byte ranges of the first of them (at most 8), in text order.
        spans: Vec<Range<usize>>,
    },
    /// No JSON value, and a `{` or `[` where the text was searched is never closed: the
    /// likely cause is a value cut short. When a value was cut short, this is its first
    /// bracket, and the values inside it, being parts of it, are not found.
    Unterminated {
        /// `'{'` or `'['`.
        opener: char,
        /// Its byte offset in the input.
        at: usize,
    },
    /// From [`extract_json_object`]: the one value found is an array, not an object.
    NotAnObject {
        /// The array's byte range in the input.
        span: Range<usize>,
    },
}

/// How many spans an [`ExtractError::Ambiguous`] keeps.
const KEPT_SPANS: usize = 8;
/// How many of them its message names.
const NAMED_SPANS: usize = 3;

impl fmt::Display for ExtractError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExtractError::NotFound => {
                f.write_str("found no JSON object or array; send exactly one")
            }
            ExtractError::Ambiguous { count, spans } => {
                write!(f, "found {count} JSON values (at bytes ")?;
                let named = spans.len().min(NAMED_SPANS);
                for (i, span) in spans[..named].iter().enumerate() {
                    if i > 0 {
                        f.write_str(if i + 1 == named && named == *count {
                            " and "
                        } else {
                            ", "
                        })?;
                    }
                    write!(f, "{}..{}", span.start, span.end)?;
                }
                if *count > named {
                    write!(f, " and {} more", count - named)?;
                }
                f.write_str("); send exactly one")
            }
            ExtractError::Unterminated { opener, at } => write!(
                f,
                "the `{opener}` at byte {at} is never closed; send one complete JSON value"
            ),
            ExtractError::NotAnObject { span } => write!(
                f,
                "found a JSON array at bytes {}..{}; send one JSON object",
                span.start, span.end
            ),
        }
    }
}

impl std::error::Error for ExtractError {}

/// Finds the one JSON object or array a model meant in its free text.
///
/// The text is searched in four places, in this order, and the first that applies decides:
///
/// 1. **the whole text** ([`Source::Whole`]): without the whitespace around it, the text is
///    one JSON object or array;
/// 2. **`<tool_call>` tags** ([`Source::Tag`]): if the text has a `<tool_call>` tag, only the
///    contents of the tags are searched, and nothing outside them;
/// 3. **Markdown fences** ([`Source::Fence`]): if the text has a fence labelled `json` (in any
///    case), or an unlabelled fence holding JSON, only the contents of those fences are searched;
/// 4. **prose** ([`Source::Prose`]): otherwise the whole text is searched, except the contents
///    of fences labelled with another language (```` ```python ````).
///
/// Within a place, the candidates are the top-level balanced `{…}` and `[…]` spans that parse
/// as JSON and that the text presents as values of their own, by the rules below. Exactly one
/// must be found, otherwise the error says what went wrong:
/// [`Ambiguous`](ExtractError::Ambiguous) for more than one,
/// [`Unterminated`](ExtractError::Unterminated) for none when a bracket never closes,
/// [`NotFound`](ExtractError::NotFound) for none at all. A value found is always a whole
/// value, never a part of a larger one.
///
/// The rules:
///
/// - **Nesting.** Only top-level spans count: `{"a": {"b": 1}}` is one value, not two. The
///   inside of a span that does not parse is not searched (`{note: {"a": 1}}` holds none).
/// - **Values cut short.** A `{` or `[` that never closes starts a value cut short when it is
///   inside a tag or a `json` fence, or, anywhere else, when it starts like JSON: `{` then
///   `"`, or `[` then `{`, `[`, `"`, a digit or `-` (whitespace between allowed). Nothing
///   inside it counts, as it would be a part of that value:
///   `<tool_call>{"name": "f", "arguments": {"a": 1}` is
///   [`Unterminated`](ExtractError::Unterminated) at its first `{`, and `{"a": 1}` is not
///   found.
/// - **Stray brackets.** Any other `{` or `[` that never closes (a smiley, `:-{`) hides
///   nothing after it, and a `}` or `]` with nothing to close is ignored.
/// - **Pieces of code.** A value that is an operand in code does not count: right after a
///   name, a `]` or a `)` (`rows[{…}]`, `[f(x)][0]`), after an `=` (`k=[{…}]`,
///   `f(options={…})`), or right before a `[`, a `(` or a `.name` (`{…}["a"]`,
///   `{…}.keys()`). Passed to a call, as in `f({…})`, it counts.
/// - **Arrays** count like objects, since a model may send a list (of calls, say) on purpose.
///   So `[{"a": 1}]` beside an object makes the text ambiguous: when it is unclear which one
///   was meant, the model is asked, not second-guessed. Except where the text says it holds
///   JSON (the whole text, a tag, a `json` fence), an empty array or an array of scalars
///   never counts: in prose `[1]`, `[0, 10]` and `[]` are citations, indices and ranges far
///   more often than answers.
/// - **Scalars** (numbers, strings, `true`, `false`, `null`) never count: in prose they cannot
///   be told apart from words.
/// - **Strings.** Brackets, backticks and tags inside a JSON string belong to the string, and
///   `\"` does not end it. In prose, outside any bracket, a quote is just a quote.
/// - **Fences** open with a run of three or more backticks anywhere outside a JSON string and
///   close with a run at least as long. The label is the first word after the opening run.
/// - **Tags** are exactly `<tool_call>` and `</tool_call>`, anywhere outside a JSON string. A
///   second `<tool_call>` ends the open one.
/// - **Cut-off replies.** A tag or fence that is never closed runs to the end of the text, as
///   replies are often cut at a stop sequence: `<tool_call>{"a": 1}` is found.
///
/// A caller that needs an object, such as a tool's arguments, calls
/// [`extract_json_object`] instead.
///
/// Time and memory are linear in the length of the text, whatever it holds: one forward pass
/// finds every span, fence and tag, and each byte is parsed as JSON at most once.
///
/// ```
/// use tool_core::{extract::{ExtractError, Source, extract_json}};
///
/// let found = extract_json(r#"Sure! Here you go: {"city": "Paris"} hope that helps"#)?;
/// assert_eq!(found.json(), r#"{"city": "Paris"}"#);
/// assert_eq!((found.source(), found.span()), (Source::Prose, 19..36));
///
/// let found = extract_json("```json\n{\"city\": \"Paris\"}\n```")?;
/// assert_eq!(found.source(), Source::Fence);
///
/// let error = extract_json(r#"{"city": "Paris"} then {"city": "Lyon"}"#).unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "found 2 JSON values (at bytes 0..17 and 23..39); send exactly one"
/// );
/// assert_eq!(
///     extract_json(r#"<tool_call>{"city": "Par"#),
///     Err(ExtractError::Unterminated { opener: '{', at: 11 })
/// );
/// assert_eq!(
///     extract_json(r#"get_weather(city="Paris", days=[1, 2])"#),
///     Err(ExtractError::NotFound)
/// );
/// # Ok::<(), ExtractError>(())
/// ```
pub fn extract_json(text: &str) -> Result<Extracted<'_>, ExtractError> {
    let scan = scan::scan(text);
    let mut candidates = Candidates::new(text, &scan.spans);
    // A JSON object or array holds no backticks or tags outside its strings, so when the whole
    // text is one, the scan found it as the only span; it is not parsed a second time.
    let start = text.len() - text.trim_start().len();
    let whole = start..start + text.trim().len();
    if scan.spans.first() == Some(&whole) && candidates.kind(0) != Kind::Invalid {
        return Ok(Extracted {
            json: &text[whole.clone()],
            source: Source::Whole,
            span: whole,
        });
    }
    let (source, places) = if scan.tags.is_empty() {
        fenced_or_prose(text, &scan, &mut candidates)
    } else {
        let tags = scan.tags.iter().map(|tag| Place::marked(tag.clone()));
        (Source::Tag, tags.collect())
    };
    let found = candidates.within(&places);
    match found.count {
        0 => Err(
            first_unclosed(&scan.unclosed, &places).map_or(ExtractError::NotFound, |at| {
                ExtractError::Unterminated {
                    opener: char::from(text.as_bytes()[at]),
                    at,
                }
            }),
        ),
        1 => {
            let span = found.spans[0].clone();
            Ok(Extracted {
                json: &text[span.clone()],
                source,
                span,
            })
        }
        count => Err(ExtractError::Ambiguous {
            count,
            spans: found.spans,
        }),
    }
}

/// Finds the one JSON object a model meant in its free text, for a caller that needs an
/// object, such as a tool's arguments.
///
/// The search and its refusals are those of [`extract_json`]; when the one value it finds is
/// an array, the answer is [`ExtractError::NotAnObject`]. So an object inside an array, or
/// inside any larger value, is never returned on its own.
///
/// ```
/// use tool_core::{extract::{ExtractError, extract_json_object}};
///
/// let found = extract_json_object(r#"Calling now: {"city": "Paris"}"#)?;
/// assert_eq!(found.json(), r#"{"city": "Paris"}"#);
///
/// let error = extract_json_object(r#"[{"city": "Paris"}]"#).unwrap_err();
/// assert_eq!(error, ExtractError::NotAnObject { span: 0..19 });
/// assert_eq!(
///     error.to_string(),
///     "found a JSON array at bytes 0..19; send one JSON object"
/// );
/// # Ok::<(), ExtractError>(())
/// ```
pub fn extract_json_object(text: &str) -> Result<Extracted<'_>, ExtractError> {
    let found = extract_json(text)?;
    if found.json.starts_with('{') {
        Ok(found)
    } else {
        Err(ExtractError::NotAnObject { span: found.span })
    }
}

/// A range searched for candidates, and whether the text says it holds JSON (a tag or a
/// `json` fence), where every array counts.
struct Place {
    range: Range<usize>,
    marked: bool,
}

impl Place {
    fn marked(range: Range<usize>) -> Self {
        Place {
            range,
            marked: true,
        }
    }

    fn unmarked(range: Range<usize>) -> Self {
        Place {
            range,
            marked: false,
        }
    }
}

/// Levels 3 and 4: the fences that may hold JSON if that is where the JSON is (or if one is
/// labelled `json`), else everything outside fences labelled with another language.
fn fenced_or_prose(
    text: &str,
    scan: &Scan,
    candidates: &mut Candidates<'_>,
) -> (Source, Vec<Place>) {
    let fenced: Vec<_> = scan
        .fences
        .iter()
        .filter(|fence| fence.kind != FenceKind::Other)
        .map(|fence| Place {
            range: fence.content.clone(),
            marked: fence.kind == FenceKind::Json,
        })
        .collect();
    let labelled_json = scan.fences.iter().any(|f| f.kind == FenceKind::Json);
    if labelled_json || candidates.within(&fenced).count > 0 {
        return (Source::Fence, fenced);
    }
    let mut prose = Vec::new();
    let mut from = 0;
    for fence in scan.fences.iter().filter(|f| f.kind == FenceKind::Other) {
        prose.push(Place::unmarked(from..fence.content.start));
        from = fence.content.end;
    }
    prose.push(Place::unmarked(from..text.len()));
    (Source::Prose, prose)
}

/// What a span holds, once parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Not one JSON value.
    Invalid,
    Object,
    /// An array holding an object or an array.
    Array,
    /// An empty array, or one of scalars only.
    FlatArray,
}

/// The top-level spans of one scan, each parsed at most once, however many places ask.
struct Candidates<'a> {
    text: &'a str,
    spans: &'a [Range<usize>],
    parsed: Vec<Option<Kind>>,
}

/// The candidates found in some places.
struct Found {
    count: usize,
    /// The first [`KEPT_SPANS`] of them.
    spans: Vec<Range<usize>>,
}

impl<'a> Candidates<'a> {
    fn new(text: &'a str, spans: &'a [Range<usize>]) -> Self {
        Candidates {
            text,
            spans,
            parsed: vec![None; spans.len()],
        }
    }

    /// The spans inside `places` (ascending, disjoint) that count. One merge of two sorted
    /// lists: linear in their lengths.
    fn within(&mut self, places: &[Place]) -> Found {
        let mut found = Found {
            count: 0,
            spans: Vec::new(),
        };
        let spans = self.spans;
        let mut next = 0;
        for place in places {
            let range = &place.range;
            while spans.get(next).is_some_and(|s| s.start < range.start) {
                next += 1;
            }
            while let Some(span) = spans.get(next).filter(|s| s.start < range.end) {
                if span.end <= range.end && self.counts(next, place) {
                    found.count += 1;
                    if found.spans.len() < KEPT_SPANS {
                        found.spans.push(span.clone());
                    }
                }
                next += 1;
            }
        }
        found
    }

    /// Whether span `index`, inside `place`, is a value the text presents as one.
    fn counts(&mut self, index: usize, place: &Place) -> bool {
        stands_alone(self.text.as_bytes(), &self.spans[index], &place.range)
            && match self.kind(index) {
                Kind::Invalid => false,
                Kind::Object | Kind::Array => true,
                Kind::FlatArray => place.marked,
            }
    }

    /// What span `index` holds; parsed the first time only.
    fn kind(&mut self, index: usize) -> Kind {
        let text = self.text;
        let span = &self.spans[index];
        *self.parsed[index].get_or_insert_with(|| {
            let json = &text[span.clone()];
            if serde_json::from_str::<IgnoredAny>(json).is_err() {
                Kind::Invalid
            } else if json.starts_with('{') {
                Kind::Object
            } else if scan::holds_container(json.as_bytes()) {
                Kind::Array
            } else {
                Kind::FlatArray
            }
        })
    }
}

/// Whether `span` stands on its own in `place`, rather than being an operand in code: not
/// right after a name, a `]` or a `)` (`rows[…]`, `f(x)[…]`), nor after an `=`, spaces
/// between allowed (`k=[…]`), nor right before a `[`, a `(` or a `.name` (`{…}[0]`,
/// `{…}.keys()`). Bytes outside the place (a fence's label) are not looked at. Looks only at
/// the whitespace next to the span, which no other span shares.
fn stands_alone(bytes: &[u8], span: &Range<usize>, place: &Range<usize>) -> bool {
    let before = &bytes[place.start..span.start];
    let after = &bytes[span.end..place.end];
    let glued_before = match before.last() {
        Some(&b) if b.is_ascii_alphanumeric() || matches!(b, b'_' | b']' | b')') => true,
        _ => before.iter().rev().find(|b| !b.is_ascii_whitespace()) == Some(&b'='),
    };
    let glued_after = match after {
        [b'[' | b'(', ..] => true,
        [b'.', next, ..] => next.is_ascii_alphabetic() || *next == b'_',
        _ => false,
    };
    !glued_before && !glued_after
}

/// The first bracket left open inside `places` (both lists ascending).
fn first_unclosed(unclosed: &[usize], places: &[Place]) -> Option<usize> {
    let mut next = 0;
    for place in places {
        let range = &place.range;
        while unclosed.get(next).is_some_and(|&at| at < range.start) {
            next += 1;
        }
        match unclosed.get(next) {
            Some(&at) if at < range.end => return Some(at),
            Some(_) => {}
            None => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> (&str, Source) {
        let found = extract_json(text).unwrap();
        assert_eq!(&text[found.span()], found.json());
        (found.json(), found.source())
    }

    #[test]
    fn the_whole_text_wins() {
        assert_eq!(
            json(" \n{\"a\": \"<tool_call>\"}\n"),
            (r#"{"a": "<tool_call>"}"#, Source::Whole)
        );
        assert_eq!(json("[1, 2]"), ("[1, 2]", Source::Whole));
    }

    #[test]
    fn scalars_never_count() {
        assert_eq!(extract_json("42"), Err(ExtractError::NotFound));
        assert_eq!(
            extract_json(r#"say "hi" then {}"#).map(|f| f.json()),
            Ok("{}")
        );
    }

    #[test]
    fn tags_hide_everything_outside_them() {
        let text = r#"e.g. {"city": "Rome"} <tool_call>{"city": "Oslo"}</tool_call>"#;
        assert_eq!(json(text), (r#"{"city": "Oslo"}"#, Source::Tag));
        let text = r#"e.g. {"city": "Rome"} <tool_call>{"city": </tool_call>"#;
        assert_eq!(
            extract_json(text),
            Err(ExtractError::Unterminated {
                opener: '{',
                at: 33
            })
        );
    }

    #[test]
    fn a_json_fence_hides_prose_even_when_empty() {
        let text = "{\"a\": 1}\n```json\n```";
        assert_eq!(extract_json(text), Err(ExtractError::NotFound));
    }

    #[test]
    fn an_unlabelled_fence_without_json_falls_through_to_prose() {
        let text = "Run\n```\nls -l\n```\nthen send {\"a\": 1}";
        assert_eq!(json(text), (r#"{"a": 1}"#, Source::Prose));
    }

    #[test]
    fn prose_skips_fences_in_other_languages() {
        let text = "```python\nf({\"a\": 1})\n```\nSo: {\"a\": 2}";
        assert_eq!(json(text), (r#"{"a": 2}"#, Source::Prose));
    }

    #[test]
    fn names_at_most_three_spans() {
        let error = extract_json("{} {} {} {} {}").unwrap_err();
        assert_eq!(
            error.to_string(),
            "found 5 JSON values (at bytes 0..2, 3..5, 6..8 and 2 more); send exactly one"
        );
        let error = extract_json("{} {} {}").unwrap_err();
        assert_eq!(
            error.to_string(),
            "found 3 JSON values (at bytes 0..2, 3..5 and 6..8); send exactly one"
        );
    }

    #[test]
    fn keeps_at_most_eight_spans_and_counts_all() {
        let text = "{} ".repeat(20);
        match extract_json(&text) {
            Err(ExtractError::Ambiguous { count, spans }) => {
                assert_eq!(count, 20);
                assert_eq!(spans.len(), 8);
                assert_eq!(spans[7], 21..23);
            }
            other => panic!("expected ambiguity, got {other:?}"),
        }
    }

    #[test]
    fn first_unclosed_looks_only_inside_places() {
        let places = |ranges: [Range<usize>; 2]| ranges.map(Place::unmarked);
        assert_eq!(first_unclosed(&[1, 5, 9], &places([2..4, 6..10])), Some(9));
        assert_eq!(first_unclosed(&[1, 5], &places([2..4, 6..10])), None);
        assert_eq!(first_unclosed(&[], &places([0..10, 20..30])), None);
    }
}
