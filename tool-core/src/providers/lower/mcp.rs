//! The `inputSchema` MCP clients are sent for a tool whose root is a union. MCP wants an object
//! schema there, and Anthropic-backed clients refuse `anyOf`/`oneOf`/`allOf` at the root, but
//! every client reads any other JSON Schema 2020-12. So only the root changes: its union is
//! merged into one object exactly as for the providers (`root.rs`), and every other keyword is
//! sent as written, not walked.
//!
//! Moving the branches' properties to the root moves the subschemas in them, so a `$ref` into
//! the union (`#/oneOf/0/...`, an `$anchor` inside a branch, `#` itself) would dangle. Such a
//! schema takes the full walk for [`Dialect::McpClient`] instead, which inlines references and
//! keeps cycles in the root `$defs`; `$ref`s into the root's `$defs` (what schema generators
//! write) keep working as they are.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::context::{MAX_DEPTH, Report};
use super::merge::Merge;
use super::refs::Refs;
use super::{LoweredSchema, lower_schema, root};
use crate::providers::dialect::Dialect;
use crate::providers::loss::LowerError;

/// `schema` as MCP clients accept it: `None` when its root has no union (it goes out
/// unchanged), else the root merged into one object and what that lost.
pub(crate) fn client_schema(schema: &Value) -> Option<Result<LoweredSchema, LowerError>> {
    let dialect = Dialect::McpClient;
    let Value::Object(map) = schema else {
        return None;
    };
    if !root::needs_flattening(map, dialect) {
        return None;
    }
    Some(merge_root(schema, map).and_then(|merged| match merged {
        Some(merged) => Ok(merged),
        None => lower_schema(schema, dialect),
    }))
}

/// The root union merged, everything else as written; `None` when a reference would dangle.
fn merge_root(
    schema: &Value,
    map: &Map<String, Value>,
) -> Result<Option<LoweredSchema>, LowerError> {
    let dialect = Dialect::McpClient;
    let mut report = Report::new(dialect);
    let mut refs = Refs::new(schema);
    let mut flat = root::flatten(
        &mut Merge {
            refs: &mut refs,
            open: &[],
            report: &mut report,
        },
        map,
    )?
    .map;
    root::root_object(&mut flat, dialect)?;
    let changed: HashSet<String> = map
        .keys()
        .chain(flat.keys())
        .filter(|key| map.get(*key) != flat.get(*key))
        .cloned()
        .collect();
    let whole = Value::Object(flat);
    if !references_intact(&whole, 0, &mut refs, &changed) {
        return Ok(None);
    }
    Ok(Some(LoweredSchema {
        schema: whole,
        losses: report.into_losses(),
    }))
}

/// Whether every reference in `value` still finds what it found in the canonical schema (see
/// [`still_resolves`]). A `$dynamicRef` or `$recursiveRef`, or nesting deeper than the
/// lowering goes, counts as broken. Values that are data (`enum`, `const`, `default`,
/// `examples`) are not searched.
fn references_intact(
    value: &Value,
    depth: usize,
    refs: &mut Refs<'_>,
    changed: &HashSet<String>,
) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match value {
        Value::Object(map) => map.iter().all(|(key, value)| match (key.as_str(), value) {
            ("$ref", Value::String(reference)) => still_resolves(refs, reference, changed),
            ("$dynamicRef" | "$recursiveRef", _) => false,
            ("enum" | "const" | "default" | "examples", _) => true,
            _ => references_intact(value, depth + 1, refs, changed),
        }),
        Value::Array(items) => items
            .iter()
            .all(|item| references_intact(item, depth + 1, refs, changed)),
        _ => true,
    }
}

/// Whether `reference` finds in the merged schema what it found in the canonical one: a
/// reference to another document is as it was; a local one must not lead into a root
/// keyword the merge `changed` (the union, `properties`, the root itself).
fn still_resolves(refs: &mut Refs<'_>, reference: &str, changed: &HashSet<String>) -> bool {
    match refs.target_of(reference, "") {
        Err(LowerError::NonLocalRef { .. }) => true,
        Err(_) => false,
        Ok(pointer) => {
            let Some(first) = pointer.strip_prefix('/') else {
                return false;
            };
            let token = first.split('/').next().unwrap_or_default();
            let token = token.replace("~1", "/").replace("~0", "~");
            !changed.contains(&token)
        }
    }
}
