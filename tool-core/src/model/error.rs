//! A model that could not answer.

use std::fmt;

/// A model could not answer: a network error, a refusal, a closed stream, a reply that could not
/// be read. The agent loop ends its run with it, and the repair loop its call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    message: String,
}

impl ModelError {
    /// A model failure described by `message`.
    pub fn new(message: impl Into<String>) -> Self {
        ModelError {
            message: message.into(),
        }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ModelError {}
