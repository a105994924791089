//! Lowering a canonical schema to one provider dialect: one walk over the schema that copies,
//! rewrites or drops each keyword (as [`Dialect`] says) and records every [`Loss`].
//!
//! The order of work, and the file that does it:
//!
//! 1. OpenAI and Anthropic refuse a root `anyOf`/`oneOf`/`allOf`, and Gemini's `parameters`
//!    declares parameters through the root's properties: a root union is merged into one
//!    object first (`root.rs`, with `merge.rs` for `allOf`).
//! 2. `$ref`s are resolved inside the schema (JSON Pointers, `$anchor`s, the root `$id`);
//!    nothing is fetched (`refs.rs`). A reference that is not part of a cycle is inlined, the
//!    keywords beside it merged in, so nested `$defs` never reach a provider. A cycle becomes
//!    a `$ref` into the root `$defs` where the dialect allows recursion (the keywords beside
//!    it kept, or set beside a one-branch `anyOf` that holds it where the dialect allows
//!    nothing beside a `$ref`), and a refusal where not.
//! 3. `allOf` is merged into one schema where the dialect has no `allOf` (`merge.rs`).
//! 4. Each keyword is kept, dropped (an assertion: [`LossKind::Unenforced`](super::LossKind::Unenforced)), hidden (an
//!    annotation: [`LossKind::Hidden`](super::LossKind::Hidden)) or rewritten; `oneOf` becomes `anyOf` where the
//!    dialect has no `oneOf`, a loss only when its branches may overlap (`keywords.rs`,
//!    `unions.rs`; Gemini's rewrites, such as an `anyOf` that must stand alone, in `gemini.rs`).
//!    OpenAI strict, Anthropic strict and Gemini's `parameters` want a type on every schema:
//!    one without gets the type its keywords imply, or else the scalar types, a narrowing
//!    either way (`keywords.rs`).
//! 5. Objects: OpenAI strict lists every property in `required`, an optional one made
//!    nullable (see [`remove_strict_nulls`](super::remove_strict_nulls) for the way back), and
//!    closes every object; Anthropic strict closes every object (`objects.rs`, with arrays).
//! 6. The root must describe an object: it gets `type: "object"` if it had none, a type list
//!    keeps only `"object"`, any other type is refused (`root.rs`).
//!
//! MCP clients get less: only step 1, every other keyword as written (`mcp.rs`, which falls
//! back on the whole walk where moving a branch would leave a `$ref` dangling).
//!
//! This file drives the walk: it bounds it (`context.rs` holds the bounds), keeps the stack
//! of schemas being walked that tells a cycle, and sends each subschema to the part that
//! lowers it. The parts recurse through the [`Walk`] they are handed, never by
//! naming the driver.

mod context;
mod gemini;
mod keywords;
#[cfg(feature = "mcp")]
mod mcp;
mod merge;
mod objects;
mod refs;
mod root;
mod unions;

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Map, Value, json};

use self::context::{MAX_DEPTH, MAX_NODES, Report, Walk, invalid, json_kind};
use self::merge::Merge;
use self::refs::Refs;
use super::dialect::Dialect;
use super::loss::{Loss, LowerError};

#[cfg(feature = "mcp")]
pub(crate) use self::mcp::client_schema;

/// A lowered schema and what it lost.
#[derive(Debug)]
pub(crate) struct LoweredSchema {
    pub(crate) schema: Value,
    pub(crate) losses: Vec<Loss>,
}

/// Lowers `schema` (the canonical input schema of one tool) to `dialect`.
pub(crate) fn lower_schema(schema: &Value, dialect: Dialect) -> Result<LoweredSchema, LowerError> {
    let mut walker = Walker {
        report: Report::new(dialect),
        refs: Refs::new(schema),
        stack: Vec::new(),
        nodes: 0,
        origins: HashMap::new(),
    };
    let root = match schema {
        Value::Object(map) if root::needs_flattening(map, dialect) => {
            let flat = root::flatten(&mut walker.merge(), map)?;
            walker.origins = flat.origins.into_iter().collect();
            Cow::Owned(Value::Object(flat.map))
        }
        _ => Cow::Borrowed(schema),
    };
    let mut lowered = walker.walk(&root, "")?;
    let mut index = 0;
    while let Some(pointer) = walker.refs.def_pointer(index).map(str::to_owned) {
        let target = walker.refs.root().pointer(&pointer).unwrap_or(&Value::Null);
        walker.stack = vec![String::new()];
        let body = walker.walk(target, &pointer)?;
        walker.refs.set_def_body(index, body);
        index += 1;
    }
    let Value::Object(map) = &mut lowered else {
        return Err(LowerError::RootNotObject {
            found: "boolean schema".to_owned(),
        });
    };
    root::root_object(map, dialect)?;
    if let Some(defs) = walker.refs.take_defs() {
        map.insert("$defs".to_owned(), Value::Object(defs));
    }
    Ok(LoweredSchema {
        schema: lowered,
        losses: walker.report.into_losses(),
    })
}

/// The walk over one schema.
struct Walker<'r> {
    report: Report,
    refs: Refs<'r>,
    /// Pointers of the schemas being walked, the root first: a `$ref` to one of them is a cycle.
    stack: Vec<String>,
    nodes: usize,
    /// Subschemas of a flattened root (`root.rs`) and their pointers in the canonical schema,
    /// where they are walked.
    origins: HashMap<String, String>,
}

impl Walk for Walker<'_> {
    fn dialect(&self) -> Dialect {
        self.report.dialect()
    }

    fn report(&mut self) -> &mut Report {
        &mut self.report
    }

    fn root(&self) -> &Value {
        self.refs.root()
    }

    fn walk(&mut self, schema: &Value, pointer: &str) -> Result<Value, LowerError> {
        let origin = self.origins.get(pointer).cloned();
        let pointer = origin.as_deref().unwrap_or(pointer);
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(LowerError::TooLarge { limit: MAX_NODES });
        }
        if self.stack.len() > MAX_DEPTH {
            return Err(invalid(
                pointer,
                format!("subschemas nested deeper than {MAX_DEPTH}"),
            ));
        }
        self.stack.push(pointer.to_owned());
        let lowered = self.walk_schema(schema, pointer);
        self.stack.pop();
        lowered
    }
}

impl<'r> Walker<'r> {
    fn merge(&mut self) -> Merge<'_, 'r> {
        Merge {
            refs: &mut self.refs,
            open: &self.stack,
            report: &mut self.report,
        }
    }

    fn walk_schema(&mut self, schema: &Value, pointer: &str) -> Result<Value, LowerError> {
        match schema {
            Value::Bool(true) => keywords::schema_object(self, &Map::new(), pointer, false),
            Value::Bool(false) => self.false_schema(pointer),
            Value::Object(map) => {
                if let Some(reference) = map.get("$ref") {
                    return self.reference(reference, map, pointer);
                }
                if let Some(reference) = map.get("$dynamicRef").or_else(|| map.get("$recursiveRef"))
                {
                    return Err(LowerError::NonLocalRef {
                        pointer: pointer.to_owned(),
                        reference: reference.as_str().unwrap_or_default().to_owned(),
                    });
                }
                self.walk_merged(map, pointer, false)
            }
            other => Err(invalid(
                pointer,
                format!(
                    "a schema must be an object or a boolean, found {}",
                    json_kind(other)
                ),
            )),
        }
    }

    /// [`keywords::schema_object`], after merging `allOf` where the dialect has none.
    fn walk_merged(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        partial: bool,
    ) -> Result<Value, LowerError> {
        if map.contains_key("allOf") && !self.dialect().keeps_all_of() {
            let merged = self.merge().all_of(map, pointer, 0)?;
            return keywords::schema_object(self, &merged, pointer, partial);
        }
        keywords::schema_object(self, map, pointer, partial)
    }

    fn false_schema(&mut self, pointer: &str) -> Result<Value, LowerError> {
        let dialect = self.dialect();
        if dialect.constrained() {
            return Err(LowerError::Inexpressible {
                pointer: pointer.to_owned(),
                what: "a `false` schema",
                dialect: dialect.name(),
            });
        }
        Ok(Value::Bool(false))
    }

    /// A `$ref`: its target inlined and the keywords beside it merged in, or, for a target
    /// being walked, a cycle.
    fn reference(
        &mut self,
        reference: &Value,
        map: &Map<String, Value>,
        pointer: &str,
    ) -> Result<Value, LowerError> {
        let Value::String(text) = reference else {
            return Err(invalid(pointer, "$ref must be a string"));
        };
        let target_pointer = self.refs.target_of(text, pointer)?;
        let Some(target) = self.refs.root().pointer(&target_pointer) else {
            return Err(LowerError::UnresolvedRef {
                pointer: pointer.to_owned(),
                reference: text.clone(),
            });
        };
        let siblings = refs::siblings(map, self.dialect());
        if self.stack.contains(&target_pointer) {
            return self.recursive(text, &target_pointer, &siblings, pointer);
        }
        let body = self.walk(target, &target_pointer)?;
        if siblings.is_empty() {
            return Ok(body);
        }
        let extra = self.walk_merged(&siblings, pointer, true)?;
        Ok(refs::combine(body, extra, pointer, &mut self.report))
    }

    /// A `$ref` that closes a cycle.
    fn recursive(
        &mut self,
        reference: &str,
        target_pointer: &str,
        siblings: &Map<String, Value>,
        pointer: &str,
    ) -> Result<Value, LowerError> {
        let dialect = self.dialect();
        if !dialect.allows_recursion() {
            return Err(LowerError::Recursive {
                pointer: pointer.to_owned(),
                reference: reference.to_owned(),
                dialect: dialect.name(),
            });
        }
        if dialect == Dialect::GeminiJson {
            self.report.narrowed(
                pointer,
                "$ref",
                "cycles are unrolled only to a limited depth",
            );
        }
        let target = self.refs.cycle_ref(target_pointer);
        let bare = json!({ "$ref": target });
        if siblings.is_empty() {
            return Ok(bare);
        }
        let Value::Object(mut extra) = self.walk_merged(siblings, pointer, true)? else {
            return Ok(bare);
        };
        if dialect.allows_ref_siblings() {
            extra.insert("$ref".to_owned(), Value::String(target));
        } else {
            // No keyword may sit beside a `$ref`: the reference goes into a one-branch anyOf.
            if extra.remove("anyOf").is_some() {
                self.report
                    .dropped(pointer, "anyOf", Some("beside a recursive $ref"));
            }
            extra.insert("anyOf".to_owned(), json!([bare]));
        }
        Ok(Value::Object(extra))
    }
}
