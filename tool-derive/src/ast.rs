//! The input model: what a derive sees of a struct or enum after its attributes are read.

use syn::{Data, DeriveInput, Fields, Ident, Type};

use crate::attr;
use crate::case::RenameRule;
use crate::doc;
use crate::errors::Errors;

pub(crate) struct Input<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) attrs: attr::Container,
    pub(crate) doc: Option<String>,
    pub(crate) body: Body<'a>,
}

pub(crate) enum Body<'a> {
    Struct(Vec<Field<'a>>),
    Enum(Vec<Variant<'a>>),
    /// A shape no derive supports; the error is already recorded.
    Unsupported,
}

pub(crate) struct Field<'a> {
    pub(crate) member: &'a Ident,
    pub(crate) ty: &'a Type,
    /// The key on the wire, after `rename` / `rename_all`.
    pub(crate) wire: String,
    pub(crate) attrs: attr::Field,
    /// The description: `#[tool(description)]`, else the doc comment.
    pub(crate) doc: Option<String>,
}

pub(crate) struct Variant<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) wire: String,
    pub(crate) skip: bool,
}

/// Strips `r#` the way serde does when it names a raw identifier.
fn unraw(ident: &Ident) -> String {
    let name = ident.to_string();
    name.strip_prefix("r#").map(str::to_owned).unwrap_or(name)
}

pub(crate) fn parse<'a>(input: &'a DeriveInput, errors: &Errors) -> Input<'a> {
    let attrs = attr::container(&input.attrs, errors);
    let rule = attrs.rename_all.unwrap_or(RenameRule::None);
    let body = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => Body::Struct(
                named
                    .named
                    .iter()
                    .filter_map(|field| {
                        let member = field.ident.as_ref()?;
                        let attrs = attr::field(&field.attrs, errors);
                        let wire = attrs
                            .rename
                            .clone()
                            .unwrap_or_else(|| rule.apply_to_field(&unraw(member)));
                        let doc = attrs
                            .description
                            .clone()
                            .or_else(|| doc::description(&field.attrs));
                        Some(Field {
                            member,
                            ty: &field.ty,
                            wire,
                            attrs,
                            doc,
                        })
                    })
                    .collect(),
            ),
            Fields::Unnamed(_) => {
                errors.spanned(
                    &input.ident,
                    "tuple structs are not supported: tool arguments are a JSON object, so \
                     every field needs a name",
                );
                Body::Unsupported
            }
            Fields::Unit => {
                errors.spanned(
                    &input.ident,
                    "unit structs are not supported: declare a struct with named fields (it \
                     may have none: `struct Ping {}`)",
                );
                Body::Unsupported
            }
        },
        Data::Enum(data) => Body::Enum(
            data.variants
                .iter()
                .map(|variant| {
                    let attrs = attr::variant(&variant.attrs, errors);
                    if !matches!(variant.fields, Fields::Unit) {
                        errors.spanned(
                            &variant.fields,
                            format!(
                                "variant `{}` carries data: #[derive(Argument)] supports unit \
                                 variants only (advertised as a string `enum`); move the data \
                                 into a struct field",
                                variant.ident
                            ),
                        );
                    }
                    Variant {
                        ident: &variant.ident,
                        wire: attrs
                            .rename
                            .unwrap_or_else(|| rule.apply_to_variant(&unraw(&variant.ident))),
                        skip: attrs.skip,
                    }
                })
                .collect(),
        ),
        Data::Union(_) => {
            errors.spanned(
                &input.ident,
                "unions are not supported: derive on a struct with named fields",
            );
            Body::Unsupported
        }
    };
    Input {
        ident: &input.ident,
        doc: attrs
            .description
            .clone()
            .or_else(|| doc::description(&input.attrs)),
        attrs,
        body,
    }
}
