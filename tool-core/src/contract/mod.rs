//! The contract of a tool's arguments: the schema a type advertises and the parser that checks
//! exactly that schema, with every violation at its JSON Pointer.
//!
//! The types most code needs, [`Tool`](crate::Tool), [`Argument`](crate::Argument) and
//! [`ArgumentErrors`](crate::ArgumentErrors), are at the crate root; this module holds the
//! rest of the contract's vocabulary.

pub(crate) mod any;
pub(crate) mod argument;
pub(crate) mod arguments;
pub(crate) mod constraints;
pub(crate) mod duration;
pub(crate) mod ecosystem;
pub(crate) mod error;
pub(crate) mod format;
pub(crate) mod maps;
pub(crate) mod path;
pub(crate) mod resource;
pub(crate) mod schema;
#[cfg(feature = "schemars")]
pub(crate) mod schemars;
pub(crate) mod sets;
pub(crate) mod standard;
pub(crate) mod strings;
pub(crate) mod tool;
pub(crate) mod tuples;
pub(crate) mod union;
pub(crate) mod untagged;
pub(crate) mod untyped;
pub(crate) mod validate;
pub(crate) mod wide;
pub(crate) mod with;

pub use arguments::Arguments;
pub use error::{Keyword, Violation};
pub use format::Format;
pub use resource::{ResourceId, ResourceRef};
pub use schema::DRAFT_2020_12;
#[cfg(feature = "schemars")]
#[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
pub use schemars::ViaSchemars;
pub use validate::MAX_DEPTH;
pub use with::{ArgumentSchema, ArgumentWith};
