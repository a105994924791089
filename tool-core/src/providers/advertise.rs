//! Advertising the tools of one request: names mapped, each schema lowered, the provider's
//! request-wide limits checked.

use std::fmt;

use serde_json::Value;

use super::limits::{self, Counts, LimitError};
use super::loss::{Loss, LowerError};
use super::lower::lower_schema;
use super::names::{NameError, NameMap};
use super::target::{Target, ToolSpec};

/// One tool as a provider will see it, with what its lowering lost.
#[derive(Debug, Clone)]
pub struct Lowered {
    name: String,
    provider_name: String,
    schema: Value,
    definition: Value,
    losses: Vec<Loss>,
}

impl Lowered {
    /// The registry name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name the provider sees (see [`NameMap`]).
    pub fn provider_name(&self) -> &str {
        &self.provider_name
    }

    /// The lowered input schema.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The tool definition in the provider's request shape.
    pub fn definition(&self) -> &Value {
        &self.definition
    }

    /// What the lowering lost, in schema order; empty when the provider sees the whole
    /// contract.
    pub fn losses(&self) -> &[Loss] {
        &self.losses
    }
}

/// The tools of one request, lowered for a [`Target`].
#[derive(Debug, Clone)]
pub struct Advertised {
    target: Target,
    tools: Vec<Lowered>,
    names: NameMap,
}

impl Advertised {
    /// The target.
    pub fn target(&self) -> Target {
        self.target
    }

    /// The tools, in the order given.
    pub fn tools(&self) -> &[Lowered] {
        &self.tools
    }

    /// The name map, to decode the names of the calls that come back.
    pub fn names(&self) -> &NameMap {
        &self.names
    }

    /// The value of the request's `tools` field: a list of definitions, wrapped in one
    /// `functionDeclarations` group for Gemini.
    pub fn to_json(&self) -> Value {
        let definitions = self.tools.iter().map(|t| t.definition.clone()).collect();
        self.target.tools_value(definitions)
    }

    /// Every loss, with the registry name of its tool.
    pub fn losses(&self) -> impl Iterator<Item = (&str, &Loss)> + '_ {
        self.tools.iter().flat_map(|tool| {
            tool.losses
                .iter()
                .map(move |loss| (tool.name.as_str(), loss))
        })
    }
}

/// Why the tools of a request could not be advertised.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdvertiseError {
    /// The tool names cannot be mapped to the provider's.
    Names(NameError),
    /// A tool's schema cannot be lowered to the provider's dialect.
    Refused {
        /// The registry name.
        tool: String,
        /// Why.
        error: LowerError,
    },
    /// The request is over a provider limit.
    Limit(LimitError),
}

impl fmt::Display for AdvertiseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdvertiseError::Names(error) => error.fmt(f),
            AdvertiseError::Refused { tool, error } => write!(f, "tool `{tool}`: {error}"),
            AdvertiseError::Limit(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for AdvertiseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AdvertiseError::Names(error) => Some(error),
            AdvertiseError::Refused { error, .. } => Some(error),
            AdvertiseError::Limit(error) => Some(error),
        }
    }
}

impl From<NameError> for AdvertiseError {
    fn from(error: NameError) -> Self {
        AdvertiseError::Names(error)
    }
}

impl From<LimitError> for AdvertiseError {
    fn from(error: LimitError) -> Self {
        AdvertiseError::Limit(error)
    }
}

/// Lowers every tool for `target`: the request's `tools`, the name map for the calls that
/// come back, and every loss. The canonical schemas are only read.
///
/// ```
/// use serde_json::json;
/// use tool_core::providers::{Target, ToolSpec, advertise};
///
/// let schema = json!({
///     "type": "object",
///     "properties": { "q": { "type": "string", "maxLength": 200 }, "limit": { "type": "integer" } },
///     "required": ["q"],
///     "additionalProperties": false
/// });
/// let advertised = advertise([ToolSpec::new("docs.search", "Search the docs.", &schema)], Target::OpenAiChatStrict)?;
///
/// let tools = advertised.to_json();
/// assert_eq!(tools[0]["function"]["name"], "docs__search");
/// assert_eq!(tools[0]["function"]["strict"], true);
/// let parameters = &tools[0]["function"]["parameters"];
/// assert_eq!(parameters["required"], json!(["q", "limit"]));
/// assert_eq!(parameters["properties"]["limit"]["type"], json!(["integer", "null"]));
///
/// let losses: Vec<String> = advertised.losses().map(|(_, loss)| loss.to_string()).collect();
/// assert_eq!(losses, ["maxLength at /q is not enforced by OpenAI strict"]);
/// # Ok::<(), tool_core::providers::AdvertiseError>(())
/// ```
pub fn advertise<'a, I>(tools: I, target: Target) -> Result<Advertised, AdvertiseError>
where
    I: IntoIterator,
    I::Item: Into<ToolSpec<'a>>,
{
    let specs: Vec<ToolSpec<'a>> = tools.into_iter().map(Into::into).collect();
    let names = NameMap::new(target.name_rule(), specs.iter().map(|spec| spec.name))?;
    let mut lowered = Vec::with_capacity(specs.len());
    for spec in &specs {
        let result = lower_schema(spec.input_schema, target.dialect()).map_err(|error| {
            AdvertiseError::Refused {
                tool: spec.name.to_owned(),
                error,
            }
        })?;
        let provider_name = names.encode(spec.name).unwrap_or(spec.name).to_owned();
        if target.dialect() == super::dialect::Dialect::OpenAiStrict {
            limits::check_openai(spec.name, &Counts::of(&result.schema))?;
        }
        let definition = target.definition(&provider_name, spec.description, result.schema.clone());
        lowered.push(Lowered {
            name: spec.name.to_owned(),
            provider_name,
            schema: result.schema,
            definition,
            losses: result.losses,
        });
    }
    match target {
        Target::AnthropicStrict => limits::check_anthropic(lowered.iter().map(|t| &t.schema))?,
        Target::GeminiJsonSchema | Target::GeminiOpenApi
            if lowered.len() > limits::GEMINI_DECLARATIONS =>
        {
            return Err(LimitError::GeminiDeclarations {
                count: lowered.len(),
                limit: limits::GEMINI_DECLARATIONS,
            }
            .into());
        }
        _ => {}
    }
    Ok(Advertised {
        target,
        tools: lowered,
        names,
    })
}
