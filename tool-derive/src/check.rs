//! Rules across attributes and fields, checked before anything is expanded.

use std::collections::HashMap;

use syn::DeriveInput;

use crate::ast::{Body, Input};
use crate::attr::{Errors, Range};
use crate::expand::Mode;

pub(crate) fn check(derive: &DeriveInput, input: &Input<'_>, mode: Mode, errors: &mut Errors) {
    if !derive.generics.params.is_empty() {
        errors.spanned(
            &derive.generics,
            "generic parameters are not supported: a tool's schema must be one fixed document; \
             use a concrete type",
        );
    }
    match mode {
        Mode::Tool => check_tool(derive, input, errors),
        Mode::Argument => {
            if let Some(name) = &input.attrs.name {
                errors.at(name.span, "`name` applies to #[derive(Tool)] only");
            }
        }
    }
    match &input.body {
        Body::Struct(fields) => {
            let mut seen: HashMap<&str, &syn::Ident> = HashMap::new();
            for field in fields {
                if field.attrs.skip {
                    continue;
                }
                if let Some(first) = seen.insert(&field.wire, field.member) {
                    errors.spanned(
                        field.member,
                        format!(
                            "field name {:?} is already used by `{first}`: each field needs its \
                             own name on the wire",
                            field.wire
                        ),
                    );
                }
                check_length(
                    field.attrs.length.min,
                    field.attrs.length.max,
                    field,
                    errors,
                );
                check_range(&field.attrs.range, errors);
                if let Some(pattern) = &field.attrs.pattern
                    && let Err(message) = check_pattern(&pattern.value)
                {
                    errors.at(pattern.span, message);
                }
            }
        }
        Body::Enum(variants) => {
            if variants.iter().all(|variant| variant.skip) {
                errors.spanned(
                    input.ident,
                    "an enum needs at least one variant that can be deserialized",
                );
            }
            let mut seen: HashMap<&str, &syn::Ident> = HashMap::new();
            for variant in variants.iter().filter(|variant| !variant.skip) {
                if let Some(first) = seen.insert(&variant.wire, variant.ident) {
                    errors.spanned(
                        variant.ident,
                        format!(
                            "variant name {:?} is already used by `{first}`",
                            variant.wire
                        ),
                    );
                }
            }
        }
        Body::Unsupported => {}
    }
}

fn check_tool(derive: &DeriveInput, input: &Input<'_>, errors: &mut Errors) {
    if let Body::Enum(_) = input.body {
        errors.spanned(
            &derive.ident,
            "#[derive(Tool)] needs a struct with named fields (the arguments object); derive \
             `Argument` for enums used as field types",
        );
    }
    match &input.attrs.name {
        Some(name) => {
            if let Err(message) = check_tool_name(&name.value) {
                errors.at(name.span, message);
            }
        }
        None => {
            let name = crate::expand::default_tool_name(input.ident);
            if let Err(message) = check_tool_name(&name) {
                errors.spanned(
                    input.ident,
                    format!("{message}; set one with #[tool(name = \"...\")]"),
                );
            }
        }
    }
    if input.doc.as_deref().is_none_or(|doc| doc.trim().is_empty()) {
        errors.spanned(
            &derive.ident,
            "missing tool description: add a doc comment to the struct or \
             #[tool(description = \"...\")]; the model reads it to decide when to call the tool",
        );
    }
}

/// Tool names that every provider accepts: `^[a-zA-Z0-9_-]{1,64}$`.
pub(crate) fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 64 {
        return Err(format!(
            "tool name {name:?} must be 1 to 64 characters long, not {}",
            name.len()
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(format!(
            "tool name {name:?} contains {bad:?}; names must match ^[a-zA-Z0-9_-]{{1,64}}$"
        ));
    }
    Ok(())
}

fn check_length(
    min: Option<u64>,
    max: Option<u64>,
    field: &crate::ast::Field<'_>,
    errors: &mut Errors,
) {
    if let (Some(min), Some(max), Some(span)) = (min, max, field.attrs.length.span)
        && min > max
    {
        errors.at(
            span,
            format!("length min ({min}) is greater than max ({max})"),
        );
    }
}

fn check_range(range: &Range, errors: &mut Errors) {
    let Some(span) = range.span else { return };
    let lower = [
        (range.min, false, "min"),
        (range.exclusive_min, true, "exclusive_min"),
    ];
    let upper = [
        (range.max, false, "max"),
        (range.exclusive_max, true, "exclusive_max"),
    ];
    for (low, low_exclusive, low_name) in lower {
        for (high, high_exclusive, high_name) in upper {
            let (Some(low), Some(high)) = (low, high) else {
                continue;
            };
            // With an exclusive end, the bounds may not meet either.
            let empty = if low_exclusive || high_exclusive {
                high.less(low, true)
            } else {
                high.less(low, false)
            };
            if empty {
                errors.at(
                    span,
                    format!(
                        "range is empty: {low_name} ({low}) is greater than {}{high_name} ({high})",
                        if low_exclusive || high_exclusive {
                            "or equal to "
                        } else {
                            ""
                        }
                    ),
                );
            }
        }
    }
}

/// A `pattern` must be ECMA-262 (as JSON Schema says) and must run on a linear-time engine.
pub(crate) fn check_pattern(pattern: &str) -> Result<(), String> {
    let Ok(translated) = jsonschema_regex::to_rust_regex(pattern) else {
        // The translator gives no reason; the Rust parser usually names it.
        let detail =
            syntax_error(pattern).unwrap_or_else(|| "not a valid ECMA-262 pattern".to_owned());
        return Err(format!("invalid regex `{pattern}`: {detail}"));
    };
    match syntax_error(&translated) {
        Some(detail) => Err(format!("invalid regex `{pattern}`: {detail}")),
        None => Ok(()),
    }
}

fn syntax_error(pattern: &str) -> Option<String> {
    let error = regex_syntax::Parser::new().parse(pattern).err()?;
    Some(match &error {
        regex_syntax::Error::Parse(error) => {
            use regex_syntax::ast::ErrorKind;
            let kind = error.kind();
            if matches!(
                kind,
                ErrorKind::UnsupportedLookAround | ErrorKind::UnsupportedBackreference
            ) {
                format!("{kind}; patterns run on a linear-time engine (the `regex` crate)")
            } else {
                kind.to_string()
            }
        }
        regex_syntax::Error::Translate(error) => error.kind().to_string(),
        _ => error.to_string(),
    })
}
