//! The [`Argument`] trait: a type's advertised schema and its checked parser, side by side,
//! with the implementations for standard types.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

use crate::contract::constraints::Constraints;
use crate::contract::constraints::{ConstConstraints, Num};
use crate::contract::error::{Keyword, Reason};
use crate::contract::path::Path;
use crate::contract::schema::{NullableRule, SchemaGen, nullable};
use crate::contract::validate::{
    Cx, Got, Scalar, Seed, check_depth, drain_map, parse_scalar, reject_scalars,
};

/// A type that can appear in tool arguments: it knows the JSON Schema it advertises and how
/// to parse JSON into itself while checking exactly that schema.
///
/// Implemented for:
///
/// | Rust | JSON Schema |
/// | --- | --- |
/// | `bool` | `boolean` |
/// | every integer type, `i128` and `u128` included | `integer` within the type's range |
/// | `NonZeroU8` … `NonZeroUsize` | `integer`, `minimum` 1 |
/// | `NonZeroI8` … `NonZeroIsize` | `integer`, `"not": {"const": 0}` |
/// | `f32`, `f64` | `number` |
/// | `String`, `Box<str>`, `Arc<str>`, `Rc<str>`, `Cow<'static, str>`, `PathBuf` | `string` |
/// | `char` | `string` of one character |
/// | `Ipv4Addr`, `Ipv6Addr` | `string`, `format` `ipv4` / `ipv6` |
/// | `IpAddr` | `string`, either format (`anyOf`) |
/// | `Option<T>`, `Box<T>` | `T`, and `null` for `Option` |
/// | `Vec<T>` | `array` |
/// | `BTreeSet<T>`, `HashSet<T>` | `array` with `uniqueItems` |
/// | tuples `(A,)` to `(A, B, C, D, E, F)`, `[T; N]` | `array` of exactly that many items (`prefixItems`) |
/// | `BTreeMap<K, T>`, `HashMap<K, T>` with `String` or integer keys | `object`, integer keys as `propertyNames` |
/// | `serde_json::Value` | any JSON |
///
/// and, with the crate features of the same names, for the date and time types of `chrono`
/// and `time`, `uuid::Uuid` and `url::Url` (each documented with its implementation). Derive it for your own structs
/// and enums (unit variants, or variants with data) with `#[derive(Argument)]` (or
/// `#[derive(Tool)]` for a tool's root type); the two methods must agree, which is why
/// implementing them by hand is not advised. A field of a type from another crate takes
/// `#[tool(with = Marker)]`, where `Marker` is a type of yours implementing
/// [`ArgumentWith`](crate::contract::ArgumentWith) for it (its schema, built with
/// [`ArgumentSchema`](crate::contract::ArgumentSchema), and its conversion); one that
/// implements `schemars::JsonSchema` and `serde::Deserialize` may instead take
/// `#[tool(schemars)]` (feature `schemars`).
///
/// An `f32` gets the `f32` nearest to the number, as serde gives it, and declared bounds hold
/// on that value: a number rounding onto or across a bound is refused, and the advertised bound
/// is moved to where rounding crosses it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used in tool arguments",
    label = "this type has no argument schema",
    note = "derive `tool_core::Argument` for your own structs and enums (unit variants, or \
            variants with data)",
    note = "a type from another crate: implement `tool_core::contract::ArgumentWith<{Self}>` \
            on a marker type of yours and mark the field `#[tool(with = Marker)]`, or mark it \
            `#[tool(schemars)]` when the type implements `schemars::JsonSchema` and \
            `serde::Deserialize` (feature `schemars`)"
)]
pub trait Argument: Sized {
    /// `true` for types whose absence is allowed (`Option<T>`): not listed in `required`.
    #[doc(hidden)]
    const OPTIONAL: bool = false;

    /// The schema this type advertises under the constraints `c`.
    #[doc(hidden)]
    fn schema(generator: &mut SchemaGen, c: &Constraints) -> Value;

    /// Parses one value under the constraints `C`, recording every violation of the schema
    /// in `cx`; `Ok(None)` when violations were recorded, `Err` only when the input is not
    /// JSON (or, for the typed pass, a container is of another JSON type).
    #[doc(hidden)]
    fn parse<'de, D: Deserializer<'de>, C: ConstConstraints>(
        de: D,
        cx: &mut Cx,
        at: &Path<'_>,
    ) -> Result<Option<Self>, D::Error>;

    /// The value of an absent field of this type, if absence is allowed.
    #[doc(hidden)]
    fn absent() -> Option<Self> {
        None
    }

    /// The value as the JSON the parser reads it from, used to advertise a field's `default`;
    /// `None` when the type cannot say (its default is then not advertised).
    #[doc(hidden)]
    fn to_value(&self) -> Option<Value> {
        None
    }
}

impl Scalar for bool {
    #[inline]
    fn accept(got: Got<'_>, cx: &mut Cx, at: &Path<'_>, _: &Constraints) -> Option<Self> {
        match got {
            Got::Bool(b) => Some(b),
            other => {
                cx.type_mismatch(at, "boolean", other);
                None
            }
        }
    }
}

impl Argument for bool {
    fn schema(_: &mut SchemaGen, _: &Constraints) -> Value {
        json!({ "type": "boolean" })
    }

    fn to_value(&self) -> Option<Value> {
        Some(Value::Bool(*self))
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

/// Checks a number against the merged bounds; reports every bound it breaks.
#[inline]
pub(crate) fn check_bounds(
    n: Num,
    type_min: Option<Num>,
    type_max: Option<Num>,
    cx: &mut Cx,
    at: &Path<'_>,
    c: &Constraints,
) -> bool {
    use std::cmp::Ordering::{Greater, Less};
    let mut ok = true;
    // Messages are written when first read: the formatting costs more than the checks.
    let bound = |cx: &mut Cx, keyword: Keyword, relation: &'static str, limit: Num| {
        let reason = Reason::Bound {
            relation,
            limit,
            got: n,
        };
        cx.report_reason(at, keyword, reason, "");
    };
    if let Some(min) = c.merged_minimum(type_min)
        && n.compare(min) == Less
    {
        bound(cx, Keyword::Minimum, ">=", min);
        ok = false;
    }
    if let Some(max) = c.merged_maximum(type_max)
        && n.compare(max) == Greater
    {
        bound(cx, Keyword::Maximum, "<=", max);
        ok = false;
    }
    if let Some(min) = c.exclusive_minimum
        && n.compare(min) != Greater
    {
        bound(cx, Keyword::ExclusiveMinimum, ">", min);
        ok = false;
    }
    if let Some(max) = c.exclusive_maximum
        && n.compare(max) != Less
    {
        bound(cx, Keyword::ExclusiveMaximum, "<", max);
        ok = false;
    }
    ok
}

/// Appends `n` as its `Display` writes it; integers without the formatting machinery.
pub(crate) fn push_num(out: &mut String, n: Num) {
    match n {
        Num::U(u) => crate::contract::path::push_decimal(out, u),
        Num::I(i) => {
            if i < 0 {
                out.push('-');
            }
            crate::contract::path::push_decimal(out, i.unsigned_abs());
        }
        Num::F(_) => {
            use std::fmt::Write as _;
            let _ = write!(out, "{n}");
        }
    }
}

/// The checks of an integer type outside its common case.
trait Integer: Sized {
    /// Checks `got` when it is not an integer inside the window; records every violation.
    fn refuse(got: Got<'_>, cx: &mut Cx, at: &Path<'_>, c: &Constraints) -> Option<Self>;
}

macro_rules! integer {
    ($($ty:ty)*) => {$(
        impl Scalar for $ty {
            #[inline(always)]
            fn accept(got: Got<'_>, cx: &mut Cx, at: &Path<'_>, c: &Constraints) -> Option<Self> {
                // The common case, decided with integer arithmetic: an integer inside the
                // window of the type's range and the integer bounds declared.
                if let Got::Number(n) = got
                    && let Some(v) = n.as_exact_int()
                    && let Some((lo, hi)) =
                        c.integer_window(<$ty>::MIN as i128, <$ty>::MAX as i128)
                    && lo <= v
                    && v <= hi
                    && let Ok(value) = <$ty>::try_from(v)
                {
                    return Some(value);
                }
                Self::refuse(got, cx, at, c)
            }
        }

        impl Integer for $ty {
            #[cold]
            #[inline(never)]
            fn refuse(got: Got<'_>, cx: &mut Cx, at: &Path<'_>, c: &Constraints) -> Option<Self> {
                let Got::Number(n) = got else {
                    cx.type_mismatch(at, "integer", got);
                    return None;
                };
                if matches!(n, Num::F(_)) && cx.serde_numbers() {
                    cx.type_mismatch(at, "integer", got);
                    return None;
                }
                let integral = n.is_integer();
                if !integral {
                    cx.type_mismatch(at, "integer", got);
                }
                let in_bounds = check_bounds(
                    n,
                    Some(Num::from(<$ty>::MIN)),
                    Some(Num::from(<$ty>::MAX)),
                    cx,
                    at,
                    c,
                );
                if !(integral && in_bounds) {
                    return None;
                }
                let converted = n.as_i128().and_then(|wide| <$ty>::try_from(wide).ok());
                if converted.is_none() {
                    cx.report(at, Keyword::Type, format!("{n} does not fit in {}", stringify!($ty)));
                }
                converted
            }
        }

        impl Argument for $ty {
            fn schema(_: &mut SchemaGen, c: &Constraints) -> Value {
                let mut schema = Map::new();
                schema.insert("type".to_owned(), Value::from("integer"));
                c.number_keywords(
                    &mut schema,
                    Some(Num::from(<$ty>::MIN)),
                    Some(Num::from(<$ty>::MAX)),
                );
                Value::Object(schema)
            }

            fn to_value(&self) -> Option<Value> {
                Some(Value::from(*self))
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
integer!(u8 u16 u32 u64 usize i8 i16 i32 i64 isize);

macro_rules! num_from {
    (unsigned: $($u:ty)*; signed: $($i:ty)*) => {
        $(impl From<$u> for Num {
            fn from(v: $u) -> Num {
                Num::U(v as u64)
            }
        })*
        $(impl From<$i> for Num {
            fn from(v: $i) -> Num {
                if v < 0 { Num::I(v as i64) } else { Num::U(v as u64) }
            }
        })*
    };
}
num_from!(unsigned: u8 u16 u32 u64 usize; signed: i8 i16 i32 i64 isize);

/// Checks a number for a float field outside its common case, against the bounds `c` as
/// advertised for the type; whether it is acceptable.
#[cold]
#[inline(never)]
fn refuse_float(
    got: Got<'_>,
    type_min: Option<Num>,
    type_max: Option<Num>,
    cx: &mut Cx,
    at: &Path<'_>,
    c: &Constraints,
) -> Option<Num> {
    let Got::Number(n) = got else {
        cx.type_mismatch(at, "number", got);
        return None;
    };
    check_bounds(n, type_min, type_max, cx, at, c).then_some(n)
}

impl Scalar for f64 {
    #[inline(always)]
    fn accept(got: Got<'_>, cx: &mut Cx, at: &Path<'_>, c: &Constraints) -> Option<Self> {
        // The common case: a number inside its bounds, decided in f64 arithmetic.
        if let Got::Number(n) = got
            && let Some(v) = n.as_exact_f64()
            && c.float_within(v, f64::NEG_INFINITY, f64::INFINITY) == Some(true)
        {
            return Some(v);
        }
        refuse_float(got, None, None, cx, at, c).map(Num::as_f64)
    }
}

/// The range of `f32`: beyond `f32::MAX` a number would become infinite.
const F32_MIN: Option<Num> = Some(Num::F(-(f32::MAX as f64)));
const F32_MAX: Option<Num> = Some(Num::F(f32::MAX as f64));

impl Scalar for f32 {
    #[inline(always)]
    fn accept(got: Got<'_>, cx: &mut Cx, at: &Path<'_>, c: &Constraints) -> Option<Self> {
        // The common case, decided in f64 arithmetic: a number within the range of `f32` whose
        // nearest `f32`, the value the field receives, is also inside the declared bounds.
        if let Got::Number(n) = got
            && let Some(v) = n.as_exact_f64()
        {
            #[allow(clippy::cast_possible_truncation)]
            let rounded = v as f32;
            let max = f64::from(f32::MAX);
            if c.float_within(v, -max, max) == Some(true)
                && c.float_within(f64::from(rounded), -max, max) == Some(true)
            {
                return Some(rounded);
            }
        }
        // The advertised bounds say the same of `n` alone (see `Constraints::rounded_to_f32`).
        refuse_float(got, F32_MIN, F32_MAX, cx, at, &c.rounded_to_f32()).map(Num::to_f32)
    }
}

macro_rules! float {
    ($($ty:ty => $min:expr, $max:expr, $advertised:expr;)*) => {$(
        impl Argument for $ty {
            fn schema(_: &mut SchemaGen, c: &Constraints) -> Value {
                let mut schema = Map::new();
                schema.insert("type".to_owned(), Value::from("number"));
                let advertise: fn(&Constraints) -> Constraints = $advertised;
                advertise(c).number_keywords(&mut schema, $min, $max);
                Value::Object(schema)
            }

            fn to_value(&self) -> Option<Value> {
                serde_json::Number::from_f64(f64::from(*self)).map(Value::Number)
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
float! {
    f64 => None, None, |c| *c;
    f32 => F32_MIN, F32_MAX, Constraints::rounded_to_f32;
}

impl Scalar for String {
    #[inline(always)]
    fn accept(got: Got<'_>, cx: &mut Cx, at: &Path<'_>, c: &Constraints) -> Option<Self> {
        if let Got::Str(s) = got {
            match string_passes(s, c) {
                Passes::Yes => return Some(owned(s)),
                // Everything else passed: the one violation is the format.
                Passes::AllButFormat => {
                    if let Some(format) = c.format {
                        refuse_format(s, cx, at, format);
                    }
                    return None;
                }
                Passes::Undecided => {}
            }
        }
        refuse_string(got, cx, at, c).then(|| got_str(got).to_owned())
    }
}

/// `s` copied: out of line, so that the allocation is inlined here and not called from the
/// (much larger) reader of each field.
#[inline(never)]
fn owned(s: &str) -> String {
    s.to_owned()
}

/// The string of `got` (empty for any other value).
fn got_str<'a>(got: Got<'a>) -> &'a str {
    match got {
        Got::Str(s) => s,
        _ => "",
    }
}

/// What [`string_passes`] could decide.
enum Passes {
    /// `s` meets every constraint.
    Yes,
    /// `s` meets every constraint but its format.
    AllButFormat,
    /// Not decided without counting characters, or the pattern refused it (see
    /// [`refuse_string`]); the format was not checked.
    Undecided,
}

/// Whether `s` meets `c`, when that is decided without counting characters. The format,
/// the costliest check, is checked last and once.
#[inline(always)]
fn string_passes(s: &str, c: &Constraints) -> Passes {
    // A UTF-8 character takes 1 to 4 bytes.
    let bytes = s.len() as u64;
    let rest = c.min_length.is_none_or(|min| bytes / 4 >= min)
        && c.max_length.is_none_or(|max| bytes <= max)
        && c.pattern
            .is_none_or(|pattern| pattern.is_match(s) == Some(true));
    if !rest {
        Passes::Undecided
    } else if c.format.is_none_or(|format| format.is_valid(s)) {
        Passes::Yes
    } else {
        Passes::AllButFormat
    }
}

/// Records that `s` is not of `format`.
#[cold]
#[inline(never)]
fn refuse_format(s: &str, cx: &mut Cx, at: &Path<'_>, format: crate::contract::Format) {
    // Written when first read: this is the commonest refusal of a string, and the
    // formatting costs more than the check.
    let (got, quoted) = Got::Str(s).subject();
    cx.report_reason(
        at,
        Keyword::Other("format"),
        Reason::Format { format, got },
        quoted,
    );
}

/// Checks `got` as a string outside the common case, recording every violation; whether it
/// is acceptable after all.
#[cold]
#[inline(never)]
pub(crate) fn refuse_string(got: Got<'_>, cx: &mut Cx, at: &Path<'_>, c: &Constraints) -> bool {
    let Got::Str(s) = got else {
        cx.type_mismatch(at, "string", got);
        return false;
    };
    check_string(s, cx, at, c)
}

fn check_string(s: &str, cx: &mut Cx, at: &Path<'_>, c: &Constraints) -> bool {
    let mut ok = true;
    // Characters are counted only when the byte length cannot decide: a UTF-8 character
    // takes 1 to 4 bytes.
    let bytes = s.len() as u64;
    let min_decided = c.min_length.is_none_or(|min| bytes / 4 >= min);
    let max_decided = c.max_length.is_none_or(|max| bytes <= max);
    if !(min_decided && max_decided) {
        let count = s.chars().count() as u64;
        if let Some(min) = c.min_length.filter(|&min| count < min) {
            let unit = if min == 1 { "character" } else { "characters" };
            cx.report(
                at,
                Keyword::MinLength,
                format!("must be at least {min} {unit} long; got {count}"),
            );
            ok = false;
        }
        if let Some(max) = c.max_length.filter(|&max| count > max) {
            let unit = if max == 1 { "character" } else { "characters" };
            cx.report(
                at,
                Keyword::MaxLength,
                format!("must be at most {max} {unit} long; got {count}"),
            );
            ok = false;
        }
    }
    if let Some(pattern) = c.pattern {
        match pattern.is_match(s) {
            Some(true) => {}
            Some(false) => {
                cx.report(
                    at,
                    Keyword::Pattern,
                    format!(
                        "must match the pattern {:?}; got {}",
                        pattern.source(),
                        Got::Str(s).bare()
                    ),
                );
                ok = false;
            }
            None => {
                cx.report(
                    at,
                    Keyword::Pattern,
                    format!("the pattern {:?} cannot be evaluated", pattern.source()),
                );
                ok = false;
            }
        }
    }
    if let Some(format) = c.format
        && !format.is_valid(s)
    {
        refuse_format(s, cx, at, format);
        ok = false;
    }
    ok
}

impl Argument for String {
    fn schema(_: &mut SchemaGen, c: &Constraints) -> Value {
        let mut schema = Map::new();
        schema.insert("type".to_owned(), Value::from("string"));
        c.string_keywords(&mut schema);
        Value::Object(schema)
    }

    fn to_value(&self) -> Option<Value> {
        Some(Value::String(self.clone()))
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

impl<T: Argument> Argument for Option<T> {
    const OPTIONAL: bool = true;

    fn schema(generator: &mut SchemaGen, c: &Constraints) -> Value {
        nullable(T::schema(generator, c), NullableRule::Contract)
    }

    #[inline]
    fn parse<'de, D: Deserializer<'de>, C: ConstConstraints>(
        de: D,
        cx: &mut Cx,
        at: &Path<'_>,
    ) -> Result<Option<Self>, D::Error> {
        de.deserialize_option(OptionVisitor::<T, C> {
            cx,
            at,
            _marker: std::marker::PhantomData,
        })
    }

    fn absent() -> Option<Self> {
        Some(None)
    }

    fn to_value(&self) -> Option<Value> {
        match self {
            Some(value) => value.to_value(),
            None => Some(Value::Null),
        }
    }
}

struct OptionVisitor<'a, 'p, T, C> {
    cx: &'a mut Cx,
    at: &'a Path<'p>,
    _marker: std::marker::PhantomData<(T, C)>,
}

impl<'de, T: Argument, C: ConstConstraints> Visitor<'de> for OptionVisitor<'_, '_, T, C> {
    type Value = Option<Option<T>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value or null")
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Some(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Some(None))
    }

    #[inline]
    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        Ok(T::parse::<D, C>(de, self.cx, self.at)?.map(Some))
    }
}

impl<T: Argument> Argument for Box<T> {
    const OPTIONAL: bool = T::OPTIONAL;

    fn schema(generator: &mut SchemaGen, c: &Constraints) -> Value {
        T::schema(generator, c)
    }

    #[inline]
    fn parse<'de, D: Deserializer<'de>, C: ConstConstraints>(
        de: D,
        cx: &mut Cx,
        at: &Path<'_>,
    ) -> Result<Option<Self>, D::Error> {
        Ok(T::parse::<D, C>(de, cx, at)?.map(Box::new))
    }

    fn absent() -> Option<Self> {
        T::absent().map(Box::new)
    }

    fn to_value(&self) -> Option<Value> {
        T::to_value(self)
    }
}

impl<T: Argument> Argument for Vec<T> {
    fn schema(generator: &mut SchemaGen, c: &Constraints) -> Value {
        let mut schema = Map::new();
        schema.insert("type".to_owned(), Value::from("array"));
        schema.insert(
            "items".to_owned(),
            T::schema(generator, c.item_constraints()),
        );
        c.array_keywords(&mut schema);
        Value::Object(schema)
    }

    fn to_value(&self) -> Option<Value> {
        self.iter()
            .map(T::to_value)
            .collect::<Option<Vec<_>>>()
            .map(Value::Array)
    }

    #[inline]
    fn parse<'de, D: Deserializer<'de>, C: ConstConstraints>(
        de: D,
        cx: &mut Cx,
        at: &Path<'_>,
    ) -> Result<Option<Self>, D::Error> {
        de.deserialize_any(SeqVisitor::<T, C> {
            cx,
            at,
            _marker: std::marker::PhantomData,
        })
    }
}

struct SeqVisitor<'a, 'p, T, C> {
    cx: &'a mut Cx,
    at: &'a Path<'p>,
    _marker: std::marker::PhantomData<(T, C)>,
}

impl<T, C> SeqVisitor<'_, '_, T, C> {
    fn mismatch<R>(self, got: Got<'_>) -> Option<R> {
        self.cx.type_mismatch(self.at, "array", got);
        None
    }
}

impl<'de, T: Argument, C: ConstConstraints> Visitor<'de> for SeqVisitor<'_, '_, T, C> {
    type Value = Option<Vec<T>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }

    reject_scalars!();

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        drain_map(map)?;
        Ok(self.mismatch(Got::Object))
    }

    #[inline]
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        check_depth(self.at)?;
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        let mut valid = true;
        let mut count: u64 = 0;
        loop {
            let at = self.at.index(count as usize);
            let Some(item) = seq.next_element_seed(Seed::<T, C::Items>::new(self.cx, &at))? else {
                break;
            };
            count += 1;
            match item {
                Some(item) if valid => {
                    if items.capacity() == 0 {
                        // The room `push` would make, allocated without its growth path.
                        items = Vec::with_capacity(if size_of::<T>() <= 1024 { 4 } else { 1 });
                    }
                    items.push(item);
                }
                Some(_) => {}
                None => {
                    valid = false;
                    items = Vec::new();
                }
            }
        }
        let c = &C::VALUE;
        if c.min_length.is_some() || c.max_length.is_some() {
            valid &= check_item_count(self.cx, self.at, count, c.min_length, c.max_length);
        }
        Ok(valid.then_some(items))
    }
}

/// Checks the number of items of an array against `minItems`/`maxItems`, recording a
/// violation for each it breaks; whether it meets both.
pub(crate) fn check_item_count(
    cx: &mut Cx,
    at: &Path<'_>,
    count: u64,
    min: Option<u64>,
    max: Option<u64>,
) -> bool {
    let mut ok = true;
    if let Some(min) = min.filter(|&min| count < min) {
        let unit = if min == 1 { "item" } else { "items" };
        cx.report(
            at,
            Keyword::MinItems,
            format!("must have at least {min} {unit}; got {count}"),
        );
        ok = false;
    }
    if let Some(max) = max.filter(|&max| count > max) {
        let unit = if max == 1 { "item" } else { "items" };
        cx.report(
            at,
            Keyword::MaxItems,
            format!("must have at most {max} {unit}; got {count}"),
        );
        ok = false;
    }
    ok
}
