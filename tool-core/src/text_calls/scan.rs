//! The markers of a reply that count: those outside quoted strings.
//!
//! A marker inside a string literal is text a call carries (a search query that quotes
//! `<tool_call>`, say), never a call. The scanner reads prose as prose (its quotes are
//! apostrophes and quotation marks), and reads a bracketed group `{…}`, `[…]` or `name(…)` as
//! code: there `'…'`, `"…"` and triple-quoted strings are strings, and a marker inside one is
//! noted as hidden, never returned. A one-line string ends at a line break, as neither JSON
//! nor Python lets it hold one.
//!
//! Markdown inline code in prose, a run of backticks and the next run of as many on the same
//! line, is text shown to the reader: the markers in it are never returned. A run with no
//! such partner on its line is a literal backtick. When a span holds an opening marker and
//! ends inside the brackets or a string that follow it, its closing run may be a backtick
//! inside a call the model wrote; that span is noted as hidden, so the reply is refused
//! rather than read without the call.
//!
//! The scanner reads each byte a bounded number of times and waits, rather than guess,
//! wherever the next bytes decide (a marker split across chunks, a backslash or a quote at the
//! end of the text, a backtick run whose partner has not arrived), so a reply read in chunks
//! meets the same markers as the reply read whole.

use std::borrow::Cow;

use super::Dialect;
use super::dialect::{Marker, MarkerRole};

/// A marker read in a reply, with the dialect it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seen {
    pub(crate) text: &'static str,
    pub(crate) dialect: Dialect,
    /// Whether it opens calls (and so names its dialect).
    pub(crate) opens: bool,
    stray: bool,
}

impl Seen {
    fn new(dialect: Dialect, marker: &Marker) -> Seen {
        Seen {
            text: marker.text(),
            dialect,
            opens: marker.role() == MarkerRole::Opens,
            stray: marker.role() == MarkerRole::Closes,
        }
    }

    /// Whether the marker, outside a call, means one lost its opening marker.
    pub(crate) fn stray(&self) -> bool {
        self.stray
    }

    /// The dialect's own description of the marker.
    pub(crate) fn marker(&self, table: &Table) -> Option<&'static Marker> {
        table
            .iter()
            .filter(|(dialect, _)| *dialect == self.dialect)
            .flat_map(|(_, markers)| markers.iter())
            .find(|marker| marker.text() == self.text)
    }
}

/// The markers the readers know, by dialect, in the dialects' order. Each starts with `<` or
/// `[`, and none starts another.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    entries: Cow<'static, [(Dialect, &'static [Marker])]>,
    /// The same markers, one after another, as [`marker_at`] looks through them.
    candidates: Cow<'static, [Candidate]>,
    /// The second bytes of the markers that start with `<` (`[0]`) and `[` (`[1]`), one bit
    /// a byte (every bit for a marker one byte long): a candidate whose first two bytes no
    /// marker starts with is rejected at once.
    seconds: [[u64; 4]; 2],
}

impl Table {
    /// The table of `entries`, whose markers `candidates` lists in the same order.
    pub(crate) const fn new(
        entries: &'static [(Dialect, &'static [Marker])],
        candidates: &'static [Candidate],
    ) -> Table {
        let mut seconds = [[0; 4]; 2];
        let mut i = 0;
        while i < entries.len() {
            let markers = entries[i].1;
            let mut j = 0;
            while j < markers.len() {
                add_second(&mut seconds, markers[j].text().as_bytes());
                j += 1;
            }
            i += 1;
        }
        Table {
            entries: Cow::Borrowed(entries),
            candidates: Cow::Borrowed(candidates),
            seconds,
        }
    }

    /// Adds a dialect's markers after the others.
    pub(crate) fn push(&mut self, dialect: Dialect, markers: &'static [Marker]) {
        for marker in markers {
            add_second(&mut self.seconds, marker.text().as_bytes());
            self.candidates
                .to_mut()
                .push(Candidate::new(dialect, marker));
        }
        self.entries.to_mut().push((dialect, markers));
    }

    /// The dialects and their markers, in order.
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, (Dialect, &'static [Marker])> {
        self.entries.iter()
    }

    /// Whether a marker may start with `first` then `second`.
    #[inline]
    fn may_start(&self, first: u8, second: u8) -> bool {
        let row = match first {
            b'<' => 0,
            b'[' => 1,
            _ => return true,
        };
        self.seconds[row][usize::from(second / 64)] & (1 << (second % 64)) != 0
    }
}

/// A marker of a [`Table`] with its dialect, and its first two bytes as one number (the
/// first alone for a marker one byte long), to pass over the others at once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate {
    start: u16,
    /// The bytes of `start` that count.
    mask: u16,
    dialect: Dialect,
    marker: &'static Marker,
}

impl Candidate {
    pub(crate) const fn new(dialect: Dialect, marker: &'static Marker) -> Candidate {
        let (start, mask) = match marker.text().as_bytes() {
            [first, second, ..] => (u16::from_le_bytes([*first, *second]), u16::MAX),
            [first] => (*first as u16, 0x00ff),
            [] => (0, 0),
        };
        Candidate {
            start,
            mask,
            dialect,
            marker,
        }
    }

    #[cfg(test)]
    pub(crate) fn dialect(&self) -> Dialect {
        self.dialect
    }

    #[cfg(test)]
    pub(crate) fn marker(&self) -> &'static Marker {
        self.marker
    }
}

/// Notes the second byte of `marker` in `seconds` (see [`Table::seconds`]).
const fn add_second(seconds: &mut [[u64; 4]; 2], marker: &[u8]) {
    let row = match marker.first() {
        Some(b'<') => 0,
        Some(b'[') => 1,
        // Refused when a dialect is added: no marker starts otherwise.
        _ => return,
    };
    match marker {
        [_, second, ..] => seconds[row][(*second / 64) as usize] |= 1 << (*second % 64),
        _ => seconds[row] = [u64::MAX; 4],
    }
}

impl<'a> IntoIterator for &'a Table {
    type Item = &'a (Dialect, &'static [Marker]);
    type IntoIter = std::slice::Iter<'a, (Dialect, &'static [Marker])>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// The marker at `at`, if any; `Err(())` when the text ends inside what may be one and more
/// text may come.
fn marker_at(table: &Table, text: &str, at: usize, complete: bool) -> Result<Option<Seen>, ()> {
    let rest = &text.as_bytes()[at..];
    // The first two bytes, or as many as the text has.
    let (start, mask) = match rest {
        [first, second, ..] => {
            if !table.may_start(*first, *second) {
                return Ok(None);
            }
            (u16::from_le_bytes([*first, *second]), u16::MAX)
        }
        [first] => (u16::from(*first), 0x00ff),
        [] => (0, 0),
    };
    let mut wait = false;
    for candidate in table.candidates.iter() {
        // Most candidates differ in their first two bytes.
        if (start ^ candidate.start) & mask & candidate.mask != 0 {
            continue;
        }
        let m = candidate.marker.text().as_bytes();
        if rest.starts_with(m) {
            return Ok(Some(Seen::new(candidate.dialect, candidate.marker)));
        }
        wait |= !complete && rest.len() < m.len() && m.starts_with(rest);
    }
    if wait { Err(()) } else { Ok(None) }
}

/// The bytes that [`Scanner::next`] passes over outside quotes without a change of state:
/// all but the first bytes of markers, backticks, brackets and quotes.
static PLAIN: [bool; 256] = plain_bytes(b"<[`{}[]()'\"");

/// The bytes it passes over inside quotes: all but the first bytes of markers, the escape, the
/// line break and the quotes.
static PLAIN_QUOTED: [bool; 256] = plain_bytes(b"<[\\\n'\"");

/// Every byte but those of `special`.
const fn plain_bytes(special: &[u8]) -> [bool; 256] {
    let mut table = [true; 256];
    let mut i = 0;
    while i < special.len() {
        table[special[i] as usize] = false;
        i += 1;
    }
    table
}

/// Where the first marker written in `text` at or after `from` starts, in quotes or not.
fn next_written(table: &Table, text: &str, from: usize) -> Option<(usize, Seen)> {
    let b = text.as_bytes();
    let mut at = from;
    while let Some(found) = b
        .get(at..)
        .and_then(|rest| memchr::memchr2(b'<', b'[', rest))
    {
        let start = at + found;
        if let Ok(Some(seen)) = marker_at(table, text, start, true) {
            return Some((start, seen));
        }
        at = start + 1;
    }
    None
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
    /// The inline code span whose closing run is being looked for.
    span: Option<Span>,
    /// The backtick runs `(start, length)` from a failed search up to the end of its line
    /// (`.0`), so that later runs on that line are matched without searching again.
    line_runs: Option<(usize, Vec<(usize, usize)>)>,
    /// In a whole text, where the next marker is written (in quotes or not), and which, as
    /// last looked for: no marker starts between the position it was looked for from and it.
    /// `Some(None)`: none up to the end. `None`: not looked for yet.
    written: Option<Option<(usize, Seen)>>,
}

/// An inline code span being read: its opening run, and how far its partner was looked for.
#[derive(Debug, Clone)]
struct Span {
    start: usize,
    len: usize,
    /// The next byte to look at.
    at: usize,
    /// The runs of other lengths passed so far.
    runs: Vec<(usize, usize)>,
}

/// How a search for an inline code span's closing run ended.
enum SpanEnd {
    /// The closing run starts here.
    Closed(usize),
    /// There is none on the line, which ends here.
    Open(usize),
    /// The text ends before that is known.
    Wait,
}

impl Scanner {
    pub(crate) fn new(at: usize) -> Self {
        Scanner {
            at,
            depth: 0,
            quote: None,
            hidden: None,
            span: None,
            line_runs: None,
            written: None,
        }
    }

    /// Where the first opening marker inside quotes was, if one was read.
    pub(crate) fn hidden(&self) -> Option<usize> {
        self.hidden
    }

    /// The next marker outside quotes, with where it starts; `None` at the end of the text
    /// (or, when more may come, where the next bytes decide).
    pub(crate) fn next(
        &mut self,
        table: &Table,
        text: &str,
        complete: bool,
    ) -> Option<(usize, Seen)> {
        let b = text.as_bytes();
        if self.span.is_some() && !self.read_span(table, text, complete) {
            return None;
        }
        // In a whole text, the bytes after the last marker written can neither name a dialect
        // nor hide one, whatever their quotes and brackets: they are not read one by one.
        // (Read as it streams in, a text's state is kept for the bytes that follow.)
        let mut ahead = usize::MAX;
        if complete {
            ahead = self.written_from(table, text);
            if ahead == usize::MAX {
                self.at = b.len();
                return None;
            }
        }
        while self.at < b.len() {
            // The bytes that change nothing in this state are passed over at once.
            let plain = if self.quote.is_some() {
                &PLAIN_QUOTED
            } else {
                &PLAIN
            };
            let mut at = self.at;
            while b.get(at).is_some_and(|&c| plain[usize::from(c)]) {
                at += 1;
            }
            self.at = at;
            if at == b.len() {
                break;
            }
            if at > ahead {
                ahead = self.written_from(table, text);
                if ahead == usize::MAX {
                    self.at = b.len();
                    return None;
                }
            }
            let c = b[at];
            if let Some((quote, triple)) = self.quote {
                match c {
                    b'\\' => {
                        if at + 1 >= b.len() && !complete {
                            return None;
                        }
                        self.at = (at + 2).min(b.len());
                    }
                    b'<' | b'[' => match self.marker_at(table, text, at, complete) {
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
                match self.marker_at(table, text, at, complete) {
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
            if c == b'`' {
                let len = b[at..].iter().take_while(|&&c| c == b'`').count();
                if at + len == b.len() && !complete {
                    return None;
                }
                self.at = at + len;
                let known = match &self.line_runs {
                    Some((end, runs)) if at < *end => Some(
                        runs.iter()
                            .find(|&&(start, n)| start > at && n == len)
                            .map(|&(start, _)| start),
                    ),
                    _ => None,
                };
                match known {
                    Some(Some(close)) => self.close_span(table, text, at, len, close),
                    Some(None) => {}
                    None => {
                        self.span = Some(Span {
                            start: at,
                            len,
                            at: at + len,
                            runs: Vec::new(),
                        });
                        if !self.read_span(table, text, complete) {
                            return None;
                        }
                    }
                }
                continue;
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

impl Scanner {
    /// [`marker_at`], answered without looking again where the search for markers written
    /// found one in the whole text.
    fn marker_at(
        &self,
        table: &Table,
        text: &str,
        at: usize,
        complete: bool,
    ) -> Result<Option<Seen>, ()> {
        match self.written {
            Some(Some((written, seen))) if complete && written == at => Ok(Some(seen)),
            _ => marker_at(table, text, at, complete),
        }
    }

    /// Where the next marker is written at or after the scanner's position, in quotes or not
    /// (`usize::MAX`: nowhere); each part of the text is searched once.
    fn written_from(&mut self, table: &Table, text: &str) -> usize {
        let written = match self.written {
            Some(found) if found.is_none_or(|(written, _)| written >= self.at) => found,
            _ => {
                let found = next_written(table, text, self.at);
                self.written = Some(found);
                found
            }
        };
        written.map_or(usize::MAX, |(at, _)| at)
    }

    /// Goes on with the pending span's search: `false` when the text ends before its end is
    /// known. Once known, the scanner stands after the span (or after its opening run, which
    /// then is literal).
    fn read_span(&mut self, table: &Table, text: &str, complete: bool) -> bool {
        let Some(mut span) = self.span.take() else {
            return true;
        };
        match find_close(text, &mut span, complete) {
            SpanEnd::Wait => {
                self.span = Some(span);
                false
            }
            SpanEnd::Closed(close) => {
                self.close_span(table, text, span.start, span.len, close);
                true
            }
            SpanEnd::Open(end) => {
                self.line_runs = Some((end, span.runs));
                self.at = span.start + span.len;
                true
            }
        }
    }

    /// Skips the span opened by `len` backticks at `start` and closed by the run at `close`;
    /// notes it as hidden when it may end inside a call.
    fn close_span(&mut self, table: &Table, text: &str, start: usize, len: usize, close: usize) {
        if self.hidden.is_none() {
            self.hidden = suspect_span(table, text, start + len, close);
        }
        self.at = close + len;
    }
}

/// Looks for the run of exactly `span.len` backticks that closes `span` on its line.
fn find_close(text: &str, span: &mut Span, complete: bool) -> SpanEnd {
    let b = text.as_bytes();
    while span.at < b.len() {
        let at = span.at;
        match b[at] {
            b'\n' => return SpanEnd::Open(at),
            b'`' => {
                let len = b[at..].iter().take_while(|&&c| c == b'`').count();
                if at + len == b.len() && !complete {
                    return SpanEnd::Wait;
                }
                if len == span.len {
                    return SpanEnd::Closed(at);
                }
                span.runs.push((at, len));
                span.at = at + len;
            }
            _ => span.at += 1,
        }
    }
    if complete {
        SpanEnd::Open(b.len())
    } else {
        SpanEnd::Wait
    }
}

/// Where the first opening marker of the span's content `text[from..to]` is, when the span
/// ends inside the brackets or a string that follow it (its end may then be a backtick inside
/// the call); `None` for a span that holds a whole example, or no opening marker.
fn suspect_span(table: &Table, text: &str, from: usize, to: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut at = from;
    let (marker, body) = loop {
        if at >= to {
            return None;
        }
        if matches!(b[at], b'<' | b'[')
            && let Ok(Some(marker)) = marker_at(table, &text[..to], at, true)
        {
            if marker.opens {
                break (at, at + marker.text.len());
            }
            at += marker.text.len();
            continue;
        }
        at += 1;
    };
    let mut depth = 0usize;
    let mut string = false;
    let mut escaped = false;
    for &c in &b[body..to] {
        if string {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => string = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => match depth.checked_sub(1) {
                Some(less) => depth = less,
                None => return Some(marker),
            },
            _ => {}
        }
    }
    (string || depth > 0).then_some(marker)
}

/// The dialects whose markers stand outside quotes anywhere in `text`, in the table's order.
pub(crate) fn dialects_outside_quotes(table: &Table, text: &str) -> Vec<Dialect> {
    let mut scanner = Scanner::new(0);
    let mut found = Vec::new();
    while let Some((_, marker)) = scanner.next(table, text, true) {
        if !found.contains(&marker.dialect) {
            found.push(marker.dialect);
        }
    }
    in_order(table, &found)
}

/// `found`, in the table's order of dialects (each once).
pub(crate) fn in_order(table: &Table, found: &[Dialect]) -> Vec<Dialect> {
    let mut out: Vec<Dialect> = Vec::new();
    for (dialect, _) in table {
        if found.contains(dialect) && !out.contains(dialect) {
            out.push(*dialect);
        }
    }
    out
}
