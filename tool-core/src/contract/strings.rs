//! Argument types carried by one JSON string: `char`, the other owners of a `str`, paths and
//! IP addresses.

use std::borrow::Cow;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;
use std::rc::Rc;
use std::str::FromStr;
use std::sync::Arc;

use serde::de::Deserializer;
use serde_json::{Map, Value, json};

use crate::Argument;
use crate::contract::constraints::{
    AcceptsFormat, AcceptsLength, AcceptsPattern, ConstConstraints, Constraints,
};
use crate::contract::error::Keyword;
use crate::contract::format::Format;
use crate::contract::path::Path;
use crate::contract::schema::SchemaGen;
use crate::contract::validate::{Cx, Got, Scalar, parse_scalar};

/// `Argument` for a type whose values are read through another `Scalar` one.
macro_rules! through_scalar {
    ($($ty:ty),* $(,)?) => {$(
        impl Argument for $ty {
            fn schema(generator: &mut SchemaGen, c: &Constraints) -> Value {
                <Self as Through>::schema(generator, c)
            }

            fn to_value(&self) -> Option<Value> {
                <Self as Through>::text(self).map(Value::String)
            }

            #[inline]
            fn parse<'de, D: Deserializer<'de>, C: ConstConstraints>(
                de: D,
                cx: &mut Cx,
                at: &Path<'_>,
            ) -> Result<Option<Self>, D::Error> {
                parse_scalar::<Self, C, D>(de, cx, at)
            }
        }
    )*};
}

/// The schema of a type declared with `through_scalar!`.
trait Through {
    fn schema(generator: &mut SchemaGen, c: &Constraints) -> Value;

    /// The value as the string it is read from.
    fn text(&self) -> Option<String>;
}

/// Strings held in another owner than `String`: the same schema and checks (`length`,
/// `pattern`, `format`), the value moved into its owner.
macro_rules! owned_strings {
    ($($ty:ty => $from:expr;)*) => {$(
        impl Scalar for $ty {
            #[inline]
            fn accept(got: Got<'_>, cx: &mut Cx, at: &Path<'_>, c: &Constraints) -> Option<Self> {
                let from: fn(String) -> $ty = $from;
                String::accept(got, cx, at, c).map(from)
            }
        }

        impl Through for $ty {
            fn schema(generator: &mut SchemaGen, c: &Constraints) -> Value {
                String::schema(generator, c)
            }

            fn text(&self) -> Option<String> {
                Text::text(self)
            }
        }

        through_scalar!($ty);
    )*};
}

/// The string an owned string holds (`None` for a path that is not UTF-8).
trait Text {
    fn text(&self) -> Option<String>;
}

macro_rules! displayed {
    ($($ty:ty),*) => {$(
        impl Text for $ty {
            fn text(&self) -> Option<String> {
                Some(self.to_string())
            }
        }
    )*};
}
displayed!(Box<str>, Arc<str>, Rc<str>, Cow<'static, str>);

impl Text for PathBuf {
    fn text(&self) -> Option<String> {
        self.to_str().map(str::to_owned)
    }
}

owned_strings! {
    Box<str> => String::into_boxed_str;
    Arc<str> => Arc::from;
    Rc<str> => Rc::from;
    Cow<'static, str> => Cow::Owned;
    PathBuf => PathBuf::from;
}

macro_rules! string_markers {
    ($($ty:ty),*) => {$(
        impl AcceptsLength for $ty {}
        impl AcceptsPattern for $ty {}
        impl AcceptsFormat for $ty {}
    )*};
}
string_markers!(Box<str>, Arc<str>, Rc<str>, Cow<'static, str>);
impl AcceptsLength for PathBuf {}
impl AcceptsPattern for PathBuf {}

/// A `char` is a string of exactly one character (Unicode scalar value).
impl Scalar for char {
    #[inline]
    fn accept(got: Got<'_>, cx: &mut Cx, at: &Path<'_>, c: &Constraints) -> Option<Self> {
        if let Got::Str(s) = got {
            let mut chars = s.chars();
            if let (Some(ch), None) = (chars.next(), chars.next()) {
                return Some(ch);
            }
        }
        String::accept(got, cx, at, &one_char(c)).and_then(|s| s.chars().next())
    }
}

/// The constraints of a `char`: one character, whatever else was declared.
fn one_char(c: &Constraints) -> Constraints {
    Constraints {
        min_length: Some(1),
        max_length: Some(1),
        pattern: None,
        format: None,
        ..*c
    }
}

impl Through for char {
    fn schema(generator: &mut SchemaGen, c: &Constraints) -> Value {
        String::schema(generator, &one_char(c))
    }

    fn text(&self) -> Option<String> {
        Some(self.to_string())
    }
}

through_scalar!(char);

/// IP addresses, parsed with the standard library's parsers, which are the checks the
/// `jsonschema` crate runs for the formats `ipv4` and `ipv6`.
macro_rules! ip_addresses {
    ($($ty:ty => $format:expr;)*) => {$(
        impl Scalar for $ty {
            #[inline]
            fn accept(got: Got<'_>, cx: &mut Cx, at: &Path<'_>, _: &Constraints) -> Option<Self> {
                let Got::Str(s) = got else {
                    cx.type_mismatch(at, "string", got);
                    return None;
                };
                let parsed = <$ty>::from_str(s).ok();
                if parsed.is_none() {
                    let format: Format = $format;
                    cx.report(
                        at,
                        Keyword::Other("format"),
                        format!("must be {}; got {}", format.looks_like(), got.bare()),
                    );
                }
                parsed
            }
        }

        impl Through for $ty {
            fn schema(_: &mut SchemaGen, _: &Constraints) -> Value {
                let format: Format = $format;
                json!({ "type": "string", "format": format.name() })
            }

            fn text(&self) -> Option<String> {
                Some(self.to_string())
            }
        }

        through_scalar!($ty);
    )*};
}

ip_addresses! {
    Ipv4Addr => Format::Ipv4;
    Ipv6Addr => Format::Ipv6;
}

/// An IPv4 or IPv6 address: a string of either format (`anyOf`). A string of neither is
/// refused with `anyOf`, the keyword a JSON Schema validator names.
impl Scalar for IpAddr {
    #[inline]
    fn accept(got: Got<'_>, cx: &mut Cx, at: &Path<'_>, _: &Constraints) -> Option<Self> {
        let Got::Str(s) = got else {
            cx.type_mismatch(at, "string", got);
            return None;
        };
        let parsed = IpAddr::from_str(s).ok();
        if parsed.is_none() {
            cx.report(
                at,
                Keyword::Other("anyOf"),
                format!("must be an IPv4 or an IPv6 address; got {}", got.bare()),
            );
        }
        parsed
    }
}

impl Through for IpAddr {
    fn schema(_: &mut SchemaGen, _: &Constraints) -> Value {
        let mut schema = Map::new();
        schema.insert("type".to_owned(), Value::from("string"));
        schema.insert(
            "anyOf".to_owned(),
            json!([{ "format": "ipv4" }, { "format": "ipv6" }]),
        );
        Value::Object(schema)
    }

    fn text(&self) -> Option<String> {
        Some(self.to_string())
    }
}

through_scalar!(IpAddr);
