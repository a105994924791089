//! Arguments of types you do not own: [`ArgumentWith`], implemented on a marker type of your
//! own, and the schema it builds with [`ArgumentSchema`].

use std::any::TypeId;
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{OnceLock, PoisonError, RwLock};

use serde::de::Deserializer;
use serde_json::{Map, Value};

use crate::Argument;
use crate::contract::argument::{check_bounds, refuse_string};
use crate::contract::constraints::{ConstConstraints, Constraints, Num, Pattern, Unconstrained};
use crate::contract::error::Keyword;
use crate::contract::format::Format;
use crate::contract::path::Path;
use crate::contract::schema::SchemaGen;
use crate::contract::validate::{Cx, Got};

/// Reads a value of a type `T` you do not own (such as `rust_decimal::Decimal`) as a tool
/// argument, through a marker type of your own that implements this trait.
///
/// Rust's orphan rule forbids implementing [`Argument`](crate::Argument) for another crate's
/// type in your crate; implement `ArgumentWith<T>` on a local type instead and mark the field
/// `#[tool(with = Marker)]`. The field keeps its own type, and the handler receives the value
/// itself. An `Option<T>` field may be absent or `null`.
///
/// The contract is split in two so that it cannot disagree with itself:
///
/// - [`schema`](ArgumentWith::schema) describes the JSON the field takes, with
///   [`ArgumentSchema`]: its JSON type and the keywords that restrict it. The library
///   advertises that schema and checks every keyword of it itself, reporting each violation
///   at its JSON Pointer, exactly as for the standard types.
/// - [`convert`](ArgumentWith::convert) turns a value that passed those checks into `T`.
///
/// What the tool accepts is then what a JSON Schema validator accepts against the advertised
/// schema, as long as `convert` succeeds on every value the schema admits. Put every rule into
/// the schema (a `pattern` for the shape of a string, bounds for a number), so that `convert`
/// only converts. A value the schema admits but `convert` refuses is still refused, with one
/// violation at its pointer (keyword `convert`) saying that the two disagree: fix the schema.
///
/// The schema is built once per marker and field type, on first use, and kept for the life of
/// the program.
///
/// ```
/// use std::net::SocketAddr;
/// use tool_core::{Tool, contract::{ArgumentSchema, ArgumentWith}};
///
/// /// `SocketAddr` as `"host:port"` text (a stand-in for a type from another crate).
/// struct Endpoint;
///
/// impl ArgumentWith<SocketAddr> for Endpoint {
///     fn schema() -> ArgumentSchema {
///         ArgumentSchema::string()
///             .description("An IPv4 address and port, such as \"10.0.0.1:8080\"")
///             .pattern(r"^[0-9]{1,3}(\.[0-9]{1,3}){3}:[0-9]{1,5}$")
///     }
///
///     fn convert(value: &serde_json::Value) -> Result<SocketAddr, String> {
///         let text = value.as_str().unwrap_or_default();
///         text.parse().map_err(|error| format!("{error}"))
///     }
/// }
///
/// /// Opens a connection.
/// #[derive(Tool, Debug)]
/// struct Connect {
///     #[tool(with = Endpoint)]
///     to: SocketAddr,
/// }
///
/// assert_eq!(
///     Connect::input_schema()["properties"]["to"]["pattern"],
///     r"^[0-9]{1,3}(\.[0-9]{1,3}){3}:[0-9]{1,5}$",
/// );
/// let call = Connect::parse_arguments(r#"{"to": "10.0.0.1:8080"}"#)?;
/// assert_eq!(call.to, "10.0.0.1:8080".parse::<SocketAddr>().unwrap());
///
/// let errors = Connect::parse_arguments(r#"{"to": "localhost"}"#).unwrap_err();
/// let pointers: Vec<String> = errors.iter().map(|v| v.pointer().into_owned()).collect();
/// assert_eq!(pointers, ["/to"]);
/// # Ok::<(), tool_core::ArgumentErrors>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not say how to read a `{T}` from tool arguments",
    label = "`#[tool(with = ...)]` names this type",
    note = "implement `tool_core::contract::ArgumentWith<{T}>` for `{Self}`: its schema and its \
            conversion from JSON"
)]
pub trait ArgumentWith<T> {
    /// The schema of the JSON the field takes. Every keyword of it is checked before
    /// [`convert`](ArgumentWith::convert) is called.
    fn schema() -> ArgumentSchema;

    /// Converts a value the schema admitted (of its JSON type, within its keywords) into `T`.
    /// An `Err` holds the message reported at the value's pointer; it should not happen for
    /// a value the schema admits.
    fn convert(value: &Value) -> Result<T, String>;

    /// The value as the JSON `convert` reads it from, used to advertise a field's default;
    /// `None` (the default) when it cannot say.
    fn to_json(value: &T) -> Option<Value> {
        let _ = value;
        None
    }
}

/// The JSON type an [`ArgumentSchema`] admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    String,
    Number,
    Integer,
    Boolean,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::String => "string",
            Kind::Number => "number",
            Kind::Integer => "integer",
            Kind::Boolean => "boolean",
        }
    }
}

/// The schema of a value read through [`ArgumentWith`]: one JSON type and the keywords that
/// restrict it, each advertised and checked by the library.
///
/// Keywords for another JSON type than the schema's (a `pattern` on a number) are ignored,
/// as JSON Schema ignores them. A bound that is not a finite number is ignored. A pattern
/// the library cannot evaluate (invalid, or needing a backtracking engine) refuses every
/// value, saying so.
///
/// ```
/// use tool_core::contract::ArgumentSchema;
///
/// let schema = ArgumentSchema::number().minimum(0.01).maximum(10_000).description("An amount");
/// assert_eq!(
///     schema.to_json(),
///     serde_json::json!({
///         "type": "number",
///         "minimum": 0.01,
///         "maximum": 10000,
///         "description": "An amount",
///     }),
/// );
/// ```
#[derive(Clone)]
pub struct ArgumentSchema {
    kind: Kind,
    description: Option<String>,
    format: Option<Format>,
    pattern: Option<String>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    minimum: Option<Num>,
    maximum: Option<Num>,
    exclusive_minimum: Option<Num>,
    exclusive_maximum: Option<Num>,
}

impl fmt::Debug for ArgumentSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ArgumentSchema({})", self.to_json())
    }
}

/// A bound as the library compares numbers: a whole number as an integer (advertised `10000`,
/// not `10000.0`); `None` when it is not finite.
fn bound(value: f64) -> Option<Num> {
    if !value.is_finite() {
        return None;
    }
    #[allow(clippy::cast_possible_truncation)]
    if value.fract() == 0.0 && value.abs() < 9_007_199_254_740_992.0 {
        return Some(Num::from(value as i64));
    }
    Some(Num::F(value))
}

impl ArgumentSchema {
    fn of(kind: Kind) -> Self {
        ArgumentSchema {
            kind,
            description: None,
            format: None,
            pattern: None,
            min_length: None,
            max_length: None,
            minimum: None,
            maximum: None,
            exclusive_minimum: None,
            exclusive_maximum: None,
        }
    }

    /// A JSON string.
    pub fn string() -> Self {
        Self::of(Kind::String)
    }

    /// A JSON number (integers included).
    pub fn number() -> Self {
        Self::of(Kind::Number)
    }

    /// A JSON integer (a number without a fraction: `3` and `3.0` both).
    pub fn integer() -> Self {
        Self::of(Kind::Integer)
    }

    /// `true` or `false`.
    pub fn boolean() -> Self {
        Self::of(Kind::Boolean)
    }

    /// `description`: what the value means, for the model.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// `format` (strings), asserted: a value not of the format is refused.
    pub fn format(mut self, format: Format) -> Self {
        self.format = Some(format);
        self
    }

    /// `pattern` (strings): an ECMA-262 regular expression the string must match somewhere
    /// (anchor it with `^...$` to match the whole string).
    pub fn pattern(mut self, pattern: impl Into<String>) -> Self {
        self.pattern = Some(pattern.into());
        self
    }

    /// `minLength` (strings), in Unicode code points.
    pub fn min_length(mut self, min: u64) -> Self {
        self.min_length = Some(min);
        self
    }

    /// `maxLength` (strings), in Unicode code points.
    pub fn max_length(mut self, max: u64) -> Self {
        self.max_length = Some(max);
        self
    }

    /// `minimum` (numbers and integers), inclusive.
    pub fn minimum(mut self, min: impl Into<f64>) -> Self {
        self.minimum = bound(min.into());
        self
    }

    /// `maximum` (numbers and integers), inclusive.
    pub fn maximum(mut self, max: impl Into<f64>) -> Self {
        self.maximum = bound(max.into());
        self
    }

    /// `exclusiveMinimum` (numbers and integers).
    pub fn exclusive_minimum(mut self, min: impl Into<f64>) -> Self {
        self.exclusive_minimum = bound(min.into());
        self
    }

    /// `exclusiveMaximum` (numbers and integers).
    pub fn exclusive_maximum(mut self, max: impl Into<f64>) -> Self {
        self.exclusive_maximum = bound(max.into());
        self
    }

    /// The schema as advertised: its type, the keywords that apply to it, and its
    /// description.
    pub fn to_json(&self) -> Value {
        let mut schema = Map::new();
        schema.insert("type".to_owned(), Value::from(self.kind.name()));
        match self.kind {
            Kind::String => {
                if let Some(min) = self.min_length {
                    schema.insert("minLength".to_owned(), Value::from(min));
                }
                if let Some(max) = self.max_length {
                    schema.insert("maxLength".to_owned(), Value::from(max));
                }
                if let Some(pattern) = &self.pattern {
                    schema.insert("pattern".to_owned(), Value::from(pattern.as_str()));
                }
                if let Some(format) = self.format {
                    schema.insert("format".to_owned(), Value::from(format.name()));
                }
            }
            Kind::Number | Kind::Integer => {
                let bounds = [
                    ("minimum", self.minimum),
                    ("maximum", self.maximum),
                    ("exclusiveMinimum", self.exclusive_minimum),
                    ("exclusiveMaximum", self.exclusive_maximum),
                ];
                for (keyword, bound) in bounds {
                    if let Some(bound) = bound {
                        schema.insert(keyword.to_owned(), bound.to_value());
                    }
                }
            }
            Kind::Boolean => {}
        }
        if let Some(description) = &self.description {
            schema.insert("description".to_owned(), Value::from(description.as_str()));
        }
        Value::Object(schema)
    }

    /// The keywords as the checks of the standard types take them. The pattern is leaked:
    /// this is built once per marker and type, so the memory is bounded by the program.
    fn constraints(&self) -> Constraints {
        let mut c = Constraints::NONE;
        match self.kind {
            Kind::String => {
                c.min_length = self.min_length;
                c.max_length = self.max_length;
                c.format = self.format;
                c.pattern = self.pattern.as_ref().map(|source| {
                    let source: &'static str = Box::leak(source.clone().into_boxed_str());
                    &*Box::leak(Box::new(Pattern::new(source)))
                });
            }
            Kind::Number | Kind::Integer => {
                c.minimum = self.minimum;
                c.maximum = self.maximum;
                c.exclusive_minimum = self.exclusive_minimum;
                c.exclusive_maximum = self.exclusive_maximum;
            }
            Kind::Boolean => {}
        }
        c
    }
}

/// A marker's schema, built once: as advertised, and as checked.
struct Built {
    kind: Kind,
    advertised: Value,
    constraints: Constraints,
}

impl Built {
    /// Checks `value` against every keyword, recording each violation; whether it passed.
    fn check(&self, value: &Value, cx: &mut Cx, at: &Path<'_>) -> bool {
        let c = &self.constraints;
        let got = got(value);
        match (self.kind, got) {
            (Kind::String, _) => refuse_string(got, cx, at, c),
            (Kind::Boolean, Got::Bool(_)) => true,
            (Kind::Number, Got::Number(n)) => check_bounds(n, None, None, cx, at, c),
            (Kind::Integer, Got::Number(n)) => {
                let integral = n.is_integer();
                if !integral {
                    cx.type_mismatch(at, "integer", got);
                }
                // Both are reported, as a schema validator reports them.
                check_bounds(n, None, None, cx, at, c) && integral
            }
            (kind, _) => {
                cx.type_mismatch(at, kind.name(), got);
                false
            }
        }
    }
}

/// The value, described as the checks take it.
fn got(value: &Value) -> Got<'_> {
    match value {
        Value::Null => Got::Null,
        Value::Bool(b) => Got::Bool(*b),
        Value::Number(n) => Got::Number(if let Some(u) = n.as_u64() {
            Num::U(u)
        } else if let Some(i) = n.as_i64() {
            Num::I(i)
        } else {
            Num::F(n.as_f64().unwrap_or(f64::NAN))
        }),
        Value::String(s) => Got::Str(s),
        Value::Array(_) => Got::Array,
        Value::Object(_) => Got::Object,
    }
}

/// The schema of marker `M` for `T`, built on first use and kept: one per pair of types, so
/// the map's size is bounded by the program, not by its input.
fn built<T: 'static, M: ArgumentWith<T> + 'static>() -> &'static Built {
    static CACHE: OnceLock<RwLock<HashMap<(TypeId, TypeId), &'static Built>>> = OnceLock::new();
    let cache = CACHE.get_or_init(RwLock::default);
    let id = (TypeId::of::<T>(), TypeId::of::<M>());
    if let Some(found) = cache
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&id)
    {
        return found;
    }
    // Built outside the lock: the user's `schema` may be slow, and the first one kept wins.
    let schema = M::schema();
    let made = Built {
        kind: schema.kind,
        advertised: schema.to_json(),
        constraints: schema.constraints(),
    };
    let mut map = cache.write().unwrap_or_else(PoisonError::into_inner);
    map.entry(id).or_insert_with(|| Box::leak(Box::new(made)))
}

/// The longest message from a user's `convert` that is reported, in bytes.
const MAX_MESSAGE: usize = 240;

/// A `T` read through the marker `M` (what a `#[tool(with = M)]` field is parsed as).
pub struct With<T, M>(pub T, PhantomData<fn() -> M>);

impl<T, M> With<T, M> {
    /// The value.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T: fmt::Debug, M> fmt::Debug for With<T, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("With").field(&self.0).finish()
    }
}

impl<T: 'static, M: ArgumentWith<T> + 'static> Argument for With<T, M> {
    fn schema(_: &mut SchemaGen, _: &Constraints) -> Value {
        built::<T, M>().advertised.clone()
    }

    fn parse<'de, D: Deserializer<'de>, C: ConstConstraints>(
        de: D,
        cx: &mut Cx,
        at: &Path<'_>,
    ) -> Result<Option<Self>, D::Error> {
        let Some(value) = <Value as Argument>::parse::<D, Unconstrained>(de, cx, at)? else {
            return Ok(None);
        };
        if !built::<T, M>().check(&value, cx, at) {
            return Ok(None);
        }
        match M::convert(&value) {
            Ok(converted) => Ok(Some(With(converted, PhantomData))),
            Err(error) => {
                let mut message = format!(
                    "matches the advertised schema, but its conversion refuses it (the two \
                     disagree): {error}"
                );
                if message.len() > MAX_MESSAGE {
                    let mut end = MAX_MESSAGE;
                    while !message.is_char_boundary(end) {
                        end -= 1;
                    }
                    message.truncate(end);
                    message.push('…');
                }
                cx.report(at, Keyword::Other("convert"), message);
                Ok(None)
            }
        }
    }

    fn to_value(&self) -> Option<Value> {
        M::to_json(&self.0)
    }
}

/// The JSON of a `#[tool(with = M)]` field's value, as `M` writes it.
pub fn with_value<T, M: ArgumentWith<T>>(value: &T) -> Option<Value> {
    M::to_json(value)
}

/// The JSON of an `Option<T>` field marked `#[tool(with = M)]`: `null` when absent.
pub fn with_option_value<T, M: ArgumentWith<T>>(value: &Option<T>) -> Option<Value> {
    match value {
        Some(value) => M::to_json(value),
        None => Some(Value::Null),
    }
}
