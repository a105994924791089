//! The Markdown table of a tool's arguments, shown on its `Tool` impl in rustdoc.

use crate::ast::{Body, Field, Input, Shape, Tagging};
use crate::attr;

/// The tables of the arguments of the tool `input`: one, or one per variant of an enum.
pub(crate) fn parameter_table(input: &Input<'_>) -> String {
    let mut text = format!(
        "The arguments of the `{}` tool, as advertised to the model.\n\n",
        input.name.value
    );
    match &input.body {
        Body::Struct(fields) => text.push_str(&table(fields, input.attrs.default)),
        Body::Enum(variants) => {
            if let Tagging::Internal(tag) = input.tagging() {
                text.push_str(&format!("One of these objects, told apart by `{tag}`:\n\n"));
            }
            for variant in variants.iter().filter(|variant| !variant.skip) {
                text.push_str(&format!("- `{}`", variant.wire));
                if let Some(doc) = &variant.doc {
                    text.push_str(&format!(": {}", cell(doc)));
                }
                text.push_str("\n\n");
                match &variant.shape {
                    Shape::Struct(fields) => {
                        text.push_str(&table(fields, false));
                        text.push('\n');
                    }
                    Shape::Newtype(field) => {
                        let ty = &field.ty;
                        text.push_str(&format!(
                            "  the fields of `{}`\n\n",
                            quote::quote!(#ty).to_string().replace(' ', "")
                        ));
                    }
                    Shape::Tuple(fields) => {
                        let types: Vec<String> = fields
                            .iter()
                            .map(|field| {
                                let ty = &field.ty;
                                quote::quote!(#ty).to_string().replace(' ', "")
                            })
                            .collect();
                        text.push_str(&format!(
                            "  an array of exactly {} items: {}\n\n",
                            types.len(),
                            types
                                .iter()
                                .map(|ty| format!("`{ty}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                    }
                    Shape::Unit => {}
                }
            }
        }
        Body::Schemars => text.push_str(
            "The schema comes from the type's `schemars::JsonSchema` (`Tool::input_schema`).\n",
        ),
        Body::Newtype(_) | Body::Unsupported => {}
    }
    if let Some(doc) = crate::doc_schema::doc_schema(input) {
        let pretty = serde_json::to_string_pretty(&doc.schema).unwrap_or_default();
        text.push_str("\n<details><summary>JSON Schema</summary>\n\n");
        if !doc.complete {
            text.push_str(
                "As far as the derive can see: a type shown by name has its schema on its own \
                 page, and a default computed by a function is not shown. \
                 `Tool::input_schema()` gives the whole document.\n\n",
            );
        }
        text.push_str("```json\n");
        text.push_str(&pretty);
        text.push_str("\n```\n\n</details>\n");
    }
    text
}

/// The schema shown in the docs, when it is exactly the advertised one (less `$schema`).
pub(crate) fn exact_schema(input: &Input<'_>) -> Option<String> {
    crate::doc_schema::doc_schema(input)
        .filter(|doc| doc.complete)
        .map(|doc| doc.schema.to_string())
}

/// The table of `fields`.
fn table(fields: &[Field<'_>], container_default: bool) -> String {
    let mut table = String::from(
        "| field | type | required | constraints | description |\n\
         |---|---|---|---|---|\n",
    );
    for field in fields.iter().filter(|field| !field.attrs.skip) {
        let ty = field.type_text();
        let optional = container_default
            || !matches!(field.attrs.default, attr::Default::None)
            || ty.starts_with("Option<");
        let mut constraints = Vec::new();
        let length = &field.attrs.length;
        match (length.min, length.max) {
            (Some(min), Some(max)) if min == max => constraints.push(format!("length = {min}")),
            (min, max) => {
                if let Some(min) = min {
                    constraints.push(format!("length ≥ {min}"));
                }
                if let Some(max) = max {
                    constraints.push(format!("length ≤ {max}"));
                }
            }
        }
        let range = &field.attrs.range;
        for (bound, symbol) in [
            (range.min, "≥"),
            (range.exclusive_min, ">"),
            (range.max, "≤"),
            (range.exclusive_max, "<"),
        ] {
            if let Some(bound) = bound {
                constraints.push(format!("{symbol} {bound}"));
            }
        }
        if let Some(pattern) = &field.attrs.pattern {
            constraints.push(format!("pattern `{}`", pattern.value));
        }
        table.push_str(&format!(
            "| `{}` | `{}` | {} | {} | {} |\n",
            field.wire,
            ty,
            if optional { "no" } else { "yes" },
            cell(&constraints.join(", ")),
            cell(field.doc.as_deref().unwrap_or("")),
        ));
    }
    table
}

/// One line of a cell: paragraph breaks in a description become one space.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
        .replace("\n\n", " ")
        .replace('\n', " ")
}
