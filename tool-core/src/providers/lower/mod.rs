//! Lowering a canonical schema to one provider dialect: one walk over the schema that copies,
//! rewrites or drops each keyword (as [`Dialect`] says) and records every [`Loss`].
//!
//! The order of work:
//!
//! 1. `$ref`s are resolved inside the schema (JSON Pointers, `$anchor`s, the root `$id`);
//!    nothing is fetched. A reference that is not part of a cycle is inlined, siblings merged,
//!    so nested `$defs` and `$ref` siblings never reach a provider. A cycle becomes a `$ref`
//!    into the root `$defs` where the dialect allows recursion, and a refusal where not.
//! 2. `allOf` is merged into one schema where the dialect has no `allOf`; `oneOf` becomes
//!    `anyOf` where the dialect has no `oneOf`.
//! 3. Each keyword is kept, dropped (an assertion: [`LossKind::Unenforced`]), hidden (an
//!    annotation: [`LossKind::Hidden`]) or rewritten.
//! 4. Objects: OpenAI strict lists every property in `required`, an optional one made
//!    nullable (see [`remove_strict_nulls`](super::remove_strict_nulls) for the way back), and
//!    closes every object; Anthropic strict closes every object.
//! 5. The root must describe an object; it gets `type: "object"` if it had none.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::dialect::{Action, Dialect};
use super::loss::{Loss, LossKind, LowerError};

/// The most subschemas one lowering may produce, counting inlined copies.
const MAX_NODES: usize = 200_000;

/// The deepest nesting of subschemas lowered: a bound on the walk's recursion, so a hostile
/// schema cannot exhaust the stack. It counts schema levels, not argument levels (an object's
/// property is one level below the object), and is not tied to the parser's
/// [`MAX_DEPTH`](crate::MAX_DEPTH). Cycles go through `$ref` and do not nest.
const MAX_DEPTH: usize = 128;

/// The types JSON Schema knows.
const TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "array", "object", "null",
];

/// A lowered schema and what it lost.
#[derive(Debug)]
pub(crate) struct LoweredSchema {
    pub(crate) schema: Value,
    pub(crate) losses: Vec<Loss>,
}

/// Lowers `schema` (the canonical input schema of one tool) to `dialect`.
pub(crate) fn lower_schema(schema: &Value, dialect: Dialect) -> Result<LoweredSchema, LowerError> {
    let mut walker = Walker {
        dialect,
        root: schema,
        losses: Vec::new(),
        seen: HashSet::new(),
        stack: Vec::new(),
        defs: Vec::new(),
        anchors: None,
        nodes: 0,
    };
    let root = match schema {
        Value::Object(map) if dialect == Dialect::OpenAiStrict && has_root_union(map) => {
            Cow::Owned(walker.flatten_root_union(map)?)
        }
        _ => Cow::Borrowed(schema),
    };
    let mut lowered = walker.walk(&root, "")?;
    let mut index = 0;
    while index < walker.defs.len() {
        let pointer = walker.defs[index].pointer.clone();
        let target = walker.root.pointer(&pointer).unwrap_or(&Value::Null);
        walker.stack = vec![String::new()];
        let body = walker.walk(target, &pointer)?;
        walker.defs[index].body = Some(body);
        index += 1;
    }
    let Value::Object(map) = &mut lowered else {
        return Err(LowerError::RootNotObject {
            found: "boolean schema".to_owned(),
        });
    };
    root_object(map, dialect)?;
    if !walker.defs.is_empty() {
        let defs = walker
            .defs
            .drain(..)
            .map(|def| (def.name, def.body.unwrap_or(Value::Bool(true))))
            .collect();
        map.insert("$defs".to_owned(), Value::Object(defs));
    }
    Ok(LoweredSchema {
        schema: lowered,
        losses: walker.losses,
    })
}

fn has_root_union(map: &Map<String, Value>) -> bool {
    map.contains_key("anyOf") || map.contains_key("oneOf")
}

/// The root must describe an object: a missing `type` becomes `"object"`, a type list keeps
/// only `"object"` (arguments are always an object), anything else is refused.
fn root_object(map: &mut Map<String, Value>, dialect: Dialect) -> Result<(), LowerError> {
    let object = if dialect == Dialect::GeminiOpenApi {
        "OBJECT"
    } else {
        "object"
    };
    map.remove("nullable");
    match map.get("type") {
        None => {}
        Some(Value::String(name)) if name == object => return Ok(()),
        Some(Value::Array(names)) if names.iter().any(|n| n == object) => {}
        Some(other) => {
            return Err(LowerError::RootNotObject {
                found: other.to_string(),
            });
        }
    }
    map.insert("type".to_owned(), Value::from(object));
    Ok(())
}

struct Def {
    pointer: String,
    name: String,
    body: Option<Value>,
}

struct Walker<'r> {
    dialect: Dialect,
    root: &'r Value,
    losses: Vec<Loss>,
    seen: HashSet<(String, Cow<'static, str>, LossKind)>,
    /// Pointers of the schemas being walked, the root first: a `$ref` to one of them is a cycle.
    stack: Vec<String>,
    defs: Vec<Def>,
    anchors: Option<HashMap<String, String>>,
    nodes: usize,
}

/// `pointer` extended by one reference token.
fn child(pointer: &str, token: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + token.len() + 1);
    out.push_str(pointer);
    crate::contract::path::push_escaped(&mut out, token);
    out
}

fn invalid(pointer: &str, reason: impl Into<Cow<'static, str>>) -> LowerError {
    LowerError::InvalidSchema {
        pointer: pointer.to_owned(),
        reason: reason.into(),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Walker<'_> {
    fn record(
        &mut self,
        pointer: &str,
        keyword: impl Into<Cow<'static, str>>,
        kind: LossKind,
        note: Option<&'static str>,
    ) {
        let keyword = keyword.into();
        if self
            .seen
            .insert((pointer.to_owned(), keyword.clone(), kind))
        {
            self.losses.push(Loss {
                pointer: pointer.to_owned(),
                keyword,
                kind,
                dialect: self.dialect.name(),
                note,
            });
        }
    }

    /// An assertion removed: unenforced by a constraining dialect, unseen by a hinting one.
    fn dropped(&mut self, pointer: &str, keyword: &str, note: Option<&'static str>) {
        let kind = if self.dialect.constrained() {
            LossKind::Unenforced
        } else {
            LossKind::Hidden
        };
        self.record(pointer, keyword.to_owned(), kind, note);
    }

    fn narrowed(&mut self, pointer: &str, keyword: &str, note: &'static str) {
        self.record(pointer, keyword.to_owned(), LossKind::Narrowed, Some(note));
    }

    fn walk(&mut self, schema: &Value, pointer: &str) -> Result<Value, LowerError> {
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

    fn walk_schema(&mut self, schema: &Value, pointer: &str) -> Result<Value, LowerError> {
        match schema {
            Value::Bool(true) => self.walk_map(&Map::new(), pointer, false),
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

    /// [`walk_map`](Self::walk_map), after merging `allOf` where the dialect has none.
    fn walk_merged(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        partial: bool,
    ) -> Result<Value, LowerError> {
        if map.contains_key("allOf") && !self.dialect.keeps_all_of() {
            let merged = self.merge_all_of(map, pointer, 0)?;
            return self.walk_map(&merged, pointer, partial);
        }
        self.walk_map(map, pointer, partial)
    }

    fn false_schema(&mut self, pointer: &str) -> Result<Value, LowerError> {
        if self.dialect.constrained() {
            return Err(LowerError::Inexpressible {
                pointer: pointer.to_owned(),
                what: "a `false` schema",
                dialect: self.dialect.name(),
            });
        }
        Ok(Value::Bool(false))
    }

    // ---- references -------------------------------------------------------------------

    /// The JSON Pointer a `$ref` names, within the root.
    fn target_of(&mut self, reference: &str, pointer: &str) -> Result<String, LowerError> {
        let non_local = || LowerError::NonLocalRef {
            pointer: pointer.to_owned(),
            reference: reference.to_owned(),
        };
        let mut fragment = reference;
        if !reference.starts_with('#') {
            // A reference to the root's own `$id` is local.
            let base = self
                .root
                .get("$id")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let base = base.trim_end_matches('#');
            match reference.strip_prefix(base) {
                Some(rest) if !base.is_empty() && (rest.is_empty() || rest.starts_with('#')) => {
                    fragment = if rest.is_empty() { "#" } else { rest };
                }
                _ => return Err(non_local()),
            }
        }
        let fragment = percent_decode(&fragment[1..]);
        if fragment.is_empty() || fragment.starts_with('/') {
            return Ok(fragment.into_owned());
        }
        let anchors = self.anchors.get_or_insert_with(|| {
            let mut found = HashMap::new();
            collect_anchors(self.root, String::new(), &mut found, 0);
            found
        });
        anchors
            .get(fragment.as_ref())
            .cloned()
            .ok_or_else(|| LowerError::UnresolvedRef {
                pointer: pointer.to_owned(),
                reference: reference.to_owned(),
            })
    }

    fn reference(
        &mut self,
        reference: &Value,
        map: &Map<String, Value>,
        pointer: &str,
    ) -> Result<Value, LowerError> {
        let Value::String(text) = reference else {
            return Err(invalid(pointer, "$ref must be a string"));
        };
        let target_pointer = self.target_of(text, pointer)?;
        let Some(target) = self.root.pointer(&target_pointer) else {
            return Err(LowerError::UnresolvedRef {
                pointer: pointer.to_owned(),
                reference: text.clone(),
            });
        };
        let siblings: Map<String, Value> = map
            .iter()
            .filter(|(key, _)| {
                key.as_str() != "$ref"
                    && self.dialect.action(key) != Action::Silent
                    && !matches!(key.as_str(), "$defs" | "definitions")
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if self.stack.contains(&target_pointer) {
            return self.recursive(text, &target_pointer, &siblings, pointer);
        }
        let body = self.walk(target, &target_pointer)?;
        if siblings.is_empty() {
            return Ok(body);
        }
        let extra = self.walk_merged(&siblings, pointer, true)?;
        Ok(self.combine(body, extra, pointer))
    }

    /// A `$ref` that closes a cycle.
    fn recursive(
        &mut self,
        reference: &str,
        target_pointer: &str,
        siblings: &Map<String, Value>,
        pointer: &str,
    ) -> Result<Value, LowerError> {
        if !self.dialect.allows_recursion() {
            return Err(LowerError::Recursive {
                pointer: pointer.to_owned(),
                reference: reference.to_owned(),
                dialect: self.dialect.name(),
            });
        }
        if self.dialect == Dialect::GeminiJson {
            self.narrowed(
                pointer,
                "$ref",
                "cycles are unrolled only to a limited depth",
            );
        }
        let target = if target_pointer.is_empty() {
            "#".to_owned()
        } else {
            let mut out = "#/$defs".to_owned();
            let name = self.def_name(target_pointer);
            crate::contract::path::push_escaped(&mut out, &name);
            out
        };
        let bare = json!({ "$ref": target });
        if siblings.is_empty() {
            return Ok(bare);
        }
        let Value::Object(mut extra) = self.walk_merged(siblings, pointer, true)? else {
            return Ok(bare);
        };
        if self.dialect.allows_ref_siblings() {
            extra.insert("$ref".to_owned(), Value::String(target));
        } else {
            // No keyword may sit beside a `$ref`: the reference goes into a one-branch anyOf.
            if extra.remove("anyOf").is_some() {
                self.dropped(pointer, "anyOf", Some("beside a recursive $ref"));
            }
            extra.insert("anyOf".to_owned(), json!([bare]));
        }
        Ok(Value::Object(extra))
    }

    /// The `$defs` name for a recursive target, created on first use.
    fn def_name(&mut self, target_pointer: &str) -> String {
        if let Some(def) = self.defs.iter().find(|def| def.pointer == target_pointer) {
            return def.name.clone();
        }
        let last = target_pointer.rsplit('/').next().unwrap_or_default();
        let mut base: String = last
            .replace("~1", "/")
            .replace("~0", "~")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if base.is_empty() || base.chars().all(|c| c.is_ascii_digit()) {
            base.insert_str(0, "def");
        }
        let mut name = base.clone();
        let mut n = 2;
        while self.defs.iter().any(|def| def.name == name) {
            name = format!("{base}{n}");
            n += 1;
        }
        self.defs.push(Def {
            pointer: target_pointer.to_owned(),
            name: name.clone(),
            body: None,
        });
        name
    }

    /// A referenced schema with the keywords written beside the `$ref` (both apply).
    fn combine(&mut self, body: Value, extra: Value, pointer: &str) -> Value {
        let Value::Object(mut body) = body else {
            return body;
        };
        let Value::Object(extra) = extra else {
            return Value::Object(body);
        };
        for (key, value) in extra {
            match body.get(&key) {
                None => drop(body.insert(key, value)),
                Some(existing) if *existing == value => {}
                // The use site's annotations describe this use better than the type's own.
                Some(_)
                    if matches!(
                        key.as_str(),
                        "description" | "title" | "default" | "examples"
                    ) =>
                {
                    body.insert(key, value);
                }
                Some(_) => self.dropped(pointer, &key, Some("beside a $ref with its own")),
            }
        }
        Value::Object(body)
    }

    // ---- allOf and root unions ------------------------------------------------------------

    /// `map` with its `allOf` members merged in. Keywords that would conflict keep the
    /// first value and report the others as unenforced.
    fn merge_all_of(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        depth: usize,
    ) -> Result<Map<String, Value>, LowerError> {
        let mut base: Map<String, Value> = map
            .iter()
            .filter(|(key, _)| key.as_str() != "allOf")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let Some(members) = map.get("allOf") else {
            return Ok(base);
        };
        let Value::Array(members) = members else {
            return Err(invalid(pointer, "allOf must be an array"));
        };
        if depth > 32 {
            return Err(LowerError::Inexpressible {
                pointer: pointer.to_owned(),
                what: "allOf nested this deep",
                dialect: self.dialect.name(),
            });
        }
        for (i, member) in members.iter().enumerate() {
            let member_pointer = child(&child(pointer, "allOf"), &i.to_string());
            let member = match member {
                Value::Bool(true) => continue,
                Value::Bool(false) => {
                    return Err(LowerError::Inexpressible {
                        pointer: member_pointer,
                        what: "an allOf with a `false` member",
                        dialect: self.dialect.name(),
                    });
                }
                Value::Object(member) => member,
                other => {
                    return Err(invalid(
                        &member_pointer,
                        format!(
                            "a schema must be an object or a boolean, found {}",
                            json_kind(other)
                        ),
                    ));
                }
            };
            let member = self.resolve_member(member, &member_pointer)?;
            let Some(member) = member else { continue };
            let member = if member.contains_key("allOf") {
                self.merge_all_of(&member, &member_pointer, depth + 1)?
            } else {
                member
            };
            self.merge_into(&mut base, member, &member_pointer);
        }
        Ok(base)
    }

    /// An allOf member with a `$ref` replaced by its target (with the member's siblings);
    /// `None` for a reference back into a cycle, which cannot be merged.
    fn resolve_member(
        &mut self,
        member: &Map<String, Value>,
        pointer: &str,
    ) -> Result<Option<Map<String, Value>>, LowerError> {
        let Some(reference) = member.get("$ref") else {
            return Ok(Some(member.clone()));
        };
        let Value::String(text) = reference else {
            return Err(invalid(pointer, "$ref must be a string"));
        };
        let target_pointer = self.target_of(text, pointer)?;
        let target = match self.root.pointer(&target_pointer) {
            Some(Value::Object(target)) => target,
            Some(Value::Bool(true)) => return Ok(Some(Map::new())),
            _ => {
                return Err(LowerError::UnresolvedRef {
                    pointer: pointer.to_owned(),
                    reference: text.clone(),
                });
            }
        };
        if self.stack.contains(&target_pointer) || target.contains_key("$ref") {
            self.dropped(pointer, "allOf", Some("a recursive member is not merged"));
            return Ok(None);
        }
        let mut out = target.clone();
        for (key, value) in member {
            if key != "$ref" {
                out.insert(key.clone(), value.clone());
            }
        }
        Ok(Some(out))
    }

    fn merge_into(
        &mut self,
        base: &mut Map<String, Value>,
        member: Map<String, Value>,
        pointer: &str,
    ) {
        for (key, value) in member {
            match key.as_str() {
                "properties" => {
                    let Value::Object(properties) = value else {
                        continue;
                    };
                    let target = base
                        .entry("properties")
                        .or_insert_with(|| Value::Object(Map::new()));
                    let Value::Object(target) = target else {
                        continue;
                    };
                    for (name, schema) in properties {
                        match target.remove(&name) {
                            // Both apply: leave an allOf for the property's own walk to merge.
                            Some(existing) => {
                                drop(target.insert(name, json!({ "allOf": [existing, schema] })))
                            }
                            None => drop(target.insert(name, schema)),
                        }
                    }
                }
                "required" => {
                    let Value::Array(names) = value else { continue };
                    let target = base
                        .entry("required")
                        .or_insert_with(|| Value::Array(Vec::new()));
                    if let Value::Array(target) = target {
                        for name in names {
                            if !target.contains(&name) {
                                target.push(name);
                            }
                        }
                    }
                }
                "type" => match base.get("type") {
                    None => drop(base.insert(key, value)),
                    Some(existing) => {
                        let merged = intersect_types(existing, &value);
                        match merged {
                            Some(types) => drop(base.insert(key, types)),
                            None => self.dropped(pointer, "type", Some("allOf members disagree")),
                        }
                    }
                },
                "description" | "title" | "$comment" | "examples" | "default" => {
                    base.entry(key).or_insert(value);
                }
                _ => match base.get(&key) {
                    None => drop(base.insert(key, value)),
                    Some(existing) if *existing == value => {}
                    Some(_) => self.dropped(pointer, &key, Some("allOf members disagree")),
                },
            }
        }
    }

    /// OpenAI strict refuses a root `anyOf`/`oneOf`: the branches' properties are merged into
    /// the root (each optional unless every branch requires it); which branch holds is left to
    /// the runtime.
    fn flatten_root_union(&mut self, map: &Map<String, Value>) -> Result<Value, LowerError> {
        let mut root: Map<String, Value> = map
            .iter()
            .filter(|(key, _)| !matches!(key.as_str(), "anyOf" | "oneOf"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for keyword in ["anyOf", "oneOf"] {
            let Some(branches) = map.get(keyword) else {
                continue;
            };
            let Value::Array(branches) = branches else {
                return Err(invalid(
                    &child("", keyword),
                    format!("{keyword} must be an array"),
                ));
            };
            self.dropped(
                &child("", keyword),
                keyword,
                Some("the root cannot be a union: branch properties are merged, all optional"),
            );
            let mut required: Option<Vec<Value>> = None;
            for (i, branch) in branches.iter().enumerate() {
                let branch_pointer = child(&child("", keyword), &i.to_string());
                let branch = match branch {
                    Value::Object(branch) => self.resolve_member(branch, &branch_pointer)?,
                    _ => None,
                };
                let Some(branch) = branch else { continue };
                let names: Vec<Value> = match branch.get("required") {
                    Some(Value::Array(names)) => names.clone(),
                    _ => Vec::new(),
                };
                required = Some(match required {
                    None => names,
                    Some(before) => before.into_iter().filter(|n| names.contains(n)).collect(),
                });
                if let Some(Value::Object(properties)) = branch.get("properties") {
                    let target = root
                        .entry("properties")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(target) = target {
                        for (name, schema) in properties {
                            match target.get_mut(name) {
                                None => drop(target.insert(name.clone(), schema.clone())),
                                Some(existing) if existing == schema => {}
                                Some(existing) => {
                                    let before = existing.take();
                                    *existing = json!({ "anyOf": [before, schema] });
                                }
                            }
                        }
                    }
                }
            }
            if let Some(required) = required.filter(|r| !r.is_empty()) {
                let target = root
                    .entry("required")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(target) = target {
                    for name in required {
                        if !target.contains(&name) {
                            target.push(name);
                        }
                    }
                }
            }
        }
        Ok(Value::Object(root))
    }

    // ---- one schema object ----------------------------------------------------------------

    /// Lowers one schema object. `partial` is for keywords written beside a `$ref`: they are
    /// not a schema of their own, so no type is inferred for them.
    fn walk_map(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        partial: bool,
    ) -> Result<Value, LowerError> {
        let d = self.dialect;
        let mut out = Map::new();
        let mut types = self.types(map, pointer)?;
        if types.is_none() && !partial && d.needs_types() {
            types = self.infer_type(map, pointer);
        }
        let has = |t: &str| types.as_ref().is_some_and(|ts| ts.iter().any(|x| x == t));
        let object_keywords = [
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
        ];
        let is_object = has("object")
            || (types.is_none() && object_keywords.iter().any(|k| map.contains_key(*k)));
        let is_array = has("array")
            || (types.is_none()
                && ["items", "prefixItems"]
                    .iter()
                    .any(|k| map.contains_key(*k)));

        for (key, value) in map {
            let at = || child(pointer, key);
            match key.as_str() {
                "type"
                | "properties"
                | "required"
                | "additionalProperties"
                | "patternProperties"
                | "items"
                | "prefixItems"
                | "additionalItems"
                | "enum"
                | "const"
                | "$defs"
                | "definitions"
                | "$ref" => {}
                "description" => drop(out.insert(key.clone(), value.clone())),
                "anyOf" | "oneOf" => {
                    let Value::Array(branches) = value else {
                        return Err(invalid(&at(), format!("{key} must be an array")));
                    };
                    let mut lowered = Vec::with_capacity(branches.len());
                    for (i, branch) in branches.iter().enumerate() {
                        lowered.push(self.walk(branch, &child(&at(), &i.to_string()))?);
                    }
                    let name = if key == "oneOf" && !d.keeps_one_of() {
                        self.dropped(
                            pointer,
                            "oneOf",
                            Some("sent as anyOf: more than one branch may match"),
                        );
                        "anyOf"
                    } else {
                        key.as_str()
                    };
                    if out.contains_key(name) {
                        // anyOf and oneOf together: both must hold, which one list cannot say.
                        self.dropped(pointer, key, Some("beside an anyOf"));
                    } else {
                        out.insert(name.to_owned(), Value::Array(lowered));
                    }
                }
                "allOf" => {
                    let Value::Array(members) = value else {
                        return Err(invalid(&at(), "allOf must be an array"));
                    };
                    let mut lowered = Vec::with_capacity(members.len());
                    for (i, member) in members.iter().enumerate() {
                        lowered.push(self.walk(member, &child(&at(), &i.to_string()))?);
                    }
                    out.insert(key.clone(), Value::Array(lowered));
                }
                "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "unevaluatedProperties"
                | "unevaluatedItems"
                | "contentSchema" => {
                    if d.constrained() {
                        self.dropped(pointer, key, None);
                    } else {
                        let lowered = self.walk(value, &at())?;
                        out.insert(key.clone(), lowered);
                    }
                }
                "dependentSchemas" | "dependencies" => {
                    if d.constrained() {
                        self.dropped(pointer, key, None);
                    } else {
                        let mut lowered = Map::new();
                        if let Value::Object(entries) = value {
                            for (name, entry) in entries {
                                let entry = match entry {
                                    Value::Object(_) | Value::Bool(_) => {
                                        self.walk(entry, &child(&at(), name))?
                                    }
                                    other => other.clone(),
                                };
                                lowered.insert(name.clone(), entry);
                            }
                        }
                        out.insert(key.clone(), Value::Object(lowered));
                    }
                }
                "format" => match value.as_str() {
                    Some(format) if d.keeps_format(format) => {
                        drop(out.insert(key.clone(), value.clone()))
                    }
                    _ => self.dropped(pointer, "format", Some("this format is not supported")),
                },
                "pattern" => match value.as_str() {
                    Some(pattern) if d.keeps_pattern(pattern) => {
                        out.insert(key.clone(), value.clone());
                    }
                    _ => self.dropped(pointer, "pattern", None),
                },
                "minItems" if d == Dialect::AnthropicStrict => match value.as_u64() {
                    Some(0 | 1) => drop(out.insert(key.clone(), value.clone())),
                    Some(_) => {
                        out.insert(key.clone(), Value::from(1));
                        self.dropped(
                            pointer,
                            "minItems",
                            Some("only 0 or 1 is supported; sent as 1"),
                        );
                    }
                    None => self.dropped(pointer, "minItems", None),
                },
                "examples" if d == Dialect::GeminiOpenApi => {
                    if let Some(first) = value.as_array().and_then(|e| e.first()) {
                        out.insert("example".to_owned(), first.clone());
                    }
                }
                "exclusiveMinimum" | "exclusiveMaximum" if value.is_boolean() => {
                    // Draft 4: a flag on minimum/maximum.
                    let bound = if key == "exclusiveMinimum" {
                        "minimum"
                    } else {
                        "maximum"
                    };
                    if value == &Value::Bool(true)
                        && let Some(limit) = map.get(bound)
                    {
                        if d.action(key) == Action::Keep {
                            out.insert(key.clone(), limit.clone());
                        } else {
                            self.dropped(pointer, key, None);
                        }
                    }
                }
                _ => match d.action(key) {
                    Action::Keep => drop(out.insert(key.clone(), value.clone())),
                    Action::Drop => self.dropped(pointer, key, None),
                    Action::Hide => self.record(pointer, key.clone(), LossKind::Hidden, None),
                    Action::Silent => {}
                },
            }
        }
        // Draft 4 bounds made exclusive above replace the inclusive ones.
        for (flag, bound) in [
            ("exclusiveMinimum", "minimum"),
            ("exclusiveMaximum", "maximum"),
        ] {
            if map.get(flag) == Some(&Value::Bool(true)) && out.contains_key(flag) {
                out.remove(bound);
            }
        }

        self.enum_and_const(map, pointer, &mut out)?;
        if is_object {
            self.object(map, pointer, &mut out, partial)?;
        }
        if is_array {
            self.array(map, pointer, &mut out, partial)?;
        }
        if types.is_none() && matches!(d, Dialect::OpenAiStrict | Dialect::AnthropicStrict) {
            // An enum or const says its own type; strict decoders want it spelled out.
            types = literal_types(&out);
        }
        if let Some(types) = types {
            out.insert(
                "type".to_owned(),
                if types.len() == 1 {
                    Value::from(types[0].clone())
                } else {
                    Value::from(types)
                },
            );
        } else if !partial
            && d.needs_types()
            && !["anyOf", "enum", "const", "$ref", "allOf"]
                .iter()
                .any(|k| out.contains_key(*k))
        {
            self.narrowed(
                pointer,
                "type",
                "any value: only strings, numbers, booleans and null can be sent",
            );
            out.insert(
                "type".to_owned(),
                json!(["string", "number", "boolean", "null"]),
            );
        }
        if d == Dialect::GeminiOpenApi {
            openapi_types(&mut out);
        }
        if d == Dialect::GeminiJson {
            self.gemini_json_null_enum(&mut out);
        }
        Ok(Value::Object(out))
    }

    /// The declared types, checked.
    fn types(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
    ) -> Result<Option<Vec<String>>, LowerError> {
        let at = || child(pointer, "type");
        let check = |name: &str| {
            if TYPES.contains(&name) {
                Ok(name.to_owned())
            } else {
                Err(invalid(
                    &at(),
                    format!("{name:?} is not a JSON Schema type"),
                ))
            }
        };
        match map.get("type") {
            None => Ok(None),
            Some(Value::String(name)) => Ok(Some(vec![check(name)?])),
            Some(Value::Array(names)) => {
                let mut out = Vec::with_capacity(names.len());
                for name in names {
                    let Value::String(name) = name else {
                        return Err(invalid(&at(), "type names must be strings"));
                    };
                    let name = check(name)?;
                    if !out.contains(&name) {
                        out.push(name);
                    }
                }
                if out.is_empty() {
                    return Err(invalid(&at(), "an empty type list admits nothing"));
                }
                Ok(Some(out))
            }
            Some(other) => Err(invalid(
                &at(),
                format!(
                    "type must be a string or an array, found {}",
                    json_kind(other)
                ),
            )),
        }
    }

    /// A type for an untyped schema whose keywords say what it is meant to be.
    fn infer_type(&mut self, map: &Map<String, Value>, pointer: &str) -> Option<Vec<String>> {
        let any = |keys: &[&str]| keys.iter().any(|k| map.contains_key(*k));
        let inferred = if any(&[
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
        ]) {
            "object"
        } else if any(&["items", "prefixItems", "minItems", "maxItems"]) {
            "array"
        } else if any(&["minLength", "maxLength", "pattern", "format"]) {
            "string"
        } else if any(&[
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
        ]) {
            "number"
        } else {
            return None;
        };
        self.narrowed(pointer, "type", "no type: inferred from the other keywords");
        Some(vec![inferred.to_owned()])
    }

    fn enum_and_const(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        out: &mut Map<String, Value>,
    ) -> Result<(), LowerError> {
        let d = self.dialect;
        if let Some(values) = map.get("enum") {
            let Value::Array(values) = values else {
                return Err(invalid(&child(pointer, "enum"), "enum must be an array"));
            };
            let scalar = |v: &Value| !matches!(v, Value::Array(_) | Value::Object(_));
            let keep = match d {
                Dialect::AnthropicStrict => values.iter().all(scalar),
                Dialect::GeminiJson => values
                    .iter()
                    .all(|v| v.is_string() || v.is_number() || v.is_null()),
                Dialect::GeminiOpenApi => values.iter().all(|v| v.is_string() || v.is_null()),
                _ => true,
            };
            if keep {
                out.insert("enum".to_owned(), Value::Array(values.clone()));
            } else {
                self.dropped(
                    pointer,
                    "enum",
                    Some("these value types are not supported in an enum"),
                );
            }
        }
        if let Some(value) = map.get("const") {
            match d {
                Dialect::GeminiJson if value.is_string() || value.is_number() => {
                    out.insert("enum".to_owned(), json!([value]));
                }
                Dialect::GeminiOpenApi if value.is_string() => {
                    out.insert("enum".to_owned(), json!([value]));
                }
                Dialect::GeminiJson | Dialect::GeminiOpenApi => {
                    self.dropped(pointer, "const", None);
                }
                _ => drop(out.insert("const".to_owned(), value.clone())),
            }
        }
        Ok(())
    }

    fn object(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        out: &mut Map<String, Value>,
        partial: bool,
    ) -> Result<(), LowerError> {
        let d = self.dialect;
        let required: Vec<String> = match map.get("required") {
            None => Vec::new(),
            Some(Value::Array(names)) => names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            Some(_) => {
                return Err(invalid(
                    &child(pointer, "required"),
                    "required must be an array",
                ));
            }
        };
        let mut properties = Map::new();
        if let Some(declared) = map.get("properties") {
            let Value::Object(declared) = declared else {
                return Err(invalid(
                    &child(pointer, "properties"),
                    "properties must be an object",
                ));
            };
            let at = child(pointer, "properties");
            for (name, schema) in declared {
                if d == Dialect::GeminiOpenApi && !gemini_property_name(name) {
                    return Err(LowerError::PropertyName {
                        pointer: pointer.to_owned(),
                        name: name.clone(),
                    });
                }
                let property_pointer = child(&at, name);
                if schema == &Value::Bool(false) && d.closes_objects() {
                    // Forbidden by name: a closed object without it says the same.
                    continue;
                }
                let mut lowered = self.walk(schema, &property_pointer)?;
                if d == Dialect::OpenAiStrict && !required.contains(name) {
                    lowered = nullable(lowered);
                }
                properties.insert(name.clone(), lowered);
            }
        }
        if d == Dialect::OpenAiStrict {
            for name in &required {
                if !properties.contains_key(name) {
                    // Required but not declared: any value, as far as this object says.
                    let lowered = self.walk(
                        &Value::Bool(true),
                        &child(&child(pointer, "properties"), name),
                    )?;
                    properties.insert(name.clone(), lowered);
                }
            }
        }
        let strict_object = !partial && d == Dialect::OpenAiStrict;
        let required_out: Vec<Value> = if d == Dialect::OpenAiStrict {
            properties.keys().cloned().map(Value::from).collect()
        } else {
            required.iter().cloned().map(Value::from).collect()
        };
        if map.contains_key("properties")
            || !properties.is_empty()
            || (!partial && d.closes_objects())
        {
            out.insert("properties".to_owned(), Value::Object(properties));
        }
        // OpenAI strict wants `required` on every object, even an empty one.
        if !required_out.is_empty() || strict_object {
            out.insert("required".to_owned(), Value::Array(required_out));
        }

        let additional = map.get("additionalProperties");
        if let Some(patterns) = map.get("patternProperties") {
            match d {
                Dialect::OpenAi | Dialect::Anthropic => {
                    let mut lowered = Map::new();
                    if let Value::Object(patterns) = patterns {
                        let at = child(pointer, "patternProperties");
                        for (pattern, schema) in patterns {
                            lowered
                                .insert(pattern.clone(), self.walk(schema, &child(&at, pattern))?);
                        }
                    }
                    out.insert("patternProperties".to_owned(), Value::Object(lowered));
                }
                _ if d.closes_objects() => {
                    self.narrowed(
                        pointer,
                        "patternProperties",
                        "only the declared properties can be sent",
                    );
                }
                _ => self.dropped(pointer, "patternProperties", None),
            }
        }
        if partial && additional.is_none() {
            return Ok(());
        }
        if d.closes_objects() {
            match additional {
                Some(Value::Bool(false)) => {}
                _ if map.contains_key("patternProperties") => {}
                _ => self.narrowed(
                    pointer,
                    "additionalProperties",
                    "closed: only the declared properties can be sent",
                ),
            }
            out.insert("additionalProperties".to_owned(), Value::Bool(false));
            return Ok(());
        }
        match (d, additional) {
            (_, None) => {}
            (Dialect::GeminiOpenApi, Some(Value::Bool(true))) => {}
            (Dialect::GeminiOpenApi, Some(_)) => {
                self.dropped(pointer, "additionalProperties", None)
            }
            (_, Some(Value::Bool(flag))) => {
                drop(out.insert("additionalProperties".to_owned(), Value::Bool(*flag)))
            }
            (_, Some(schema)) => {
                let lowered = self.walk(schema, &child(pointer, "additionalProperties"))?;
                out.insert("additionalProperties".to_owned(), lowered);
            }
        }
        Ok(())
    }

    fn array(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        out: &mut Map<String, Value>,
        partial: bool,
    ) -> Result<(), LowerError> {
        let d = self.dialect;
        // Draft 7 tuples: `items` as an array, `additionalItems` for the rest.
        let (prefix, rest, rest_key) = match (map.get("prefixItems"), map.get("items")) {
            (Some(prefix), items) => (Some(prefix), items, "items"),
            (None, Some(Value::Array(_))) => (
                map.get("items"),
                map.get("additionalItems"),
                "additionalItems",
            ),
            (None, items) => (None, items, "items"),
        };
        let mut prefix_lowered = Vec::new();
        if let Some(prefix) = prefix {
            let Value::Array(prefix) = prefix else {
                return Err(invalid(
                    &child(pointer, "prefixItems"),
                    "prefixItems must be an array",
                ));
            };
            let key = if map.contains_key("prefixItems") {
                "prefixItems"
            } else {
                "items"
            };
            for (i, schema) in prefix.iter().enumerate() {
                prefix_lowered
                    .push(self.walk(schema, &child(&child(pointer, key), &i.to_string()))?);
            }
        }
        let rest_lowered = match rest {
            None => None,
            Some(Value::Bool(false)) if !prefix_lowered.is_empty() => Some(Value::Bool(false)),
            Some(schema) => Some(self.walk(schema, &child(pointer, rest_key))?),
        };
        if prefix_lowered.is_empty() {
            match rest_lowered {
                Some(items) => drop(out.insert("items".to_owned(), items)),
                None if !partial && d.needs_types() => {
                    let items = self.walk(&Value::Bool(true), &child(pointer, "items"))?;
                    out.insert("items".to_owned(), items);
                }
                None => {}
            }
            return Ok(());
        }
        if d.keeps_prefix_items() {
            out.insert("prefixItems".to_owned(), Value::Array(prefix_lowered));
            if let Some(items) = rest_lowered {
                out.insert("items".to_owned(), items);
            }
            return Ok(());
        }
        // One schema for every position: any of the positional ones (or the rest).
        self.dropped(pointer, "prefixItems", Some("positions are not enforced"));
        let mut branches = prefix_lowered;
        match rest_lowered {
            Some(Value::Bool(false)) | None => {}
            Some(items) => branches.push(items),
        }
        let mut unique: Vec<Value> = Vec::with_capacity(branches.len());
        for branch in branches {
            if !unique.contains(&branch) {
                unique.push(branch);
            }
        }
        let items = if unique.len() == 1 {
            unique.pop().unwrap_or(Value::Bool(true))
        } else {
            json!({ "anyOf": unique })
        };
        out.insert("items".to_owned(), items);
        Ok(())
    }

    /// Gemini's enum takes strings and numbers only: a `null` member becomes a null branch.
    fn gemini_json_null_enum(&mut self, out: &mut Map<String, Value>) {
        let Some(Value::Array(values)) = out.get_mut("enum") else {
            return;
        };
        if !values.contains(&Value::Null) {
            return;
        }
        values.retain(|v| !v.is_null());
        match out.get_mut("type") {
            Some(Value::Array(types)) => {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let single = types[0].clone();
                    out.insert("type".to_owned(), single);
                }
            }
            Some(Value::String(t)) if t == "null" => {
                out.remove("type");
            }
            _ => {}
        }
        let description = out.remove("description");
        let inner = Value::Object(std::mem::take(out));
        out.insert("anyOf".to_owned(), json!([inner, { "type": "null" }]));
        if let Some(description) = description {
            out.insert("description".to_owned(), description);
        }
    }
}

/// The JSON types of an `enum`'s or `const`'s values, when they are all scalars.
fn literal_types(out: &Map<String, Value>) -> Option<Vec<String>> {
    let values: Vec<&Value> = match (out.get("enum"), out.get("const")) {
        (Some(Value::Array(values)), _) => values.iter().collect(),
        (None, Some(value)) => vec![value],
        _ => return None,
    };
    let mut types: Vec<String> = Vec::new();
    for value in values {
        let name = match value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) | Value::Object(_) => return None,
        };
        if !types.iter().any(|t| t == name) {
            types.push(name.to_owned());
        }
    }
    if types.iter().any(|t| t == "number") {
        types.retain(|t| t != "integer");
    }
    (!types.is_empty()).then_some(types)
}

/// `schema` that also admits `null`, for an optional property under OpenAI strict.
pub(crate) fn nullable(schema: Value) -> Value {
    let Value::Object(mut map) = schema else {
        return schema;
    };
    if admits_null(&map) {
        return Value::Object(map);
    }
    if map.contains_key("const") || map.contains_key("$ref") || map.contains_key("allOf") {
        let description = map.remove("description");
        let mut out = Map::new();
        out.insert(
            "anyOf".to_owned(),
            json!([Value::Object(map), { "type": "null" }]),
        );
        if let Some(description) = description {
            out.insert("description".to_owned(), description);
        }
        return Value::Object(out);
    }
    match map.get_mut("type") {
        Some(Value::String(name)) => {
            let name = std::mem::take(name);
            map.insert("type".to_owned(), json!([name, "null"]));
        }
        Some(Value::Array(names)) => names.push(Value::from("null")),
        _ => {}
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.push(Value::Null);
    }
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        branches.push(json!({ "type": "null" }));
    }
    Value::Object(map)
}

/// Whether a lowered schema admits `null` already (conservatively: `false` when unsure).
fn admits_null(map: &Map<String, Value>) -> bool {
    let typed = match map.get("type") {
        Some(Value::String(name)) => name == "null",
        Some(Value::Array(names)) => names.iter().any(|n| n == "null"),
        _ => false,
    };
    let in_enum = match map.get("enum") {
        Some(Value::Array(values)) => values.contains(&Value::Null),
        _ => true,
    };
    let in_union = match map.get("anyOf") {
        Some(Value::Array(branches)) => branches.iter().any(|b| match b {
            Value::Object(b) => admits_null(b),
            Value::Bool(admits) => *admits,
            _ => false,
        }),
        _ => true,
    };
    let untyped = !map.contains_key("type")
        && !map.contains_key("const")
        && !map.contains_key("$ref")
        && !map.contains_key("allOf");
    (typed || untyped) && in_enum && in_union
}

fn intersect_types(a: &Value, b: &Value) -> Option<Value> {
    let list = |v: &Value| -> Vec<String> {
        match v {
            Value::String(s) => vec![s.clone()],
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        }
    };
    let (a, b) = (list(a), list(b));
    let mut out: Vec<String> = Vec::new();
    for t in &a {
        if b.contains(t) {
            out.push(t.clone());
        } else if (t == "number" && b.iter().any(|x| x == "integer"))
            || (t == "integer" && b.iter().any(|x| x == "number"))
        {
            out.push("integer".to_owned());
        }
    }
    out.dedup();
    match out.len() {
        0 => None,
        1 => Some(Value::from(out.remove(0))),
        _ => Some(Value::from(out)),
    }
}

/// Gemini's OpenAPI form: upper-case types, `nullable` instead of a `null` type.
fn openapi_types(out: &mut Map<String, Value>) {
    let upper = |name: &str| Value::from(name.to_ascii_uppercase());
    match out.get("type").cloned() {
        Some(Value::String(name)) => {
            out.insert("type".to_owned(), upper(&name));
        }
        Some(Value::Array(names)) => {
            let null = names.iter().any(|n| n == "null");
            let rest: Vec<&str> = names
                .iter()
                .filter_map(Value::as_str)
                .filter(|n| *n != "null")
                .collect();
            match rest.as_slice() {
                [] => drop(out.insert("type".to_owned(), upper("null"))),
                [one] => drop(out.insert("type".to_owned(), upper(one))),
                many => {
                    out.remove("type");
                    let branches: Vec<Value> =
                        many.iter().map(|t| json!({ "type": upper(t) })).collect();
                    out.insert("anyOf".to_owned(), Value::Array(branches));
                }
            }
            if null {
                out.insert("nullable".to_owned(), Value::Bool(true));
            }
        }
        _ => {}
    }
    if let Some(Value::Array(values)) = out.get_mut("enum")
        && values.contains(&Value::Null)
    {
        values.retain(|v| !v.is_null());
        out.insert("nullable".to_owned(), Value::Bool(true));
    }
    if out.contains_key("enum") && !out.contains_key("type") {
        out.insert("type".to_owned(), Value::from("STRING"));
    }
    // anyOf [X, null] is X made nullable.
    if let Some(Value::Array(branches)) = out.get("anyOf") {
        let is_null = |b: &Value| {
            b.get("type").is_some_and(|t| t == "NULL")
                && b.as_object().is_some_and(|m| m.len() == 1)
        };
        if branches.iter().any(is_null) {
            let rest: Vec<Value> = branches.iter().filter(|b| !is_null(b)).cloned().collect();
            out.insert("nullable".to_owned(), Value::Bool(true));
            if let [single] = rest.as_slice()
                && let Value::Object(single) = single
            {
                out.remove("anyOf");
                for (key, value) in single {
                    out.entry(key.clone()).or_insert_with(|| value.clone());
                }
            } else {
                out.insert("anyOf".to_owned(), Value::Array(rest));
            }
        }
    }
}

fn gemini_property_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn percent_decode(text: &str) -> Cow<'_, str> {
    if !text.contains('%') {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

fn collect_anchors(
    value: &Value,
    pointer: String,
    found: &mut HashMap<String, String>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Object(map) => {
            if let Some(Value::String(anchor)) = map.get("$anchor") {
                found
                    .entry(anchor.clone())
                    .or_insert_with(|| pointer.clone());
            }
            for (key, child_value) in map {
                if matches!(key.as_str(), "enum" | "const" | "default" | "examples") {
                    continue;
                }
                collect_anchors(child_value, child(&pointer, key), found, depth + 1);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect_anchors(item, child(&pointer, &i.to_string()), found, depth + 1);
            }
        }
        _ => {}
    }
}
