//! Stage 1: the name must be a tool in the [`Registry`], the allow-list; nothing else is
//! reachable.

use crate::Registry;
use crate::outcome::{Code, Failure};

/// The failure for a name the registry does not hold, listing (up to 32 of) the tools there
/// are, so the model can correct itself.
pub(super) fn unknown_tool(registry: &Registry, tool: &str) -> Failure {
    let mut message = format!("unknown tool {:?}", truncate(tool, 64));
    if !registry.is_empty() {
        message.push_str("; available: ");
        for (i, info) in registry.tools().take(32).enumerate() {
            if i > 0 {
                message.push_str(", ");
            }
            message.push_str(info.name());
        }
        if registry.len() > 32 {
            message.push_str(", …");
        }
    }
    Failure::new(Code::UnknownTool, message)
}

/// `text` cut to at most `max` bytes on a character boundary.
pub(super) fn truncate(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
