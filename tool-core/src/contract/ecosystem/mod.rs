//! Argument types of other crates, each behind the crate feature of the same name: read from
//! a string of a `format` by the crate's own parser.
//!
//! A string is accepted when it passes the format check (and a `pattern`, where the type
//! holds less than the format allows) and the crate's parser; where the parser refuses a
//! string the schema allows, the type's documentation says so.

#[cfg(feature = "chrono")]
mod chrono;
#[cfg(feature = "time")]
mod time;
#[cfg(feature = "url")]
mod url;
#[cfg(feature = "uuid")]
mod uuid;

#[cfg(any(
    feature = "chrono",
    feature = "time",
    feature = "url",
    feature = "uuid"
))]
mod formatted {
    use serde_json::{Map, Value};

    use crate::contract::constraints::Pattern;
    use crate::contract::error::Keyword;
    use crate::contract::format::Format;
    use crate::contract::path::Path;
    use crate::contract::validate::{Cx, Got};

    /// What the string of a type must be: a format, and a pattern where the type holds less.
    #[derive(Debug, Clone, Copy)]
    pub(crate) struct Shape {
        pub(crate) format: Option<Format>,
        pub(crate) pattern: Option<&'static Pattern>,
        /// What the string is, for a message: "an RFC 3339 date-time".
        pub(crate) looks_like: &'static str,
    }

    impl Shape {
        pub(crate) fn schema(&self) -> Value {
            let mut schema = Map::new();
            schema.insert("type".to_owned(), Value::from("string"));
            if let Some(format) = self.format {
                schema.insert("format".to_owned(), Value::from(format.name()));
            }
            if let Some(pattern) = self.pattern {
                schema.insert("pattern".to_owned(), Value::from(pattern.source()));
            }
            Value::Object(schema)
        }

        /// Checks `got` and reads it with `parse`, recording every violation.
        pub(crate) fn accept<T>(
            &self,
            got: Got<'_>,
            cx: &mut Cx,
            at: &Path<'_>,
            parse: impl FnOnce(&str) -> Result<T, String>,
        ) -> Option<T> {
            let Got::Str(s) = got else {
                cx.type_mismatch(at, "string", got);
                return None;
            };
            let mut ok = true;
            if let Some(format) = self.format
                && !format.is_valid(s)
            {
                cx.report(
                    at,
                    Keyword::Other("format"),
                    format!(
                        "must be {} (format {:?}); got {}",
                        self.looks_like,
                        format.name(),
                        got.bare()
                    ),
                );
                ok = false;
            }
            if let Some(pattern) = self.pattern
                && pattern.is_match(s) != Some(true)
            {
                cx.report(
                    at,
                    Keyword::Pattern,
                    format!(
                        "must be {} (pattern {:?}); got {}",
                        self.looks_like,
                        pattern.source(),
                        got.bare()
                    ),
                );
                ok = false;
            }
            if !ok {
                return None;
            }
            match parse(s) {
                Ok(value) => Some(value),
                Err(reason) => {
                    let keyword = if self.format.is_some() {
                        Keyword::Other("format")
                    } else {
                        Keyword::Pattern
                    };
                    cx.report(
                        at,
                        keyword,
                        format!("must be {}; got {}: {reason}", self.looks_like, got.bare()),
                    );
                    None
                }
            }
        }
    }

    /// `Scalar` and `Argument` for types read through a `Shape`.
    macro_rules! formatted {
        ($($(#[$doc:meta])* $ty:ty => $shape:expr, $parse:expr, $render:expr;)*) => {$(
            impl $crate::contract::validate::Scalar for $ty {
                #[inline]
                fn accept(
                    got: $crate::contract::validate::Got<'_>,
                    cx: &mut $crate::contract::validate::Cx,
                    at: &$crate::contract::path::Path<'_>,
                    _: &$crate::contract::constraints::Constraints,
                ) -> Option<Self> {
                    let shape: &$crate::contract::ecosystem::formatted::Shape = &$shape;
                    shape.accept(got, cx, at, $parse)
                }
            }

            $(#[$doc])*
            impl $crate::Argument for $ty {
                fn schema(
                    _: &mut $crate::contract::schema::SchemaGen,
                    _: &$crate::contract::constraints::Constraints,
                ) -> ::serde_json::Value {
                    let shape: &$crate::contract::ecosystem::formatted::Shape = &$shape;
                    shape.schema()
                }

                /// The string the value is read from, when reading it back gives the value.
                fn to_value(&self) -> Option<::serde_json::Value> {
                    let render: fn(&$ty) -> Option<String> = $render;
                    let text = render(self)?;
                    let parse: fn(&str) -> Result<$ty, String> = $parse;
                    (parse(&text).ok().as_ref() == Some(self))
                        .then(|| ::serde_json::Value::String(text))
                }

                #[inline]
                fn parse<'de, D: ::serde::de::Deserializer<'de>, C: $crate::contract::constraints::ConstConstraints>(
                    de: D,
                    cx: &mut $crate::contract::validate::Cx,
                    at: &$crate::contract::path::Path<'_>,
                ) -> Result<Option<Self>, D::Error> {
                    $crate::contract::validate::parse_scalar::<Self, C, D>(de, cx, at)
                }
            }
        )*};
    }
    pub(crate) use formatted;
}

/// RFC 3339 `partial-time` without a leap second, and at most nine digits of fraction: the
/// times of day a type without an offset holds. JSON Schema's `time` format takes an offset,
/// so these types advertise this pattern instead.
#[cfg(any(feature = "chrono", feature = "time"))]
static PARTIAL_TIME: crate::contract::constraints::Pattern =
    crate::contract::constraints::Pattern::new(
        r"^([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?$",
    );

/// A `date-time` whose seconds are not 60: a type that holds no leap second.
#[cfg(feature = "time")]
static NO_LEAP_SECOND: crate::contract::constraints::Pattern =
    crate::contract::constraints::Pattern::new("^[^:]*:[^:]*:[0-5]");
