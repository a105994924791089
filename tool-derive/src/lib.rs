//! The derive macros of `tool-core`. Use them through `tool_core`, which re-exports both:
//! `use tool_core::{Argument, Tool};`.

#![warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod ast;
mod attr;
mod case;
mod check;
mod doc;
mod expand;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Derives `tool_core::Tool` and `tool_core::Argument` for a struct with named fields.
#[proc_macro_derive(Tool, attributes(tool, serde))]
pub fn derive_tool(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input, expand::Mode::Tool).into()
}

/// Derives `tool_core::Argument` for a struct with named fields or a unit-variant enum.
#[proc_macro_derive(Argument, attributes(tool, serde))]
pub fn derive_argument(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input, expand::Mode::Argument).into()
}
