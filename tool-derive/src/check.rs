//! Rules across attributes and fields, checked on the AST before anything is expanded.

use std::collections::HashMap;

use crate::ast::{Body, Field, Input, Mode, Shape, Tagging};
use crate::attr::Range;
use crate::engine;
use crate::errors::Errors;

pub(crate) fn check(input: &Input<'_>, errors: &Errors) {
    check_generics(input, errors);
    check_resource(input, errors);
    match input.mode {
        Mode::Tool => check_tool(input, errors),
        Mode::Argument => {
            if let Some(name) = &input.attrs.name {
                errors.at(name.span, "`name` applies to #[derive(Tool)] only");
            }
        }
    }
    if matches!(input.body, Body::Schemars) {
        return;
    }
    check_tagging(input, errors);
    if let Some(span) = input.attrs.transparent
        && !matches!(input.body, Body::Newtype(_) | Body::Unsupported)
    {
        errors.at(span, "`transparent` applies to structs with one field");
    }
    match &input.body {
        Body::Struct(fields) => check_fields(fields, None, errors),
        Body::Newtype(newtype) => {
            if newtype.attrs.skip || !matches!(newtype.attrs.default, crate::attr::Default::None) {
                errors.spanned(
                    input.ident,
                    "`skip` and `default` do not apply to the field of a newtype: its value is \
                     the whole value",
                );
            }
            check_constraints(&newtype.attrs, errors);
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
                match &variant.shape {
                    Shape::Struct(fields) => {
                        let internal_tag = match input.tagging() {
                            Tagging::Internal(tag) => Some(tag),
                            _ => None,
                        };
                        check_fields(fields, internal_tag, errors);
                    }
                    Shape::Newtype(field) => {
                        if let Some(attr) = field.attrs.iter().find(|attr| {
                            attr.path().is_ident("tool") || attr.path().is_ident("serde")
                        }) {
                            errors.spanned(
                                attr,
                                "attributes on the field of a newtype variant are not supported: \
                                 put the constraints on a newtype struct \
                                 (`struct Email(#[tool(pattern = \"...\")] String);`) and use it \
                                 as the variant's type",
                            );
                        }
                    }
                    Shape::Tuple(fields) => {
                        if let Tagging::Internal(_) = input.tagging() {
                            errors.spanned(
                                variant.ident,
                                format!(
                                    "variant `{}` has several unnamed fields, which an internally \
                                     tagged enum cannot hold (serde refuses it too): its content \
                                     is an array, not an object to put the tag in; name the \
                                     fields, or add `content = \"...\"` to tag it adjacently",
                                    variant.ident
                                ),
                            );
                        }
                        for attr in fields.iter().flat_map(|field| {
                            field.attrs.iter().filter(|attr| {
                                attr.path().is_ident("tool") || attr.path().is_ident("serde")
                            })
                        }) {
                            errors.spanned(
                                attr,
                                "attributes on the fields of a tuple variant are not supported: \
                                 put the constraints on a newtype struct \
                                 (`struct Email(#[tool(pattern = \"...\")] String);`) and use it \
                                 as the field's type",
                            );
                        }
                    }
                    Shape::Unit => {}
                }
            }
        }
        Body::Schemars | Body::Unsupported => {}
    }
}

/// The fields of a struct or struct variant (`tag`: the internal tag beside them).
fn check_fields(fields: &[Field<'_>], tag: Option<&str>, errors: &Errors) {
    let mut seen: HashMap<&str, &syn::Ident> = HashMap::new();
    let mut flattened = false;
    for field in fields {
        if field.attrs.skip {
            continue;
        }
        if let Some(span) = field.attrs.flatten {
            if flattened {
                errors.at(
                    span,
                    "one `flatten` field per struct: merge the shared fields into one struct",
                );
            }
            flattened = true;
            let attrs = &field.attrs;
            if !matches!(attrs.default, crate::attr::Default::None)
                || attrs.length.span.is_some()
                || attrs.range.span.is_some()
                || attrs.pattern.is_some()
                || attrs.format.is_some()
                || attrs.inner.is_some()
                || attrs.keys.is_some()
                || !attrs.examples.is_empty()
                || attrs.rename.is_some()
                || attrs.schemars.is_some()
                || attrs.with.is_some()
            {
                errors.at(
                    span,
                    "a `flatten` field takes no other attribute: its fields carry their own",
                );
            }
            continue;
        }
        if tag == Some(field.wire.as_str()) {
            errors.spanned(
                field.member,
                format!(
                    "field name {:?} is the enum's tag: the tag and the fields share one object",
                    field.wire
                ),
            );
        }
        if let Some(first) = seen.insert(&field.wire, field.member) {
            errors.spanned(
                field.member,
                format!(
                    "field name {:?} is already used by `{first}`: each field needs its own name \
                     on the wire",
                    field.wire
                ),
            );
        }
        check_constraints(&field.attrs, errors);
    }
}

/// The formats `format = "..."` takes: those the `jsonschema` crate asserts.
pub(crate) const FORMATS: &[&str] = &[
    "date",
    "date-time",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uuid",
];

/// The constraint keywords of one field, and those of its items.
fn check_constraints(attrs: &crate::attr::Field, errors: &Errors) {
    if let Some(marker) = &attrs.with {
        let constrained = attrs.length.span.is_some()
            || attrs.range.span.is_some()
            || attrs.pattern.is_some()
            || attrs.format.is_some()
            || attrs.inner.is_some()
            || attrs.keys.is_some();
        if attrs.schemars.is_some() {
            errors.spanned(
                marker,
                "a field takes `with` or `schemars`, not both: each gives the whole schema",
            );
            return;
        }
        if constrained {
            errors.spanned(
                marker,
                "a #[tool(with = ...)] field takes no constraints: its schema comes from the \
                 marker's `ArgumentWith::schema`; build them there with `ArgumentSchema`",
            );
            return;
        }
    }
    if let Some(span) = attrs.schemars
        && (attrs.length.span.is_some()
            || attrs.range.span.is_some()
            || attrs.pattern.is_some()
            || attrs.format.is_some()
            || attrs.inner.is_some()
            || attrs.keys.is_some())
    {
        errors.at(
            span,
            "a #[tool(schemars)] field takes no constraints: its schema comes from its type's \
             `schemars::JsonSchema`; write them there as #[schemars(...)], or drop `schemars`",
        );
        return;
    }
    check_length(&attrs.length, errors);
    check_range(&attrs.range, errors);
    if let Some(pattern) = &attrs.pattern
        && let Err(message) = check_pattern(&pattern.value)
    {
        errors.at(pattern.span, message);
    }
    if let Some(format) = &attrs.format
        && !FORMATS.contains(&format.value.as_str())
    {
        errors.at(
            format.span,
            format!(
                "unknown format {:?}; expected one of {}",
                format.value,
                FORMATS
                    .iter()
                    .map(|name| format!("{name:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    if let Some(inner) = &attrs.inner {
        check_constraints(inner, errors);
    }
    if let Some(keys) = &attrs.keys {
        check_constraints(&keys.value, errors);
    }
}

/// Generic structs derive `Argument` (each type parameter must be one); a tool, an enum or a
/// newtype is one fixed type.
fn check_generics(input: &Input<'_>, errors: &Errors) {
    let generics = input.generics;
    if generics.params.is_empty() {
        return;
    }
    if input.mode == Mode::Tool {
        errors.spanned(
            generics,
            "generic parameters are not supported on a tool: its schema must be one fixed \
             document; use a concrete type (generic structs may derive `Argument` and be used as \
             `Page<Item>` in a tool's fields)",
        );
        return;
    }
    if generics.lifetimes().next().is_some() || generics.const_params().next().is_some() {
        errors.spanned(
            generics,
            "only type parameters are supported: an argument owns its data",
        );
    }
    let Body::Struct(fields) = &input.body else {
        errors.spanned(
            generics,
            "generic parameters are supported on structs with named fields only",
        );
        return;
    };
    let params: Vec<String> = generics
        .type_params()
        .map(|param| param.ident.to_string())
        .collect();
    for field in fields {
        let attrs = &field.attrs;
        let constrained = attrs.length.span.is_some()
            || attrs.range.span.is_some()
            || attrs.pattern.is_some()
            || attrs.inner.is_some()
            || attrs.format.is_some()
            || attrs.keys.is_some()
            || attrs.schemars.is_some()
            || attrs.with.is_some();
        let ty = field.ty;
        let mentions = quote::quote!(#ty)
            .into_iter()
            .any(|token| mentions_param(&token, &params));
        if constrained && mentions {
            errors.spanned(
                field.ty,
                "constraints, `schemars` and `with` on a field whose type involves a type parameter \
                 are not supported: put them on the concrete type (a newtype struct with its \
                 own constraints)",
            );
        }
    }
}

fn mentions_param(token: &proc_macro2::TokenTree, params: &[String]) -> bool {
    match token {
        proc_macro2::TokenTree::Ident(ident) => params.iter().any(|param| ident == param),
        proc_macro2::TokenTree::Group(group) => group
            .stream()
            .into_iter()
            .any(|token| mentions_param(&token, params)),
        _ => false,
    }
}

/// `tag`, `content` and `untagged` belong to enums and go together only as serde allows.
fn check_tagging(input: &Input<'_>, errors: &Errors) {
    let attrs = &input.attrs;
    let is_enum = matches!(input.body, Body::Enum(_));
    if !is_enum {
        if let Some(tag) = &attrs.tag {
            errors.at(tag.span, "`tag` applies to enums");
        }
        if let Some(content) = &attrs.content {
            errors.at(content.span, "`content` applies to enums");
        }
        if let Some(span) = attrs.untagged {
            errors.at(span, "`untagged` applies to enums");
        }
        return;
    }
    if let (Some(content), None) = (&attrs.content, &attrs.tag) {
        errors.at(
            content.span,
            "`content` needs `tag`: an adjacently tagged enum names both keys",
        );
    }
    if let (Some(span), Some(_)) = (attrs.untagged, &attrs.tag) {
        errors.at(
            span,
            "an enum is either `untagged` or tagged with `tag`, not both",
        );
    }
    if let (Some(tag), Some(content)) = (&attrs.tag, &attrs.content)
        && tag.value == content.value
    {
        errors.at(content.span, "`tag` and `content` must be different keys");
    }
}

fn check_tool(input: &Input<'_>, errors: &Errors) {
    if let Body::Newtype(newtype) = &input.body
        && newtype.attrs.schemars.is_none()
    {
        errors.spanned(
            input.ident,
            "#[derive(Tool)] needs a struct with named fields or an internally tagged enum: a \
             tool's arguments are one JSON object; derive `Argument` for a newtype used as a \
             field type (a newtype whose field is `#[tool(schemars)]` may be a tool: its \
             arguments are that type's)",
        );
    }
    if let Body::Enum(_) = input.body
        && !matches!(input.tagging(), Tagging::Internal(_))
        && input.attrs.schemars.is_none()
    {
        errors.spanned(
            input.ident,
            "#[derive(Tool)] needs a struct with named fields or an internally tagged enum \
             (`#[serde(tag = \"...\")]`): a tool's arguments are one JSON object; derive \
             `Argument` for other enums used as field types",
        );
    }
    if let Err(message) = check_tool_name(&input.name.value) {
        match input.name.span {
            Some(span) => errors.at(span, message),
            None => errors.spanned(
                input.ident,
                format!("{message}; set one with #[tool(name = \"...\")]"),
            ),
        }
    }
    if input.doc.as_deref().is_none_or(|doc| doc.trim().is_empty()) {
        errors.spanned(
            input.ident,
            "missing tool description: add a doc comment to the struct or \
             #[tool(description = \"...\")]; the model reads it to decide when to call the tool",
        );
    }
}

/// Tool names that every provider accepts: `^[a-zA-Z0-9_-]{1,64}$`.
/// `#[tool(resource = "...")]` names the resource of a tool's call: on at most one field of a
/// `#[derive(Tool)]` struct, nowhere else.
fn check_resource(input: &Input<'_>, errors: &Errors) {
    let misplaced = |attrs: &crate::attr::Field| {
        if let Some(resource) = &attrs.resource {
            errors.at(
                resource.span,
                "`resource` applies to a field of a #[derive(Tool)] struct: the field whose \
                 value is the id of what the call acts on",
            );
        }
    };
    match &input.body {
        Body::Struct(fields) if input.mode == Mode::Tool => {
            let mut marked = fields.iter().filter(|field| field.attrs.resource.is_some());
            if let Some(first) = marked.next() {
                for again in marked.filter_map(|field| field.attrs.resource.as_ref()) {
                    errors.at(
                        again.span,
                        format!(
                            "only one field may be the resource of a call; `{}` already is",
                            first.member
                        ),
                    );
                }
            }
            for field in fields {
                if field.attrs.resource.is_some()
                    && let Some(span) = field.attrs.flatten
                {
                    errors.at(span, "a `flatten` field cannot be the resource of a call");
                }
            }
        }
        Body::Struct(fields) => fields.iter().for_each(|field| misplaced(&field.attrs)),
        Body::Newtype(newtype) => misplaced(&newtype.attrs),
        Body::Enum(variants) => {
            for variant in variants {
                if let Shape::Struct(fields) = &variant.shape {
                    fields.iter().for_each(|field| misplaced(&field.attrs));
                }
            }
        }
        Body::Schemars | Body::Unsupported => {}
    }
}

fn check_tool_name(name: &str) -> Result<(), String> {
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

fn check_length(length: &crate::attr::Length, errors: &Errors) {
    if let (Some(min), Some(max), Some(span)) = (length.min, length.max, length.span)
        && min > max
    {
        errors.at(
            span,
            format!("length min ({min}) is greater than max ({max})"),
        );
    }
}

fn check_range(range: &Range, errors: &Errors) {
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

/// A `pattern` must be ECMA-262 (as JSON Schema says), must run on a linear-time engine, and
/// must build, in the form the runtime matches it in, both within the runtime's size limit and
/// with the engine of the `jsonschema` crate, so that the advertised schema is usable.
fn check_pattern(pattern: &str) -> Result<(), String> {
    let Ok(translated) = jsonschema_regex::to_rust_regex(pattern) else {
        // The translator gives no reason; the Rust parser usually names it.
        let detail =
            syntax_error(pattern).unwrap_or_else(|| "not a valid ECMA-262 pattern".to_owned());
        return Err(format!("invalid regex `{pattern}`: {detail}"));
    };
    if let Some(detail) = syntax_error(&translated) {
        return Err(format!("invalid regex `{pattern}`: {detail}"));
    }
    let engine::Form::Engine(source) = engine::form(pattern, &translated) else {
        // Matched by counting characters: nothing to build.
        return Ok(());
    };
    match engine::build_regex(&source) {
        Ok(_) => {}
        Err(regex::Error::CompiledTooBig(limit)) => return Err(too_large(pattern, limit)),
        Err(error) => return Err(format!("invalid regex `{pattern}`: {error}")),
    }
    // The `jsonschema` crate builds the same form with fancy-regex and its default limits.
    if let Err(error) = fancy_regex::Regex::new(&source) {
        return Err(format!(
            "regex `{pattern}` cannot be compiled by the `jsonschema` crate's engine \
             (fancy-regex), so the advertised schema would be unusable: {error}"
        ));
    }
    Ok(())
}

fn too_large(pattern: &str, limit: usize) -> String {
    format!(
        "regex `{pattern}` is too large: compiled, it exceeds the size limit of {limit} bytes \
         ({} MiB) of the regex engine; use smaller counts or narrower classes (a whole pattern \
         `^X{{m,n}}$` over one character class is matched by counting, with no such limit)",
        limit >> 20
    )
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::check_pattern;

    /// Random patterns over wide and narrow classes, with counts small and large, where the
    /// engine's size limit lies.
    fn patterns() -> impl Strategy<Value = String> {
        let atom = prop::sample::select(vec![
            "A",
            " ",
            "0",
            "x",
            ".",
            r"\p{L}",
            r"\S",
            r"\d",
            r"\w",
            "[a-z]",
            r"[\p{L}\p{N} '-]",
        ])
        .prop_map(str::to_owned);
        let item = atom.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 1..3)
                    .prop_map(|items| format!("({})", items.concat())),
                (inner.clone(), inner).prop_map(|(a, b)| format!("(?:{a}|{b})")),
            ]
        });
        let count = prop_oneof![
            3 => Just(String::new()),
            1 => prop::sample::select(vec!["*", "+", "?"]).prop_map(str::to_owned),
            2 => (0u32..20, 0u32..20).prop_map(|(m, extra)| format!("{{{m},{}}}", m + extra)),
            2 => (0u32..300, 0u32..1500).prop_map(|(m, extra)| format!("{{{m},{}}}", m + extra)),
            1 => (1u32..400).prop_map(|n| format!("{{{n}}}")),
        ];
        (
            any::<bool>(),
            prop::collection::vec((item, count), 1..4),
            any::<bool>(),
        )
            .prop_map(|(start, items, end)| {
                let body: String = items.into_iter().map(|(a, q)| a + &q).collect();
                format!(
                    "{}{body}{}",
                    if start { "^" } else { "" },
                    if end { "$" } else { "" }
                )
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        // What the derive accepts is advertised: `jsonschema` must be able to compile it.
        #[test]
        fn every_accepted_pattern_compiles_in_jsonschema(pattern in patterns()) {
            if check_pattern(&pattern).is_ok() {
                let schema = serde_json::json!({ "pattern": pattern });
                let compiled = jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft202012)
                    .build(&schema);
                prop_assert!(compiled.is_ok(), "{}: {:?}", pattern, compiled.err());
            }
        }
    }

    #[test]
    fn accepts_wide_patterns_that_are_counted_or_collapsed() {
        for pattern in [
            r"^\p{L}{1,300}$",
            r"^.{1,10000}$",
            r"^[\p{L}\p{N} '-]{1,255}$",
            r"^\S{1,5000}$",
            r"^\p{L}{300}$",
            r"((A 0\p{L}*){3,1000})$",
            r"^\p{L}{1,200}$",
            r"^[A-Z]{3}$",
        ] {
            assert_eq!(check_pattern(pattern), Ok(()), "{pattern}");
        }
    }

    #[test]
    fn refuses_patterns_beyond_the_engine_size_limit() {
        for pattern in [r"^\p{L}{1,300}x$", r"x[\p{L}\p{N}]{400}y"] {
            let outcome = check_pattern(pattern);
            assert!(
                outcome
                    .as_ref()
                    .is_err_and(|message| message.contains("size limit of 10485760 bytes")),
                "{pattern}: {outcome:?}"
            );
        }
    }
}
