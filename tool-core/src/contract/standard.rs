//! A standard Draft 2020-12 validator (the `jsonschema` crate) held to the rules this crate
//! keeps for schemas it did not write itself: nothing is fetched whatever a `$ref` says,
//! patterns run in linear time unless the application allows backtracking, reasons and
//! messages have a bounded length, and every error becomes a [`Violation`]. Dynamic tools
//! (`registry/dynamic.rs`) and types checked with their schemars schema (`schemars.rs`) use it.

use std::borrow::Cow;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{
    PatternOptions, ReferencingError, Retrieve, Uri, ValidationError, ValidationOptions, Validator,
};
use serde_json::Value;

use crate::contract::error::{ArgumentErrors, Keyword};
use crate::contract::validate::Cx;

/// The longest reason a refused schema is reported with, in bytes: schemas can be large and
/// come from anyone.
pub(crate) const MAX_REASON: usize = 400;
/// The longest quote of a pattern or URI from a schema in a reason, in bytes.
const MAX_QUOTE: usize = 80;
/// The longest message of one violation, in bytes: a length a model can read.
const MAX_MESSAGE: usize = 240;

/// Where a schema came from, which decides what a refusal tells the application to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A [`DynamicTool`](crate::registry::DynamicTool)'s schema.
    Dynamic,
    /// The schema schemars generates for a type.
    #[cfg(feature = "schemars")]
    Schemars,
}

/// The retriever of every schema this crate did not write: whatever `jsonschema` features
/// the build has, a `$ref` reaches only what the application handed in.
pub(crate) struct FetchNothing;

impl Retrieve for FetchNothing {
    fn retrieve(
        &self,
        _uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err("not fetched".into())
    }
}

/// Options that fetch nothing and match patterns in linear time, or with a backtracking
/// engine held to `backtrack_limit` steps when the application allows one.
pub(crate) fn options(backtrack_limit: Option<usize>) -> ValidationOptions<'static> {
    let options = jsonschema::options().with_retriever(FetchNothing);
    match backtrack_limit {
        None => options.with_pattern_options(PatternOptions::regex()),
        Some(limit) => {
            options.with_pattern_options(PatternOptions::fancy_regex().backtrack_limit(limit))
        }
    }
}

/// Why `jsonschema` refused a schema, said in terms of what the application can do about it.
pub(crate) fn build_error(error: &ValidationError<'_>, origin: Origin) -> String {
    match error.kind() {
        ValidationErrorKind::Referencing(error) => referencing_error(error, origin),
        ValidationErrorKind::Format { format } if format == "regex" => {
            match error.instance().as_ref() {
                Value::String(pattern) if needs_backtracking(pattern) => format!(
                    "pattern {} at {} needs a backtracking regex engine (lookaround or a \
                     backreference), which can take time beyond linear in the string's length; {}",
                    quote(pattern),
                    error.schema_path().as_str(),
                    match origin {
                        Origin::Dynamic =>
                            "refused unless the application allows backtracking \
                                            for this tool, with a limit",
                        #[cfg(feature = "schemars")]
                        Origin::Schemars => "refused",
                    }
                ),
                _ => error.to_string(),
            }
        }
        _ => error.to_string(),
    }
}

pub(crate) fn referencing_error(error: &ReferencingError, origin: Origin) -> String {
    match error {
        ReferencingError::Unretrievable { uri, .. } => format!(
            "$ref {} is not fetched: {}",
            quote(uri),
            match origin {
                Origin::Dynamic =>
                    "a dynamic tool's schemas reach only themselves and the \
                                    documents added with `DynamicTool::resource`",
                #[cfg(feature = "schemars")]
                Origin::Schemars => "a type's schema must hold every schema it refers to",
            }
        ),
        other => other.to_string(),
    }
}

/// Whether `pattern` is refused by the linear-time engine for lookaround or a backreference,
/// rather than for being malformed.
fn needs_backtracking(pattern: &str) -> bool {
    use regex_syntax::ast::ErrorKind;
    let Ok(translated) = jsonschema_regex::to_rust_regex(pattern) else {
        return false;
    };
    match regex_syntax::ast::parse::Parser::new().parse(&translated) {
        Ok(_) => false,
        Err(error) => matches!(
            error.kind(),
            ErrorKind::UnsupportedLookAround | ErrorKind::UnsupportedBackreference
        ),
    }
}

/// `text` in double quotes, cut to [`MAX_QUOTE`] bytes.
fn quote(text: &str) -> String {
    format!("{:?}", short(text.to_owned(), MAX_QUOTE))
}

/// Every error `validator` finds in `instance`, as violations.
pub(crate) fn check(validator: &Validator, instance: &Value) -> Result<(), ArgumentErrors> {
    // The common case, without building an error iterator.
    if validator.is_valid(instance) {
        return Ok(());
    }
    let mut cx = Cx::default();
    report(validator, instance, "", &mut cx);
    match cx.into_errors() {
        Some(errors) => Err(errors),
        None => Ok(()),
    }
}

/// Records in `cx` every error `validator` finds in `instance`, which sits at the JSON
/// Pointer `base` of the arguments.
pub(crate) fn report(validator: &Validator, instance: &Value, base: &str, cx: &mut Cx) {
    for error in validator.iter_errors(instance) {
        let location = format!("{base}{}", error.instance_path().as_str());
        let keyword = Keyword::from_schema_keyword(error.kind().keyword());
        match error.kind() {
            ValidationErrorKind::Required { property } => {
                let name = property
                    .as_str()
                    .map_or_else(|| property.to_string(), str::to_owned);
                cx.report_found(location, Some(&name), keyword, || {
                    Cow::Borrowed("missing required field")
                });
            }
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                for name in unexpected {
                    cx.report_found(location.clone(), Some(name), keyword, || {
                        Cow::Borrowed("unknown field")
                    });
                }
            }
            // Only with a backtracking engine: the string may or may not match.
            ValidationErrorKind::BacktrackLimitExceeded { .. } => {
                cx.report_found(location, None, keyword, || {
                    Cow::Borrowed("gave up matching the pattern at its backtracking limit")
                });
            }
            _ => cx.report_found(location, None, keyword, || {
                short(error.to_string(), MAX_MESSAGE)
            }),
        }
    }
}

/// `message` cut to at most `max` bytes on a character boundary, marked when cut.
pub(crate) fn short(message: String, max: usize) -> Cow<'static, str> {
    if message.len() <= max {
        return Cow::Owned(message);
    }
    let mut end = max;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}…", &message[..end]))
}
