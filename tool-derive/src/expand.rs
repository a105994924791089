//! Code generation from a checked [`Input`]: the `Argument` impl (schema and checked parser
//! side by side) and the `Tool` impl.
//!
//! Every name it introduces starts with two underscores (`__map`, `__A`, `__TOOL_FIELDS`), so
//! that a `#[serde(default = "...")]` path, a field type or a constant of the user's module
//! spliced into the generated code still means the user's item.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use crate::ast::{Body, Field, Input, Mode, Newtype, Shape, Tagging, Variant};
use crate::attr::{self, NumLit};
use crate::parameter_table::parameter_table;

/// Expands an input in which no mistake was recorded.
pub(crate) fn expand(input: &Input<'_>) -> TokenStream {
    let argument = match &input.body {
        Body::Schemars => schemars_argument(input),
        Body::Struct(fields) => struct_argument(input, fields),
        Body::Newtype(newtype) => newtype_argument(input, newtype),
        Body::Enum(variants) if input.is_string_enum() => enum_argument(input, variants),
        Body::Enum(variants) => union_argument(input, variants),
        // Recorded as an error when read, so never expanded.
        Body::Unsupported => TokenStream::new(),
    };
    let tool = match input.mode {
        Mode::Tool => tool_impl(input),
        Mode::Argument => TokenStream::new(),
    };
    quote! {
        #[doc(hidden)]
        #[allow(deprecated)]
        const _: () = {
            #argument
            #tool
        };
    }
}

fn option_tokens<T: quote::ToTokens>(p: &TokenStream, value: Option<T>) -> TokenStream {
    match value {
        Some(value) => quote!(#p::Some(#value)),
        None => quote!(#p::None),
    }
}

fn num_tokens(p: &TokenStream, n: NumLit) -> TokenStream {
    match n {
        NumLit::U(u) => quote!(#p::Num::U(#u)),
        NumLit::I(i) => quote!(#p::Num::I(#i)),
        NumLit::F(f) => quote!(#p::Num::F(#f)),
    }
}

/// Per field: the items holding its constraints, the compile-time checks that they apply
/// to its type, and the type naming them (`ConstConstraints`).
fn constraints(field: &Field<'_>, index: usize, p: &TokenStream) -> (TokenStream, TokenStream) {
    let ty = field.ty;
    constraint_set(
        &field.attrs,
        &quote!(#ty),
        ty_span(ty),
        &field.type_text(),
        &index.to_string(),
        p,
    )
}

/// The constraints `attrs` on values of `ty` (written `type_text`), as items named with
/// `suffix`; `inner(..)` recurses into the type of the items.
fn constraint_set(
    attrs: &attr::Field,
    ty: &TokenStream,
    ty_span: Span,
    type_text: &str,
    suffix: &str,
    p: &TokenStream,
) -> (TokenStream, TokenStream) {
    let mut items = TokenStream::new();
    if let Some(span) = attrs.length.span {
        items.extend(quote_spanned!(span=> const _: () = #p::accepts_length::<#ty>();));
    }
    let name = format_ident!("__ToolConstraints{}", suffix);
    if let Some(span) = attrs.range.span {
        let message = format!(
            "`range({})` admits no value of `{}`: the bounds must overlap the type's own range \
             and, for an integer type, hold an integer",
            range_text(&attrs.range),
            type_text
        )
        .replace('{', "{{")
        .replace('}', "}}");
        items.extend(quote_spanned! {span=>
            const _: () = ::core::assert!(
                #p::accepts_range::<#ty>(&<#name as #p::ConstConstraints>::VALUE),
                #message,
            );
        });
    }
    if let Some(pattern) = &attrs.pattern {
        let span = pattern.span;
        items.extend(quote_spanned!(span=> const _: () = #p::accepts_pattern::<#ty>();));
    }
    if let Some(format) = &attrs.format {
        let span = format.span;
        items.extend(quote_spanned!(span=> const _: () = #p::accepts_format::<#ty>();));
    }
    let inner = attrs.inner.as_ref().map(|inner| {
        // A check on the items names their type, which already requires `HasItems`.
        let checked = inner.length.span.is_some()
            || inner.range.span.is_some()
            || inner.pattern.is_some()
            || inner.format.is_some();
        if !checked {
            items.extend(quote_spanned!(ty_span=> const _: () = #p::has_items::<#ty>();));
        }
        let item_ty = quote_spanned!(ty_span=> <#ty as #p::HasItems>::Item);
        let (inner_items, inner_bounds) = constraint_set(
            inner,
            &item_ty,
            ty_span,
            &format!("the items of {type_text}"),
            &format!("{suffix}Items"),
            p,
        );
        items.extend(inner_items);
        inner_bounds
    });
    let keys = attrs.keys.as_ref().map(|keys| {
        // Keys are checked as their property names: strings.
        let span = keys.span;
        items.extend(quote_spanned!(span=> const _: () = #p::has_keys::<#ty>();));
        let (key_items, key_bounds) = constraint_set(
            &keys.value,
            &quote!(::std::string::String),
            span,
            &format!("the keys of {type_text}"),
            &format!("{suffix}Keys"),
            p,
        );
        items.extend(key_items);
        key_bounds
    });
    let has_any = attrs.length.span.is_some()
        || attrs.range.span.is_some()
        || attrs.pattern.is_some()
        || attrs.format.is_some()
        || inner.is_some()
        || keys.is_some();
    let format = match &attrs.format {
        Some(format) => {
            let name = &format.value;
            quote!(#p::Format::from_name(#name))
        }
        None => quote!(#p::None),
    };
    if !has_any {
        return (items, quote!(#p::Unconstrained));
    }
    let pattern = match &attrs.pattern {
        Some(pattern) => {
            let name = format_ident!("__TOOL_PATTERN_{}", suffix);
            let source = &pattern.value;
            items.extend(quote! {
                static #name: #p::Pattern = #p::Pattern::new(#source);
            });
            quote!(#p::Some(&#name))
        }
        None => quote!(#p::None),
    };
    let min_length = option_tokens(p, attrs.length.min);
    let max_length = option_tokens(p, attrs.length.max);
    let range = &attrs.range;
    let bound = |n: Option<NumLit>| option_tokens(p, n.map(|n| num_tokens(p, n)));
    let (minimum, maximum) = (bound(range.min), bound(range.max));
    let (exclusive_minimum, exclusive_maximum) =
        (bound(range.exclusive_min), bound(range.exclusive_max));
    let (items_value, items_type) = match &inner {
        Some(inner) => (
            quote!(#p::Some(&<#inner as #p::ConstConstraints>::VALUE)),
            inner.clone(),
        ),
        None => (quote!(#p::None), quote!(#p::Unconstrained)),
    };
    let keys_value = match &keys {
        Some(keys) => quote!(#p::Some(&<#keys as #p::ConstConstraints>::VALUE)),
        None => quote!(#p::None),
    };
    items.extend(quote! {
        struct #name;

        impl #p::ConstConstraints for #name {
            #[allow(clippy::needless_update)]
            const VALUE: #p::Constraints = #p::Constraints {
                min_length: #min_length,
                max_length: #max_length,
                minimum: #minimum,
                maximum: #maximum,
                exclusive_minimum: #exclusive_minimum,
                exclusive_maximum: #exclusive_maximum,
                pattern: #pattern,
                items: #items_value,
                format: #format,
                keys: #keys_value,
                ..#p::Constraints::NONE
            };
            type Items = #items_type;
        }
    });
    (items, quote!(#name))
}

/// An object type to expand: a struct, or the hidden struct of a struct variant.
struct ObjectSpec<'a> {
    krate: &'a syn::Path,
    ident: &'a syn::Ident,
    generics: Option<&'a syn::Generics>,
    /// The name in messages about the contract and in `$defs`.
    name: String,
    doc: Option<&'a str>,
    fields: &'a [Field<'a>],
    container_default: bool,
    /// The tag of an internally tagged enum, which shares the variant's object: read already,
    /// so a second one is a duplicate key.
    tag: Option<&'a str>,
}

fn struct_argument(input: &Input<'_>, fields: &[Field<'_>]) -> TokenStream {
    object_argument(&ObjectSpec {
        krate: &input.krate,
        ident: input.ident,
        generics: Some(input.generics),
        name: input.ident.to_string(),
        doc: input.doc.as_deref(),
        fields,
        container_default: input.attrs.default,
        tag: None,
    })
}

fn object_argument(spec: &ObjectSpec<'_>) -> TokenStream {
    let krate = spec.krate;
    let fields = spec.fields;
    let p = quote!(#krate::__private);
    let ident = spec.ident;
    let name = &spec.name;
    let type_doc = option_tokens(&p, spec.doc);
    // A generic struct is an `Argument` when each of its type parameters is.
    let mut generics = spec.generics.cloned().unwrap_or_default();
    for param in generics.type_params_mut() {
        param.bounds.push(syn::parse_quote!(#krate::Argument));
        param.bounds.push(syn::parse_quote!('static));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let live: Vec<(usize, &Field<'_>)> = fields
        .iter()
        .enumerate()
        .filter(|(_, field)| !field.attrs.skip)
        .collect();
    let mut items = TokenStream::new();
    let mut schema_fields = TokenStream::new();
    let mut key_variants = Vec::new();
    let mut key_arms = TokenStream::new();
    let mut value_arms = TokenStream::new();
    let mut slots = TokenStream::new();
    let mut resolved = TokenStream::new();
    let mut bindings = Vec::new();
    let mut members = Vec::new();
    let mut to_value_fields = TokenStream::new();
    let wires: Vec<&str> = spec
        .tag
        .into_iter()
        .chain(live.iter().map(|(_, field)| field.wire.as_str()))
        .collect();
    let container_default = spec.container_default;
    let tag_variant = spec.tag.map(|_| quote!(Tag,));
    if let Some(tag) = spec.tag {
        key_arms.extend(quote!(#tag => __ToolKey::Tag,));
        value_arms.extend(quote! {
            __ToolKey::Tag => {
                __cx.duplicate_key(__at, #tag);
                let #p::IgnoredAny = __map.next_value()?;
            }
        });
    }

    // A `#[serde(flatten)]` field: the members no other field names are held, then read as
    // that field's struct.
    let flatten = live
        .iter()
        .find(|(_, field)| field.attrs.flatten.is_some())
        .map(|&(index, field)| (index, field));
    let mut flatten_schema = TokenStream::new();
    if let Some((index, field)) = flatten {
        let ty = field.ty;
        let member = field.member;
        let wire = &field.wire;
        let value = format_ident!("__tool_value_{}", index);
        flatten_schema.extend(quote_spanned! {ty_span(ty)=>
            let __inner = <#ty as #krate::Argument>::schema(__generator, &#p::Constraints::NONE);
            let __object = #p::flatten_schema(__generator, __object, __inner, #name, #wire);
        });
        slots.extend(quote_spanned! {ty_span(ty)=>
            __tool_argument::<#ty>();
            let mut __flat: ::std::vec::Vec<(::std::string::String, #p::Value)> =
                ::std::vec::Vec::new();
        });
        value_arms.extend(quote! {
            __ToolKey::Flatten(__name) => {
                let __value = __map.next_value_seed(#p::Buffer::member_of(__at))?;
                __flat.push((__name, __value));
            }
        });
        resolved.extend(quote_spanned! {ty_span(ty)=>
            let #value: #p::Option<#ty> =
                #p::parse_flattened::<#ty, __A::Error>(__flat, __cx, __at)?;
        });
        to_value_fields.extend(quote_spanned! {ty_span(ty)=>
            __tool_argument::<#ty>();
            if let #p::Value::Object(__inner) =
                <#ty as #krate::Argument>::to_value(&self.#member)?
            {
                __object.extend(__inner);
            }
        });
        bindings.push(value);
        members.push(member);
    }
    let (unknown_variant, unknown_arm) = if flatten.is_some() {
        (
            quote!(Flatten(::std::string::String)),
            quote!(__ToolKey::Flatten(::std::borrow::ToOwned::to_owned(__key))),
        )
    } else {
        (
            quote!(Unknown),
            quote! {{
                __cx.unknown_field(__at, __key, __TOOL_FIELDS);
                __ToolKey::Unknown
            }},
        )
    };
    let unknown_value_arm = flatten.is_none().then(|| {
        quote! {
            __ToolKey::Unknown => {
                let #p::IgnoredAny = __map.next_value()?;
            }
        }
    });

    for &(index, field) in live
        .iter()
        .filter(|(_, field)| field.attrs.flatten.is_none())
    {
        let (field_items, bounds) = constraints(field, index, &p);
        let c = quote!(&<#bounds as #p::ConstConstraints>::VALUE);
        items.extend(field_items);
        items.extend(schemars_check(&field.attrs, &p));
        let ty = field.ty;
        let (arg, unwrap) = via(&field.attrs, ty, &p);
        let wire = &field.wire;
        let member = field.member;
        let doc = option_tokens(&p, field.doc.as_deref());
        let has_default = container_default || !matches!(field.attrs.default, attr::Default::None);
        let require = if has_default {
            TokenStream::new()
        } else {
            quote_spanned! {ty_span(ty)=>
                if !<#arg as #krate::Argument>::OPTIONAL {
                    __required.push(#wire);
                }
            }
        };
        let default_value = match &field.attrs.default {
            attr::Default::Trait => Some(quote!(&<#ty as ::core::default::Default>::default())),
            attr::Default::Path(path) => Some(quote!(&#path())),
            attr::Default::None if container_default => Some(quote!(&__container_default.#member)),
            attr::Default::None => None,
        };
        // A `#[tool(schemars)]` or `#[tool(with)]` field's type cannot say what JSON its
        // default is.
        let default_value =
            default_value.filter(|_| field.attrs.schemars.is_none() && field.attrs.with.is_none());
        let advertise = default_value.map(|value| {
            quote! {
                #p::advertise_default::<#ty, #bounds>(
                    __generator,
                    &mut __schema,
                    #value,
                    #name,
                    #wire,
                );
            }
        });
        schema_fields.extend(quote_spanned! {ty_span(ty)=>
            __tool_argument::<#arg>();
            let mut __schema = #p::field_schema::<#arg>(__generator, #c, #doc);
        });
        schema_fields.extend(advertise);
        if field.attrs.deprecated || !field.attrs.examples.is_empty() {
            let deprecated = field.attrs.deprecated;
            let examples = field.attrs.examples.iter().map(|example| &example.value);
            schema_fields.extend(quote! {
                #p::annotate_field::<#arg, #bounds>(
                    __generator,
                    &mut __schema,
                    #deprecated,
                    &[#(#examples),*],
                    #name,
                    #wire,
                );
            });
        }
        schema_fields.extend(quote_spanned! {ty_span(ty)=>
            let _: #p::Option<#p::Value> = __properties.insert(
                ::std::string::String::from(#wire),
                __schema,
            );
            #require
        });
        let field_value = field_value(&field.attrs, ty, quote!(&self.#member), &p, krate);
        let field_value = quote!(#field_value?);
        to_value_fields.extend(quote_spanned! {ty_span(ty)=>
            __tool_argument::<#arg>();
            let _: #p::Option<#p::Value> = __object.insert(
                ::std::string::String::from(#wire),
                #field_value,
            );
        });

        let key = format_ident!("F{}", index);
        let slot = format_ident!("__tool_slot_{}", index);
        let value = format_ident!("__tool_value_{}", index);
        key_variants.push(key.clone());
        key_arms.extend(quote!(#wire => __ToolKey::#key,));
        value_arms.extend(quote_spanned! {ty_span(ty)=>
            __ToolKey::#key => {
                if #slot.is_some() {
                    __cx.duplicate_key(__at, #wire);
                    let #p::IgnoredAny = __map.next_value()?;
                } else {
                    let __at = __at.key(#wire);
                    #slot = #p::Some(
                        __tool_next_value::<#arg, #bounds, __A>(&mut __map, __cx, &__at)?
                            #unwrap,
                    );
                }
            }
        });
        slots.extend(quote_spanned! {ty_span(ty)=>
            __tool_argument::<#arg>();
        });
        slots.extend(quote! {
            let mut #slot: #p::Option<#p::Option<#ty>> = #p::None;
        });
        let absent = match &field.attrs.default {
            attr::Default::Trait => quote!(#p::Some(<#ty as ::core::default::Default>::default())),
            attr::Default::Path(path) => quote!(#p::Some(#path())),
            attr::Default::None if container_default => {
                quote!(#p::Some(<Self as ::core::default::Default>::default().#member))
            }
            attr::Default::None => quote! {
                match <#arg as #krate::Argument>::absent() #unwrap {
                    #p::Some(__value) => #p::Some(__value),
                    #p::None => {
                        __cx.missing(__at, #wire);
                        #p::None
                    }
                }
            },
        };
        resolved.extend(quote! {
            let #value: #p::Option<#ty> = match #slot {
                #p::Some(__parsed) => __parsed,
                #p::None => #absent,
            };
        });
        bindings.push(value);
        members.push(member);
    }

    let skipped = fields.iter().filter(|field| field.attrs.skip).map(|field| {
        let member = field.member;
        let ty = field.ty;
        match &field.attrs.default {
            attr::Default::Path(path) => quote!(#member: #path()),
            _ if container_default && matches!(field.attrs.default, attr::Default::None) => {
                quote!(#member: <Self as ::core::default::Default>::default().#member)
            }
            _ => quote!(#member: <#ty as ::core::default::Default>::default()),
        }
    });

    let container_default_value = container_default
        .then(|| quote!(let __container_default = <Self as ::core::default::Default>::default();));

    // Each body names every field type in `__tool_argument::<T>()` before any other use, and
    // parses through `__tool_next_value::<T>`: a type without `Argument` then fails the same
    // bound at the same span everywhere, which rustc reports once instead of once per use.
    let helpers = (!live.is_empty()).then(|| {
        quote! {
            const fn __tool_argument<__T: #krate::Argument>() {}

            #[inline]
            fn __tool_next_value<
                '__de,
                __T: #krate::Argument,
                __C: #p::ConstConstraints,
                __A: #p::MapAccess<'__de>,
            >(
                __map: &mut __A,
                __cx: &mut #p::Cx,
                __at: &#p::Path<'_>,
            ) -> #p::Result<#p::Option<__T>, __A::Error> {
                __map.next_value_seed(#p::Seed::<__T, __C>::new(__cx, __at))
            }
        }
    });

    quote! {
        #helpers
        #items

        #[automatically_derived]
        impl #impl_generics #krate::Argument for #ident #ty_generics #where_clause {
            fn schema(
                __generator: &mut #p::SchemaGen,
                _: &#p::Constraints,
            ) -> #p::Value {
                __generator.object::<Self>(#name, |__generator| {
                    #container_default_value
                    let mut __properties = #p::Map::new();
                    let mut __required: ::std::vec::Vec<&'static str> = ::std::vec::Vec::new();
                    #schema_fields
                    let __object = #p::object_schema(#type_doc, __properties, &__required);
                    #flatten_schema
                    __object
                })
            }

            #[inline]
            fn parse<'__de, __D: #p::Deserializer<'__de>, __C: #p::ConstConstraints>(
                __de: __D,
                __cx: &mut #p::Cx,
                __at: &#p::Path<'_>,
            ) -> #p::Result<#p::Option<Self>, __D::Error> {
                #p::parse_object::<Self, __D>(__de, __cx, __at)
            }

            fn to_value(&self) -> #p::Option<#p::Value> {
                let mut __object = #p::Map::new();
                #to_value_fields
                #p::Some(#p::Value::Object(__object))
            }
        }

        #[automatically_derived]
        impl #impl_generics #p::Object for #ident #ty_generics #where_clause {
            #[allow(clippy::too_many_lines, unreachable_patterns)]
            #[inline]
            fn visit_members<'__de, __A: #p::MapAccess<'__de>>(
                mut __map: __A,
                __cx: &mut #p::Cx,
                __at: &#p::Path<'_>,
            ) -> #p::Result<#p::Option<Self>, __A::Error> {
                #[allow(dead_code)]
                const __TOOL_FIELDS: &[&str] = &[#(#wires),*];
                enum __ToolKey {
                    #(#key_variants,)*
                    #tag_variant
                    #unknown_variant,
                }
                #slots
                while let #p::Some(__key) =
                    __map.next_key_seed(#p::KeySeed(|__key: &str| match __key {
                        #key_arms
                        _ => #unknown_arm,
                    }))?
                {
                    match __key {
                        #value_arms
                        #unknown_value_arm
                    }
                }
                #resolved
                match (#(#bindings,)*) {
                    (#(#p::Some(#bindings),)*) => #p::Ok(#p::Some(Self {
                        #(#members: #bindings,)*
                        #(#skipped,)*
                    })),
                    _ => #p::Ok(#p::None),
                }
            }
        }
    }
}

fn ty_span(ty: &syn::Type) -> Span {
    syn::spanned::Spanned::span(ty)
}

/// The JSON of a field's value `value` (a reference to it), as its type or its marker writes
/// it: an `Option<Value>`.
fn field_value(
    attrs: &attr::Field,
    ty: &syn::Type,
    value: TokenStream,
    p: &TokenStream,
    krate: &syn::Path,
) -> TokenStream {
    if let Some(marker) = &attrs.with {
        return match option_inner(ty) {
            Some(inner) => quote!(#p::with_option_value::<#inner, #marker>(#value)),
            None => quote!(#p::with_value::<#ty, #marker>(#value)),
        };
    }
    if attrs.schemars.is_some() {
        return quote!(#p::no_value(#value));
    }
    quote!(<#ty as #krate::Argument>::to_value(#value))
}

/// The type a field is parsed and advertised as (`ViaSchemars<T>` for a `#[tool(schemars)]`
/// field of type `T`, `With<T, M>` for a `#[tool(with = M)]` one), and the suffix turning an
/// `Option` of it into an `Option<T>`.
fn via(attrs: &attr::Field, ty: &syn::Type, p: &TokenStream) -> (TokenStream, TokenStream) {
    if let Some(marker) = &attrs.with {
        // On the marker's tokens, so that a marker without `ArgumentWith` is reported there.
        let span = ty_span(marker);
        let p = respan(p.clone(), span);
        if let Some(inner) = option_inner(ty) {
            return (
                quote_spanned!(span=> #p::Option<#p::With<#inner, #marker>>),
                quote!(.map(|__value| __value.map(|__value| __value.0))),
            );
        }
        return (
            quote_spanned!(span=> #p::With<#ty, #marker>),
            quote!(.map(|__value| __value.0)),
        );
    }
    if attrs.schemars.is_none() {
        return (quote!(#ty), TokenStream::new());
    }
    // Every token on the field's type, so that a type without `JsonSchema` is reported there,
    // once, whatever the use.
    let p = respan(p.clone(), ty_span(ty));
    // An `Option<T>` field may be absent, as serde has it: `Option<ViaSchemars<T>>`.
    if let Some(inner) = option_inner(ty) {
        return (
            quote_spanned!(ty_span(ty)=> #p::Option<#p::ViaSchemars<#inner>>),
            quote!(.map(|__value| __value.map(|__value| __value.0))),
        );
    }
    (
        quote_spanned!(ty_span(ty)=> #p::ViaSchemars<#ty>),
        quote!(.map(|__value| __value.0)),
    )
}

/// `tokens` with every span set to `span`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let proc_macro2::TokenTree::Group(group) = &token {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                token = proc_macro2::TokenTree::Group(inner);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}

/// `T` of a type written `Option<T>`.
fn option_inner(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match (last.ident == "Option", args.args.first(), args.args.len()) {
        (true, Some(syn::GenericArgument::Type(inner)), 1) => Some(inner),
        _ => None,
    }
}

/// The check that the `schemars` feature is on, for a `#[tool(schemars)]` field.
fn schemars_check(attrs: &attr::Field, p: &TokenStream) -> TokenStream {
    match attrs.schemars {
        Some(span) => quote_spanned!(span=> const _: () = #p::schemars_feature::<()>();),
        None => TokenStream::new(),
    }
}

fn enum_argument(input: &Input<'_>, variants: &[Variant<'_>]) -> TokenStream {
    let krate = &input.krate;
    let p = quote!(#krate::__private);
    let ident = input.ident;
    let doc = option_tokens(&p, input.doc.as_deref());
    let live: Vec<&Variant<'_>> = variants.iter().filter(|variant| !variant.skip).collect();
    let wires = live.iter().map(|variant| variant.wire.as_str());
    let arms = live.iter().map(|variant| {
        let variant_ident = variant.ident;
        let wire = &variant.wire;
        quote!(#wire => #p::Some(Self::#variant_ident))
    });
    let to_value_arms = live.iter().map(|variant| {
        let variant_ident = variant.ident;
        let wire = &variant.wire;
        quote!(Self::#variant_ident => #p::Some(#p::Value::from(#wire)))
    });
    let allowed_doc = format!(
        "Accepted as one of the strings {}.",
        live.iter()
            .map(|variant| format!("`{:?}`", variant.wire))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let key_arms = live.iter().map(|variant| {
        let variant_ident = variant.ident;
        let wire = &variant.wire;
        quote!(#wire => #p::Some(Self::#variant_ident))
    });
    let key_name_arms = live.iter().map(|variant| {
        let variant_ident = variant.ident;
        let wire = &variant.wire;
        quote!(Self::#variant_ident => ::std::borrow::Cow::Borrowed(#wire))
    });
    quote! {
        #[doc = #allowed_doc]
        #[automatically_derived]
        impl #krate::Argument for #ident {
            fn schema(
                _: &mut #p::SchemaGen,
                _: &#p::Constraints,
            ) -> #p::Value {
                #p::enum_schema(#doc, __TOOL_VARIANTS)
            }

            #[inline]
            fn parse<'__de, __D: #p::Deserializer<'__de>, __C: #p::ConstConstraints>(
                __de: __D,
                __cx: &mut #p::Cx,
                __at: &#p::Path<'_>,
            ) -> #p::Result<#p::Option<Self>, __D::Error> {
                #p::parse_enum(__de, __cx, __at, __TOOL_VARIANTS, |__name: &str| match __name {
                    #(#arms,)*
                    _ => #p::None,
                })
            }

            fn to_value(&self) -> #p::Option<#p::Value> {
                match self {
                    #(#to_value_arms,)*
                    #[allow(unreachable_patterns)]
                    _ => #p::None,
                }
            }
        }

        #[automatically_derived]
        impl #p::ArgumentKey for #ident {
            fn key_schema() -> #p::Value {
                #p::enum_schema(#p::None, __TOOL_VARIANTS)
            }

            fn parse_key(__name: &str) -> #p::Option<Self> {
                match __name {
                    #(#key_arms,)*
                    _ => #p::None,
                }
            }

            fn key_name(&self) -> ::std::borrow::Cow<'_, str> {
                #[allow(unreachable_patterns)]
                match self {
                    #(#key_name_arms,)*
                    _ => ::std::borrow::Cow::Borrowed(""),
                }
            }
        }

        const __TOOL_VARIANTS: &[&str] = &[#(#wires),*];
    }
}

/// A type whose contract is its `schemars::JsonSchema`, checked through `ViaSchemars`.
fn schemars_argument(input: &Input<'_>) -> TokenStream {
    let krate = &input.krate;
    let p = quote!(#krate::__private);
    let ident = input.ident;
    quote! {
        const _: () = #p::schemars_feature::<()>();

        #[automatically_derived]
        impl #krate::Argument for #ident {
            fn schema(
                __generator: &mut #p::SchemaGen,
                __constraints: &#p::Constraints,
            ) -> #p::Value {
                <#p::ViaSchemars<Self> as #krate::Argument>::schema(__generator, __constraints)
            }

            #[inline]
            fn parse<'__de, __D: #p::Deserializer<'__de>, __C: #p::ConstConstraints>(
                __de: __D,
                __cx: &mut #p::Cx,
                __at: &#p::Path<'_>,
            ) -> #p::Result<#p::Option<Self>, __D::Error> {
                #p::Ok(
                    <#p::ViaSchemars<Self> as #krate::Argument>::parse::<__D, __C>(__de, __cx, __at)?
                        .map(|__value| __value.0),
                )
            }
        }
    }
}

fn newtype_argument(input: &Input<'_>, newtype: &Newtype<'_>) -> TokenStream {
    let krate = &input.krate;
    let p = quote!(#krate::__private);
    let ident = input.ident;
    let ty = newtype.ty;
    let (arg, unwrap) = via(&newtype.attrs, ty, &p);
    let member = &newtype.member;
    let doc = option_tokens(&p, input.doc.as_deref());
    let to_value = field_value(&newtype.attrs, ty, quote!(&self.#member), &p, krate);
    let type_text = quote!(#ty).to_string();
    let (items, bounds) = constraint_set(
        &newtype.attrs,
        &quote!(#ty),
        ty_span(ty),
        &type_text,
        "",
        &p,
    );
    let check = schemars_check(&newtype.attrs, &p);
    quote! {
        #items
        #check

        #[automatically_derived]
        impl #krate::Argument for #ident {
            const OPTIONAL: bool = <#arg as #krate::Argument>::OPTIONAL;

            fn schema(
                __generator: &mut #p::SchemaGen,
                _: &#p::Constraints,
            ) -> #p::Value {
                #p::field_schema::<#arg>(
                    __generator,
                    &<#bounds as #p::ConstConstraints>::VALUE,
                    #doc,
                )
            }

            #[inline]
            fn parse<'__de, __D: #p::Deserializer<'__de>, __C: #p::ConstConstraints>(
                __de: __D,
                __cx: &mut #p::Cx,
                __at: &#p::Path<'_>,
            ) -> #p::Result<#p::Option<Self>, __D::Error> {
                #p::Ok(
                    <#arg as #krate::Argument>::parse::<__D, #bounds>(__de, __cx, __at)?
                        #unwrap
                        .map(|__value| Self { #member: __value }),
                )
            }

            fn absent() -> #p::Option<Self> {
                <#arg as #krate::Argument>::absent()
                    #unwrap
                    .map(|__value| Self { #member: __value })
            }

            fn to_value(&self) -> #p::Option<#p::Value> {
                #to_value
            }
        }
    }
}

fn union_argument(input: &Input<'_>, variants: &[Variant<'_>]) -> TokenStream {
    let krate = &input.krate;
    let p = quote!(#krate::__private);
    let ident = input.ident;
    let name = ident.to_string();
    let type_doc = option_tokens(&p, input.doc.as_deref());
    let repr = match input.tagging() {
        Tagging::External => quote!(#p::Repr::External),
        Tagging::Internal(tag) => quote!(#p::Repr::Internal(#tag)),
        Tagging::Adjacent(tag, content) => quote!(#p::Repr::Adjacent(#tag, #content)),
        Tagging::Untagged => quote!(#p::Repr::Untagged),
    };
    // The name `tool_core::contract::untagged::tag_request` reads.
    let tag_request = match input.tagging() {
        Tagging::Internal(tag) => format!("$tool_core::private::TagFirstEnum:{tag}"),
        Tagging::Adjacent(tag, _) => format!("$tool_core::private::TagFirst:{tag}"),
        _ => String::new(),
    };
    let internal_tag = match input.tagging() {
        Tagging::Internal(tag) => Some(tag),
        _ => None,
    };
    let live: Vec<&Variant<'_>> = variants.iter().filter(|variant| !variant.skip).collect();
    let wires: Vec<&str> = live.iter().map(|variant| variant.wire.as_str()).collect();
    let indices = 0..wires.len();
    let variants_doc = format!(
        "{} of the variants {}.",
        match input.tagging() {
            Tagging::External => "One".to_owned(),
            Tagging::Internal(tag) => format!("An object whose `{tag}` names one"),
            Tagging::Adjacent(tag, content) => {
                format!("An object (the content in `{content}`) whose `{tag}` names one")
            }
            Tagging::Untagged => "The first that matches".to_owned(),
        },
        wires
            .iter()
            .map(|wire| format!("`{wire:?}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let units: Vec<bool> = live
        .iter()
        .map(|variant| matches!(variant.shape, Shape::Unit))
        .collect();
    let mut items = TokenStream::new();
    let mut branches = TokenStream::new();
    let mut unit_arms = TokenStream::new();
    let mut content_arms = TokenStream::new();
    let mut fields_arms = TokenStream::new();
    let mut to_value_arms = TokenStream::new();
    for (index, variant) in live.iter().enumerate() {
        let variant_ident = variant.ident;
        let wire = &variant.wire;
        let doc = option_tokens(&p, variant.doc.as_deref());
        match &variant.shape {
            Shape::Unit => {
                branches.extend(quote! {
                    __branches.push(#p::union_branch(__generator, __TOOL_REPR, #wire, #p::None, #doc));
                });
                unit_arms.extend(quote!(#index => #p::Some(Self::#variant_ident),));
                to_value_arms.extend(quote! {
                    Self::#variant_ident => #p::union_value(__TOOL_REPR, #wire, #p::None),
                });
            }
            Shape::Newtype(field) => {
                let ty = &field.ty;
                branches.extend(quote_spanned! {ty_span(ty)=>
                    let __content =
                        <#ty as #krate::Argument>::schema(__generator, &#p::Constraints::NONE);
                    __branches.push(#p::union_branch(
                        __generator,
                        __TOOL_REPR,
                        #wire,
                        #p::Some(__content),
                        #doc,
                    ));
                });
                content_arms.extend(quote_spanned! {ty_span(ty)=>
                    #index => #p::Ok(
                        <#ty as #krate::Argument>::parse::<__D, #p::Unconstrained>(__de, __cx, __at)?
                            .map(Self::#variant_ident),
                    ),
                });
                if internal_tag.is_some() {
                    fields_arms.extend(quote_spanned! {ty_span(ty)=>
                        #index => #p::Ok(
                            <#ty as #p::Object>::visit_members(__map, __cx, __at)?
                                .map(Self::#variant_ident),
                        ),
                    });
                }
                to_value_arms.extend(quote! {
                    Self::#variant_ident(__content) => #p::union_value(
                        __TOOL_REPR,
                        #wire,
                        #p::Some(<#ty as #krate::Argument>::to_value(__content)?),
                    ),
                });
            }
            Shape::Tuple(fields) => {
                // The content is read as the tuple of the field types: an array of exactly
                // that many items, as serde reads a tuple variant.
                let types: Vec<&syn::Type> = fields.iter().map(|field| &field.ty).collect();
                let names: Vec<syn::Ident> = (0..fields.len())
                    .map(|i| format_ident!("__tool_field_{}", i))
                    .collect();
                let tuple = quote!((#(#types,)*));
                for ty in &types {
                    branches.extend(quote_spanned! {ty_span(ty)=>
                        __tool_variant_field::<#ty>();
                    });
                }
                branches.extend(quote! {
                    let __content =
                        <#tuple as #krate::Argument>::schema(__generator, &#p::Constraints::NONE);
                    __branches.push(#p::union_branch(
                        __generator,
                        __TOOL_REPR,
                        #wire,
                        #p::Some(__content),
                        #doc,
                    ));
                });
                content_arms.extend(quote! {
                    #index => #p::Ok(
                        <#tuple as #krate::Argument>::parse::<__D, #p::Unconstrained>(__de, __cx, __at)?
                            .map(|(#(#names,)*)| Self::#variant_ident(#(#names,)*)),
                    ),
                });
                to_value_arms.extend(quote! {
                    Self::#variant_ident(#(#names,)*) => #p::union_value(
                        __TOOL_REPR,
                        #wire,
                        #p::Some(#p::Value::Array(::std::vec![
                            #(<#types as #krate::Argument>::to_value(#names)?,)*
                        ])),
                    ),
                });
            }
            Shape::Struct(fields) => {
                let hidden = format_ident!("__ToolVariant{}", index);
                let members: Vec<&syn::Ident> = fields.iter().map(|field| field.member).collect();
                let types = fields.iter().map(|field| field.ty);
                let object = object_argument(&ObjectSpec {
                    krate,
                    ident: &hidden,
                    generics: None,
                    name: format!("{ident}::{variant_ident}"),
                    doc: None,
                    fields,
                    container_default: false,
                    tag: internal_tag,
                });
                items.extend(quote! {
                    struct #hidden {
                        #(#members: #types,)*
                    }
                    const _: () = {
                        #object
                    };
                });
                branches.extend(quote! {
                    let __content =
                        <#hidden as #krate::Argument>::schema(__generator, &#p::Constraints::NONE);
                    __branches.push(#p::union_branch(
                        __generator,
                        __TOOL_REPR,
                        #wire,
                        #p::Some(__content),
                        #doc,
                    ));
                });
                content_arms.extend(quote! {
                    #index => #p::Ok(
                        <#hidden as #krate::Argument>::parse::<__D, #p::Unconstrained>(__de, __cx, __at)?
                            .map(|__v| Self::#variant_ident { #(#members: __v.#members,)* }),
                    ),
                });
                fields_arms.extend(quote! {
                    #index => #p::Ok(
                        <#hidden as #p::Object>::visit_members(__map, __cx, __at)?
                            .map(|__v| Self::#variant_ident { #(#members: __v.#members,)* }),
                    ),
                });
                let live_fields: Vec<&Field<'_>> =
                    fields.iter().filter(|field| !field.attrs.skip).collect();
                let live_members = live_fields.iter().map(|field| field.member);
                let inserts = live_fields.iter().map(|field| {
                    let member = field.member;
                    let ty = field.ty;
                    let wire = &field.wire;
                    let value = field_value(&field.attrs, ty, quote!(#member), &p, krate);
                    let value = quote!(#value?);
                    quote! {
                        let _: #p::Option<#p::Value> = __object.insert(
                            ::std::string::String::from(#wire),
                            #value,
                        );
                    }
                });
                to_value_arms.extend(quote! {
                    #[allow(unused_variables)]
                    Self::#variant_ident { #(#live_members,)* .. } => {
                        let mut __object = #p::Map::new();
                        #(#inserts)*
                        #p::union_value(__TOOL_REPR, #wire, #p::Some(#p::Value::Object(__object)))
                    }
                });
            }
        }
    }
    // Names each field type of a tuple variant on its own, so that one without `Argument`
    // is reported on that field rather than on the tuple.
    let field_check = live
        .iter()
        .any(|variant| matches!(variant.shape, Shape::Tuple(_)))
        .then(|| quote!(const fn __tool_variant_field<__T: #krate::Argument>() {}));
    quote! {
        #items
        #field_check

        const __TOOL_REPR: #p::Repr = #repr;

        #[doc = #variants_doc]
        #[automatically_derived]
        impl #krate::Argument for #ident {
            fn schema(
                __generator: &mut #p::SchemaGen,
                _: &#p::Constraints,
            ) -> #p::Value {
                __generator.object::<Self>(#name, |__generator| {
                    let mut __branches: ::std::vec::Vec<#p::Value> = ::std::vec::Vec::new();
                    #branches
                    #p::union_schema(#type_doc, __TOOL_REPR, __branches)
                })
            }

            #[inline]
            fn parse<'__de, __D: #p::Deserializer<'__de>, __C: #p::ConstConstraints>(
                __de: __D,
                __cx: &mut #p::Cx,
                __at: &#p::Path<'_>,
            ) -> #p::Result<#p::Option<Self>, __D::Error> {
                #p::parse_union::<Self, __D>(__de, __cx, __at, __TOOL_REPR)
            }

            fn to_value(&self) -> #p::Option<#p::Value> {
                #[allow(unreachable_patterns)]
                match self {
                    #to_value_arms
                    _ => #p::None,
                }
            }
        }

        #[automatically_derived]
        impl #p::Union for #ident {
            const VARIANTS: &'static [&'static str] = &[#(#wires),*];
            const UNIT: &'static [bool] = &[#(#units),*];
            const TAG_REQUEST: &'static str = #tag_request;

            #[allow(unreachable_patterns)]
            #[inline]
            fn index(__name: &str) -> #p::Option<usize> {
                match __name {
                    #(#wires => #p::Some(#indices),)*
                    _ => #p::None,
                }
            }

            fn unit(__index: usize) -> #p::Option<Self> {
                match __index {
                    #unit_arms
                    _ => #p::None,
                }
            }

            fn content<'__de, __D: #p::Deserializer<'__de>>(
                __index: usize,
                __de: __D,
                __cx: &mut #p::Cx,
                __at: &#p::Path<'_>,
            ) -> #p::Result<#p::Option<Self>, __D::Error> {
                match __index {
                    #content_arms
                    _ => {
                        #p::skip_value(__de)?;
                        #p::Ok(#p::None)
                    }
                }
            }

            fn fields<'__de, __A: #p::MapAccess<'__de>>(
                __index: usize,
                __map: __A,
                __cx: &mut #p::Cx,
                __at: &#p::Path<'_>,
            ) -> #p::Result<#p::Option<Self>, __A::Error> {
                match __index {
                    #fields_arms
                    _ => {
                        #p::drain_map(__map)?;
                        #p::Ok(#p::None)
                    }
                }
            }
        }
    }
}

fn tool_impl(input: &Input<'_>) -> TokenStream {
    let krate = &input.krate;
    let p = quote!(#krate::__private);
    let ident = input.ident;
    let name = &input.name.value;
    let description = input.doc.as_deref().unwrap_or_default();
    let table = parameter_table(input);
    // A newtype's field may advertise any schema: the arguments must still be an object.
    let contract = match input.body {
        Body::Newtype(_) => quote!(#p::object_arguments(#p::root_contract::<#ident>())),
        _ => quote!(#p::root_contract::<#ident>()),
    };
    let doc_schema = match crate::parameter_table::exact_schema(input) {
        Some(text) => quote!(#p::Some(#text)),
        None => quote!(#p::None),
    };
    let resource = match &input.body {
        Body::Struct(fields) => fields.iter().find_map(|field| {
            let kind = &field.attrs.resource.as_ref()?.value;
            let member = field.member;
            let ty = field.ty;
            let span = ty_span(ty);
            let check = quote_spanned!(span=> #p::resource_of::<#ty>);
            let optional = matches!(
                ty,
                syn::Type::Path(path)
                    if path.path.segments.last().is_some_and(|last| last.ident == "Option")
            );
            Some(quote! {
                const RESOURCE: #p::Option<&'static str> = #p::Some(#kind);

                const RESOURCE_OPTIONAL: bool = #optional;

                fn resource(&self) -> #p::Option<#krate::contract::ResourceRef> {
                    #check(#kind, &self.#member)
                }
            })
        }),
        _ => None,
    };
    quote! {
        #[doc = #table]
        #[automatically_derived]
        impl #krate::Tool for #ident {
            const NAME: &'static str = #name;

            const DOC_SCHEMA: #p::Option<&'static str> = #doc_schema;

            fn description() -> &'static str {
                #description
            }

            fn input_schema() -> &'static #p::Value {
                &__tool_contract().schema
            }

            fn contract_errors() -> &'static [::std::string::String] {
                &__tool_contract().problems
            }

            #resource
        }

        fn __tool_contract() -> &'static #p::Contract {
            static __TOOL_CONTRACT: #p::OnceLock<#p::Contract> = #p::OnceLock::new();
            __TOOL_CONTRACT.get_or_init(|| #contract)
        }
    }
}

/// The keywords of a `range(..)` as written: `min = 1, exclusive_max = 2.5`.
fn range_text(range: &attr::Range) -> String {
    [
        ("min", range.min),
        ("max", range.max),
        ("exclusive_min", range.exclusive_min),
        ("exclusive_max", range.exclusive_max),
    ]
    .into_iter()
    .filter_map(|(keyword, bound)| bound.map(|bound| format!("{keyword} = {bound}")))
    .collect::<Vec<_>>()
    .join(", ")
}
