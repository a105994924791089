//! The `#[tool(...)]` keywords and the `#[serde(...)]` ones honoured, parsed with every
//! mistake collected rather than the first.

use proc_macro2::{Span, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt as _;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned as _;
use syn::{Attribute, Ident, LitFloat, LitInt, LitStr, Token};

use crate::case::{RULES, RenameRule};
use crate::errors::Errors;

/// A string with the span of the literal it came from.
#[derive(Clone)]
pub(crate) struct Spanned<T> {
    pub(crate) value: T,
    pub(crate) span: Span,
}

/// A number literal from `range(..)`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum NumLit {
    U(u64),
    I(i64),
    F(f64),
}

impl NumLit {
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            NumLit::U(u) => u as f64,
            NumLit::I(i) => i as f64,
            NumLit::F(f) => f,
        }
    }

    fn as_i128(self) -> Option<i128> {
        match self {
            NumLit::U(u) => Some(i128::from(u)),
            NumLit::I(i) => Some(i128::from(i)),
            NumLit::F(_) => None,
        }
    }

    /// `self < other` (or `<=` when `or_equal`), exact for two integers.
    pub(crate) fn less(self, other: NumLit, or_equal: bool) -> bool {
        match (self.as_i128(), other.as_i128()) {
            (Some(a), Some(b)) => a < b || (or_equal && a == b),
            _ => {
                let (a, b) = (self.as_f64(), other.as_f64());
                a < b || (or_equal && a == b)
            }
        }
    }
}

impl std::fmt::Display for NumLit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NumLit::U(u) => write!(f, "{u}"),
            NumLit::I(i) => write!(f, "{i}"),
            NumLit::F(x) => write!(f, "{x:?}"),
        }
    }
}

#[derive(Default)]
pub(crate) struct Container {
    pub(crate) name: Option<Spanned<String>>,
    pub(crate) description: Option<String>,
    pub(crate) krate: Option<syn::Path>,
    pub(crate) rename_all: Option<RenameRule>,
    /// `rename_all_fields`: the rule for the fields of every struct variant.
    pub(crate) rename_all_fields: Option<RenameRule>,
    pub(crate) default: bool,
    /// `tag = "..."`: internally tagged (adjacently with `content`).
    pub(crate) tag: Option<Spanned<String>>,
    /// `content = "..."`: adjacently tagged.
    pub(crate) content: Option<Spanned<String>>,
    /// `untagged`.
    pub(crate) untagged: Option<Span>,
    /// `transparent`: a struct with one field is that field on the wire.
    pub(crate) transparent: Option<Span>,
    /// `#[tool(schemars)]`: the type's schema comes from `schemars::JsonSchema` and its values
    /// are checked against it.
    pub(crate) schemars: Option<Span>,
}

#[derive(Default)]
pub(crate) struct Length {
    pub(crate) min: Option<u64>,
    pub(crate) max: Option<u64>,
    pub(crate) span: Option<Span>,
}

#[derive(Default)]
pub(crate) struct Range {
    pub(crate) min: Option<NumLit>,
    pub(crate) max: Option<NumLit>,
    pub(crate) exclusive_min: Option<NumLit>,
    pub(crate) exclusive_max: Option<NumLit>,
    pub(crate) span: Option<Span>,
}

pub(crate) enum Default {
    None,
    Trait,
    Path(syn::ExprPath),
}

pub(crate) struct Field {
    pub(crate) rename: Option<String>,
    pub(crate) default: Default,
    pub(crate) skip: bool,
    pub(crate) description: Option<String>,
    pub(crate) length: Length,
    pub(crate) range: Range,
    pub(crate) pattern: Option<Spanned<String>>,
    /// `inner(...)`: the constraints on each item of a collection (each value of a map).
    pub(crate) inner: Option<Box<Field>>,
    /// `keys(...)`: the constraints on each key of a map, as its property name.
    pub(crate) keys: Option<Spanned<Box<Field>>>,
    /// `format = "..."`.
    pub(crate) format: Option<Spanned<String>>,
    /// `example = <JSON literal>` (repeatable): advertised as `examples`.
    pub(crate) examples: Vec<Spanned<String>>,
    /// `#[deprecated]`: advertised as `deprecated: true`.
    pub(crate) deprecated: bool,
    /// `#[serde(flatten)]`: the fields of this struct-typed field are members of the outer
    /// object.
    pub(crate) flatten: Option<Span>,
    /// `#[tool(schemars)]`: the field's contract is its type's `schemars::JsonSchema`, checked
    /// through `ViaSchemars`.
    pub(crate) schemars: Option<Span>,
    /// `#[tool(with = Marker)]`: the field's contract is `Marker`'s `ArgumentWith` for the
    /// field's type.
    pub(crate) with: Option<syn::Type>,
    /// `#[tool(resource = "Type")]`: this field's value is the id of the entity of type
    /// `Type` that the call acts on.
    pub(crate) resource: Option<Spanned<String>>,
}

impl std::default::Default for Field {
    fn default() -> Self {
        Field {
            rename: None,
            default: Default::None,
            skip: false,
            description: None,
            length: Length::default(),
            range: Range::default(),
            pattern: None,
            inner: None,
            keys: None,
            format: None,
            examples: Vec::new(),
            deprecated: false,
            flatten: None,
            schemars: None,
            with: None,
            resource: None,
        }
    }
}

#[derive(Default)]
pub(crate) struct Variant {
    pub(crate) rename: Option<String>,
    pub(crate) skip: bool,
    /// `rename_all` for the fields of a struct variant.
    pub(crate) rename_all: Option<RenameRule>,
    pub(crate) description: Option<String>,
}

/// One keyword of an attribute list, read up to the end of its name; `= value`, `(...)` or
/// nothing follows.
struct Keyword<'a> {
    path: syn::Path,
    input: ParseStream<'a>,
}

impl<'a> Keyword<'a> {
    fn is(&self, name: &str) -> bool {
        self.path.is_ident(name)
    }

    fn name(&self) -> String {
        self.path.to_token_stream().to_string()
    }

    fn error(&self, message: impl std::fmt::Display) -> syn::Error {
        syn::Error::new_spanned(&self.path, message)
    }

    fn has_value(&self) -> bool {
        self.input.peek(Token![=])
    }

    /// The stream after `=`.
    fn value(&self) -> syn::Result<ParseStream<'a>> {
        self.input.parse::<Token![=]>()?;
        Ok(self.input)
    }

    fn parse_value<T: Parse>(&self) -> syn::Result<T> {
        self.value()?.parse()
    }

    /// Consumes whatever follows the name, for keywords that are accepted and ignored.
    fn ignore_value(&self) -> syn::Result<()> {
        skip_to_comma(self.input)
    }

    /// Reads the `(...)` after the name with `each`, recording every mistake in it.
    fn list(
        &self,
        errors: &Errors,
        each: impl FnMut(&Keyword<'_>) -> syn::Result<()>,
    ) -> syn::Result<()> {
        let content;
        syn::parenthesized!(content in self.input);
        read_list(&content, errors, each)
    }
}

/// Reads `#[tool(...)]` or `#[serde(...)]` with `each`, recording every mistake in it.
fn read_attr(attr: &Attribute, errors: &Errors, each: impl FnMut(&Keyword<'_>) -> syn::Result<()>) {
    let read = attr.parse_args_with(|input: ParseStream<'_>| {
        if input.is_empty() {
            Ok(())
        } else {
            read_list(input, errors, each)
        }
    });
    if let Err(error) = read {
        errors.push(error);
    }
}

/// Reads comma-separated keywords with `each`. A keyword that fails is recorded and skipped up
/// to the next comma, and reading goes on, so one build reports every mistake in the list.
fn read_list(
    input: ParseStream<'_>,
    errors: &Errors,
    mut each: impl FnMut(&Keyword<'_>) -> syn::Result<()>,
) -> syn::Result<()> {
    loop {
        let read = keyword_path(input)
            .and_then(|path| each(&Keyword { path, input }))
            .and_then(|()| {
                if input.is_empty() || input.peek(Token![,]) {
                    Ok(())
                } else {
                    Err(input.error("expected `,`"))
                }
            });
        if let Err(error) = read {
            errors.push(error);
            skip_to_comma(input)?;
        }
        if input.is_empty() {
            return Ok(());
        }
        input.parse::<Token![,]>()?;
        if input.is_empty() {
            return Ok(());
        }
    }
}

/// A keyword's name: an identifier (`crate` included) or a path of them.
fn keyword_path(input: ParseStream<'_>) -> syn::Result<syn::Path> {
    let mut path = syn::Path {
        leading_colon: input.parse()?,
        segments: Punctuated::new(),
    };
    loop {
        path.segments.push_value(Ident::parse_any(input)?.into());
        if !input.peek(Token![::]) {
            return Ok(path);
        }
        path.segments.push_punct(input.parse()?);
    }
}

fn skip_to_comma(input: ParseStream<'_>) -> syn::Result<()> {
    input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((token, next)) = rest.token_tree() {
            if matches!(&token, TokenTree::Punct(punct) if punct.as_char() == ',') {
                break;
            }
            rest = next;
        }
        Ok(((), rest))
    })
}

/// serde attributes that change what serde would accept in ways this derive does not model.
fn unsupported_serde(keyword: &Keyword<'_>, place: &str) -> syn::Error {
    let name = keyword.name();
    let hint = match name.as_str() {
        "alias" => "; a field has one name on the wire, set with `rename`",
        "deserialize_with" | "with" | "remote" if place == "a field" => {
            "; for a type of another crate, implement `tool_core::contract::ArgumentWith` on a \
             marker type of yours and write `#[tool(with = Marker)]`"
        }
        "deserialize_with" | "with" | "from" | "try_from" | "remote" => {
            "; parse into a supported type and convert it in the handler"
        }
        "tag" | "content" | "untagged" => "; tagging applies to enums",
        "other" => "; every accepted string must be a variant",
        "default" => "; use `#[serde(default)]` without a path, or `default = \"...\"` on fields",
        _ => "",
    };
    let shown = if name == "default" {
        "default = \"...\""
    } else {
        &name
    };
    keyword.error(format!(
        "`#[serde({shown})]` on {place} is not supported by the tool derives: the advertised \
         schema would no longer match what serde accepts{hint}"
    ))
}

fn unknown_keyword(keyword: &Keyword<'_>, within: &str, expected: &str) -> syn::Error {
    keyword.error(format!(
        "unknown `{within}` keyword `{}`; expected {expected}",
        keyword.name()
    ))
}

fn rename_rule(lit: &LitStr) -> syn::Result<RenameRule> {
    RenameRule::from_str(&lit.value()).ok_or_else(|| {
        let known: Vec<String> = RULES.iter().map(|(name, _)| format!("{name:?}")).collect();
        syn::Error::new_spanned(
            lit,
            format!(
                "unknown rename rule {:?}; expected one of {}",
                lit.value(),
                known.join(", ")
            ),
        )
    })
}

/// Reads `rename = "x"` or `rename(deserialize = "x", serialize = "y")`: the name serde
/// deserializes from.
fn deserialize_name(keyword: &Keyword<'_>, errors: &Errors) -> syn::Result<Option<LitStr>> {
    if keyword.has_value() {
        return keyword.parse_value().map(Some);
    }
    let mut name = None;
    keyword.list(errors, |inner| {
        if inner.is("deserialize") {
            name = Some(inner.parse_value()?);
        } else if inner.is("serialize") {
            inner.parse_value::<LitStr>()?;
        } else {
            return Err(inner.error("expected `serialize` or `deserialize`"));
        }
        Ok(())
    })?;
    Ok(name)
}

pub(crate) fn container(attrs: &[Attribute], errors: &Errors) -> Container {
    let mut out = Container::default();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("tool")) {
        read_attr(attr, errors, |keyword| container_tool(keyword, &mut out));
    }
    // A `#[tool(schemars)]` type's serde attributes are schemars' and serde's business.
    if out.schemars.is_none() {
        for attr in attrs.iter().filter(|attr| attr.path().is_ident("serde")) {
            read_attr(attr, errors, |keyword| {
                container_serde(keyword, &mut out, errors)
            });
        }
    }
    out
}

fn container_tool(keyword: &Keyword<'_>, out: &mut Container) -> syn::Result<()> {
    if keyword.is("name") {
        let lit: LitStr = keyword.parse_value()?;
        out.name = Some(Spanned {
            value: lit.value(),
            span: lit.span(),
        });
    } else if keyword.is("description") {
        out.description = Some(keyword.parse_value::<LitStr>()?.value());
    } else if keyword.is("crate") {
        out.krate = Some(keyword.parse_value::<LitStr>()?.parse()?);
    } else if keyword.is("schemars") {
        out.schemars = Some(keyword.path.span());
    } else {
        return Err(keyword.error(format!(
            "unknown tool attribute `{}`; on a type, #[tool(...)] takes `name`, `description`, \
             `schemars` and `crate`",
            keyword.name()
        )));
    }
    Ok(())
}

fn container_serde(keyword: &Keyword<'_>, out: &mut Container, errors: &Errors) -> syn::Result<()> {
    if keyword.is("rename_all") {
        if let Some(lit) = deserialize_name(keyword, errors)? {
            out.rename_all = Some(rename_rule(&lit)?);
        }
    } else if keyword.is("default") {
        if keyword.has_value() {
            return Err(unsupported_serde(keyword, "a type"));
        }
        out.default = true;
    } else if keyword.is("rename_all_fields") {
        if let Some(lit) = deserialize_name(keyword, errors)? {
            out.rename_all_fields = Some(rename_rule(&lit)?);
        }
    } else if keyword.is("tag") || keyword.is("content") {
        let lit: LitStr = keyword.parse_value()?;
        let value = Some(Spanned {
            value: lit.value(),
            span: lit.span(),
        });
        if keyword.is("tag") {
            out.tag = value;
        } else {
            out.content = value;
        }
    } else if keyword.is("untagged") {
        out.untagged = Some(keyword.path.span());
    } else if keyword.is("transparent") {
        out.transparent = Some(keyword.path.span());
    } else if keyword.is("deny_unknown_fields") {
        // Unknown fields are always refused.
    } else if ["rename", "expecting", "crate", "into"]
        .iter()
        .any(|ok| keyword.is(ok))
    {
        // These change nothing about what is accepted from JSON.
        keyword.ignore_value()?;
    } else {
        return Err(unsupported_serde(keyword, "a type"));
    }
    Ok(())
}

fn parse_u64(keyword: &Keyword<'_>) -> syn::Result<u64> {
    keyword.parse_value::<LitInt>()?.base10_parse::<u64>()
}

fn parse_num(keyword: &Keyword<'_>) -> syn::Result<NumLit> {
    let input = keyword.value()?;
    let negative = input.peek(Token![-]);
    if negative {
        input.parse::<Token![-]>()?;
    }
    if input.peek(LitInt) {
        let lit = input.parse::<LitInt>()?;
        if negative {
            let magnitude = lit.base10_parse::<u64>()?;
            if magnitude == 0 {
                return Ok(NumLit::U(0));
            }
            let value = 0i64.checked_sub_unsigned(magnitude).ok_or_else(|| {
                syn::Error::new(lit.span(), "number out of range of a 64-bit integer")
            })?;
            Ok(NumLit::I(value))
        } else {
            Ok(NumLit::U(lit.base10_parse::<u64>()?))
        }
    } else if input.peek(LitFloat) {
        let lit = input.parse::<LitFloat>()?;
        let value = lit.base10_parse::<f64>()?;
        if !value.is_finite() {
            return Err(syn::Error::new(lit.span(), "bound must be finite"));
        }
        Ok(NumLit::F(if negative { -value } else { value }))
    } else {
        Err(input.error("expected a number literal"))
    }
}

fn length(keyword: &Keyword<'_>, out: &mut Length, errors: &Errors) -> syn::Result<()> {
    out.span = Some(keyword.path.span());
    keyword.list(errors, |inner| {
        if inner.is("min") {
            out.min = Some(parse_u64(inner)?);
        } else if inner.is("max") {
            out.max = Some(parse_u64(inner)?);
        } else if inner.is("equal") {
            let n = parse_u64(inner)?;
            out.min = Some(n);
            out.max = Some(n);
        } else {
            return Err(unknown_keyword(inner, "length", "`min`, `max` or `equal`"));
        }
        Ok(())
    })
}

fn range(keyword: &Keyword<'_>, out: &mut Range, errors: &Errors) -> syn::Result<()> {
    out.span = Some(keyword.path.span());
    keyword.list(errors, |inner| {
        let slot = if inner.is("min") {
            &mut out.min
        } else if inner.is("max") {
            &mut out.max
        } else if inner.is("exclusive_min") {
            &mut out.exclusive_min
        } else if inner.is("exclusive_max") {
            &mut out.exclusive_max
        } else {
            return Err(unknown_keyword(
                inner,
                "range",
                "`min`, `max`, `exclusive_min` or `exclusive_max`",
            ));
        };
        *slot = Some(parse_num(inner)?);
        Ok(())
    })
}

fn pattern(keyword: &Keyword<'_>) -> syn::Result<Spanned<String>> {
    let lit: LitStr = keyword.parse_value()?;
    Ok(Spanned {
        value: lit.value(),
        span: lit.span(),
    })
}

pub(crate) fn field(attrs: &[Attribute], errors: &Errors) -> Field {
    let mut out = Field::default();
    for attr in attrs {
        if attr.path().is_ident("deprecated") {
            out.deprecated = true;
        } else if attr.path().is_ident("tool") {
            read_attr(attr, errors, |keyword| {
                field_tool(keyword, &mut out, errors)
            });
        } else if attr.path().is_ident("serde") {
            read_attr(attr, errors, |keyword| {
                field_serde(keyword, &mut out, errors)
            });
        }
    }
    out
}

fn field_tool(keyword: &Keyword<'_>, out: &mut Field, errors: &Errors) -> syn::Result<()> {
    if keyword.is("length") {
        length(keyword, &mut out.length, errors)?;
    } else if keyword.is("range") {
        range(keyword, &mut out.range, errors)?;
    } else if keyword.is("pattern") {
        out.pattern = Some(pattern(keyword)?);
    } else if keyword.is("regex") {
        keyword.list(errors, |inner| {
            if inner.is("pattern") {
                out.pattern = Some(pattern(inner)?);
                Ok(())
            } else {
                Err(unknown_keyword(inner, "regex", "`pattern = \"...\"`"))
            }
        })?;
    } else if keyword.is("format") {
        out.format = Some(pattern(keyword)?);
    } else if keyword.is("inner") {
        let mut inner = Field::default();
        keyword.list(errors, |item| {
            if [
                "length", "range", "pattern", "regex", "format", "inner", "keys",
            ]
            .iter()
            .any(|ok| item.is(ok))
            {
                field_tool(item, &mut inner, errors)
            } else {
                Err(unknown_keyword(
                    item,
                    "inner",
                    "`length`, `range`, `pattern`, `regex`, `format`, `inner` or `keys`",
                ))
            }
        })?;
        out.inner = Some(Box::new(inner));
    } else if keyword.is("keys") {
        let span = keyword.path.span();
        let mut keys = Field::default();
        keyword.list(errors, |item| {
            if ["length", "pattern", "regex"].iter().any(|ok| item.is(ok)) {
                field_tool(item, &mut keys, errors)
            } else {
                Err(unknown_keyword(
                    item,
                    "keys",
                    "`length`, `pattern` or `regex`",
                ))
            }
        })?;
        out.keys = Some(Spanned {
            value: Box::new(keys),
            span,
        });
    } else if keyword.is("example") {
        let value = keyword.value()?;
        let expr: syn::Expr = value.parse()?;
        let text = json_literal(&expr)?;
        if serde_json::from_str::<serde_json::Value>(&text).is_err() {
            return Err(syn::Error::new_spanned(
                &expr,
                "the example is not a JSON value",
            ));
        }
        out.examples.push(Spanned {
            value: text,
            span: expr.span(),
        });
    } else if keyword.is("schemars") {
        out.schemars = Some(keyword.path.span());
    } else if keyword.is("with") {
        out.with = Some(keyword.parse_value::<syn::Type>()?);
    } else if keyword.is("description") {
        out.description = Some(keyword.parse_value::<LitStr>()?.value());
    } else if keyword.is("resource") {
        let lit: LitStr = keyword.parse_value()?;
        let kind = lit.value();
        let ident = |part: &str| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        if !kind.split("::").all(ident) {
            return Err(syn::Error::new_spanned(
                &lit,
                format!(
                    "a resource type is an entity type name such as \"Account\" or \
                     \"Bank::Account\"; got {kind:?}"
                ),
            ));
        }
        out.resource = Some(Spanned {
            value: kind,
            span: lit.span(),
        });
    } else {
        return Err(keyword.error(format!(
            "unknown tool attribute `{}`; on a field, #[tool(...)] takes `length`, `range`, \
             `pattern`, `regex`, `format`, `inner`, `keys`, `example`, `schemars`, `with`, \
             `description` and `resource`",
            keyword.name()
        )));
    }
    Ok(())
}

/// An `example = ...` value as JSON text: a string, number or boolean literal, or a string
/// holding any JSON (`example = r#"{"a": 1}"#`).
fn json_literal(expr: &syn::Expr) -> syn::Result<String> {
    let error = || {
        syn::Error::new_spanned(
            expr,
            "an example is a literal: a string, a number or a boolean; write other JSON as \
             `example = json(r#\"...\"#)`",
        )
    };
    match expr {
        syn::Expr::Lit(lit) => match &lit.lit {
            syn::Lit::Str(s) => Ok(serde_json::Value::from(s.value()).to_string()),
            syn::Lit::Int(i) => Ok(i.base10_digits().to_owned()),
            syn::Lit::Float(f) => Ok(f.base10_digits().to_owned()),
            syn::Lit::Bool(b) => Ok(b.value.to_string()),
            _ => Err(error()),
        },
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr: inner,
            ..
        }) => Ok(format!("-{}", json_literal(inner)?)),
        syn::Expr::Call(call)
            if matches!(&*call.func, syn::Expr::Path(path) if path.path.is_ident("json"))
                && call.args.len() == 1 =>
        {
            let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) = &call.args[0]
            else {
                return Err(error());
            };
            let value: serde_json::Value = serde_json::from_str(&text.value()).map_err(|e| {
                syn::Error::new_spanned(text, format!("the example is not JSON: {e}"))
            })?;
            Ok(value.to_string())
        }
        _ => Err(error()),
    }
}

fn field_serde(keyword: &Keyword<'_>, out: &mut Field, errors: &Errors) -> syn::Result<()> {
    if keyword.is("rename") {
        if let Some(lit) = deserialize_name(keyword, errors)? {
            out.rename = Some(lit.value());
        }
    } else if keyword.is("default") {
        out.default = if keyword.has_value() {
            Default::Path(keyword.parse_value::<LitStr>()?.parse()?)
        } else {
            Default::Trait
        };
    } else if keyword.is("skip") || keyword.is("skip_deserializing") {
        out.skip = true;
    } else if keyword.is("flatten") {
        out.flatten = Some(keyword.path.span());
    } else if ["skip_serializing", "skip_serializing_if", "serialize_with"]
        .iter()
        .any(|ok| keyword.is(ok))
    {
        // Serialization only.
        keyword.ignore_value()?;
    } else {
        return Err(unsupported_serde(keyword, "a field"));
    }
    Ok(())
}

pub(crate) fn variant(attrs: &[Attribute], errors: &Errors) -> Variant {
    let mut out = Variant::default();
    for attr in attrs {
        if attr.path().is_ident("tool") {
            read_attr(attr, errors, |keyword| {
                if keyword.is("description") {
                    out.description = Some(keyword.parse_value::<LitStr>()?.value());
                    Ok(())
                } else {
                    Err(keyword.error(format!(
                        "unknown tool attribute `{}`; on a variant, #[tool(...)] takes \
                         `description`",
                        keyword.name()
                    )))
                }
            });
        } else if attr.path().is_ident("serde") {
            read_attr(attr, errors, |keyword| {
                if keyword.is("rename") {
                    if let Some(lit) = deserialize_name(keyword, errors)? {
                        out.rename = Some(lit.value());
                    }
                } else if keyword.is("rename_all") {
                    if let Some(lit) = deserialize_name(keyword, errors)? {
                        out.rename_all = Some(rename_rule(&lit)?);
                    }
                } else if keyword.is("skip") || keyword.is("skip_deserializing") {
                    out.skip = true;
                } else if keyword.is("skip_serializing") {
                } else {
                    return Err(unsupported_serde(keyword, "a variant"));
                }
                Ok(())
            });
        }
    }
    out
}
