//! How an [`Outcome`] is answered over MCP: a result, a result with `isError`, or a JSON-RPC
//! error (the table is in the module docs).

use rmcp::model::{CallToolResult, ContentBlock, ErrorCode, ErrorData};
use serde_json::{Map, Value, json};

use crate::outcome::{Code, Failure, Outcome};

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
            Code::DuplicateCallId => Err(ErrorData::new(
                ErrorCode::INVALID_REQUEST,
                failure.message().to_owned(),
                Some(json!({ "code": failure.code().as_str() })),
            )),
            _ => Ok(tool_error(&failure)),
        },
    }
}

/// A failure as a tool execution error the model can act on.
fn tool_error(failure: &Failure) -> CallToolResult {
    let mut error = Map::new();
    error.insert("code".to_owned(), Value::from(failure.code().as_str()));
    error.insert("message".to_owned(), Value::from(failure.message()));
    if let Some(errors) = failure.errors() {
        let violations = errors
            .iter()
            .map(|violation| {
                json!({
                    "pointer": violation.pointer(),
                    "keyword": violation.keyword().as_str(),
                    "message": violation.message(),
                })
            })
            .collect();
        error.insert("violations".to_owned(), Value::Array(violations));
    }
    let mut result = CallToolResult::error(vec![ContentBlock::text(failure.message().to_owned())]);
    result.structured_content = Some(json!({ "error": error }));
    result
}
