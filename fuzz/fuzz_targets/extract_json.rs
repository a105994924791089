//! `extract_json` on arbitrary model text.
//!
//! Input: the text. Checked: the answer is consistent (the span is the slice, the slice is one
//! JSON object or array; an ambiguity lists at most 8 ordered, disjoint spans of at least 2;
//! an unterminated opener is where it says), and, when the input itself is a JSON object, that
//! object written into prose comes back byte for byte.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::de::IgnoredAny;
use serde_json::Value;
use tool_core::{extract::{ExtractError, extract_json}};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(&data[..data.len().min(tool_fuzz::MAX_INPUT)]) else {
        return;
    };
    consistent(text);
    if let Ok(object @ Value::Object(_)) = serde_json::from_str::<Value>(text) {
        for json in [
            serde_json::to_string(&object).expect("a value serializes"),
            serde_json::to_string_pretty(&object).expect("a value serializes"),
        ] {
            let prose = format!("Sure! Here you go: {json} hope that helps");
            let found = extract_json(&prose)
                .unwrap_or_else(|e| panic!("an object in prose was not found: {e}: {prose:?}"));
            assert_eq!(found.json(), json, "an object in prose came back changed");
            assert_eq!(found.span().start, "Sure! Here you go: ".len());
        }
    }
});

fn consistent(text: &str) {
    match extract_json(text) {
        Ok(found) => {
            assert_eq!(&text[found.span()], found.json(), "the span is not the slice");
            // JSON syntax; numbers past f64's range (`1e400`) are JSON text too, which
            // `serde_json::Value` (and so `parse_arguments`) then refuses as out of range.
            serde_json::from_str::<IgnoredAny>(found.json())
                .unwrap_or_else(|e| panic!("extracted text that is not JSON ({e}): {text:?}"));
            assert!(
                found.json().starts_with(['{', '[']),
                "extracted a scalar: {text:?}"
            );
            let _ = found.source();
        }
        Err(error) => {
            assert!(!error.to_string().is_empty());
            match &error {
                ExtractError::Ambiguous { count, spans } => {
                    assert!(*count >= 2, "an ambiguity of {count}");
                    assert!(!spans.is_empty() && spans.len() <= 8.min(*count));
                    for span in spans {
                        assert!(span.start < span.end && span.end <= text.len());
                        assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
                    }
                    for pair in spans.windows(2) {
                        assert!(pair[0].end <= pair[1].start, "spans overlap: {spans:?}");
                    }
                }
                ExtractError::Unterminated { opener, at } => {
                    assert!(matches!(opener, '{' | '['));
                    assert_eq!(text.as_bytes().get(*at).copied(), Some(*opener as u8));
                }
                _ => {}
            }
        }
    }
}
