//! The input model: what a derive sees of a struct or enum after its attributes are read,
//! with everything later steps need resolved once.

use proc_macro2::Span;
use quote::quote;
use syn::{Data, DeriveInput, Fields, Generics, Ident, Type, parse_quote};

use crate::attr;
use crate::case::RenameRule;
use crate::doc;
use crate::errors::Errors;

/// Which derive is running.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Tool,
    Argument,
}

pub(crate) struct Input<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) generics: &'a Generics,
    pub(crate) mode: Mode,
    pub(crate) attrs: attr::Container,
    /// The path of the runtime crate: `#[tool(crate = "...")]`, else `::tool_core`.
    pub(crate) krate: syn::Path,
    /// The name a `Tool` is advertised under (a derived `Argument` has one it does not use).
    pub(crate) name: ToolName,
    /// The description: `#[tool(description)]`, else the doc comment.
    pub(crate) doc: Option<String>,
    pub(crate) body: Body<'a>,
}

pub(crate) struct ToolName {
    pub(crate) value: String,
    /// Where `#[tool(name = "...")]` gave it; `None` when it is the type's name in snake_case.
    pub(crate) span: Option<Span>,
}

pub(crate) enum Body<'a> {
    Struct(Vec<Field<'a>>),
    /// A tuple struct with one field, or a `#[serde(transparent)]` struct: the field's value.
    Newtype(Box<Newtype<'a>>),
    Enum(Vec<Variant<'a>>),
    /// `#[tool(schemars)]`: the contract is the type's `schemars::JsonSchema`.
    Schemars,
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

pub(crate) struct Newtype<'a> {
    /// `0`, or the name of the field of a transparent struct.
    pub(crate) member: syn::Member,
    pub(crate) ty: &'a Type,
    pub(crate) attrs: attr::Field,
}

pub(crate) struct Variant<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) wire: String,
    pub(crate) skip: bool,
    /// The description: `#[tool(description)]`, else the doc comment.
    pub(crate) doc: Option<String>,
    pub(crate) shape: Shape<'a>,
}

/// What a variant carries.
pub(crate) enum Shape<'a> {
    Unit,
    /// One unnamed field: the variant's content is that field's value.
    Newtype(&'a syn::Field),
    /// Named fields: the content is an object.
    Struct(Vec<Field<'a>>),
    /// Several unnamed fields: the content is an array of their values, in order.
    Tuple(Vec<&'a syn::Field>),
}

/// The most fields a tuple variant may have: the longest tuple that is an `Argument`.
pub(crate) const MAX_TUPLE_FIELDS: usize = 6;

/// How a data-carrying enum is told apart on the wire, as serde's attributes say.
#[derive(Clone, Copy)]
pub(crate) enum Tagging<'a> {
    External,
    Internal(&'a str),
    Adjacent(&'a str, &'a str),
    Untagged,
}

impl Input<'_> {
    /// The tagging the container attributes ask for.
    pub(crate) fn tagging(&self) -> Tagging<'_> {
        let attrs = &self.attrs;
        match (&attrs.tag, &attrs.content, attrs.untagged) {
            (_, _, Some(_)) => Tagging::Untagged,
            (Some(tag), Some(content), None) => Tagging::Adjacent(&tag.value, &content.value),
            (Some(tag), None, None) => Tagging::Internal(&tag.value),
            (None, _, None) => Tagging::External,
        }
    }

    /// Whether this is an enum of unit variants with no tagging: a string `enum`.
    pub(crate) fn is_string_enum(&self) -> bool {
        let attrs = &self.attrs;
        matches!(&self.body, Body::Enum(variants)
            if variants.iter().all(|variant| matches!(variant.shape, Shape::Unit)))
            && attrs.tag.is_none()
            && attrs.content.is_none()
            && attrs.untagged.is_none()
    }
}

impl Field<'_> {
    /// The field's type as written, spaced as people write it: `Option<Vec<String>>`.
    pub(crate) fn type_text(&self) -> String {
        let ty = self.ty;
        let text = quote!(#ty).to_string();
        let mut out = String::with_capacity(text.len());
        for part in text.split(' ') {
            let glue = out.ends_with(['<', ':', '&'])
                || part.starts_with(['<', '>', ',', ':'])
                || out.is_empty();
            if !glue {
                out.push(' ');
            }
            out.push_str(part);
        }
        out.replace(',', ", ")
    }
}

impl<'a> Input<'a> {
    /// Reads `input`, recording every mistake in `errors`; what could not be read is left out.
    pub(crate) fn from_syn(input: &'a DeriveInput, mode: Mode, errors: &Errors) -> Self {
        let attrs = attr::container(&input.attrs, errors);
        let body = body(input, &attrs, errors);
        let krate = attrs
            .krate
            .clone()
            .unwrap_or_else(|| parse_quote!(::tool_core));
        let name = match &attrs.name {
            Some(name) => ToolName {
                value: name.value.clone(),
                span: Some(name.span),
            },
            None => ToolName {
                value: RenameRule::SnakeCase.apply_to_variant(&input.ident.to_string()),
                span: None,
            },
        };
        Input {
            ident: &input.ident,
            generics: &input.generics,
            mode,
            krate,
            name,
            doc: attrs
                .description
                .clone()
                .or_else(|| doc::description(&input.attrs)),
            attrs,
            body,
        }
    }
}

fn body<'a>(input: &'a DeriveInput, attrs: &attr::Container, errors: &Errors) -> Body<'a> {
    if attrs.schemars.is_some() {
        // schemars and serde read the rest; a `#[tool(...)]` inside would be ignored.
        for attr in tool_attributes_inside(input) {
            errors.spanned(
                attr,
                "#[tool(...)] has no effect inside a #[tool(schemars)] type: its schema comes \
                 from schemars; write the constraints as #[schemars(...)]",
            );
        }
        return Body::Schemars;
    }
    let rule = attrs.rename_all.unwrap_or(RenameRule::None);
    match &input.data {
        Data::Struct(data) => {
            match &data.fields {
                Fields::Named(named) if attrs.transparent.is_some() => {
                    match named.named.iter().collect::<Vec<_>>().as_slice() {
                        [field] => Body::Newtype(Box::new(Newtype {
                            member: syn::Member::Named(field.ident.clone().unwrap_or_else(|| {
                                Ident::new("__tool_unnamed", Span::call_site())
                            })),
                            ty: &field.ty,
                            attrs: attr::field(&field.attrs, errors),
                        })),
                        _ => {
                            errors.spanned(
                                &input.ident,
                                "`transparent` needs a struct with exactly one field",
                            );
                            Body::Unsupported
                        }
                    }
                }
                Fields::Named(named) => Body::Struct(fields(named, rule, errors)),
                Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => {
                    Body::Newtype(Box::new(Newtype {
                        member: syn::Member::Unnamed(syn::Index::from(0)),
                        ty: &unnamed.unnamed[0].ty,
                        attrs: attr::field(&unnamed.unnamed[0].attrs, errors),
                    }))
                }
                Fields::Unnamed(_) => {
                    errors.spanned(
                        &input.ident,
                        "tuple structs with several fields are not supported: name the fields (an \
                     object on the wire), or hold one tuple `struct Pair((A, B));`",
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
            }
        }
        Data::Enum(data) => Body::Enum(
            data.variants
                .iter()
                .map(|variant| {
                    let variant_attrs = attr::variant(&variant.attrs, errors);
                    let field_rule = variant_attrs
                        .rename_all
                        .or(attrs.rename_all_fields)
                        .unwrap_or(RenameRule::None);
                    let shape = match &variant.fields {
                        Fields::Unit => Shape::Unit,
                        Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => {
                            Shape::Newtype(&unnamed.unnamed[0])
                        }
                        Fields::Unnamed(unnamed) => {
                            if unnamed.unnamed.len() > MAX_TUPLE_FIELDS {
                                errors.spanned(
                                    &variant.fields,
                                    format!(
                                        "variant `{}` has {} unnamed fields; a tuple variant \
                                         takes at most {MAX_TUPLE_FIELDS}: name them (a struct \
                                         variant is an object on the wire)",
                                        variant.ident,
                                        unnamed.unnamed.len()
                                    ),
                                );
                            }
                            Shape::Tuple(unnamed.unnamed.iter().collect())
                        }
                        Fields::Named(named) => Shape::Struct(fields(named, field_rule, errors)),
                    };
                    Variant {
                        ident: &variant.ident,
                        wire: variant_attrs
                            .rename
                            .unwrap_or_else(|| rule.apply_to_variant(&unraw(&variant.ident))),
                        skip: variant_attrs.skip,
                        doc: variant_attrs
                            .description
                            .or_else(|| doc::description(&variant.attrs)),
                        shape,
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
    }
}

/// The `#[tool(...)]` attributes on the fields and variants of `input`.
fn tool_attributes_inside(input: &DeriveInput) -> Vec<&syn::Attribute> {
    let fields: Vec<&syn::Field> = match &input.data {
        Data::Struct(data) => data.fields.iter().collect(),
        Data::Enum(data) => data
            .variants
            .iter()
            .flat_map(|variant| variant.fields.iter())
            .collect(),
        Data::Union(data) => data.fields.named.iter().collect(),
    };
    let variants: Vec<&syn::Attribute> = match &input.data {
        Data::Enum(data) => data
            .variants
            .iter()
            .flat_map(|variant| variant.attrs.iter())
            .collect(),
        _ => Vec::new(),
    };
    fields
        .into_iter()
        .flat_map(|field| field.attrs.iter())
        .chain(variants)
        .filter(|attr| attr.path().is_ident("tool"))
        .collect()
}

/// The named fields of a struct or struct variant, with their keys on the wire under `rule`.
fn fields<'a>(named: &'a syn::FieldsNamed, rule: RenameRule, errors: &Errors) -> Vec<Field<'a>> {
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
        .collect()
}

/// Strips `r#` the way serde does when it names a raw identifier.
fn unraw(ident: &Ident) -> String {
    let name = ident.to_string();
    name.strip_prefix("r#").map(str::to_owned).unwrap_or(name)
}
