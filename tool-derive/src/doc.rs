//! Doc comments to descriptions, by one rule: each line loses one leading space and its
//! trailing whitespace; lines of a paragraph are joined with a space; paragraphs (split by
//! blank lines) are joined with a blank line.

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

pub(crate) fn description(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let Meta::NameValue(meta) = &attr.meta
            && let Expr::Lit(ExprLit {
                lit: Lit::Str(text),
                ..
            }) = &meta.value
        {
            // Not `lines()`: a blank `///` is an empty string, which has no lines but ends a
            // paragraph.
            for line in text.value().split('\n') {
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
            }
        }
    }
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in lines {
        if line.trim().is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(line.trim_start());
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    (!paragraphs.is_empty()).then(|| paragraphs.join("\n\n"))
}
