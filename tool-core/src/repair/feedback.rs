//! What the model is told about refused arguments.

use crate::ArgumentErrors;
use crate::contract::error::{Keyword, Violation};

/// The message sent back to the model about a refused attempt.
pub(super) fn feedback(
    tool: &str,
    errors: &ArgumentErrors,
    attempt: u32,
    max_attempts: u32,
    hint: Option<&str>,
) -> String {
    let mut text = format!(
        "Your arguments for `{tool}` were refused (attempt {attempt} of {max_attempts}):\n{errors}\n"
    );
    if let Some(hint) = hint {
        text.push_str("Hint: ");
        text.push_str(hint);
        text.push('\n');
    }
    text.push_str("Reply with the corrected arguments: one JSON object that matches the schema.");
    text
}

/// An argument error for text that holds no usable JSON value.
pub(crate) fn not_json(message: String) -> ArgumentErrors {
    ArgumentErrors::new(vec![Violation::new(
        String::new(),
        Keyword::Syntax,
        message,
    )])
}
