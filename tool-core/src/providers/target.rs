//! The provider APIs a tool can be advertised to, and the tool as a provider sees it.

use std::fmt;

use serde_json::{Map, Value};

use super::dialect::Dialect;
use super::names::NameRule;
use crate::registry::ToolInfo;

/// A provider API and mode to advertise tools to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Target {
    /// OpenAI Chat Completions, `strict: false`.
    OpenAiChat,
    /// OpenAI Chat Completions, `strict: true` (Structured Outputs subset).
    OpenAiChatStrict,
    /// OpenAI Responses, `strict: false` (sent explicitly: an omitted `strict` lets the API
    /// normalise the schema itself).
    OpenAiResponses,
    /// OpenAI Responses, `strict: true`.
    OpenAiResponsesStrict,
    /// Anthropic Messages, without `strict`.
    Anthropic,
    /// Anthropic Messages, `strict: true`.
    AnthropicStrict,
    /// Gemini `functionDeclarations[].parametersJsonSchema` (JSON Schema subset).
    GeminiJsonSchema,
    /// Gemini `functionDeclarations[].parameters` (the older OpenAPI 3.0 subset; the only form
    /// the Live API accepts).
    GeminiOpenApi,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 8] = [
        Target::OpenAiChat,
        Target::OpenAiChatStrict,
        Target::OpenAiResponses,
        Target::OpenAiResponsesStrict,
        Target::Anthropic,
        Target::AnthropicStrict,
        Target::GeminiJsonSchema,
        Target::GeminiOpenApi,
    ];

    pub(crate) const fn dialect(self) -> Dialect {
        match self {
            Target::OpenAiChat | Target::OpenAiResponses => Dialect::OpenAi,
            Target::OpenAiChatStrict | Target::OpenAiResponsesStrict => Dialect::OpenAiStrict,
            Target::Anthropic => Dialect::Anthropic,
            Target::AnthropicStrict => Dialect::AnthropicStrict,
            Target::GeminiJsonSchema => Dialect::GeminiJson,
            Target::GeminiOpenApi => Dialect::GeminiOpenApi,
        }
    }

    /// The provider's rule for tool names.
    pub const fn name_rule(self) -> NameRule {
        match self {
            Target::OpenAiChat
            | Target::OpenAiChatStrict
            | Target::OpenAiResponses
            | Target::OpenAiResponsesStrict => NameRule::OpenAi,
            Target::Anthropic | Target::AnthropicStrict => NameRule::Anthropic,
            Target::GeminiJsonSchema | Target::GeminiOpenApi => NameRule::Gemini,
        }
    }

    /// Whether the provider is asked to constrain calls to the schema.
    pub const fn is_strict(self) -> bool {
        matches!(
            self,
            Target::OpenAiChatStrict | Target::OpenAiResponsesStrict | Target::AnthropicStrict
        )
    }

    /// The name of the schema dialect, as loss reports print it (`"OpenAI strict"`).
    pub const fn dialect_name(self) -> &'static str {
        self.dialect().name()
    }

    /// One tool definition in the provider's request shape.
    pub(crate) fn definition(self, name: &str, description: &str, schema: Value) -> Value {
        let mut out = Map::new();
        match self {
            Target::OpenAiChat | Target::OpenAiChatStrict => {
                let mut function = Map::new();
                function.insert("name".into(), name.into());
                if !description.is_empty() {
                    function.insert("description".into(), description.into());
                }
                function.insert("parameters".into(), schema);
                function.insert("strict".into(), self.is_strict().into());
                out.insert("type".into(), "function".into());
                out.insert("function".into(), Value::Object(function));
            }
            Target::OpenAiResponses | Target::OpenAiResponsesStrict => {
                out.insert("type".into(), "function".into());
                out.insert("name".into(), name.into());
                if !description.is_empty() {
                    out.insert("description".into(), description.into());
                }
                out.insert("parameters".into(), schema);
                out.insert("strict".into(), self.is_strict().into());
            }
            Target::Anthropic | Target::AnthropicStrict => {
                out.insert("name".into(), name.into());
                if !description.is_empty() {
                    out.insert("description".into(), description.into());
                }
                out.insert("input_schema".into(), schema);
                if self.is_strict() {
                    out.insert("strict".into(), true.into());
                }
            }
            Target::GeminiJsonSchema => {
                out.insert("name".into(), name.into());
                if !description.is_empty() {
                    out.insert("description".into(), description.into());
                }
                out.insert("parametersJsonSchema".into(), schema);
            }
            Target::GeminiOpenApi => {
                out.insert("name".into(), name.into());
                if !description.is_empty() {
                    out.insert("description".into(), description.into());
                }
                // `parameters` is optional: a tool without any omits it rather than sending
                // an OBJECT with no properties.
                let empty = schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .is_none_or(Map::is_empty);
                if !empty {
                    out.insert("parameters".into(), schema);
                }
            }
        }
        Value::Object(out)
    }

    /// The request's `tools` value for these definitions.
    pub(crate) fn tools_value(self, definitions: Vec<Value>) -> Value {
        match self {
            Target::GeminiJsonSchema | Target::GeminiOpenApi => {
                let mut group = Map::new();
                group.insert("functionDeclarations".into(), Value::Array(definitions));
                Value::Array(vec![Value::Object(group)])
            }
            _ => Value::Array(definitions),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Target::OpenAiChat => "OpenAI Chat",
            Target::OpenAiChatStrict => "OpenAI Chat (strict)",
            Target::OpenAiResponses => "OpenAI Responses",
            Target::OpenAiResponsesStrict => "OpenAI Responses (strict)",
            Target::Anthropic => "Anthropic",
            Target::AnthropicStrict => "Anthropic (strict)",
            Target::GeminiJsonSchema => "Gemini (parametersJsonSchema)",
            Target::GeminiOpenApi => "Gemini (parameters)",
        })
    }
}

/// A tool as lowering needs it: its registry name, description and canonical input schema.
/// Made from a registered tool's [`ToolInfo`], or from parts for a schema that is not
/// registered (a corpus, a preview).
#[derive(Debug, Clone, Copy)]
pub struct ToolSpec<'a> {
    pub(crate) name: &'a str,
    pub(crate) description: &'a str,
    pub(crate) input_schema: &'a Value,
}

impl<'a> ToolSpec<'a> {
    /// A tool from its parts.
    pub fn new(name: &'a str, description: &'a str, input_schema: &'a Value) -> Self {
        ToolSpec {
            name,
            description,
            input_schema,
        }
    }

    /// The registry name.
    pub fn name(&self) -> &'a str {
        self.name
    }
}

impl<'a> From<&'a ToolInfo> for ToolSpec<'a> {
    fn from(info: &'a ToolInfo) -> Self {
        ToolSpec::new(info.name(), info.description(), info.input_schema())
    }
}

impl<'a> From<&&'a ToolInfo> for ToolSpec<'a> {
    fn from(info: &&'a ToolInfo) -> Self {
        ToolSpec::from(*info)
    }
}
