//! The [`Tool`] trait: one Rust type as a tool's whole contract.

use serde_json::Value;

use crate::{Argument, ArgumentErrors};

/// A tool's argument type, and through it the tool's contract: its name, its description,
/// the JSON Schema advertised to the model, and the checked parser that turns the model's
/// argument text into this type or into every violation of that schema.
///
/// Derive it with `#[derive(Tool)]`; the handler then takes `Self`, so the advertised
/// schema, the validator that runs and the handler's input cannot drift apart.
///
/// ```
/// use tool_core::{Argument, Tool};
///
/// /// Current weather for a city.
/// #[derive(Tool, Debug)]
/// struct GetWeather {
///     /// City name, e.g. "Paris".
///     #[tool(length(min = 1))]
///     city: String,
///     units: Units,
/// }
///
/// #[derive(Argument, Debug, PartialEq)]
/// #[serde(rename_all = "lowercase")]
/// enum Units {
///     Celsius,
///     Fahrenheit,
/// }
///
/// assert_eq!(GetWeather::NAME, "get_weather");
/// let args = GetWeather::parse_arguments(r#"{"city": "Paris", "units": "celsius"}"#).unwrap();
/// assert_eq!(args.units, Units::Celsius);
///
/// let errors = GetWeather::parse_arguments(r#"{"city": "", "units": "kelvin"}"#).unwrap_err();
/// assert_eq!(
///     errors.to_string(),
///     "- /city: must be at least 1 character long; got 0\n\
///      - /units: must be one of \"celsius\", \"fahrenheit\"; got \"kelvin\""
/// );
/// ```
pub trait Tool: Argument {
    /// The tool's name, matching `^[a-zA-Z0-9_-]{1,64}$`: `#[tool(name = "...")]`, else the
    /// struct's name in snake_case.
    const NAME: &'static str;

    /// The schema the derive shows in rustdoc, when it is exactly the advertised one less
    /// `$schema` (no type shown by name only).
    #[doc(hidden)]
    const DOC_SCHEMA: Option<&'static str> = None;

    /// What the tool does, for the model: `#[tool(description = "...")]`, else the struct's
    /// doc comment.
    fn description() -> &'static str;

    /// The JSON Schema (Draft 2020-12) of the arguments, built once: an object with
    /// `additionalProperties: false` at every level, the fields that must be present in
    /// `required`, every numeric range of the Rust types and every declared constraint.
    fn input_schema() -> &'static Value;

    /// Mistakes in the contract found when its schema was built: a field whose `default` breaks
    /// the field's own constraints (`#[serde(default)]` on a `#[tool(range(min = 1))] u32`
    /// would hand the handler `0`). The registry refuses a tool with any, and while there is
    /// one, [`parse_arguments`](Self::parse_arguments) and [`parse_value`](Self::parse_value)
    /// refuse every call. Empty for a sound contract.
    fn contract_errors() -> &'static [String] {
        &[]
    }

    /// Parses the model's argument text: strict JSON (no duplicate keys, nothing after the
    /// value, bounded nesting), checked against [`input_schema`](Self::input_schema).
    ///
    /// Accepts exactly the JSON values a Draft 2020-12 validator accepts against that schema.
    fn parse_arguments(raw: &str) -> Result<Self, ArgumentErrors> {
        if let Some(problem) = Self::contract_errors().first() {
            return Err(crate::contract::validate::unsound_contract(problem));
        }
        crate::contract::validate::parse_str(raw)
    }

    /// The same check for arguments that arrive already parsed (Anthropic, Gemini and MCP
    /// send an object, not a string).
    fn parse_value(value: &Value) -> Result<Self, ArgumentErrors> {
        if let Some(problem) = Self::contract_errors().first() {
            return Err(crate::contract::validate::unsound_contract(problem));
        }
        crate::contract::validate::parse_value(value)
    }

    /// The entity type of [`resource`](Self::resource): the `Type` of the field marked
    /// `#[tool(resource = "Type")]`.
    const RESOURCE: Option<&'static str> = None;

    /// Whether the resource field is an `Option`, so a call may name no resource.
    #[doc(hidden)]
    const RESOURCE_OPTIONAL: bool = false;

    /// What this call acts on, for authorization: the field marked
    /// `#[tool(resource = "Type")]`, as that type and the field's value (`None` without such
    /// a field, or when the field is an absent `Option`). Policies that see no resource take
    /// the tool itself as what the call acts on.
    fn resource(&self) -> Option<crate::contract::ResourceRef> {
        None
    }
}

/// A type a tool's handler returns: the tool's output, advertised with the schema of its
/// [`Argument`] implementation, checked against it before it is sent, and sent as the JSON its
/// `serde::Serialize` writes. Every type that implements both is one.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's output",
    label = "the handler returns this type as the tool's output",
    note = "a tool's output is advertised with its own schema, checked against it and sent as \
            JSON: derive both `tool_core::Argument` and `serde::Serialize` for it \
            (`#[derive(Argument, Serialize)]`), or return a type that has both \
            (`String`, `serde_json::Value`, ...)"
)]
pub trait ToolOutput: Argument + serde::Serialize {}

impl<T: Argument + serde::Serialize> ToolOutput for T {}

/// The contract of a tool whose type may advertise any schema (a newtype over a
/// `#[tool(schemars)]` field): arguments that are not one JSON object make it unsound.
#[doc(hidden)]
pub fn object_arguments(
    mut contract: crate::contract::schema::Contract,
) -> crate::contract::schema::Contract {
    let kind = contract.schema.get("type");
    if kind != Some(&Value::from("object")) {
        contract.problems.push(format!(
            "a tool's arguments are one JSON object, but its type advertises {}",
            kind.map_or_else(|| "no `type`".to_owned(), |kind| format!("`type` {kind}"))
        ));
    }
    contract
}
