//! Provider limits on the tools of one request, checked when they are advertised so that a
//! request the provider would refuse with a 400 is refused here with a clear reason.
//!
//! | provider | limit | counted over |
//! |---|---|---|
//! | OpenAI strict | 5,000 object properties, 10 levels of object nesting, 1,000 enum values, 120,000 characters of property names, definition names, enum and const strings; an enum of more than 250 values at most 15,000 characters | each tool's schema |
//! | Anthropic strict | 20 strict tools, 24 optional properties, 16 union-typed properties (`anyOf` or a type list) | all tools of the request |
//! | Gemini | 128 function declarations | the request |
//!
//! Counts are taken on the lowered schemas, at every depth and in `$defs`.

use std::fmt;

use serde_json::Value;

/// A request over a provider limit.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitError {
    /// More object properties in one OpenAI strict schema than allowed.
    OpenAiProperties {
        /// The tool.
        tool: String,
        /// Properties counted.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// Objects nested deeper than OpenAI strict allows.
    OpenAiNesting {
        /// The tool.
        tool: String,
        /// Levels counted.
        depth: usize,
        /// The limit.
        limit: usize,
    },
    /// More enum values in one OpenAI strict schema than allowed.
    OpenAiEnumValues {
        /// The tool.
        tool: String,
        /// Values counted.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// Names, enum and const strings of one OpenAI strict schema longer in total than allowed.
    OpenAiStringLength {
        /// The tool.
        tool: String,
        /// Characters counted.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// An enum of more than 250 values whose strings are longer in total than allowed.
    OpenAiLongEnum {
        /// The tool.
        tool: String,
        /// Characters counted in that enum.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// More strict tools in one Anthropic request than allowed.
    AnthropicStrictTools {
        /// Strict tools in the request.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// More optional properties across an Anthropic request's strict tools than allowed.
    AnthropicOptional {
        /// Optional properties counted.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// More union-typed properties across an Anthropic request's strict tools than allowed.
    AnthropicUnions {
        /// Union-typed properties counted.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// More function declarations in one Gemini request than allowed.
    GeminiDeclarations {
        /// Declarations in the request.
        count: usize,
        /// The limit.
        limit: usize,
    },
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitError::OpenAiProperties { tool, count, limit } => write!(
                f,
                "`{tool}` has {count} object properties; OpenAI strict allows {limit} per schema"
            ),
            LimitError::OpenAiNesting { tool, depth, limit } => write!(
                f,
                "`{tool}` nests objects {depth} levels deep; OpenAI strict allows {limit}"
            ),
            LimitError::OpenAiEnumValues { tool, count, limit } => write!(
                f,
                "`{tool}` has {count} enum values; OpenAI strict allows {limit} per schema"
            ),
            LimitError::OpenAiStringLength { tool, count, limit } => write!(
                f,
                "`{tool}` has {count} characters of property names, definition names, enum and const strings; OpenAI strict allows {limit}"
            ),
            LimitError::OpenAiLongEnum { tool, count, limit } => write!(
                f,
                "`{tool}` has an enum of more than 250 values totalling {count} characters; OpenAI strict allows {limit}"
            ),
            LimitError::AnthropicStrictTools { count, limit } => write!(
                f,
                "{count} strict tools in one request; Anthropic allows {limit}"
            ),
            LimitError::AnthropicOptional { count, limit } => write!(
                f,
                "{count} optional properties across the strict tools of one request; Anthropic allows {limit}"
            ),
            LimitError::AnthropicUnions { count, limit } => write!(
                f,
                "{count} union-typed properties across the strict tools of one request; Anthropic allows {limit}"
            ),
            LimitError::GeminiDeclarations { count, limit } => write!(
                f,
                "{count} function declarations in one request; Gemini allows {limit}"
            ),
        }
    }
}

impl std::error::Error for LimitError {}

/// What the limits count in one lowered schema (lowering bounds its nesting, and so this
/// recursion).
#[derive(Debug, Default)]
pub(crate) struct Counts {
    pub(crate) properties: usize,
    pub(crate) depth: usize,
    pub(crate) enum_values: usize,
    pub(crate) chars: usize,
    pub(crate) longest_big_enum: usize,
    pub(crate) optional: usize,
    pub(crate) unions: usize,
}

impl Counts {
    pub(crate) fn of(schema: &Value) -> Counts {
        let mut counts = Counts::default();
        if let Some(Value::Object(defs)) = schema.get("$defs") {
            for (name, def) in defs {
                counts.chars += name.chars().count();
                counts.visit(def, 0);
            }
        }
        counts.visit(schema, 0);
        counts
    }

    fn visit(&mut self, schema: &Value, level: usize) {
        let Value::Object(map) = schema else { return };
        let mut level = level;
        if let Some(Value::Object(properties)) = map.get("properties") {
            level += 1;
            self.depth = self.depth.max(level);
            self.properties += properties.len();
            let required: Vec<&str> = match map.get("required") {
                Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            for (name, property) in properties {
                self.chars += name.chars().count();
                if !required.contains(&name.as_str()) {
                    self.optional += 1;
                }
                if is_union(property) {
                    self.unions += 1;
                }
                self.visit(property, level);
            }
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            self.enum_values += values.len();
            let chars: usize = values
                .iter()
                .filter_map(Value::as_str)
                .map(|s| s.chars().count())
                .sum();
            self.chars += chars;
            if values.len() > 250 {
                self.longest_big_enum = self.longest_big_enum.max(chars);
            }
        }
        if let Some(Value::String(value)) = map.get("const") {
            self.chars += value.chars().count();
        }
        for key in [
            "items",
            "additionalProperties",
            "not",
            "if",
            "then",
            "else",
            "contains",
        ] {
            if let Some(sub) = map.get(key) {
                self.visit(sub, level);
            }
        }
        for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
            if let Some(Value::Array(subs)) = map.get(key) {
                for sub in subs {
                    self.visit(sub, level);
                }
            }
        }
    }
}

fn is_union(schema: &Value) -> bool {
    schema.get("anyOf").is_some()
        || schema.get("oneOf").is_some()
        || schema
            .get("type")
            .and_then(Value::as_array)
            .is_some_and(|types| types.len() > 1)
}

pub(crate) const OPENAI_PROPERTIES: usize = 5_000;
pub(crate) const OPENAI_DEPTH: usize = 10;
pub(crate) const OPENAI_ENUM_VALUES: usize = 1_000;
pub(crate) const OPENAI_CHARS: usize = 120_000;
pub(crate) const OPENAI_BIG_ENUM_CHARS: usize = 15_000;
pub(crate) const ANTHROPIC_STRICT_TOOLS: usize = 20;
pub(crate) const ANTHROPIC_OPTIONAL: usize = 24;
pub(crate) const ANTHROPIC_UNIONS: usize = 16;
pub(crate) const GEMINI_DECLARATIONS: usize = 128;

/// OpenAI strict's limits on one tool's schema.
pub(crate) fn check_openai(tool: &str, counts: &Counts) -> Result<(), LimitError> {
    let tool = || tool.to_owned();
    if counts.properties > OPENAI_PROPERTIES {
        return Err(LimitError::OpenAiProperties {
            tool: tool(),
            count: counts.properties,
            limit: OPENAI_PROPERTIES,
        });
    }
    if counts.depth > OPENAI_DEPTH {
        return Err(LimitError::OpenAiNesting {
            tool: tool(),
            depth: counts.depth,
            limit: OPENAI_DEPTH,
        });
    }
    if counts.enum_values > OPENAI_ENUM_VALUES {
        return Err(LimitError::OpenAiEnumValues {
            tool: tool(),
            count: counts.enum_values,
            limit: OPENAI_ENUM_VALUES,
        });
    }
    if counts.chars > OPENAI_CHARS {
        return Err(LimitError::OpenAiStringLength {
            tool: tool(),
            count: counts.chars,
            limit: OPENAI_CHARS,
        });
    }
    if counts.longest_big_enum > OPENAI_BIG_ENUM_CHARS {
        return Err(LimitError::OpenAiLongEnum {
            tool: tool(),
            count: counts.longest_big_enum,
            limit: OPENAI_BIG_ENUM_CHARS,
        });
    }
    Ok(())
}

/// Anthropic strict's limits on a whole request.
pub(crate) fn check_anthropic<'a>(
    schemas: impl ExactSizeIterator<Item = &'a Value>,
) -> Result<(), LimitError> {
    let count = schemas.len();
    if count > ANTHROPIC_STRICT_TOOLS {
        return Err(LimitError::AnthropicStrictTools {
            count,
            limit: ANTHROPIC_STRICT_TOOLS,
        });
    }
    let (mut optional, mut unions) = (0, 0);
    for schema in schemas {
        let counts = Counts::of(schema);
        optional += counts.optional;
        unions += counts.unions;
    }
    if optional > ANTHROPIC_OPTIONAL {
        return Err(LimitError::AnthropicOptional {
            count: optional,
            limit: ANTHROPIC_OPTIONAL,
        });
    }
    if unions > ANTHROPIC_UNIONS {
        return Err(LimitError::AnthropicUnions {
            count: unions,
            limit: ANTHROPIC_UNIONS,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_properties_depth_optionals_and_unions() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": { "type": ["string", "null"] },
                "b": { "type": "object", "properties": { "c": { "enum": ["x", "yy"] } }, "required": ["c"] }
            },
            "required": ["b"],
            "$defs": { "D": { "type": "object", "properties": { "e": { "anyOf": [{ "type": "string" }] } } } }
        });
        let counts = Counts::of(&schema);
        assert_eq!(counts.properties, 4);
        assert_eq!(counts.depth, 2);
        assert_eq!(counts.enum_values, 2);
        assert_eq!(counts.optional, 2); // a, e
        assert_eq!(counts.unions, 2); // a, e
        assert_eq!(counts.chars, "abcD".len() + "e".len() + "xyy".len());
    }
}
