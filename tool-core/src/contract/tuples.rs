//! Fixed-length arrays: tuples `(A,)` to `(A, B, C, D, E, F)` and `[T; N]`, each a JSON
//! array with one schema per position (`prefixItems`) and no item past the last.

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::Argument;
use crate::contract::argument::check_item_count;
use crate::contract::constraints::{ConstConstraints, Constraints, Num};
use crate::contract::error::Keyword;
use crate::contract::path::Path;
use crate::contract::schema::SchemaGen;
use crate::contract::validate::{Cx, Got, Seed, check_depth, drain_map, reject_scalars};

/// The schema of an array of exactly `positions.len()` items, the `i`-th of schema
/// `positions[i]`.
fn fixed_schema(positions: Vec<Value>) -> Value {
    let n = positions.len();
    let mut schema = Map::new();
    schema.insert("type".to_owned(), Value::from("array"));
    // `prefixItems` may not be empty.
    if n > 0 {
        schema.insert("prefixItems".to_owned(), Value::Array(positions));
    }
    schema.insert("items".to_owned(), Value::Bool(false));
    schema.insert("minItems".to_owned(), Value::from(n));
    schema.insert("maxItems".to_owned(), Value::from(n));
    Value::Object(schema)
}

/// Reads the items of a fixed-length array in order.
trait Positions: Sized {
    /// How many items the array has.
    const LEN: usize;

    /// Reads the items, `None` for each one refused (or missing: `seq` ended early).
    fn read<'de, A: SeqAccess<'de>, C: ConstConstraints>(
        seq: &mut A,
        cx: &mut Cx,
        at: &Path<'_>,
    ) -> Result<(usize, Option<Self>), A::Error>;
}

struct FixedVisitor<'a, 'p, T, C> {
    cx: &'a mut Cx,
    at: &'a Path<'p>,
    _marker: std::marker::PhantomData<(T, C)>,
}

impl<T, C> FixedVisitor<'_, '_, T, C> {
    fn mismatch<R>(self, got: Got<'_>) -> Option<R> {
        self.cx.type_mismatch(self.at, "array", got);
        None
    }
}

impl<'de, T: Positions, C: ConstConstraints> Visitor<'de> for FixedVisitor<'_, '_, T, C> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an array of {} items", T::LEN)
    }

    reject_scalars!();

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        drain_map(map)?;
        Ok(self.mismatch(Got::Object))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        check_depth(self.at)?;
        let (read, value) = T::read::<A, C>(&mut seq, self.cx, self.at)?;
        let mut count = read;
        // Items past the last position are refused one by one (`items: false`).
        while seq.next_element::<IgnoredAny>()?.is_some() {
            self.cx.report(
                &self.at.index(count),
                Keyword::Other("falseSchema"),
                format!(
                    "no item is allowed here: the array has exactly {} items",
                    T::LEN
                ),
            );
            count += 1;
        }
        let len = T::LEN as u64;
        let fits = check_item_count(self.cx, self.at, count as u64, Some(len), Some(len));
        Ok(value.filter(|_| fits))
    }
}

fn parse_fixed<'de, T: Positions, C: ConstConstraints, D: Deserializer<'de>>(
    de: D,
    cx: &mut Cx,
    at: &Path<'_>,
) -> Result<Option<T>, D::Error> {
    de.deserialize_any(FixedVisitor::<T, C> {
        cx,
        at,
        _marker: std::marker::PhantomData,
    })
}

/// Reads the item at position `index`, if `seq` has one: `Ok(None)` when it ended.
fn next<'de, T: Argument, C: ConstConstraints, A: SeqAccess<'de>>(
    seq: &mut A,
    cx: &mut Cx,
    at: &Path<'_>,
    index: usize,
) -> Result<Option<Option<T>>, A::Error> {
    let at = at.index(index);
    seq.next_element_seed(Seed::<T, C>::new(cx, &at))
}

macro_rules! tuples {
    ($($len:literal => ($($name:ident $index:tt),+);)*) => {$(
        impl<$($name: Argument),+> Positions for ($($name,)+) {
            const LEN: usize = $len;

            #[allow(non_snake_case)]
            fn read<'de, A: SeqAccess<'de>, C: ConstConstraints>(
                seq: &mut A,
                cx: &mut Cx,
                at: &Path<'_>,
            ) -> Result<(usize, Option<Self>), A::Error> {
                let mut read = 0;
                $(
                    let $name = if read == $index {
                        match next::<$name, C::Items, A>(seq, cx, at, $index)? {
                            Some(item) => {
                                read += 1;
                                item
                            }
                            None => None,
                        }
                    } else {
                        None
                    };
                )+
                let value = match ($($name,)+) {
                    ($(Some($name),)+) => Some(($($name,)+)),
                    _ => None,
                };
                Ok((read, value))
            }
        }

        /// A JSON array of exactly this many items, one per position (`prefixItems`). The
        /// item constraints, if any, apply to every position.
        impl<$($name: Argument),+> Argument for ($($name,)+) {
            fn schema(generator: &mut SchemaGen, c: &Constraints) -> Value {
                let items = c.item_constraints();
                fixed_schema(vec![$($name::schema(generator, items)),+])
            }

            #[allow(non_snake_case)]
            fn to_value(&self) -> Option<Value> {
                let ($($name,)+) = self;
                Some(Value::Array(vec![$($name.to_value()?),+]))
            }

            #[inline]
            fn parse<'de, D: Deserializer<'de>, C: ConstConstraints>(
                de: D,
                cx: &mut Cx,
                at: &Path<'_>,
            ) -> Result<Option<Self>, D::Error> {
                parse_fixed::<Self, C, D>(de, cx, at)
            }
        }
    )*};
}

tuples! {
    1 => (T0 0);
    2 => (T0 0, T1 1);
    3 => (T0 0, T1 1, T2 2);
    4 => (T0 0, T1 1, T2 2, T3 3);
    5 => (T0 0, T1 1, T2 2, T3 3, T4 4);
    6 => (T0 0, T1 1, T2 2, T3 3, T4 4, T5 5);
}

impl<T: Argument, const N: usize> Positions for [T; N] {
    const LEN: usize = N;

    fn read<'de, A: SeqAccess<'de>, C: ConstConstraints>(
        seq: &mut A,
        cx: &mut Cx,
        at: &Path<'_>,
    ) -> Result<(usize, Option<Self>), A::Error> {
        let mut items = Vec::with_capacity(N.min(64));
        let mut valid = true;
        let mut read = 0;
        while read < N {
            let Some(item) = next::<T, C::Items, A>(seq, cx, at, read)? else {
                break;
            };
            read += 1;
            match item {
                Some(item) if valid => items.push(item),
                Some(_) => {}
                None => {
                    valid = false;
                    items = Vec::new();
                }
            }
        }
        let value = if valid {
            <[T; N]>::try_from(items).ok()
        } else {
            None
        };
        Ok((read, value))
    }
}

/// A JSON array of exactly `N` items (`prefixItems`, `minItems` and `maxItems` `N`). The item
/// constraints, if any, apply to every item.
impl<T: Argument, const N: usize> Argument for [T; N] {
    fn schema(generator: &mut SchemaGen, c: &Constraints) -> Value {
        let items = c.item_constraints();
        let item = if N == 0 {
            Value::Null
        } else {
            T::schema(generator, items)
        };
        fixed_schema(vec![item; N])
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
        parse_fixed::<Self, C, D>(de, cx, at)
    }
}
