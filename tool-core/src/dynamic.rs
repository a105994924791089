//! Tools defined by a JSON Schema document instead of a Rust type, checked with `jsonschema`.

use std::borrow::Cow;
use std::future::Future;
use std::marker::PhantomData;

use jsonschema::{Draft, Validator};
use serde_json::Value;

use crate::ArgumentErrors;
use crate::context::Context;
use crate::error::{Keyword, Violation};
use crate::registry::{Handler, Kind, OutputError, RegistryError, ToolError};
use crate::runtime::Arguments;

/// A tool known only by its JSON Schema: discovered from an MCP server, loaded from
/// configuration, written by another team. Register it with
/// [`ToolDef::dynamic`](crate::ToolDef::dynamic); its handler receives the checked arguments
/// as a `serde_json::Value`.
///
/// The schema's dialect is read from `$schema`: Draft 2020-12 when absent; Drafts 4, 6, 7 and
/// 2019-09 when declared; a custom meta-schema when it was added with
/// [`resource`](Self::resource); any other dialect is refused at registration. `$ref`s reach
/// only the schema itself and documents added with [`resource`](Self::resource): nothing is
/// fetched. `format` is asserted by default (an `"email"` that is not an email is a
/// violation, as the derived tools do); see [`assert_formats`](Self::assert_formats).
///
/// ```
/// use serde_json::{Value, json};
/// use tool_core::{Context, DynamicTool, Registry, ToolDef, ToolError};
///
/// async fn lookup(args: Value, _cx: &Context) -> Result<Value, ToolError> {
///     Ok(json!({ "sku": args["sku"], "in_stock": 3 }))
/// }
///
/// let tool = DynamicTool::new(
///     "stock_level",
///     "How many units of a SKU are in stock.",
///     json!({
///         "type": "object",
///         "properties": { "sku": { "type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$" } },
///         "required": ["sku"],
///         "additionalProperties": false
///     }),
/// );
/// let mut registry = Registry::new();
/// registry.register(ToolDef::dynamic(tool, lookup)).unwrap();
///
/// let broken = DynamicTool::new("broken", "", json!({ "type": "strnig" }));
/// let error = registry.register(ToolDef::dynamic(broken, lookup)).unwrap_err();
/// assert!(error.to_string().starts_with("the input schema of `broken` does not compile"));
/// ```
#[derive(Debug, Clone)]
pub struct DynamicTool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Option<Value>,
    pub(crate) resources: Vec<(String, Value)>,
    pub(crate) assert_formats: bool,
}

impl DynamicTool {
    /// A tool named `name` whose arguments must satisfy `input_schema`.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        DynamicTool {
            name: name.into(),
            description: description.into(),
            input_schema,
            output_schema: None,
            resources: Vec::new(),
            assert_formats: true,
        }
    }

    /// Whether `format` is checked (`true`, the default) or only an annotation, as Draft
    /// 2020-12 specifies unless a format-assertion vocabulary is in use. A schema whose
    /// `$schema` is a custom meta-schema follows that meta-schema's vocabularies instead.
    pub fn assert_formats(mut self, assert: bool) -> Self {
        self.assert_formats = assert;
        self
    }

    /// A schema every output must satisfy.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// A document the schemas may `$ref` by `uri` (for example shared definitions).
    pub fn resource(mut self, uri: impl Into<String>, document: Value) -> Self {
        self.resources.push((uri.into(), document));
        self
    }
}

pub(crate) struct Dynamic<E, H> {
    input: Validator,
    output: Option<Validator>,
    handler: H,
    _marker: PhantomData<fn() -> E>,
}

impl<E, H> Dynamic<E, H> {
    pub(crate) fn compile(tool: &DynamicTool, handler: H) -> Result<Self, RegistryError> {
        let input = compile(tool, &tool.input_schema, "input")?;
        let output = match &tool.output_schema {
            Some(schema) => Some(compile(tool, schema, "output")?),
            None => None,
        };
        Ok(Dynamic {
            input,
            output,
            handler,
            _marker: PhantomData,
        })
    }
}

fn compile(
    tool: &DynamicTool,
    schema: &Value,
    which: &'static str,
) -> Result<Validator, RegistryError> {
    let draft = match schema.get("$schema") {
        None => Some(Draft::Draft202012),
        Some(Value::String(uri)) => match Draft::from_schema_uri(uri) {
            // A custom meta-schema the caller supplied: the validator reads its vocabularies.
            Draft::Unknown
                if tool
                    .resources
                    .iter()
                    .any(|(known, _)| known.trim_end_matches('#') == uri.trim_end_matches('#')) =>
            {
                None
            }
            Draft::Unknown => {
                return Err(RegistryError::UnsupportedDialect {
                    tool: tool.name.clone(),
                    dialect: uri.clone(),
                });
            }
            draft => Some(draft),
        },
        Some(other) => {
            return Err(RegistryError::UnsupportedDialect {
                tool: tool.name.clone(),
                dialect: other.to_string(),
            });
        }
    };
    let invalid = |reason: String| RegistryError::InvalidSchema {
        tool: tool.name.clone(),
        which,
        reason,
    };
    let mut options = jsonschema::options();
    // A custom meta-schema's vocabularies decide whether `format` asserts.
    if let Some(draft) = draft {
        options = options
            .with_draft(draft)
            .should_validate_formats(tool.assert_formats);
    }
    if tool.resources.is_empty() {
        return options.build(schema).map_err(|e| invalid(e.to_string()));
    }
    let mut builder = jsonschema::Registry::new();
    for (uri, document) in &tool.resources {
        builder = builder
            .add(uri, document.clone())
            .map_err(|e| invalid(e.to_string()))?;
    }
    let registry = builder.prepare().map_err(|e| invalid(e.to_string()))?;
    options
        .with_registry(&registry)
        .build(schema)
        .map_err(|e| invalid(e.to_string()))
}

/// Every error `validator` finds in `instance`, as violations.
pub(crate) fn check(validator: &Validator, instance: &Value) -> Result<(), ArgumentErrors> {
    // The common case, without building an error iterator.
    if validator.is_valid(instance) {
        return Ok(());
    }
    let mut violations = Vec::new();
    for error in validator.iter_errors(instance) {
        let location = error.instance_path().as_str().to_owned();
        let keyword = Keyword::from_schema_keyword(error.kind().keyword());
        match error.kind() {
            jsonschema::error::ValidationErrorKind::Required { property } => {
                let name = property
                    .as_str()
                    .map_or_else(|| property.to_string(), str::to_owned);
                violations.push(Violation::on_property(
                    location,
                    &name,
                    keyword,
                    "missing required field",
                ));
            }
            jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected }
            | jsonschema::error::ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                for name in unexpected {
                    violations.push(Violation::on_property(
                        location.clone(),
                        name,
                        keyword,
                        "unknown field",
                    ));
                }
            }
            _ => violations.push(Violation::new(location, keyword, short(error.to_string()))),
        }
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(ArgumentErrors::new(violations))
    }
}

/// Keeps a message to a length a model can read, cutting on a character boundary.
fn short(message: String) -> Cow<'static, str> {
    const MAX: usize = 240;
    if message.len() <= MAX {
        return Cow::Owned(message);
    }
    let mut end = MAX;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}…", &message[..end]))
}

impl<E, H> Kind for Dynamic<E, H>
where
    E: Into<ToolError> + 'static,
    H: for<'a> Handler<'a, Value, Value, E>,
{
    type Args = Value;
    type Out = Value;

    fn parse(&self, arguments: Arguments<'_>) -> Result<Value, ArgumentErrors> {
        // The strict parse (duplicate keys, depth) first, then the schema.
        let value = match arguments {
            Arguments::Text(raw) => crate::validate::parse_str::<Value>(raw)?,
            Arguments::Json(value) => crate::validate::parse_value::<Value>(value)?,
        };
        check(&self.input, &value)?;
        Ok(value)
    }

    fn execute<'a>(
        &'a self,
        args: Value,
        cx: &'a Context,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a {
        let future = self.handler.call(args, cx);
        async move { future.await.map_err(Into::into) }
    }

    fn output(&self, out: Value, limit: usize) -> Result<String, OutputError> {
        let text = crate::registry::to_text(&out, limit)?;
        if let Some(validator) = &self.output {
            check(validator, &out).map_err(OutputError::Invalid)?;
        }
        Ok(text)
    }
}
