//! Markdown fences, read by one set of rules wherever a reply may hold them: a run of three
//! or more backticks opens a fence, the label is the word after it, and a run at least as
//! long closes it.
//!
//! The JSON finder reads fences anywhere in a text ([`open`] and [`closes`] in its forward
//! pass); the readers of tool calls in text read a fence that is the whole reply
//! ([`whole`]). The one rule they differ in is which labels they take a fence's contents in,
//! and each caller names its own.

/// The shortest run of backticks that opens or closes a fence.
pub(crate) const FENCE_RUN: usize = 3;

/// A fence's label, as far as JSON is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FenceKind {
    /// ```` ```json ```` (in any case).
    Json,
    /// No label.
    Unlabelled,
    /// Another language: ```` ```python ````.
    Other,
}

/// A fence's opening: its run of backticks, its label, and where its contents start (just
/// after the label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Opening<'a> {
    pub(crate) run: usize,
    pub(crate) label: &'a [u8],
    pub(crate) content_start: usize,
}

impl Opening<'_> {
    /// What the label says the contents are.
    pub(crate) fn kind(&self) -> FenceKind {
        if self.label.is_empty() {
            FenceKind::Unlabelled
        } else if self.label.eq_ignore_ascii_case(b"json") {
            FenceKind::Json
        } else {
            FenceKind::Other
        }
    }
}

/// The length of the run of backticks at `at`.
pub(crate) fn run_at(bytes: &[u8], at: usize) -> usize {
    bytes
        .get(at..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&b| b == b'`')
        .count()
}

/// The fence the run of `run` backticks at `at` opens, if it is long enough: the label is the
/// word after the run (spaces and tabs before it allowed).
pub(crate) fn open(bytes: &[u8], at: usize, run: usize) -> Option<Opening<'_>> {
    if run < FENCE_RUN {
        return None;
    }
    let after_run = at + run;
    let is_label =
        |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'.' | b'#');
    let rest = bytes.get(after_run..).unwrap_or_default();
    let spaces = rest
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    let word_len = rest[spaces..].iter().take_while(|&&b| is_label(b)).count();
    let label = &rest[spaces..spaces + word_len];
    let content_start = if label.is_empty() {
        after_run
    } else {
        after_run + spaces + word_len
    };
    Some(Opening {
        run,
        label,
        content_start,
    })
}

/// Whether a run of `run` backticks closes a fence opened by `opening_run`.
pub(crate) fn closes(run: usize, opening_run: usize) -> bool {
    run >= FENCE_RUN && run >= opening_run
}

/// The contents of the one fence that is the whole of `text` (surrounding whitespace aside),
/// with their offset in `text`, when its label is one of `labels` (`""`: no label; compared
/// in any case); `None` for any other text. The label must be alone on the opening line, and
/// the contents run from the next line to the closing run, which ends the text.
#[cfg_attr(not(feature = "text-calls"), allow(dead_code))] // used by the text dialects
pub(crate) fn whole<'t>(text: &'t str, labels: &[&str]) -> Option<(&'t str, usize)> {
    let bytes = text.as_bytes();
    let start = text.len() - text.trim_start().len();
    let end = text.trim_end().len();
    let opening = open(bytes, start, run_at(bytes, start))?;
    if !labels
        .iter()
        .any(|label| label.as_bytes().eq_ignore_ascii_case(opening.label))
    {
        return None;
    }
    // The rest of the opening line holds nothing but whitespace.
    let line = bytes[opening.content_start..end]
        .iter()
        .position(|&b| b == b'\n')?;
    let content_start = opening.content_start + line + 1;
    if !bytes[opening.content_start..content_start - 1]
        .iter()
        .all(u8::is_ascii_whitespace)
    {
        return None;
    }
    // The closing run ends the text, and no run before it closes the fence.
    let close_run = bytes[..end]
        .iter()
        .rev()
        .take_while(|&&b| b == b'`')
        .count();
    let close = end - close_run;
    if close < content_start || !closes(close_run, opening.run) {
        return None;
    }
    let mut at = content_start;
    while at < close {
        let run = run_at(bytes, at);
        if run == 0 {
            at += 1;
        } else if closes(run, opening.run) {
            return None;
        } else {
            at += run;
        }
    }
    Some((&text[content_start..close], content_start))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CALL_LABELS: &[&str] = &["", "json", "python"];

    #[test]
    fn a_whole_fence_gives_its_contents_after_the_label_line() {
        let text = "  ```JSON \n{\"a\": 1}\n```\n";
        let (body, at) = whole(text, CALL_LABELS).unwrap();
        assert_eq!(body, "{\"a\": 1}\n");
        assert_eq!(&text[at..at + body.len()], body);
        assert_eq!(
            whole("```\nf(a=1)\n```", CALL_LABELS).unwrap().0,
            "f(a=1)\n"
        );
    }

    #[test]
    fn other_labels_text_around_and_inner_fences_are_not_a_whole_fence() {
        assert_eq!(whole("```rust\nfn f() {}\n```", CALL_LABELS), None);
        assert_eq!(whole("```json extra\n{}\n```", CALL_LABELS), None);
        assert_eq!(whole("Here:\n```json\n{}\n```", CALL_LABELS), None);
        assert_eq!(whole("```json\n{}\n```\nand more", CALL_LABELS), None);
        assert_eq!(
            whole("```json\n{}\n```\n```json\n{}\n```", CALL_LABELS),
            None
        );
        assert_eq!(whole("```json {}```", CALL_LABELS), None);
        assert_eq!(whole("``json\n{}\n``", CALL_LABELS), None);
    }

    #[test]
    fn a_longer_run_closes_and_a_shorter_one_is_content() {
        assert_eq!(
            whole("````\na ``` b\n````", CALL_LABELS).unwrap().0,
            "a ``` b\n"
        );
        assert_eq!(whole("```\n{}\n````", CALL_LABELS).unwrap().0, "{}\n");
    }

    #[test]
    fn the_label_is_the_word_after_the_run() {
        let opening = open(b"``` json x", 0, 3).unwrap();
        assert_eq!(opening.label, b"json");
        assert_eq!(opening.kind(), FenceKind::Json);
        assert_eq!(opening.content_start, 8);
        assert_eq!(open(b"```\n", 0, 3).unwrap().kind(), FenceKind::Unlabelled);
        assert_eq!(open(b"```py", 0, 3).unwrap().kind(), FenceKind::Other);
        assert_eq!(open(b"``", 0, 2), None);
    }
}
