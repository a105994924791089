//! The Markdown table of a tool's arguments, shown on its `Tool` impl in rustdoc.

use crate::ast::{Field, Input};
use crate::attr;

/// The table of `fields`, the fields of the tool `input`.
pub(crate) fn parameter_table(input: &Input<'_>, fields: &[Field<'_>]) -> String {
    let mut table = format!(
        "The arguments of the `{}` tool, as advertised to the model.\n\n\
         | field | type | required | constraints | description |\n\
         |---|---|---|---|---|\n",
        input.name.value
    );
    for field in fields.iter().filter(|field| !field.attrs.skip) {
        let ty = field.type_text();
        let optional = input.attrs.default
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
