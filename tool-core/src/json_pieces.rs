//! Text made of the pieces JSON is written with, most of it not JSON, and JSON values written
//! out: for the property tests that hold a JSON reader of this crate to serde_json's answers.

use proptest::prelude::*;

/// Brackets and separators, quotes, escapes and `\u` digits (a surrogate among them), digits,
/// signs and exponents, whitespace, a control character, non-ASCII text and literals.
const PIECES: &[&str] = &[
    "{", "}", "[", "]", ",", ":", "\"", "\"k\"", "\\", "\\u", "u", "d83d", "de00", "d800", "00e9",
    "n", "0", "1", "9", "-", "+", ".", "e", "E", " ", "\n", "\u{1}", "é", "true", "null", "x",
];

/// Up to `most` pieces, of [`PIECES`] and `extra`, one after another.
pub(crate) fn json_pieces(
    extra: &'static [&'static str],
    most: usize,
) -> impl Strategy<Value = String> {
    let pieces: Vec<&'static str> = PIECES.iter().chain(extra).copied().collect();
    proptest::collection::vec(proptest::sample::select(pieces), 0..most)
        .prop_map(|pieces| pieces.concat())
}

/// JSON values written out, spaced: arrays and objects (keys `a` to `cc`) of `leaf`s, nested
/// up to four deep.
pub(crate) fn json_values(leaf: impl Strategy<Value = String> + 'static) -> BoxedStrategy<String> {
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6)
                .prop_map(|items| format!("[{}]", items.join(","))),
            proptest::collection::vec(("[a-c]{1,2}", inner), 0..6).prop_map(|members| {
                let members: Vec<String> = members
                    .into_iter()
                    .map(|(key, value)| format!("\"{key}\" : {value}"))
                    .collect();
                format!("{{ {} }}", members.join(" ,\n"))
            }),
        ]
    })
    .boxed()
}
