//! The `#[tool(...)]` keywords and the `#[serde(...)]` ones honoured, parsed with every
//! mistake collected rather than the first.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned as _;
use syn::{Attribute, LitFloat, LitInt, LitStr, Token};

use crate::case::{RULES, RenameRule};

/// Errors gathered across one derive, reported together.
#[derive(Default)]
pub(crate) struct Errors(Vec<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        self.0.push(error);
    }

    pub(crate) fn spanned(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.0.push(syn::Error::new_spanned(tokens, message));
    }

    pub(crate) fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.0.push(syn::Error::new(span, message));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn to_compile_errors(&self) -> TokenStream {
        self.0.iter().map(syn::Error::to_compile_error).collect()
    }
}

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
    pub(crate) default: bool,
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
        }
    }
}

#[derive(Default)]
pub(crate) struct Variant {
    pub(crate) rename: Option<String>,
    pub(crate) skip: bool,
}

/// serde attributes that change what serde would accept in ways this derive does not model.
fn unsupported_serde(meta: &ParseNestedMeta<'_>, errors: &mut Errors, place: &str) {
    let name = meta.path.to_token_stream().to_string();
    let hint = match name.as_str() {
        "flatten" => "; declare the fields in this struct, or keep the inner struct as a field",
        "alias" => "; a field has one name on the wire, set with `rename`",
        "deserialize_with" | "with" | "from" | "try_from" | "remote" => {
            "; parse into a supported type and convert it in the handler"
        }
        "tag" | "content" | "untagged" => {
            "; a derived enum is a string `enum` of unit variants, with no tagging"
        }
        "other" => "; every accepted string must be a variant",
        "default" => "; use `#[serde(default)]` without a path, or `default = \"...\"` on fields",
        _ => "",
    };
    let shown = if name == "default" {
        "default = \"...\""
    } else {
        &name
    };
    errors.spanned(
        &meta.path,
        format!(
            "`#[serde({shown})]` on {place} is not supported by the tool derives: the advertised \
             schema would no longer match what serde accepts{hint}"
        ),
    );
}

fn unknown_keyword(inner: &ParseNestedMeta<'_>, within: &str, expected: &str) -> syn::Error {
    syn::Error::new_spanned(
        &inner.path,
        format!(
            "unknown `{within}` keyword `{}`; expected {expected}",
            inner.path.to_token_stream()
        ),
    )
}

/// Consumes whatever follows a keyword (`= value` or `(...)`), so parsing can go on.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_value(&inner))?;
    }
    Ok(())
}

fn lit_str(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    meta.value()?.parse::<LitStr>()
}

fn rename_rule(lit: &LitStr, errors: &mut Errors) -> Option<RenameRule> {
    let rule = RenameRule::from_str(&lit.value());
    if rule.is_none() {
        let known: Vec<String> = RULES.iter().map(|(name, _)| format!("{name:?}")).collect();
        errors.spanned(
            lit,
            format!(
                "unknown rename rule {:?}; expected one of {}",
                lit.value(),
                known.join(", ")
            ),
        );
    }
    rule
}

/// Reads `rename = "x"` or `rename(deserialize = "x", serialize = "y")`: the name serde
/// deserializes from.
fn deserialize_name(meta: &ParseNestedMeta<'_>) -> syn::Result<Option<LitStr>> {
    if meta.input.peek(Token![=]) {
        return lit_str(meta).map(Some);
    }
    let mut name = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("deserialize") {
            name = Some(lit_str(&inner)?);
        } else if inner.path.is_ident("serialize") {
            lit_str(&inner)?;
        } else {
            return Err(inner.error("expected `serialize` or `deserialize`"));
        }
        Ok(())
    })?;
    Ok(name)
}

pub(crate) fn container(attrs: &[Attribute], errors: &mut Errors) -> Container {
    let mut out = Container::default();
    for attr in attrs {
        if attr.path().is_ident("tool") {
            let result = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("name") {
                    let lit = lit_str(&meta)?;
                    out.name = Some(Spanned {
                        value: lit.value(),
                        span: lit.span(),
                    });
                } else if meta.path.is_ident("description") {
                    out.description = Some(lit_str(&meta)?.value());
                } else if meta.path.is_ident("crate") {
                    out.krate = Some(lit_str(&meta)?.parse()?);
                } else {
                    errors.spanned(
                        &meta.path,
                        format!(
                            "unknown tool attribute `{}`; on a type, #[tool(...)] takes `name`, \
                             `description` and `crate`",
                            meta.path.to_token_stream()
                        ),
                    );
                    skip_value(&meta)?;
                }
                Ok(())
            });
            if let Err(error) = result {
                errors.push(error);
            }
        } else if attr.path().is_ident("serde") {
            let result = attr.parse_nested_meta(|meta| {
                let path = &meta.path;
                if path.is_ident("rename_all") {
                    if let Some(lit) = deserialize_name(&meta)? {
                        out.rename_all = rename_rule(&lit, errors);
                    }
                } else if path.is_ident("default") {
                    if meta.input.peek(Token![=]) {
                        unsupported_serde(&meta, errors, "a type");
                        skip_value(&meta)?;
                    } else {
                        out.default = true;
                    }
                } else if path.is_ident("deny_unknown_fields") {
                    // Unknown fields are always refused.
                } else if ["rename", "expecting", "crate", "into"]
                    .iter()
                    .any(|ok| path.is_ident(ok))
                {
                    // These change nothing about what is accepted from JSON.
                    skip_value(&meta)?;
                } else {
                    unsupported_serde(&meta, errors, "a type");
                    skip_value(&meta)?;
                }
                Ok(())
            });
            if let Err(error) = result {
                errors.push(error);
            }
        }
    }
    out
}

fn parse_u64(meta: &ParseNestedMeta<'_>) -> syn::Result<u64> {
    meta.value()?.parse::<LitInt>()?.base10_parse::<u64>()
}

fn parse_num(meta: &ParseNestedMeta<'_>) -> syn::Result<NumLit> {
    let input = meta.value()?;
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

fn length(meta: &ParseNestedMeta<'_>, out: &mut Length) -> syn::Result<()> {
    out.span = Some(meta.path.span());
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("min") {
            out.min = Some(parse_u64(&inner)?);
        } else if inner.path.is_ident("max") {
            out.max = Some(parse_u64(&inner)?);
        } else if inner.path.is_ident("equal") {
            let n = parse_u64(&inner)?;
            out.min = Some(n);
            out.max = Some(n);
        } else {
            return Err(unknown_keyword(&inner, "length", "`min`, `max` or `equal`"));
        }
        Ok(())
    })
}

fn range(meta: &ParseNestedMeta<'_>, out: &mut Range) -> syn::Result<()> {
    out.span = Some(meta.path.span());
    meta.parse_nested_meta(|inner| {
        let slot = if inner.path.is_ident("min") {
            &mut out.min
        } else if inner.path.is_ident("max") {
            &mut out.max
        } else if inner.path.is_ident("exclusive_min") {
            &mut out.exclusive_min
        } else if inner.path.is_ident("exclusive_max") {
            &mut out.exclusive_max
        } else {
            return Err(unknown_keyword(
                &inner,
                "range",
                "`min`, `max`, `exclusive_min` or `exclusive_max`",
            ));
        };
        *slot = Some(parse_num(&inner)?);
        Ok(())
    })
}

fn pattern(lit: LitStr) -> Spanned<String> {
    Spanned {
        value: lit.value(),
        span: lit.span(),
    }
}

pub(crate) fn field(attrs: &[Attribute], errors: &mut Errors) -> Field {
    let mut out = Field::default();
    for attr in attrs {
        if attr.path().is_ident("tool") {
            let result = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("length") {
                    length(&meta, &mut out.length)?;
                } else if meta.path.is_ident("range") {
                    range(&meta, &mut out.range)?;
                } else if meta.path.is_ident("pattern") {
                    out.pattern = Some(pattern(lit_str(&meta)?));
                } else if meta.path.is_ident("regex") {
                    meta.parse_nested_meta(|inner| {
                        if inner.path.is_ident("pattern") {
                            out.pattern = Some(pattern(lit_str(&inner)?));
                            Ok(())
                        } else {
                            Err(unknown_keyword(&inner, "regex", "`pattern = \"...\"`"))
                        }
                    })?;
                } else if meta.path.is_ident("description") {
                    out.description = Some(lit_str(&meta)?.value());
                } else {
                    errors.spanned(
                        &meta.path,
                        format!(
                            "unknown tool attribute `{}`; on a field, #[tool(...)] takes \
                             `length`, `range`, `pattern`, `regex` and `description`",
                            meta.path.to_token_stream()
                        ),
                    );
                    skip_value(&meta)?;
                }
                Ok(())
            });
            if let Err(error) = result {
                errors.push(error);
            }
        } else if attr.path().is_ident("serde") {
            let result = attr.parse_nested_meta(|meta| {
                let path = &meta.path;
                if path.is_ident("rename") {
                    if let Some(lit) = deserialize_name(&meta)? {
                        out.rename = Some(lit.value());
                    }
                } else if path.is_ident("default") {
                    out.default = if meta.input.peek(Token![=]) {
                        Default::Path(lit_str(&meta)?.parse()?)
                    } else {
                        Default::Trait
                    };
                } else if path.is_ident("skip") || path.is_ident("skip_deserializing") {
                    out.skip = true;
                } else if ["skip_serializing", "skip_serializing_if", "serialize_with"]
                    .iter()
                    .any(|ok| path.is_ident(ok))
                {
                    // Serialization only.
                    skip_value(&meta)?;
                } else {
                    unsupported_serde(&meta, errors, "a field");
                    skip_value(&meta)?;
                }
                Ok(())
            });
            if let Err(error) = result {
                errors.push(error);
            }
        }
    }
    out
}

pub(crate) fn variant(attrs: &[Attribute], errors: &mut Errors) -> Variant {
    let mut out = Variant::default();
    for attr in attrs {
        if attr.path().is_ident("tool") {
            errors.spanned(attr, "#[tool(...)] takes no keywords on an enum variant");
        } else if attr.path().is_ident("serde") {
            let result = attr.parse_nested_meta(|meta| {
                let path = &meta.path;
                if path.is_ident("rename") {
                    if let Some(lit) = deserialize_name(&meta)? {
                        out.rename = Some(lit.value());
                    }
                } else if path.is_ident("skip") || path.is_ident("skip_deserializing") {
                    out.skip = true;
                } else if path.is_ident("skip_serializing") {
                } else {
                    unsupported_serde(&meta, errors, "a variant");
                    skip_value(&meta)?;
                }
                Ok(())
            });
            if let Err(error) = result {
                errors.push(error);
            }
        }
    }
    out
}
