//! The errors of one derive, collected across reading the attributes and checking the input,
//! and reported together: a type with ten mistakes shows ten errors in one build.

use std::cell::RefCell;
use std::fmt::Display;

use proc_macro2::Span;
use quote::ToTokens;

/// Shared by every step of one derive (`&Errors`), so that a step which reads a nested list
/// can record a mistake and go on.
#[derive(Default)]
pub(crate) struct Errors(RefCell<Vec<syn::Error>>);

impl Errors {
    pub(crate) fn push(&self, error: syn::Error) {
        self.0.borrow_mut().push(error);
    }

    /// An error at `tokens`.
    pub(crate) fn spanned(&self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// An error at `span`.
    pub(crate) fn at(&self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Every error recorded, in order, as one.
    pub(crate) fn finish(self) -> syn::Result<()> {
        let mut errors = self.0.into_inner().into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}
