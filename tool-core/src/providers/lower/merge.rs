//! Schemas merged into one before the keyword walk: `allOf` members, for the dialects that
//! have no `allOf` (and at the root, for those that refuse it there; `root.rs` merges a root
//! union with the same reading of members). A member that is a `$ref` is read through
//! [`Refs`]; nothing here lowers a subschema.

use serde_json::{Map, Value, json};

use super::context::{Report, child, invalid, json_kind};
use super::refs::Refs;
use crate::providers::loss::LowerError;

/// What a merge reads and reports to.
pub(super) struct Merge<'a, 'r> {
    pub(super) refs: &'a mut Refs<'r>,
    /// Pointers of the schemas being walked: a member referring to one of them is a cycle.
    pub(super) open: &'a [String],
    pub(super) report: &'a mut Report,
}

impl Merge<'_, '_> {
    /// `map` with its `allOf` members merged in. Keywords that would conflict keep the
    /// first value and report the others as unenforced.
    pub(super) fn all_of(
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
                dialect: self.report.dialect().name(),
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
                        dialect: self.report.dialect().name(),
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
            let member = self.resolve_member(member, &member_pointer, "allOf")?;
            let Some(member) = member else { continue };
            let member = if member.contains_key("allOf") {
                self.all_of(&member, &member_pointer, depth + 1)?
            } else {
                member
            };
            self.merge_into(&mut base, member, &member_pointer);
        }
        Ok(base)
    }

    /// A member of `keyword` with a `$ref` replaced by its target (with the member's
    /// siblings); `None` for a reference back into a cycle, or to a schema that is itself a
    /// `$ref`, which are not merged.
    pub(super) fn resolve_member(
        &mut self,
        member: &Map<String, Value>,
        pointer: &str,
        keyword: &str,
    ) -> Result<Option<Map<String, Value>>, LowerError> {
        let Some(reference) = member.get("$ref") else {
            return Ok(Some(member.clone()));
        };
        let Value::String(text) = reference else {
            return Err(invalid(pointer, "$ref must be a string"));
        };
        let target_pointer = self.refs.target_of(text, pointer)?;
        let target = match self.refs.root().pointer(&target_pointer) {
            Some(Value::Object(target)) => target,
            Some(Value::Bool(true)) => return Ok(Some(Map::new())),
            _ => {
                return Err(LowerError::UnresolvedRef {
                    pointer: pointer.to_owned(),
                    reference: text.clone(),
                });
            }
        };
        if self.open.contains(&target_pointer) || target.contains_key("$ref") {
            self.report
                .dropped(pointer, keyword, Some("a recursive member is not merged"));
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
                            None => {
                                self.report
                                    .dropped(pointer, "type", Some("allOf members disagree"))
                            }
                        }
                    }
                },
                "description" | "title" | "$comment" | "examples" | "default" => {
                    base.entry(key).or_insert(value);
                }
                _ => match base.get(&key) {
                    None => drop(base.insert(key, value)),
                    Some(existing) if *existing == value => {}
                    Some(_) => self
                        .report
                        .dropped(pointer, &key, Some("allOf members disagree")),
                },
            }
        }
    }
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
