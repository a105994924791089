//! The one forward pass over a model's text: the top-level balanced `{…}` and `[…]` spans,
//! the Markdown fences and the `<tool_call>` tags, in time and memory linear in the text.
//!
//! Nothing here parses JSON: the pass only knows enough of it to keep brackets, backticks and
//! tags inside JSON strings out of the way. A bracket never matched costs nothing later, because
//! no position is ever scanned twice.

use std::ops::Range;

use super::fence::{self, FenceKind};

/// Opens a Hermes/Qwen-style tool call.
const OPEN_TAG: &[u8] = b"<tool_call>";
/// Closes it.
const CLOSE_TAG: &[u8] = b"</tool_call>";

/// What one pass found, each list in text order.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Scan {
    /// Balanced spans not inside another balanced span, disjoint. Whether they parse is
    /// decided later.
    pub(super) spans: Vec<Range<usize>>,
    /// Fence contents, from just after the label to the closing backticks (or the end).
    pub(super) fences: Vec<Fence>,
    /// Tag contents, from just after `<tool_call>` to `</tool_call>` (or the next
    /// `<tool_call>`, or the end).
    pub(super) tags: Vec<Range<usize>>,
    /// One `{` or `[` still open at each boundary (a fence or tag delimiter, or the end of the
    /// text) that has one, ascending: the first that starts a value cut short, else the
    /// outermost.
    pub(super) unclosed: Vec<usize>,
}

/// A fence's contents and what its label says they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Fence {
    pub(super) content: Range<usize>,
    pub(super) kind: FenceKind,
}

/// Scans `text` once.
///
/// The rules, which a JSON value never trips over: a quote starts a string only inside a
/// bracket (in prose it is just a quote); a string ends at its closing quote or at a raw
/// control character, which JSON strings cannot hold; outside strings, a run of three or more
/// backticks opens a fence, or closes the open one if it is at least as long, and `<tool_call>`
/// and `</tool_call>` open and close tags. A fence or tag delimiter ends every bracket still
/// open, so no span crosses one.
///
/// A bracket still open at a delimiter or at the end starts a value cut short if it is inside
/// a tag or a `json` fence, where any bracket belongs to the value, or elsewhere if it starts
/// like JSON ([`starts_value`]); the spans after it are its parts, not values, and are dropped.
/// Any other bracket left open (a smiley, `:-{`) hides nothing.
pub(super) fn scan(text: &str) -> Scan {
    let mut scanner = Scanner {
        bytes: text.as_bytes(),
        stack: Vec::new(),
        open_braces: 0,
        open_brackets: 0,
        fence: None,
        tag: None,
        found: Scan::default(),
    };
    scanner.run();
    scanner.finish()
}

struct Scanner<'a> {
    bytes: &'a [u8],
    /// Positions of the `{` and `[` not yet closed.
    stack: Vec<usize>,
    /// How many `{` are on the stack, so a `}` with none to match is dropped without a search.
    open_braces: usize,
    /// How many `[` are on the stack.
    open_brackets: usize,
    fence: Option<OpenFence>,
    /// Where the open tag's contents start.
    tag: Option<usize>,
    found: Scan,
}

struct OpenFence {
    run: usize,
    content_start: usize,
    kind: FenceKind,
}

impl Scanner<'_> {
    fn run(&mut self) {
        let bytes = self.bytes;
        let mut i = 0;
        loop {
            let stops = if self.stack.is_empty() {
                &STOPS_IN_PROSE
            } else {
                &STOPS_IN_BRACKETS
            };
            i = next_stop(bytes, i, stops);
            let Some(&byte) = bytes.get(i) else {
                break;
            };
            i = match byte {
                b'{' | b'[' => self.open(i),
                b'}' => self.close(i, b'{'),
                b']' => self.close(i, b'['),
                b'"' if !self.stack.is_empty() => skip_string(bytes, i + 1),
                b'`' => self.backticks(i),
                b'<' => self.angle(i),
                _ => i + 1,
            };
        }
    }

    fn finish(mut self) -> Scan {
        let end = self.bytes.len();
        self.boundary();
        if let Some(start) = self.tag.take() {
            self.found.tags.push(start..end);
        }
        if let Some(fence) = self.fence.take() {
            self.found.fences.push(Fence {
                content: fence.content_start..end,
                kind: fence.kind,
            });
        }
        self.found
    }

    fn open(&mut self, i: usize) -> usize {
        self.stack.push(i);
        if self.bytes[i] == b'{' {
            self.open_braces += 1;
        } else {
            self.open_brackets += 1;
        }
        i + 1
    }

    /// Closes the innermost open `opener`; brackets opened inside it and never closed are
    /// dropped with it. Each position is pushed and popped once, so this is amortized O(1).
    fn close(&mut self, i: usize, opener: u8) -> usize {
        let open = match opener {
            b'{' => self.open_braces,
            _ => self.open_brackets,
        };
        if open == 0 {
            return i + 1;
        }
        while let Some(start) = self.stack.pop() {
            if self.bytes[start] == b'{' {
                self.open_braces -= 1;
            } else {
                self.open_brackets -= 1;
            }
            if self.bytes[start] == opener {
                self.record(start..i + 1);
                break;
            }
        }
        i + 1
    }

    /// Keeps `span` and drops the spans it contains: those that start after it (they closed
    /// before it did, so they lie inside it).
    fn record(&mut self, span: Range<usize>) {
        let spans = &mut self.found.spans;
        while spans.last().is_some_and(|last| last.start > span.start) {
            spans.pop();
        }
        spans.push(span);
    }

    fn backticks(&mut self, i: usize) -> usize {
        let run = fence::run_at(self.bytes, i);
        let end = i + run;
        match &self.fence {
            Some(open) if fence::closes(run, open.run) => {
                // The fence is still open while its brackets are closed off: a `json` fence
                // marks them as parts of a value.
                self.boundary();
                if let Some(open) = self.fence.take() {
                    self.found.fences.push(Fence {
                        content: open.content_start..i,
                        kind: open.kind,
                    });
                }
                end
            }
            Some(_) => end,
            None => {
                let Some(opening) = fence::open(self.bytes, i, run) else {
                    return end;
                };
                self.boundary();
                self.fence = Some(OpenFence {
                    run,
                    content_start: opening.content_start,
                    kind: opening.kind(),
                });
                opening.content_start
            }
        }
    }

    fn angle(&mut self, i: usize) -> usize {
        let rest = &self.bytes[i..];
        if rest.starts_with(OPEN_TAG) {
            self.boundary();
            let content_start = i + OPEN_TAG.len();
            // Tags do not nest: a second opener ends the first one's contents.
            if let Some(start) = self.tag.replace(content_start) {
                self.found.tags.push(start..i);
            }
            content_start
        } else if rest.starts_with(CLOSE_TAG) {
            self.boundary();
            if let Some(start) = self.tag.take() {
                self.found.tags.push(start..i);
            }
            i + CLOSE_TAG.len()
        } else {
            i + 1
        }
    }

    /// A fence or tag delimiter, or the end: brackets open before it stay unclosed, and the
    /// spans inside a value cut short are dropped. Each bracket is looked at once, as the stack
    /// is emptied.
    fn boundary(&mut self) {
        let marked = self.tag.is_some()
            || self
                .fence
                .as_ref()
                .is_some_and(|fence| fence.kind == FenceKind::Json);
        let cut = if marked {
            self.stack.first().copied()
        } else {
            let bytes = self.bytes;
            self.stack
                .iter()
                .copied()
                .find(|&at| starts_value(bytes, at))
        };
        if let Some(cut) = cut {
            // Spans recorded before this region started lie before `cut` and stay.
            let spans = &mut self.found.spans;
            while spans.last().is_some_and(|span| span.start > cut) {
                spans.pop();
            }
        }
        if let Some(at) = cut.or_else(|| self.stack.first().copied()) {
            self.found.unclosed.push(at);
        }
        self.stack.clear();
        self.open_braces = 0;
        self.open_brackets = 0;
    }
}

/// Whether the bracket at `at` starts like JSON: `{` then a key's quote, or `[` then a
/// string, an object, an array or a number (whitespace between allowed). Checks only the
/// whitespace after the bracket, which no other bracket shares.
fn starts_value(bytes: &[u8], at: usize) -> bool {
    let next = bytes
        .get(at + 1..)
        .and_then(|rest| rest.iter().find(|b| !b.is_ascii_whitespace()));
    matches!(
        (bytes.get(at), next),
        (Some(b'{'), Some(b'"')) | (Some(b'['), Some(b'"' | b'{' | b'[' | b'-' | b'0'..=b'9'))
    )
}

/// Whether a JSON array (`[` at its first byte, parsed already) holds an object or an array.
/// The first `{` or `[` outside a string after the opening one is an element's, so the search
/// stops there: at most one pass over the array.
pub(super) fn holds_container(array: &[u8]) -> bool {
    let mut i = 1;
    loop {
        i = next_stop(array, i, &STOPS_FOR_CONTAINERS);
        match array.get(i) {
            Some(b'"') => i = skip_string(array, i + 1),
            Some(_) => return true,
            None => return false,
        }
    }
}

/// The bytes the pass stops at in prose, where a quote is just a quote.
static STOPS_IN_PROSE: [bool; 256] = stops(b"{}[]`<", false);
/// The bytes it stops at inside brackets, where a quote starts a string.
static STOPS_IN_BRACKETS: [bool; 256] = stops(b"{}[]`<\"", false);
/// The bytes [`holds_container`] stops at: a container's opener, or a string's start.
static STOPS_FOR_CONTAINERS: [bool; 256] = stops(b"{[\"", false);
/// The bytes it stops at inside a string: its end, an escape, or a raw control character.
static STOPS_IN_STRINGS: [bool; 256] = stops(b"\"\\", true);

const fn stops(bytes: &[u8], controls: bool) -> [bool; 256] {
    let mut table = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        table[bytes[i] as usize] = true;
        i += 1;
    }
    let mut control = 0;
    while controls && control < 0x20 {
        table[control] = true;
        control += 1;
    }
    table
}

/// The position of the first byte from `i` on that is in `stops`, or the end.
fn next_stop(bytes: &[u8], i: usize, stops: &[bool; 256]) -> usize {
    bytes
        .get(i..)
        .and_then(|rest| rest.iter().position(|&b| stops[usize::from(b)]))
        .map_or(bytes.len(), |offset| i + offset)
}

/// The position just past a string whose contents start at `i`: after its closing quote, or
/// at the raw control character that breaks it. (Ending a broken string at the end of its
/// line keeps one bad line from hiding the rest of the text; the span holding it will not
/// parse anyway.)
fn skip_string(bytes: &[u8], mut i: usize) -> usize {
    loop {
        i = next_stop(bytes, i, &STOPS_IN_STRINGS);
        match bytes.get(i) {
            Some(b'"') => return i + 1,
            Some(b'\\') => {
                i += if bytes.get(i + 1).is_some_and(|&c| c >= 0x20) {
                    2
                } else {
                    1
                }
            }
            _ => return i,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(text: &str) -> Vec<&str> {
        scan(text).spans.into_iter().map(|s| &text[s]).collect()
    }

    #[test]
    fn keeps_only_top_level_spans() {
        assert_eq!(
            spans(r#"a {"b": {"c": [1]}} d [2, [3]] e"#),
            [r#"{"b": {"c": [1]}}"#, "[2, [3]]"]
        );
    }

    #[test]
    fn skips_brackets_and_escaped_quotes_inside_strings() {
        assert_eq!(
            spans(r#"x {"a": "}] \" {[", "b": 1} y"#),
            [r#"{"a": "}] \" {[", "b": 1}"#]
        );
    }

    #[test]
    fn quotes_in_prose_are_not_strings() {
        assert_eq!(spans(r#"He said "use {"a": 1}"#), [r#"{"a": 1}"#]);
    }

    #[test]
    fn a_raw_newline_ends_a_broken_string() {
        assert_eq!(
            spans("{\"a\": \"oops\n} {\"b\": 2}"),
            ["{\"a\": \"oops\n}", "{\"b\": 2}"]
        );
    }

    #[test]
    fn an_unclosed_bracket_keeps_the_spans_inside_it() {
        let text = r#"note { see {"a": 1}"#;
        assert_eq!(spans(text), [r#"{"a": 1}"#]);
        let found = scan(text);
        assert_eq!(found.unclosed, [5]);
    }

    #[test]
    fn a_value_cut_short_drops_its_parts() {
        let text = r#"x {"a": {"b": 1}, "c": [2]"#;
        assert!(spans(text).is_empty());
        assert_eq!(scan(text).unclosed, [2]);
        let text = r#"x [ {"a": 1}, {"b": 2}"#;
        assert!(spans(text).is_empty());
        let text = r#"x [-1, {"a": 1}"#;
        assert!(spans(text).is_empty());
    }

    #[test]
    fn names_the_bracket_that_starts_a_value_not_a_stray_one() {
        let text = r#":-{ so [ see {"a": [1]"#;
        assert!(spans(text).is_empty());
        assert_eq!(scan(text).unclosed, [13]);
        assert_eq!(scan(":-{ x").unclosed, [2]);
    }

    #[test]
    fn in_a_tag_or_json_fence_any_open_bracket_cuts_a_value_short() {
        for text in [
            "<tool_call>{a: {\"b\": 1}</tool_call>",
            "<tool_call>{a: {\"b\": 1}",
            "```json\n{a: {\"b\": 1}\n```",
        ] {
            assert!(spans(text).is_empty(), "{text}");
        }
        assert_eq!(spans("```\n{a: {\"b\": 1}\n```"), ["{\"b\": 1}"]);
        assert_eq!(spans("```py\n{a: {\"b\": 1}\n```"), ["{\"b\": 1}"]);
    }

    #[test]
    fn finds_containers_in_arrays_outside_strings() {
        for (array, holds) in [
            ("[]", false),
            ("[1, \"[{\", null]", false),
            ("[\"a\\\"[\", 2]", false),
            ("[1, {}]", true),
            ("[[]]", true),
            ("[\"x\", [1]]", true),
        ] {
            assert_eq!(holds_container(array.as_bytes()), holds, "{array}");
        }
    }

    #[test]
    fn a_mismatched_closer_pops_down_to_its_opener() {
        assert_eq!(spans("{[}] ]"), ["{[}"]);
        assert_eq!(spans("] } {a}"), ["{a}"]);
    }

    #[test]
    fn reads_fence_labels() {
        let found = scan("```json\n{}\n``` ```\n[]``` ```Python x``` ``` JSON{}```");
        let kinds: Vec<_> = found.fences.iter().map(|f| f.kind).collect();
        assert_eq!(
            kinds,
            [
                FenceKind::Json,
                FenceKind::Unlabelled,
                FenceKind::Other,
                FenceKind::Json
            ]
        );
        let text = "```json\n{}\n``` ```\n[]``` ```Python x``` ``` JSON{}```";
        let contents: Vec<_> = found
            .fences
            .iter()
            .map(|f| &text[f.content.clone()])
            .collect();
        assert_eq!(contents, ["\n{}\n", "\n[]", " x", "{}"]);
    }

    #[test]
    fn a_fence_closes_only_with_a_run_as_long() {
        let text = "````\n```\n````";
        assert_eq!(scan(text).fences[0].content, 4..9);
    }

    #[test]
    fn backticks_and_tags_inside_strings_are_content() {
        let text = r#"{"a": "```", "b": "<tool_call>"}"#;
        let found = scan(text);
        assert!(found.fences.is_empty() && found.tags.is_empty());
        assert_eq!(spans(text), [text]);
    }

    #[test]
    fn tags_run_to_their_closer_the_next_opener_or_the_end() {
        let text = "<tool_call>a</tool_call> <tool_call>b<tool_call>c";
        let tags: Vec<_> = scan(text).tags.into_iter().map(|t| &text[t]).collect();
        assert_eq!(tags, ["a", "b", "c"]);
    }

    #[test]
    fn a_delimiter_ends_open_brackets() {
        let text = "{\"a\": [ ``` {} ``` <tool_call> [";
        assert_eq!(spans(text), ["{}"]);
        let found = scan(text);
        assert_eq!(found.unclosed, [0, 31]);
    }
}
