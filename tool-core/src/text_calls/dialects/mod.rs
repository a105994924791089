//! The built-in dialects, one file each; each file holds the dialect's only list of markers.

pub(crate) mod deepseek;
pub(crate) mod granite;
pub(crate) mod hermes;
pub(crate) mod json;
pub(crate) mod llama3;
pub(crate) mod mistral;
pub(crate) mod pythonic;

use super::Dialect;
use super::Marker;

/// Every built-in dialect's markers, in the order of [`Dialect::ALL`].
pub(crate) const TABLE: [(Dialect, &[Marker]); 7] = [
    (Dialect::Json, json::MARKERS),
    (Dialect::Hermes, hermes::MARKERS),
    (Dialect::Llama3, llama3::MARKERS),
    (Dialect::Mistral, mistral::MARKERS),
    (Dialect::Granite, granite::MARKERS),
    (Dialect::DeepSeek, deepseek::MARKERS),
    (Dialect::Pythonic, pythonic::MARKERS),
];
