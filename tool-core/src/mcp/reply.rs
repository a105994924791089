//! How an [`Outcome`] is answered over MCP: a result, a result with `isError`, or a JSON-RPC
//! error (the table is in the module docs).

use rmcp::model::{CallToolResult, ContentBlock, ErrorCode, ErrorData, MetaObject};
use serde_json::{Map, json};

use crate::outcome::{Code, Failure, Outcome};

/// The `_meta` key of an error result that holds the failure's stable code.
const ERROR_META: &str = "tool-core/error";

/// The reply to the `tools/call` that ended in `outcome`.
pub(crate) fn reply(outcome: Outcome) -> Result<CallToolResult, ErrorData> {
    let tool = outcome.tool().to_owned();
    match outcome.into_result() {
        Ok(output) => {
            let value = output.to_value();
            let mut result =
                CallToolResult::success(vec![ContentBlock::text(output.into_string())]);
            // MCP's `structuredContent` is an object (revisions up to 2025-11-25).
            if value.is_object() {
                result.structured_content = Some(value);
            }
            Ok(result)
        }
        Err(failure) => match failure.code() {
            Code::UnknownTool => Err(ErrorData::invalid_params(
                format!("Unknown tool: {tool}"),
                Some(json!({ "code": failure.code().as_str(), "message": failure.message() })),
            )),
            // The request id was used before in this session: a protocol error of the client's.
            Code::DuplicateCallId | Code::CallIdConflict | Code::CallInFlight => {
                Err(ErrorData::new(
                    ErrorCode::INVALID_REQUEST,
                    failure.message().to_owned(),
                    Some(json!({ "code": failure.code().as_str() })),
                ))
            }
            _ => Ok(tool_error(&failure)),
        },
    }
}

/// A failure as a tool execution error the model can act on: the public message as text (for
/// `invalid_arguments`, one line per violation), and the stable code in `_meta`. There is no
/// `structuredContent`: MCP requires it to match the tool's `outputSchema`, which describes
/// outputs, not refusals (the TypeScript SDK's client throws on a mismatch, and the model then
/// sees nothing).
fn tool_error(failure: &Failure) -> CallToolResult {
    let mut meta = Map::new();
    meta.insert(
        ERROR_META.to_owned(),
        json!({ "code": failure.code().as_str() }),
    );
    let mut result = CallToolResult::error(vec![ContentBlock::text(failure.message().to_owned())]);
    result.meta = Some(MetaObject(meta));
    result
}
