//! The derive macros of `tool-core`. Use them through `tool_core`, which re-exports both:
//! `use tool_core::{Argument, Tool};`.

#![warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// Each module uses only the modules named before it in this comment. Helpers: `errors`
// collects every mistake of one derive, `case` (serde's rename rules), `doc` (doc comments to
// descriptions), `engine` (how patterns are built). The pipeline, run by `derive` at the end of
// this file: `attr` reads the `#[tool(...)]` and `#[serde(...)]` keywords, `ast` builds the
// input model, `check` applies the rules across fields, `expand` writes the impls (with
// `parameter_table` for rustdoc), and `fallback` writes stubs instead when anything was wrong.
mod ast;
mod attr;
mod case;
mod check;
mod doc;
mod doc_schema;
mod engine;
mod errors;
mod expand;
mod fallback;
mod parameter_table;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

use crate::ast::{Input, Mode};
use crate::errors::Errors;

/// Derives `tool_core::Tool` and `tool_core::Argument` for a struct with named fields.
///
/// Checked at compile time, besides the attributes' syntax:
///
/// - a `pattern` is built the way the runtime and the `jsonschema` crate build it; one that
///   does not fit the regex engine's size limit (10 MiB per compiled pattern), or that the
///   `jsonschema` crate's engine cannot compile, is a compile error naming the limit. A whole
///   pattern `^X{m,n}$` over one character class is matched by counting characters and has no
///   such limit; a count at either end of a pattern is built at its minimum.
/// - a `range` that admits no value of the field's type (`min = 300` on a `u8`, `max = -1` on a
///   `u32`, no integer strictly between 0 and 1) is a compile error.
///
/// An `f32` field receives the `f32` nearest to the number sent, as serde gives it, and its
/// bounds hold on that value: a number that rounds onto or across a bound is refused, and the
/// advertised bound says so (`exclusive_min = 0` is advertised as `exclusiveMinimum`
/// 7.006492321624085e-46, half the least positive `f32`, below which numbers round to 0).
#[proc_macro_derive(Tool, attributes(tool, serde))]
pub fn derive_tool(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    derive(&input, Mode::Tool).into()
}

/// Derives `tool_core::Argument` for a struct with named fields or a unit-variant enum.
#[proc_macro_derive(Argument, attributes(tool, serde))]
pub fn derive_argument(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    derive(&input, Mode::Argument).into()
}

/// Both derives: read the input (recording every mistake), check it, then expand it, or
/// report every mistake at once with stub impls in place of the real ones.
fn derive(node: &DeriveInput, mode: Mode) -> proc_macro2::TokenStream {
    let errors = Errors::default();
    let input = Input::from_syn(node, mode, &errors);
    check::check(&input, &errors);
    match errors.finish() {
        Ok(()) => expand::expand(&input),
        Err(error) => fallback::expand(&input, &error),
    }
}
