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
                    Shape::Unit | Shape::Tuple => {}
                }
            }
        }
        Body::Schemars => text.push_str(
            "The schema comes from the type's `schemars::JsonSchema` (`Tool::input_schema`).\n",
        ),
        Body::Newtype(_) | Body::Unsupported => {}
    }
    text
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
