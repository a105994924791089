//! The built-in dialects, one file each; each file holds the dialect's only list of markers.

pub(crate) mod deepseek;
pub(crate) mod granite;
pub(crate) mod hermes;
pub(crate) mod json;
pub(crate) mod llama3;
pub(crate) mod mistral;
pub(crate) mod pythonic;

use super::scan::Marker;

/// Every built-in dialect's markers, in the order of [`Dialect::ALL`](super::Dialect::ALL).
pub(crate) const MARKERS: [&[Marker]; 7] = [
    json::MARKERS,
    hermes::MARKERS,
    llama3::MARKERS,
    mistral::MARKERS,
    granite::MARKERS,
    deepseek::MARKERS,
    pythonic::MARKERS,
];
