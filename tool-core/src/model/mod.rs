//! What a model is asked and what it answers: the [`Model`] trait and its [`ModelRequest`],
//! the transcript of a run ([`Message`], [`Turn`], [`ToolResult`]), token [`Usage`], and the
//! [`ModelError`] a model fails with.
//!
//! This is the vocabulary the agent loop, the repair loop, the provider wire formats, the text
//! dialects and the HTTP clients share; none of them owns it.

mod error;
mod request;
mod transcript;

pub use error::ModelError;
pub use request::{Model, ModelRequest};
pub use transcript::{Message, Provider, ProviderState, ToolResult, Turn, Usage};
