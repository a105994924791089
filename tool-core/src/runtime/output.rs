//! Stage 8: the output is serialized under its byte cap (the tool's or the runtime's), and that
//! text, which is what the model receives, is checked against the output schema. The check runs
//! as the last step of the call's work, so a panic while serializing is caught like the
//! handler's.

use super::{CallRef, Shared};
use crate::outcome::{Code, Failure};
use crate::registry::{OutputError, ToolInfo};

/// The output byte cap for `info`'s tool.
pub(super) fn limit(shared: &Shared, info: &ToolInfo) -> usize {
    info.settings
        .max_output_bytes
        .unwrap_or(shared.max_output_bytes)
}

/// The failure for an output that breaks the tool's contract.
pub(super) fn broken(
    error: OutputError,
    shared: &Shared,
    info: &ToolInfo,
    call: &CallRef<'_>,
) -> Failure {
    let (code, detail) = match error {
        OutputError::TooLarge => {
            return Failure::new(
                Code::OutputTooLarge,
                format!(
                    "`{}` produced an output over the limit of {} bytes (reference {})",
                    info.name,
                    limit(shared, info),
                    call.id
                ),
            );
        }
        OutputError::Serialize(error) => (
            Code::InvalidOutput,
            format!("output could not be serialized: {error}"),
        ),
        OutputError::Invalid(errors) => (
            Code::InvalidOutput,
            format!("output breaks the output schema:\n{errors}"),
        ),
    };
    Failure::new(
        code,
        format!(
            "`{}` produced an output that breaks its contract (reference {})",
            info.name, call.id
        ),
    )
    .with_detail(detail)
}
