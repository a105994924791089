//! Stage 4: may this principal make this call. The runtime's [`Authorize`] policy sees the
//! tool and the trusted [`Context`]; then the tool's own check
//! ([`ToolDef::authorize`](crate::ToolDef::authorize)) sees the typed arguments. Both run inside
//! the registry's `prepare`, right after validation, so an invalid call is never authorized.

use super::CallRef;
use crate::context::Context;
use crate::outcome::{Code, Denied, Failure};
use crate::registry::ToolInfo;

/// A runtime-wide authorization policy, consulted for every valid call before any approval or
/// execution. Any `Fn(&ToolInfo, &Context) -> Result<(), Denied>` closure is one.
///
/// It sees the tool and the trusted [`Context`], never the model's text. Decisions that need
/// the typed arguments belong on the tool ([`ToolDef::authorize`](crate::ToolDef::authorize)).
/// The check is synchronous: load what it needs (roles, grants) into the context first.
pub trait Authorize: Send + Sync + 'static {
    /// `Ok` lets the call proceed; `Err` ends it as `unauthorized`, and so does a panic.
    fn authorize(&self, tool: &ToolInfo, cx: &Context) -> Result<(), Denied>;
}

impl<F> Authorize for F
where
    F: Fn(&ToolInfo, &Context) -> Result<(), Denied> + Send + Sync + 'static,
{
    fn authorize(&self, tool: &ToolInfo, cx: &Context) -> Result<(), Denied> {
        self(tool, cx)
    }
}

/// The failure for a refusal: the policy's message for the model if it set one, its reason for
/// the operator.
pub(super) fn unauthorized(denied: Denied, info: &ToolInfo, call: &CallRef<'_>) -> Failure {
    let message = match denied.message() {
        Some(message) => format!("{message} (reference {})", call.id),
        None => format!(
            "not authorized to call `{}` (reference {})",
            info.name, call.id
        ),
    };
    Failure::new(Code::Unauthorized, message).with_detail(denied.detail())
}
