//! Tools defined by a JSON Schema document instead of a Rust type, checked with `jsonschema`.

use std::future::Future;
use std::marker::PhantomData;

use jsonschema::{Draft, Validator};
use serde_json::Value;

use crate::ArgumentErrors;
use crate::context::Context;
use crate::contract::arguments::Arguments;
use crate::contract::standard::{
    self, FetchNothing, MAX_REASON, Origin, build_error, referencing_error, short,
};
use crate::registry::kind::{Kind, OutputError, run_handler, to_text};
use crate::registry::{Handler, RegistryError, ToolError};

/// A tool known only by its JSON Schema: discovered from an MCP server, loaded from
/// configuration, written by another team. Register it with
/// [`ToolDef::dynamic`](crate::ToolDef::dynamic); its handler receives the checked arguments
/// as a `serde_json::Value`.
///
/// The schema's dialect is read from `$schema`: Draft 2020-12 when absent; Drafts 4, 6, 7 and
/// 2019-09 when declared; a custom meta-schema when it was added with
/// [`resource`](Self::resource); any other dialect is refused at registration. `format` is
/// asserted by default (an `"email"` that is not an email is a violation, as the derived tools
/// do); see [`assert_formats`](Self::assert_formats).
///
/// The schemas are treated as input from a party the application may not trust (an MCP
/// server, another team's configuration):
///
/// - **Nothing is fetched.** `$ref`s reach only the schema itself and the documents added with
///   [`resource`](Self::resource). A `$ref` to anything else (`file:`, `http:`, `https:`, any
///   other scheme, or a relative reference resolved against an `$id`) makes registration fail
///   with a reason saying it is not fetched. This holds whatever cargo features of the
///   `jsonschema` crate are enabled in the application's build (its `resolve-file` and
///   `resolve-http` would otherwise read files and make requests).
/// - **Patterns run in linear time.** `pattern` and `patternProperties` (also under
///   `propertyNames`, and with `additionalProperties` or `unevaluatedProperties`) are compiled
///   with the [`regex`](https://docs.rs/regex) crate, whose matching time grows linearly with
///   the string, in the ECMA-262 dialect JSON Schema specifies. A pattern that needs a
///   backtracking engine, that is lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`) or a numbered
///   backreference (`\1`), makes registration fail with a reason naming the pattern and where
///   it is, unless the application opts in with [`allow_backtracking`](Self::allow_backtracking).
///   Output schemas follow the same rules.
/// - **Reasons are short.** The reason a schema is refused is cut to 400 bytes, and a pattern
///   or URI quoted in it to 80.
///
/// ```
/// use serde_json::{Value, json};
/// use tool_core::{Context, Registry, ToolDef, registry::{DynamicTool, ToolError}};
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
    pub(crate) backtrack_limit: Option<usize>,
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
            backtrack_limit: None,
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

    /// A document the schemas may `$ref` by `uri` (for example shared definitions). These are
    /// the only documents a `$ref` reaches besides the schema itself: nothing is fetched.
    pub fn resource(mut self, uri: impl Into<String>, document: Value) -> Self {
        self.resources.push((uri.into(), document));
        self
    }

    /// Lets this tool's schemas use patterns that need a backtracking engine (lookaround,
    /// backreferences), for schemas the application has read and vouches for. All patterns
    /// are then compiled with [`fancy-regex`](https://docs.rs/fancy-regex), and one match
    /// gives up after `limit` backtracking steps (the engine's own default is 1,000,000); an
    /// argument whose match gives up is refused as `invalid_arguments`.
    ///
    /// The limit counts backtracking steps only, not the time the engine spends in the parts
    /// of a pattern it runs without backtracking: `(?=.*x)y` scans the rest of the string from
    /// every position whatever the limit, so its time grows with the square of the string's
    /// length. Runtime timeouts and deadlines do not interrupt validation, so keep the input
    /// cap ([`RuntimeBuilder::max_input_bytes`](crate::runtime::RuntimeBuilder::max_input_bytes)) small
    /// for such tools.
    ///
    /// ```
    /// use serde_json::{Value, json};
    /// use tool_core::{Context, Registry, ToolDef, registry::{DynamicTool, ToolError}};
    ///
    /// async fn run(args: Value, _cx: &Context) -> Result<Value, ToolError> {
    ///     Ok(args)
    /// }
    ///
    /// let schema = json!({
    ///     "type": "object",
    ///     "properties": { "password": { "type": "string", "pattern": "^(?=.*[0-9]).{8,64}$" } }
    /// });
    /// let mut registry = Registry::new();
    /// let refused = DynamicTool::new("set_password", "", schema.clone());
    /// let error = registry.register(ToolDef::dynamic(refused, run)).unwrap_err();
    /// assert!(error.to_string().contains("needs a backtracking regex engine"));
    ///
    /// let vouched_for = DynamicTool::new("set_password", "", schema).allow_backtracking(10_000);
    /// registry.register(ToolDef::dynamic(vouched_for, run)).unwrap();
    /// ```
    pub fn allow_backtracking(mut self, limit: usize) -> Self {
        self.backtrack_limit = Some(limit);
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
        reason: short(reason, MAX_REASON).into_owned(),
    };
    let mut options = standard::options(tool.backtrack_limit);
    // A custom meta-schema's vocabularies decide whether `format` asserts.
    if let Some(draft) = draft {
        options = options
            .with_draft(draft)
            .should_validate_formats(tool.assert_formats);
    }
    if tool.resources.is_empty() {
        return options
            .build(schema)
            .map_err(|e| invalid(build_error(&e, Origin::Dynamic)));
    }
    let mut builder = jsonschema::Registry::new().retriever(FetchNothing);
    for (uri, document) in &tool.resources {
        builder = builder
            .add(uri, document.clone())
            .map_err(|e| invalid(referencing_error(&e, Origin::Dynamic)))?;
    }
    let registry = builder
        .prepare()
        .map_err(|e| invalid(referencing_error(&e, Origin::Dynamic)))?;
    options
        .with_registry(&registry)
        .build(schema)
        .map_err(|e| invalid(build_error(&e, Origin::Dynamic)))
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
            Arguments::Text(raw) => crate::contract::validate::parse_str::<Value>(raw)?,
            Arguments::Json(value) => crate::contract::validate::parse_value::<Value>(value)?,
        };
        standard::check(&self.input, &value)?;
        Ok(value)
    }

    fn execute<'a>(
        &'a self,
        args: Value,
        cx: &'a Context,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a {
        run_handler(&self.handler, args, cx)
    }

    fn output(&self, out: Value, limit: usize) -> Result<String, OutputError> {
        let text = to_text(&out, limit)?;
        if let Some(validator) = &self.output {
            standard::check(validator, &out).map_err(OutputError::Invalid)?;
        }
        Ok(text)
    }
}
