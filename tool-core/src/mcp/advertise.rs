//! How a registered tool is described to MCP clients: schemas and annotations.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Map, Value};

use crate::providers::{self, Loss};
use crate::{Effect, registry::ToolInfo};

/// How many losses of one tool the log names; the rest are counted.
const LOGGED_LOSSES: usize = 5;

/// The MCP `Tool` advertising `info`, and what its `inputSchema` does not say of the
/// canonical one.
pub(crate) fn tool(info: &ToolInfo) -> (Tool, Vec<Loss>) {
    let (input_schema, losses) = input_schema(info);
    let mut tool = Tool::new(
        info.name().to_owned(),
        info.description().to_owned(),
        Arc::new(input_schema),
    )
    .with_annotations(annotations(info.effect()));
    if let Some(schema) = info.output_schema().and_then(object_root) {
        tool = tool.with_raw_output_schema(Arc::new(schema.clone()));
    }
    (tool, losses)
}

/// The canonical input schema, with a root union merged into one object (the module docs say
/// why), and the losses of that merge, logged for the operator.
fn input_schema(info: &ToolInfo) -> (JsonObject, Vec<Loss>) {
    let canonical = info.input_schema();
    match providers::client_schema(canonical) {
        None => (object(canonical), Vec::new()),
        Some(Ok(lowered)) => {
            let shown: Vec<String> = lowered
                .losses
                .iter()
                .take(LOGGED_LOSSES)
                .map(ToString::to_string)
                .collect();
            tracing::info!(
                tool = info.name(),
                losses = lowered.losses.len(),
                first = ?shown,
                "MCP clients are sent this tool's input schema with its root union merged into \
                 one object; calls are still checked against the whole schema"
            );
            (object(&lowered.schema), lowered.losses)
        }
        Some(Err(error)) => {
            tracing::warn!(
                tool = info.name(),
                %error,
                "this tool's input schema keeps its root union, which some MCP clients refuse"
            );
            (object(canonical), Vec::new())
        }
    }
}

/// The hints an effect justifies (see the module docs for the table).
pub(crate) fn annotations(effect: Effect) -> ToolAnnotations {
    let (read_only, destructive, idempotent) = match effect {
        Effect::ReadOnly => (true, false, true),
        Effect::Idempotent => (false, true, true),
        Effect::NonIdempotent => (false, true, false),
    };
    ToolAnnotations::new()
        .read_only(read_only)
        .destructive(destructive)
        .idempotent(idempotent)
}

/// A schema as a JSON object: MCP has no place for a boolean schema, so `true` and `false`
/// become the object schemas that mean the same.
fn object(schema: &Value) -> JsonObject {
    match schema {
        Value::Object(map) => map.clone(),
        Value::Bool(false) => {
            let mut map = Map::new();
            map.insert("not".to_owned(), Value::Object(Map::new()));
            map
        }
        // `true`, and anything that is not a schema at all (the registry compiled it, so this
        // does not happen), accept everything.
        _ => Map::new(),
    }
}

/// The schema, when its root is `"type": "object"`, as MCP requires of an `outputSchema`.
fn object_root(schema: &Value) -> Option<&JsonObject> {
    let map = schema.as_object()?;
    (map.get("type") == Some(&Value::from("object"))).then_some(map)
}
