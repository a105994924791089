//! The markers of a reply that count: those outside quoted strings.
//!
//! A marker inside a string literal is text a call carries (a search query that quotes
//! `<tool_call>`, say), never a call. The scanner reads prose as prose (its quotes are
//! apostrophes and quotation marks), and reads a bracketed group `{…}`, `[…]` or `name(…)` as
//! code: there `'…'`, `"…"` and triple-quoted strings are strings, and a marker inside one is
//! noted as hidden, never returned. A one-line string ends at a line break, as neither JSON
//! nor Python lets it hold one.
//!
//! The scanner reads each byte once and waits, rather than guess, wherever the next bytes
//! decide (a marker split across chunks, a backslash or a quote at the end of the text), so
//! a reply read in chunks meets the same markers as the reply read whole.

use super::{DS_CALL_BEGIN, DS_CALL_END, DS_CALLS_BEGIN, DS_CALLS_END, DS_SEP, Dialect};

/// A marker of a dialect.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Marker {
    pub(crate) text: &'static str,
    pub(crate) dialect: Dialect,
    /// Whether it opens calls (and so names its dialect).
    pub(crate) opens: bool,
}

impl Marker {
    /// Whether the marker, outside a call, means one lost its opening marker: every marker
    /// that closes or divides a call (a wrapper's end, or Python's end token, after all
    /// calls, is not).
    pub(crate) fn stray(&self) -> bool {
        !self.opens && self.text != DS_CALLS_END && self.text != "<|python_end|>"
    }
}

const fn marker(text: &'static str, dialect: Dialect, opens: bool) -> Marker {
    Marker {
        text,
        dialect,
        opens,
    }
}

/// Every marker the readers know. Each starts with `<` or `[`.
pub(crate) const MARKERS: [Marker; 14] = [
    marker("<tool_call>", Dialect::Hermes, true),
    marker("</tool_call>", Dialect::Hermes, false),
    marker("<function_call>", Dialect::Granite, true),
    marker("<|tool_call|>", Dialect::Granite, true),
    marker("<|python_tag|>", Dialect::Llama3, true),
    marker("[TOOL_CALLS]", Dialect::Mistral, true),
    marker("[ARGS]", Dialect::Mistral, false),
    marker(DS_CALLS_BEGIN, Dialect::DeepSeek, true),
    marker(DS_CALL_BEGIN, Dialect::DeepSeek, true),
    marker(DS_CALL_END, Dialect::DeepSeek, false),
    marker(DS_CALLS_END, Dialect::DeepSeek, false),
    marker(DS_SEP, Dialect::DeepSeek, false),
    marker("<|python_start|>", Dialect::Pythonic, true),
    marker("<|python_end|>", Dialect::Pythonic, false),
];

/// The marker at `at`, if any; `Err(())` when the text ends inside what may be one and more
/// text may come.
fn marker_at(text: &str, at: usize, complete: bool) -> Result<Option<&'static Marker>, ()> {
    let rest = &text.as_bytes()[at..];
    let mut wait = false;
    for marker in &MARKERS {
        let m = marker.text.as_bytes();
        if rest.starts_with(m) {
            return Ok(Some(marker));
        }
        wait |= !complete && rest.len() < m.len() && m.starts_with(rest);
    }
    if wait { Err(()) } else { Ok(None) }
}

/// Reads prose for markers from a position on.
#[derive(Debug, Clone)]
pub(crate) struct Scanner {
    at: usize,
    depth: usize,
    /// The quote of the string being read, and whether it is tripled.
    quote: Option<(u8, bool)>,
    /// Where the first opening marker inside a string was.
    hidden: Option<usize>,
}

impl Scanner {
    pub(crate) fn new(at: usize) -> Self {
        Scanner {
            at,
            depth: 0,
            quote: None,
            hidden: None,
        }
    }

    /// Where the first opening marker inside quotes was, if one was read.
    pub(crate) fn hidden(&self) -> Option<usize> {
        self.hidden
    }

    /// The next marker outside quotes, with where it starts; `None` at the end of the text
    /// (or, when more may come, where the next bytes decide).
    pub(crate) fn next(&mut self, text: &str, complete: bool) -> Option<(usize, &'static Marker)> {
        let b = text.as_bytes();
        while self.at < b.len() {
            let at = self.at;
            let c = b[at];
            if let Some((quote, triple)) = self.quote {
                match c {
                    b'\\' => {
                        if at + 1 >= b.len() && !complete {
                            return None;
                        }
                        self.at = (at + 2).min(b.len());
                    }
                    b'<' | b'[' => match marker_at(text, at, complete) {
                        Err(()) => return None,
                        Ok(Some(marker)) => {
                            if marker.opens && self.hidden.is_none() {
                                self.hidden = Some(at);
                            }
                            self.at += marker.text.len();
                        }
                        Ok(None) => self.at += 1,
                    },
                    b'\n' if !triple => {
                        self.quote = None;
                        self.at += 1;
                    }
                    c if c == quote => {
                        if !triple {
                            self.quote = None;
                            self.at += 1;
                        } else if at + 2 < b.len() || complete {
                            if b.get(at + 1) == Some(&quote) && b.get(at + 2) == Some(&quote) {
                                self.quote = None;
                                self.at += 3;
                            } else {
                                self.at += 1;
                            }
                        } else {
                            return None;
                        }
                    }
                    _ => self.at += 1,
                }
                continue;
            }
            if matches!(c, b'<' | b'[') {
                match marker_at(text, at, complete) {
                    Err(()) => return None,
                    // Inside brackets of prose, where a string may have been misread (an
                    // apostrophe taken for a quote, or the other way round), an opening
                    // marker opens nothing: it counts as one inside quotes, so the reply
                    // is refused rather than read.
                    Ok(Some(marker)) if marker.opens && self.depth > 0 => {
                        if self.hidden.is_none() {
                            self.hidden = Some(at);
                        }
                        self.at += marker.text.len();
                        continue;
                    }
                    Ok(Some(marker)) => {
                        self.at += marker.text.len();
                        return Some((at, marker));
                    }
                    Ok(None) => {}
                }
            }
            match c {
                b'{' | b'[' => self.depth += 1,
                b'(' if self.depth > 0
                    || (at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_')) =>
                {
                    self.depth += 1
                }
                b'}' | b']' | b')' => self.depth = self.depth.saturating_sub(1),
                // An apostrophe between letters (`they're`, `user's`) opens no string.
                b'\''
                    if at > 0
                        && b[at - 1].is_ascii_alphabetic()
                        && b.get(at + 1).is_some_and(u8::is_ascii_alphabetic) => {}
                b'"' | b'\'' if self.depth > 0 => {
                    if at + 2 >= b.len() && !complete {
                        return None;
                    }
                    let triple = b.get(at + 1) == Some(&c) && b.get(at + 2) == Some(&c);
                    self.quote = Some((c, triple));
                    self.at += if triple { 3 } else { 1 };
                    continue;
                }
                _ => {}
            }
            self.at += 1;
        }
        None
    }
}

/// The dialects whose markers stand outside quotes anywhere in `text`, in the order of
/// [`Dialect::ALL`].
pub(crate) fn dialects_outside_quotes(text: &str) -> Vec<Dialect> {
    let mut scanner = Scanner::new(0);
    let mut found = Vec::new();
    while let Some((_, marker)) = scanner.next(text, true) {
        if !found.contains(&marker.dialect) {
            found.push(marker.dialect);
        }
    }
    Dialect::ALL
        .into_iter()
        .filter(|d| found.contains(d))
        .collect()
}
