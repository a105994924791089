//! References inside the schema: where a `$ref` points (JSON Pointers, `$anchor`s, the root's
//! own `$id`; nothing is fetched), what the keywords beside an inlined `$ref` become, and the
//! root `$defs` entries that the targets of cycles are given.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Map, Value};

use super::context::{MAX_DEPTH, Report, child};
use crate::providers::dialect::{Action, Dialect};
use crate::providers::loss::LowerError;

/// The canonical root, its anchors (found on first use), and the `$defs` named so far.
pub(super) struct Refs<'r> {
    root: &'r Value,
    anchors: Option<HashMap<String, String>>,
    defs: Vec<Def>,
}

/// A root `$defs` entry for the target of a cycle; the driver lowers its body once the rest
/// of the schema is done.
struct Def {
    pointer: String,
    name: String,
    body: Option<Value>,
}

impl<'r> Refs<'r> {
    pub(super) fn new(root: &'r Value) -> Self {
        Refs {
            root,
            anchors: None,
            defs: Vec::new(),
        }
    }

    /// The canonical schema, which every pointer is into.
    pub(super) fn root(&self) -> &'r Value {
        self.root
    }

    /// The JSON Pointer a `$ref` names, within the root.
    pub(super) fn target_of(
        &mut self,
        reference: &str,
        pointer: &str,
    ) -> Result<String, LowerError> {
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
        // Escapes that decode to no text leave the fragment as written: it then names nothing.
        let fragment = crate::contract::path::percent_decode(&fragment[1..])
            .unwrap_or(Cow::Borrowed(&fragment[1..]));
        if fragment.is_empty() || fragment.starts_with('/') {
            return Ok(fragment.into_owned());
        }
        let root = self.root;
        let anchors = self.anchors.get_or_insert_with(|| {
            let mut found = HashMap::new();
            collect_anchors(root, String::new(), &mut found, 0);
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

    /// The `$ref` that stands for a cycle's target in the lowered schema: `#` for the root,
    /// else the target's root `$defs` entry, named on first use.
    pub(super) fn cycle_ref(&mut self, target_pointer: &str) -> String {
        if target_pointer.is_empty() {
            return "#".to_owned();
        }
        let mut out = "#/$defs".to_owned();
        let name = self.def_name(target_pointer);
        crate::contract::path::push_escaped(&mut out, &name);
        out
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

    /// The canonical pointer of the `index`th `$defs` entry, once that many are named.
    /// Lowering one entry's body may name more.
    pub(super) fn def_pointer(&self, index: usize) -> Option<&str> {
        self.defs.get(index).map(|def| def.pointer.as_str())
    }

    pub(super) fn set_def_body(&mut self, index: usize, body: Value) {
        self.defs[index].body = Some(body);
    }

    /// The root `$defs` of the lowered schema, in the order named; `None` if no cycle needed
    /// one.
    pub(super) fn take_defs(&mut self) -> Option<Map<String, Value>> {
        if self.defs.is_empty() {
            return None;
        }
        Some(
            self.defs
                .drain(..)
                .map(|def| (def.name, def.body.unwrap_or(Value::Bool(true))))
                .collect(),
        )
    }
}

/// The keywords written beside a `$ref` that lowering keeps: not the reference itself, not
/// nested `$defs`, nothing the dialect drops without a report.
pub(super) fn siblings(map: &Map<String, Value>, dialect: Dialect) -> Map<String, Value> {
    map.iter()
        .filter(|(key, _)| {
            key.as_str() != "$ref"
                && dialect.action(key) != Action::Silent
                && !matches!(key.as_str(), "$defs" | "definitions")
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// A referenced schema with the keywords written beside the `$ref` (both apply).
pub(super) fn combine(body: Value, extra: Value, pointer: &str, report: &mut Report) -> Value {
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
            Some(_) => report.dropped(pointer, &key, Some("beside a $ref with its own")),
        }
    }
    Value::Object(body)
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
