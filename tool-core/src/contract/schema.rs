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
        let mut candidate = name.to_owned();
        let mut suffix = 2;
        while self.def_names.values().any(|taken| *taken == candidate) {
            candidate = format!("{name}{suffix}");
            suffix += 1;
        }
        self.def_names.insert(id, candidate.clone());
        candidate
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
    let checked = T::parse::<_, C>(Untyped(value), &mut cx, &Path::ROOT);
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

/// `schema` that also admits `null`: folded into `type` or `enum` where that keeps the same
/// meaning, else `anyOf`.
pub(crate) fn nullable(mut schema: Value) -> Value {
    if let Value::Object(map) = &mut schema {
        if let Some(ty) = map.get_mut("type") {
            match ty {
                Value::String(name) if name != "null" => {
                    *ty = json!([name.as_str(), "null"]);
                    return schema;
                }
                Value::Array(names) => {
                    if !names.iter().any(|name| name == "null") {
                        names.push(Value::from("null"));
                    }
                    return schema;
                }
                _ => {}
            }
        } else if let Some(Value::Array(values)) = map.get_mut("enum") {
            if !values.contains(&Value::Null) {
                values.push(Value::Null);
            }
            return schema;
        } else if map.is_empty() {
            return schema;
        }
    }
    json!({ "anyOf": [schema, { "type": "null" }] })
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
