//! Building the advertised JSON Schema (Draft 2020-12) from argument types.

use std::any::TypeId;
use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value, json};

use crate::Argument;
use crate::contract::constraints::ConstConstraints;
use crate::contract::path::Path;
use crate::contract::untyped::Untyped;
use crate::contract::validate::Cx;

/// The dialect every generated schema declares.
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// State shared while one root schema is built: definitions of recursive types.
///
/// Object types are inlined where they are used. A type that contains itself (directly or
/// through others) is written once under `$defs` and referenced with `$ref`.
#[derive(Debug, Default)]
pub struct SchemaGen {
    defs: BTreeMap<String, Value>,
    in_progress: Vec<(TypeId, bool)>,
    def_names: HashMap<TypeId, String>,
    /// Mistakes in the contract found while its schema was built.
    problems: Vec<String>,
    /// Schemas written by another generator, already embedded, by type.
    #[cfg(feature = "schemars")]
    embedded: HashMap<TypeId, Value>,
}

impl SchemaGen {
    /// The schema of an object type `T` named `name`, built by `build` unless `T` is already
    /// being built further up (recursion), in which case a `$ref` to its definition is returned.
    pub fn object<T: 'static>(
        &mut self,
        name: &'static str,
        build: impl FnOnce(&mut SchemaGen) -> Value,
    ) -> Value {
        let id = TypeId::of::<T>();
        if let Some(def) = self.def_names.get(&id)
            && (self.defs.contains_key(def) || self.in_progress.iter().any(|(t, _)| *t == id))
        {
            return reference(def);
        }
        if let Some(entry) = self.in_progress.iter_mut().find(|(t, _)| *t == id) {
            entry.1 = true;
            let def = self.def_name(id, name);
            return reference(&def);
        }
        self.in_progress.push((id, false));
        let schema = build(self);
        let recursive = self
            .in_progress
            .pop()
            .is_some_and(|(_, recursive)| recursive);
        if recursive {
            let def = self.def_name(id, name);
            self.defs.insert(def.clone(), schema);
            reference(&def)
        } else {
            schema
        }
    }

    /// Records a mistake in the contract, found while building its schema (see
    /// [`Tool::contract_errors`](crate::Tool::contract_errors)).
    pub fn problem(&mut self, problem: String) {
        if !self.problems.contains(&problem) {
            self.problems.push(problem);
        }
    }

    fn def_name(&mut self, id: TypeId, name: &str) -> String {
        if let Some(def) = self.def_names.get(&id) {
            return def.clone();
        }
        let candidate = self.free_name(name);
        self.def_names.insert(id, candidate.clone());
        candidate
    }

    /// `name`, or `name2`, `name3`, … : the first no definition has or is reserved for.
    fn free_name(&self, name: &str) -> String {
        let taken = |candidate: &str| {
            self.defs.contains_key(candidate) || self.def_names.values().any(|t| t == candidate)
        };
        let mut candidate = name.to_owned();
        let mut suffix = 2;
        while taken(&candidate) {
            candidate = format!("{name}{suffix}");
            suffix += 1;
        }
        candidate
    }

    /// Embeds `root`, a root schema another generator wrote for the type `id` (with its own
    /// `$defs`), where this generator is: its definitions move into the root `$defs` under
    /// names no other definition has, every `#/$defs/...` reference is rewritten to match, and
    /// what is left is returned to be used in place. A root referred to from inside itself
    /// (`#`, a recursive type) becomes a definition too. References outside the document are
    /// left as they are, to be refused where the schema is compiled or lowered. The same type
    /// embedded again gets the same schema.
    #[cfg(feature = "schemars")]
    pub(crate) fn embed(&mut self, id: TypeId, name: &str, root: Value) -> Value {
        if let Some(done) = self.embedded.get(&id) {
            return done.clone();
        }
        let Value::Object(mut root) = root else {
            // `true` or `false`: nothing to move.
            return root;
        };
        root.remove("$schema");
        let defs = match root.remove("$defs") {
            Some(Value::Object(defs)) => defs,
            _ => Map::new(),
        };
        let mut renamed: HashMap<String, String> = HashMap::new();
        for old in defs.keys() {
            let new = self.free_name(&plain_name(old));
            // Reserved until the bodies are in, so two names never collide.
            self.defs.insert(new.clone(), Value::Null);
            renamed.insert(old.clone(), new);
        }
        let mut root = Value::Object(root);
        let recursive = mentions_root(&root, 0) || defs.values().any(|d| mentions_root(d, 0));
        let root_def = recursive.then(|| {
            let new = self.free_name(&plain_name(name));
            self.defs.insert(new.clone(), Value::Null);
            new
        });
        let rename = Renaming {
            defs: &renamed,
            root: root_def.as_deref(),
        };
        rename.apply(&mut root, 0);
        for (old, mut body) in defs {
            rename.apply(&mut body, 0);
            if let Some(new) = renamed.get(&old) {
                self.defs.insert(new.clone(), body);
            }
        }
        let used = match root_def {
            Some(def) => {
                self.defs.insert(def.clone(), root);
                reference(&def)
            }
            None => root,
        };
        self.embedded.insert(id, used.clone());
        used
    }
}

/// `name` with every character but ASCII letters, digits, `_`, `-` and `.` replaced by `_`,
/// so that a reference to it needs no escaping (`Wrapper<String>` → `Wrapper_String_`).
#[cfg(feature = "schemars")]
fn plain_name(name: &str) -> String {
    let plain: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if plain.is_empty() {
        "def".to_owned()
    } else {
        plain
    }
}

/// How deep [`Renaming::apply`] and [`mentions_root`] go into a schema another generator
/// wrote (for a Rust type, so never deep in practice).
#[cfg(feature = "schemars")]
const MAX_EMBED_DEPTH: usize = 256;

/// Keywords whose values are data, not schemas: a `$ref` inside them is not a reference.
#[cfg(feature = "schemars")]
const DATA_KEYWORDS: [&str; 4] = ["const", "enum", "default", "examples"];

/// Whether `schema` refers to its own root other than through `#/$defs/...`.
#[cfg(feature = "schemars")]
fn mentions_root(schema: &Value, depth: usize) -> bool {
    if depth > MAX_EMBED_DEPTH {
        return false;
    }
    match schema {
        Value::Object(map) => map.iter().any(|(key, value)| match (key.as_str(), value) {
            ("$ref", Value::String(reference)) => {
                reference.starts_with('#') && !reference.starts_with("#/$defs/")
            }
            _ if DATA_KEYWORDS.contains(&key.as_str()) => false,
            _ => mentions_root(value, depth + 1),
        }),
        Value::Array(items) => items.iter().any(|item| mentions_root(item, depth + 1)),
        _ => false,
    }
}

/// New names for an embedded schema's definitions, and the definition its root became.
#[cfg(feature = "schemars")]
struct Renaming<'a> {
    defs: &'a HashMap<String, String>,
    root: Option<&'a str>,
}

#[cfg(feature = "schemars")]
impl Renaming<'_> {
    fn apply(&self, schema: &mut Value, depth: usize) {
        if depth > MAX_EMBED_DEPTH {
            return;
        }
        match schema {
            Value::Object(map) => {
                for (key, value) in map.iter_mut() {
                    match (key.as_str(), &mut *value) {
                        ("$ref", Value::String(reference)) => {
                            if let Some(new) = self.reference(reference) {
                                *reference = new;
                            }
                        }
                        _ if DATA_KEYWORDS.contains(&key.as_str()) => {}
                        _ => self.apply(value, depth + 1),
                    }
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.apply(item, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// `reference` pointed at where its target now is; `None` to leave it.
    fn reference(&self, reference: &str) -> Option<String> {
        if let Some(rest) = reference.strip_prefix("#/$defs/") {
            let (token, tail) = rest
                .split_once('/')
                .map_or((rest, ""), |(t, tail)| (t, tail));
            let old = crate::contract::path::percent_decode(token)?
                .replace("~1", "/")
                .replace("~0", "~");
            let new = self.defs.get(&old)?;
            let mut out = String::from("#/$defs");
            crate::contract::path::push_escaped(&mut out, new);
            if !tail.is_empty() {
                out.push('/');
                out.push_str(tail);
            }
            return Some(out);
        }
        let rest = reference.strip_prefix('#')?;
        let root = self.root?;
        let mut out = String::from("#/$defs");
        crate::contract::path::push_escaped(&mut out, root);
        out.push_str(rest);
        Some(out)
    }
}

fn reference(def: &str) -> Value {
    let mut pointer = String::from("#/$defs");
    crate::contract::path::push_escaped(&mut pointer, def);
    json!({ "$ref": pointer })
}

/// The schema of the root argument object of `T`, with `$schema` and any `$defs`.
pub fn root_schema<T: Argument>() -> Value {
    root_contract::<T>().schema
}

/// A tool's contract as built once: its schema and the mistakes found in it.
#[derive(Debug)]
pub struct Contract {
    /// The root schema.
    pub schema: Value,
    /// Mistakes found while building it (see [`Tool::contract_errors`](crate::Tool::contract_errors)).
    pub problems: Vec<String>,
}

/// The root schema of `T` and the mistakes found while building it.
pub fn root_contract<T: Argument>() -> Contract {
    let mut generator = SchemaGen::default();
    let mut schema = T::schema(
        &mut generator,
        &crate::contract::constraints::Constraints::NONE,
    );
    // A recursive root type lives in `$defs`; inline a copy of its body at the root, where
    // providers expect an object schema.
    let def = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
        .map(str::to_owned);
    if let Some(body) = def.and_then(|def| generator.defs.get(&def)) {
        schema = body.clone();
    }
    let mut root = Map::new();
    root.insert("$schema".to_owned(), Value::from(DRAFT_2020_12));
    // A union of objects (an internally tagged enum) says at the root that it is an object,
    // where providers look for it.
    if let Value::Object(body) = &schema
        && !body.contains_key("type")
        && let Some(Value::Array(branches)) = body.get("oneOf").or_else(|| body.get("anyOf"))
        && !branches.is_empty()
        && branches
            .iter()
            .all(|branch| branch.get("type") == Some(&Value::from("object")))
    {
        root.insert("type".to_owned(), Value::from("object"));
    }
    if let Value::Object(body) = schema {
        for (key, value) in body {
            // The tool's description is advertised beside the schema, not inside it.
            if key != "description" {
                root.insert(key, value);
            }
        }
    }
    if !generator.defs.is_empty() {
        root.insert(
            "$defs".to_owned(),
            Value::Object(generator.defs.into_iter().collect()),
        );
    }
    Contract {
        schema: Value::Object(root),
        problems: generator.problems,
    }
}

/// Advertises `examples` (JSON texts checked by the derive) as the field's `examples`, and
/// `deprecated: true` when the field is deprecated. An example the field's own schema refuses
/// is recorded as a mistake in the contract, like a default.
pub fn annotate_field<T: Argument, C: ConstConstraints>(
    generator: &mut SchemaGen,
    schema: &mut Value,
    deprecated: bool,
    examples: &[&str],
    owner: &str,
    wire: &str,
) {
    let mut shown = Vec::with_capacity(examples.len());
    for text in examples {
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            generator.problem(format!(
                "an example of `{owner}.{wire}` is not JSON: {text}"
            ));
            continue;
        };
        if let Some(reasons) = refusal::<T, C>(&value) {
            generator.problem(format!(
                "the example {value} of `{owner}.{wire}` breaks the field's own schema: {reasons}"
            ));
            continue;
        }
        shown.push(value);
    }
    if let Value::Object(map) = schema {
        if deprecated {
            map.insert("deprecated".to_owned(), Value::Bool(true));
        }
        if !shown.is_empty() {
            map.insert("examples".to_owned(), Value::Array(shown));
        }
    }
}

/// Why `value` is not a value of `T` under `C`, if it is not.
fn refusal<T: Argument, C: ConstConstraints>(value: &Value) -> Option<String> {
    let mut cx = Cx::default();
    let checked = T::parse::<_, C>(Untyped::<_, false>(value), &mut cx, &Path::root());
    if matches!(checked, Ok(Some(_))) && cx.is_clean() {
        return None;
    }
    Some(cx.into_errors().map_or_else(
        || "it cannot be read back".to_owned(),
        |errors| {
            errors
                .iter()
                .map(|violation| violation.message().to_owned())
                .collect::<Vec<_>>()
                .join("; ")
        },
    ))
}

/// Advertises `default` as the `default` of the field `wire` of the type `owner`, whose schema
/// is `schema`, after checking it against the field's own type and constraints `C`: a default
/// that the field's schema refuses is recorded as a mistake in the contract.
pub fn advertise_default<T: Argument, C: ConstConstraints>(
    generator: &mut SchemaGen,
    schema: &mut Value,
    default: &T,
    owner: &str,
    wire: &str,
) {
    let Some(value) = default.to_value() else {
        return;
    };
    if let Some(reasons) = refusal::<T, C>(&value) {
        generator.problem(format!(
            "the default of `{owner}.{wire}` ({value}) breaks the field's own schema: {reasons}"
        ));
        return;
    }
    if let Value::Object(map) = schema {
        map.insert("default".to_owned(), value);
    }
}

/// The schema of an object with the given properties, all strict.
pub fn object_schema(
    description: Option<&str>,
    properties: Map<String, Value>,
    required: &[&str],
) -> Value {
    let mut schema = Map::new();
    schema.insert("type".to_owned(), Value::from("object"));
    if let Some(description) = description {
        schema.insert("description".to_owned(), Value::from(description));
    }
    schema.insert("properties".to_owned(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert(
            "required".to_owned(),
            Value::Array(required.iter().map(|&name| Value::from(name)).collect()),
        );
    }
    schema.insert("additionalProperties".to_owned(), Value::Bool(false));
    Value::Object(schema)
}

/// The schema of one field: its type's schema under the field's constraints, described by
/// the field's doc comment (which wins over the type's own).
pub fn field_schema<T: Argument>(
    generator: &mut SchemaGen,
    constraints: &crate::contract::constraints::Constraints,
    description: Option<&str>,
) -> Value {
    let mut schema = T::schema(generator, constraints);
    if let Some(description) = description
        && let Value::Object(map) = &mut schema
    {
        map.insert("description".to_owned(), Value::from(description));
    }
    schema
}

/// What a schema handed to [`nullable`] may hold, which decides how `null` is added to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NullableRule {
    /// A contract's schema, of any shape: `null` is folded into `type` or `enum` where that
    /// keeps the same meaning, else the schema is wrapped whole (its description inside) in
    /// `anyOf` with `{"type": "null"}`.
    Contract,
    /// A schema already lowered for a provider (no `oneOf` or `not`; a boolean stays as it
    /// is): one that admits `null` already is kept; `null` is added in place to `type`, `enum`
    /// and `anyOf` alike, and a `const`, `$ref` or `allOf` is wrapped in `anyOf` with its
    /// description kept outside, where the provider shows it.
    #[cfg_attr(not(feature = "providers"), allow(dead_code))] // used by the wire formats
    Lowered,
}

/// `schema` that also admits `null`, by `rule`.
pub(crate) fn nullable(schema: Value, rule: NullableRule) -> Value {
    match rule {
        NullableRule::Contract => nullable_contract(schema),
        NullableRule::Lowered => nullable_lowered(schema),
    }
}

/// `null` added to a `type` (a name or a list of them), unless it is there; `false` when
/// there is no such `type` to add it to.
fn null_in_type(map: &mut Map<String, Value>) -> bool {
    match map.get_mut("type") {
        Some(ty @ Value::String(_)) => {
            if ty != "null" {
                let name = std::mem::take(ty);
                *ty = json!([name, "null"]);
            }
            true
        }
        Some(Value::Array(names)) => {
            if !names.iter().any(|name| name == "null") {
                names.push(Value::from("null"));
            }
            true
        }
        _ => false,
    }
}

/// `null` added to an `enum`, unless it is there; `false` when there is no `enum`.
fn null_in_enum(map: &mut Map<String, Value>) -> bool {
    match map.get_mut("enum") {
        Some(Value::Array(values)) => {
            if !values.contains(&Value::Null) {
                values.push(Value::Null);
            }
            true
        }
        _ => false,
    }
}

fn nullable_contract(mut schema: Value) -> Value {
    if let Value::Object(map) = &mut schema {
        match map.get("type") {
            Some(Value::String(name)) if name != "null" => {
                null_in_type(map);
                return schema;
            }
            Some(Value::Array(_)) => {
                null_in_type(map);
                return schema;
            }
            Some(_) => {}
            None => {
                if null_in_enum(map) || map.is_empty() {
                    return schema;
                }
            }
        }
    }
    json!({ "anyOf": [schema, { "type": "null" }] })
}

fn nullable_lowered(schema: Value) -> Value {
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
    null_in_type(&mut map);
    null_in_enum(&mut map);
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

/// The schema of a unit-variant enum.
pub fn enum_schema(description: Option<&str>, variants: &[&str]) -> Value {
    let mut schema = Map::new();
    if let Some(description) = description {
        schema.insert("description".to_owned(), Value::from(description));
    }
    schema.insert(
        "enum".to_owned(),
        Value::Array(variants.iter().map(|&v| Value::from(v)).collect()),
    );
    Value::Object(schema)
}

#[cfg(all(test, feature = "schemars"))]
mod tests {
    use super::*;

    #[test]
    fn both_rules_fold_null_into_a_type_and_differ_on_unions_and_references() {
        for rule in [NullableRule::Contract, NullableRule::Lowered] {
            assert_eq!(
                nullable(json!({"type": "string"}), rule),
                json!({"type": ["string", "null"]})
            );
            assert_eq!(
                nullable(json!({"type": ["string", "null"]}), rule),
                json!({"type": ["string", "null"]})
            );
            assert_eq!(
                nullable(json!({"enum": ["a"]}), rule),
                json!({"enum": ["a", null]})
            );
        }
        let union = json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
        assert_eq!(
            nullable(union.clone(), NullableRule::Contract),
            json!({"anyOf": [union, {"type": "null"}]})
        );
        assert_eq!(
            nullable(union, NullableRule::Lowered),
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]})
        );
        let reference = json!({"$ref": "#/$defs/a", "description": "d"});
        assert_eq!(
            nullable(reference.clone(), NullableRule::Contract),
            json!({"anyOf": [reference, {"type": "null"}]})
        );
        assert_eq!(
            nullable(reference, NullableRule::Lowered),
            json!({"anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}], "description": "d"})
        );
        assert_eq!(nullable(json!(true), NullableRule::Lowered), json!(true));
    }

    struct A;
    struct B;
    struct C;

    #[test]
    fn embedded_definitions_get_free_names_and_matching_references() {
        let mut generator = SchemaGen::default();
        // A derived type already holds the name `Inner`.
        generator
            .defs
            .insert("Inner".to_owned(), json!({ "type": "null" }));
        let a = generator.embed(
            TypeId::of::<A>(),
            "A",
            json!({
                "$schema": DRAFT_2020_12,
                "type": "object",
                "properties": { "i": { "$ref": "#/$defs/Inner" }, "j": { "$ref": "#/$defs/Odd%20name/properties/k" } },
                "const": { "$ref": "#/$defs/Inner" },
                "$defs": {
                    "Inner": { "type": "integer" },
                    "Odd name": { "properties": { "k": { "$ref": "#/$defs/Inner" } } }
                }
            }),
        );
        assert_eq!(a["properties"]["i"]["$ref"], "#/$defs/Inner2");
        assert_eq!(
            a["properties"]["j"]["$ref"],
            "#/$defs/Odd_name/properties/k"
        );
        // Data is left alone.
        assert_eq!(a["const"]["$ref"], "#/$defs/Inner");
        assert_eq!(a.get("$schema"), None);
        assert_eq!(
            generator.defs["Odd_name"]["properties"]["k"]["$ref"],
            "#/$defs/Inner2"
        );
        // Embedded again: the same schema, nothing added.
        let before = generator.defs.len();
        assert_eq!(generator.embed(TypeId::of::<A>(), "A", json!({})), a);
        assert_eq!(generator.defs.len(), before);

        // A root referred to from inside itself becomes a definition.
        let b = generator.embed(
            TypeId::of::<B>(),
            "B",
            json!({ "type": "array", "items": { "$ref": "#" }, "$defs": { "Inner": { "$ref": "#/items" } } }),
        );
        assert_eq!(b, json!({ "$ref": "#/$defs/B" }));
        assert_eq!(generator.defs["B"]["items"]["$ref"], "#/$defs/B");
        assert_eq!(generator.defs["Inner3"]["$ref"], "#/$defs/B/items");

        // A reference to another document is left for compilation and lowering to refuse.
        let c = generator.embed(
            TypeId::of::<C>(),
            "C",
            json!({ "$ref": "https://example.com/c.json" }),
        );
        assert_eq!(c["$ref"], "https://example.com/c.json");
    }
}
