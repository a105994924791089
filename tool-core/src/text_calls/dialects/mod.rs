//! The built-in dialects, one file each; each file holds the dialect's only list of markers
//! and its reader, and is registered by one line of [`BUILT_IN`].

pub(crate) mod deepseek;
pub(crate) mod granite;
pub(crate) mod hermes;
pub(crate) mod json;
pub(crate) mod llama3;
pub(crate) mod mistral;
pub(crate) mod pythonic;

use super::dialect::{Read, Reader};
use super::scan::{Candidate, Table};
use super::stream::Opened;
use super::{Dialect, Marker, TextError};
use crate::call::ToolCall;

/// A built-in dialect: its variant, name and markers, and the functions of its file that read
/// and write it. It is the dialect's [`Reader`].
pub(crate) struct BuiltIn {
    pub(crate) dialect: Dialect,
    pub(crate) name: &'static str,
    pub(crate) markers: &'static [Marker],
    /// Every call of a whole reply, and the ranges read (see [`Reader::read`]).
    pub(crate) read: fn(&Table, &str, bool) -> Result<Read, TextError>,
    /// When the dialect was detected and the reply is refused as invalid: whether it was
    /// meant as calls at all (else it is prose). `None`: a refused reply stays refused.
    pub(crate) meant_as_calls: Option<fn(&str) -> bool>,
    /// Whether a reply with no markers, `text` (out of its fence, leading whitespace
    /// trimmed), is wholly written in this dialect; detection asks each in turn.
    pub(crate) claims_whole: fn(&str) -> bool,
    /// See [`Reader::calls_at_end`].
    pub(crate) calls_at_end: bool,
    /// See [`Reader::open`].
    pub(crate) open: fn(usize, &'static Marker) -> Opened,
    /// See [`Reader::render`].
    pub(crate) render: fn(&mut String, &[ToolCall]) -> Result<(), TextError>,
}

impl BuiltIn {
    /// A dialect whose opening markers start blocks of calls, read as the reply streams in.
    pub(crate) const fn blocks(
        dialect: Dialect,
        name: &'static str,
        markers: &'static [Marker],
        read: fn(&Table, &str, bool) -> Result<Read, TextError>,
        open: fn(usize, &'static Marker) -> Opened,
        render: fn(&mut String, &[ToolCall]) -> Result<(), TextError>,
    ) -> BuiltIn {
        BuiltIn {
            dialect,
            name,
            markers,
            read,
            meant_as_calls: None,
            claims_whole: never,
            calls_at_end: false,
            open,
            render,
        }
    }

    /// A dialect whose calls are the whole reply, read when it ends, and which detection
    /// picks for a reply with no markers that `claims_whole`.
    pub(crate) const fn whole(
        dialect: Dialect,
        name: &'static str,
        markers: &'static [Marker],
        read: fn(&Table, &str, bool) -> Result<Read, TextError>,
        claims_whole: fn(&str) -> bool,
        render: fn(&mut String, &[ToolCall]) -> Result<(), TextError>,
    ) -> BuiltIn {
        let mut built_in = BuiltIn::blocks(dialect, name, markers, read, at_end, render);
        built_in.claims_whole = claims_whole;
        built_in.calls_at_end = true;
        built_in
    }

    /// With [`meant_as_calls`](Self::meant_as_calls).
    pub(crate) const fn meant_as_calls(mut self, meant: fn(&str) -> bool) -> BuiltIn {
        self.meant_as_calls = Some(meant);
        self
    }
}

impl Reader for BuiltIn {
    fn read(&self, table: &Table, text: &str, detecting: bool) -> Result<Option<Read>, TextError> {
        match (self.read)(table, text, detecting) {
            Err(TextError::Invalid { .. })
                if detecting && self.meant_as_calls.is_some_and(|meant| !meant(text)) =>
            {
                Ok(None)
            }
            result => result.map(Some),
        }
    }

    fn calls_at_end(&self) -> bool {
        self.calls_at_end
    }

    fn open(&self, at: usize, marker: &'static Marker) -> Opened {
        (self.open)(at, marker)
    }

    fn render(&self, out: &mut String, calls: &[ToolCall]) -> Result<(), TextError> {
        (self.render)(out, calls)
    }
}

/// For a dialect whose replies are never claimed without markers.
fn never(_: &str) -> bool {
    false
}

/// For a dialect whose calls are read when the reply ends.
fn at_end(_: usize, _: &'static Marker) -> Opened {
    Opened::Rest
}

/// Every built-in dialect, in the order detection lists them.
pub(crate) const BUILT_IN: &[BuiltIn] = &[
    json::BUILT_IN,
    hermes::BUILT_IN,
    llama3::BUILT_IN,
    mistral::BUILT_IN,
    granite::BUILT_IN,
    deepseek::BUILT_IN,
    pythonic::BUILT_IN,
];

/// How many dialects are built in.
pub(crate) const COUNT: usize = BUILT_IN.len();

/// Every built-in dialect, in the order of [`BUILT_IN`].
pub(crate) const ALL: [Dialect; COUNT] = {
    let mut all = [Dialect::Custom(""); COUNT];
    let mut i = 0;
    while i < COUNT {
        all[i] = BUILT_IN[i].dialect;
        i += 1;
    }
    all
};

/// Every built-in dialect's markers, in the order of [`BUILT_IN`].
pub(crate) static TABLE: [(Dialect, &[Marker]); COUNT] = {
    let mut table: [(Dialect, &[Marker]); COUNT] = [(Dialect::Custom(""), &[]); COUNT];
    let mut i = 0;
    while i < COUNT {
        table[i] = (BUILT_IN[i].dialect, BUILT_IN[i].markers);
        i += 1;
    }
    table
};

/// How many markers the built-in dialects have.
const MARKERS: usize = {
    let mut count = 0;
    let mut i = 0;
    while i < COUNT {
        count += BUILT_IN[i].markers.len();
        i += 1;
    }
    count
};

/// Every built-in marker with its dialect, in the order of [`TABLE`].
static CANDIDATES: [Candidate; MARKERS] = {
    static NONE: Marker = Marker::opens("");
    let mut candidates = [Candidate::new(Dialect::Custom(""), &NONE); MARKERS];
    let mut n = 0;
    let mut i = 0;
    while i < COUNT {
        let markers = BUILT_IN[i].markers;
        let mut j = 0;
        while j < markers.len() {
            candidates[n] = Candidate::new(BUILT_IN[i].dialect, &markers[j]);
            n += 1;
            j += 1;
        }
        i += 1;
    }
    candidates
};

/// The table of the built-in dialects.
pub(crate) const BUILT_IN_TABLE: Table = Table::new(&TABLE, &CANDIDATES);

/// The name of the built-in `dialect` (empty for one not built in).
pub(crate) fn name(dialect: Dialect) -> &'static str {
    BUILT_IN
        .iter()
        .find(|built_in| built_in.dialect == dialect)
        .map_or("", |built_in| built_in.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_candidates_are_the_tables_markers_in_order() {
        let markers: Vec<(Dialect, &str)> = TABLE
            .iter()
            .flat_map(|(dialect, markers)| markers.iter().map(move |m| (*dialect, m.text())))
            .collect();
        let candidates: Vec<(Dialect, &str)> = CANDIDATES
            .iter()
            .map(|c| (c.dialect(), c.marker().text()))
            .collect();
        assert_eq!(candidates, markers);
        assert!(!markers.is_empty());
    }

    #[test]
    fn every_built_in_is_registered_once_under_its_name() {
        let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.name()).collect();
        assert_eq!(
            names,
            [
                "json", "hermes", "llama3", "mistral", "granite", "deepseek", "pythonic"
            ]
        );
        for (i, (dialect, markers)) in TABLE.iter().enumerate() {
            assert_eq!(*dialect, ALL[i]);
            assert_eq!(*markers, BUILT_IN[i].markers);
        }
    }
}
