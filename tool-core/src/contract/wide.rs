//! Integers beyond the 64-bit ones: `i128`, `u128`, and the `NonZero` integers.

use std::cmp::Ordering;
use std::fmt;
use std::num::{
    NonZeroI8, NonZeroI16, NonZeroI32, NonZeroI64, NonZeroIsize, NonZeroU8, NonZeroU16, NonZeroU32,
    NonZeroU64, NonZeroUsize,
};

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

use crate::Argument;
use crate::contract::argument::check_bounds;
use crate::contract::constraints::{AcceptsRange, ConstConstraints, Constraints, Domain, Num};
use crate::contract::error::Keyword;
use crate::contract::path::Path;
use crate::contract::schema::SchemaGen;
use crate::contract::validate::{Cx, Got, Scalar, drain_map, drain_seq, parse_scalar};

/// 2^127, the least number above every `i128`: an exact double.
const TWO_127: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
/// 2^128, the least number above every `u128`: an exact double.
const TWO_128: f64 = 340_282_366_920_938_463_463_374_607_431_768_211_456.0;

/// A 128-bit integer type: its range as exact JSON numbers, and conversions.
trait Wide: Sized + Copy + fmt::Display {
    /// The type's least value, as a JSON number.
    const MIN: Num;
    /// The least JSON number above the type's range (`exclusiveMaximum`).
    const ABOVE: Num;
    const NAME: &'static str;

    /// The value of an integral number inside the range.
    fn from_num(n: Num) -> Option<Self>;
    /// The JSON number that is exactly this value, if there is one: beyond 64 bits, only a
    /// double can hold an integer, and only some.
    fn to_num(self) -> Option<Num>;
}

impl Wide for i128 {
    const MIN: Num = Num::F(-TWO_127);
    const ABOVE: Num = Num::F(TWO_127);
    const NAME: &'static str = "i128";

    fn from_num(n: Num) -> Option<Self> {
        match n {
            Num::U(u) => Some(i128::from(u)),
            Num::I(i) => Some(i128::from(i)),
            // Every integral double in [-2^127, 2^127) converts exactly.
            Num::F(f) if f.fract() == 0.0 && (-TWO_127..TWO_127).contains(&f) => Some(f as i128),
            Num::F(_) => None,
        }
    }

    fn to_num(self) -> Option<Num> {
        if let Ok(u) = u64::try_from(self) {
            return Some(Num::U(u));
        }
        if let Ok(i) = i64::try_from(self) {
            return Some(Num::I(i));
        }
        let f = self as f64;
        (f < TWO_127 && f as i128 == self).then_some(Num::F(f))
    }
}

impl Wide for u128 {
    const MIN: Num = Num::U(0);
    const ABOVE: Num = Num::F(TWO_128);
    const NAME: &'static str = "u128";

    fn from_num(n: Num) -> Option<Self> {
        match n {
            Num::U(u) => Some(u128::from(u)),
            Num::I(_) => None,
            Num::F(f) if f.fract() == 0.0 && (0.0..TWO_128).contains(&f) => Some(f as u128),
            Num::F(_) => None,
        }
    }

    fn to_num(self) -> Option<Num> {
        if let Ok(u) = u64::try_from(self) {
            return Some(Num::U(u));
        }
        let f = self as f64;
        (f < TWO_128 && f as u128 == self).then_some(Num::F(f))
    }
}

/// The declared constraints with the type's upper end folded into `exclusiveMaximum`.
fn within_type<T: Wide>(c: &Constraints) -> Constraints {
    let above = match c.exclusive_maximum {
        Some(declared) if declared.compare(T::ABOVE) == Ordering::Less => declared,
        _ => T::ABOVE,
    };
    Constraints {
        exclusive_maximum: Some(above),
        ..*c
    }
}

fn wide_schema<T: Wide>(c: &Constraints) -> Value {
    let mut schema = Map::new();
    schema.insert("type".to_owned(), Value::from("integer"));
    within_type::<T>(c).number_keywords(&mut schema, Some(T::MIN), None);
    Value::Object(schema)
}

/// Checks the number `n`; `exact` is the value when the text gave it with every digit.
fn accept_wide<T: Wide>(
    n: Num,
    exact: Option<T>,
    cx: &mut Cx,
    at: &Path<'_>,
    c: &Constraints,
) -> Option<T> {
    // serde reads no 128-bit integer from the value an untagged enum holds: such a variant
    // takes a number only once no variant takes it as serde reads numbers.
    if cx.serde_numbers() {
        cx.report(
            at,
            Keyword::Type,
            format!("serde reads no {} inside an untagged enum", T::NAME),
        );
        return None;
    }
    let integral = n.is_integer();
    if !integral {
        cx.type_mismatch(at, "integer", Got::Number(n));
    }
    let in_bounds = check_bounds(n, Some(T::MIN), None, cx, at, &within_type::<T>(c));
    if !(integral && in_bounds) {
        return None;
    }
    exact.or_else(|| T::from_num(n))
}

/// Checks an integer the text gave with every digit: it must also be a JSON number exactly,
/// the value every JSON Schema validator would see.
fn accept_exact<T: Wide>(v: T, cx: &mut Cx, at: &Path<'_>, c: &Constraints) -> Option<T> {
    match v.to_num() {
        Some(n) => accept_wide(n, Some(v), cx, at, c),
        None => {
            cx.report(
                at,
                Keyword::Type,
                format!(
                    "{v} has more significant digits than a JSON number holds: beyond 64 \
                     bits, {} takes only integers that are exactly a double",
                    T::NAME
                ),
            );
            None
        }
    }
}

struct WideVisitor<'a, 'p, T, C> {
    cx: &'a mut Cx,
    at: &'a Path<'p>,
    _marker: std::marker::PhantomData<(T, C)>,
}

impl<T, C> WideVisitor<'_, '_, T, C> {
    fn mismatch<R>(self, got: Got<'_>) -> Option<R> {
        self.cx.type_mismatch(self.at, "integer", got);
        None
    }
}

impl<'de, T: Wide + TryFrom<i128> + TryFrom<u128>, C: ConstConstraints> Visitor<'de>
    for WideVisitor<'_, '_, T, C>
{
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        let n = if v >= 0 { Num::U(v as u64) } else { Num::I(v) };
        Ok(accept_wide::<T>(n, None, self.cx, self.at, &C::VALUE))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(accept_wide::<T>(
            Num::U(v),
            None,
            self.cx,
            self.at,
            &C::VALUE,
        ))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(accept_wide::<T>(
            Num::F(v),
            None,
            self.cx,
            self.at,
            &C::VALUE,
        ))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Self::Value, E> {
        Ok(match T::try_from(v) {
            Ok(v) => accept_exact(v, self.cx, self.at, &C::VALUE),
            // Below the range of `u128`: an `i128` that fits 64 bits or not, it is refused
            // for its bound either way.
            Err(_) => accept_wide::<T>(
                i64::try_from(v).map_or(Num::F(v as f64), Num::I),
                None,
                self.cx,
                self.at,
                &C::VALUE,
            ),
        })
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Self::Value, E> {
        Ok(match T::try_from(v) {
            Ok(v) => accept_exact(v, self.cx, self.at, &C::VALUE),
            Err(_) => accept_wide::<T>(Num::F(v as f64), None, self.cx, self.at, &C::VALUE),
        })
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(self.mismatch(Got::Bool(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self.mismatch(Got::Str(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(self.mismatch(Got::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(self.mismatch(Got::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        drain_seq(seq)?;
        Ok(self.mismatch(Got::Array))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        drain_map(map)?;
        Ok(self.mismatch(Got::Object))
    }
}

macro_rules! wide {
    ($($(#[$doc:meta])* $ty:ty => $deserialize:ident;)*) => {$(
        $(#[$doc])*
        impl Argument for $ty {
            fn schema(_: &mut SchemaGen, c: &Constraints) -> Value {
                wide_schema::<$ty>(c)
            }

            fn to_value(&self) -> Option<Value> {
                // Advertised only when a JSON number holds it exactly.
                i64::try_from(*self)
                    .map(Value::from)
                    .or_else(|_| u64::try_from(*self).map(Value::from))
                    .ok()
            }

            #[inline]
            fn parse<'de, D: Deserializer<'de>, C: ConstConstraints>(
                de: D,
                cx: &mut Cx,
                at: &Path<'_>,
            ) -> Result<Option<Self>, D::Error> {
                // Text is read with every digit; a value of another type fails this typed
                // read, and the text is read again untyped (see `parse_str`).
                de.$deserialize(WideVisitor::<$ty, C> {
                    cx,
                    at,
                    _marker: std::marker::PhantomData,
                })
            }
        }
    )*};
}

wide! {
    /// `i128` and `u128`, exact to the last digit.
    ///
    /// JSON text may carry an integer of any size, but a JSON Schema validator (and
    /// `serde_json::Value`) holds a number beyond 64 bits as a double, so the advertised range is
    /// the one doubles state exactly: `minimum` −2^127 (0 for `u128`) and `exclusiveMaximum`
    /// 2^127 (2^128), which admit the same integers as the type's range save those that round
    /// up to its end. An integer written with every digit is read exactly; beyond 64 bits it is
    /// accepted only if it is also exactly a double (so that the value is the one a validator
    /// checked), and refused with `type` otherwise, as in `170141183460469231731687303715884105727`
    /// (`i128::MAX`, not a double). A number written with a fraction or an exponent (`1e20`) is
    /// read as the double nearest to it, as every JSON parser here reads it.
    i128 => deserialize_i128;
    /// `u128`, exact to the last digit: as `i128`, with `minimum` 0 and `exclusiveMaximum`
    /// 2^128.
    u128 => deserialize_u128;
}

/// The declared constraints with `minimum` raised to 1 if it was lower.
fn at_least_one(c: &Constraints) -> Constraints {
    let raised = match c.minimum {
        Some(min) if min.compare(Num::U(1)) != Ordering::Less => min,
        _ => Num::U(1),
    };
    Constraints {
        minimum: Some(raised),
        ..*c
    }
}

/// Unsigned `NonZero` integers: the integer with `minimum` 1.
macro_rules! nonzero_unsigned {
    ($($ty:ty => $inner:ty;)*) => {$(
        impl Scalar for $ty {
            #[inline]
            fn accept(got: Got<'_>, cx: &mut Cx, at: &Path<'_>, c: &Constraints) -> Option<Self> {
                <$inner>::accept(got, cx, at, &at_least_one(c)).and_then(<$ty>::new)
            }
        }

        impl Argument for $ty {
            fn schema(generator: &mut SchemaGen, c: &Constraints) -> Value {
                <$inner>::schema(generator, &at_least_one(c))
            }

            fn to_value(&self) -> Option<Value> {
                self.get().to_value()
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

nonzero_unsigned! {
    NonZeroU8 => u8;
    NonZeroU16 => u16;
    NonZeroU32 => u32;
    NonZeroU64 => u64;
    NonZeroUsize => usize;
}

/// Signed `NonZero` integers: the integer, and `"not": {"const": 0}`; a zero is refused with
/// `not` (besides any bound it breaks).
macro_rules! nonzero_signed {
    ($($ty:ty => $inner:ty;)*) => {$(
        impl Scalar for $ty {
            #[inline]
            fn accept(got: Got<'_>, cx: &mut Cx, at: &Path<'_>, c: &Constraints) -> Option<Self> {
                let zero = matches!(got, Got::Number(n) if n.compare(Num::U(0)) == Ordering::Equal);
                let value = <$inner>::accept(got, cx, at, c);
                if zero {
                    cx.report(at, Keyword::Other("not"), "must not be 0");
                }
                value.and_then(<$ty>::new)
            }
        }

        impl Argument for $ty {
            fn schema(generator: &mut SchemaGen, c: &Constraints) -> Value {
                let mut schema = <$inner>::schema(generator, c);
                if let Value::Object(map) = &mut schema {
                    map.insert("not".to_owned(), json!({ "const": 0 }));
                }
                schema
            }

            fn to_value(&self) -> Option<Value> {
                self.get().to_value()
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

nonzero_signed! {
    NonZeroI8 => i8;
    NonZeroI16 => i16;
    NonZeroI32 => i32;
    NonZeroI64 => i64;
    NonZeroIsize => isize;
}

impl AcceptsRange for i128 {
    const DOMAIN: Domain = Domain::Integer {
        min: i128::MIN,
        max: i128::MAX,
    };
}

/// `range` bounds are 64-bit integers or doubles, and the check that they admit a value runs
/// within ±2^100; the end of `u128` beyond `i128::MAX` makes no difference there.
impl AcceptsRange for u128 {
    const DOMAIN: Domain = Domain::Integer {
        min: 0,
        max: i128::MAX,
    };
}

macro_rules! nonzero_range {
    ($($ty:ty => $inner:ty, $min:expr;)*) => {$(
        impl AcceptsRange for $ty {
            const DOMAIN: Domain = Domain::Integer {
                min: $min,
                max: <$inner>::MAX as i128,
            };
        }
    )*};
}

nonzero_range! {
    NonZeroU8 => u8, 1;
    NonZeroU16 => u16, 1;
    NonZeroU32 => u32, 1;
    NonZeroU64 => u64, 1;
    NonZeroUsize => usize, 1;
    NonZeroI8 => i8, i8::MIN as i128;
    NonZeroI16 => i16, i16::MIN as i128;
    NonZeroI32 => i32, i32::MIN as i128;
    NonZeroI64 => i64, i64::MIN as i128;
    NonZeroIsize => isize, isize::MIN as i128;
}
