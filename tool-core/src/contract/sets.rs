//! Sets as JSON arrays without repeats (`uniqueItems`): `BTreeSet` and `HashSet`.

use std::collections::hash_map::RandomState;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher};

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::Argument;
use crate::contract::argument::check_item_count;
use crate::contract::constraints::{
    AcceptsLength, ConstConstraints, Constraints, Num, Unconstrained,
};
use crate::contract::error::Keyword;
use crate::contract::path::Path;
use crate::contract::schema::SchemaGen;
use crate::contract::untyped::Untyped;
use crate::contract::validate::{Cx, Got, Seed, check_depth, drain_map, reject_scalars};

/// A set filled item by item.
trait Set<T>: Default {
    fn add(&mut self, item: T);
}

macro_rules! sets {
    ($(impl<T: $($tbound:path)|+ $(, $s:ident: $bound:path)?> for $set:ty;)*) => {$(
        impl<T: $($tbound +)+ $(, $s: $bound + Default)?> Set<T> for $set {
            fn add(&mut self, item: T) {
                self.insert(item);
            }
        }

        /// A JSON array without repeated items (`uniqueItems`), each item a `T`. Items are
        /// compared as JSON Schema compares them, as JSON values (`1` and `1.0` are the
        /// same); a repeat is refused with `uniqueItems` at the array. Two different items
        /// that parse to equal values (a struct's absent optional field and `null`) are one
        /// member of the set. `length` bounds the number of items. (Reading each item as
        /// JSON first, a set reads an integer beyond 64 bits as a double, as every validator
        /// does: a `BTreeSet<i128>` does not tell `100000000000000000001` from `1e20`.)
        impl<T: Argument + $($tbound +)+ $(, $s: $bound + Default)?> Argument for $set {
            fn schema(generator: &mut SchemaGen, c: &Constraints) -> Value {
                let mut schema = Map::new();
                schema.insert("type".to_owned(), Value::from("array"));
                schema.insert("items".to_owned(), T::schema(generator, c.item_constraints()));
                schema.insert("uniqueItems".to_owned(), Value::Bool(true));
                c.array_keywords(&mut schema);
                Value::Object(schema)
            }

            fn to_value(&self) -> Option<Value> {
                self.iter().map(T::to_value).collect::<Option<Vec<_>>>().map(Value::Array)
            }

            #[inline]
            fn parse<'de, D: Deserializer<'de>, C: ConstConstraints>(
                de: D,
                cx: &mut Cx,
                at: &Path<'_>,
            ) -> Result<Option<Self>, D::Error> {
                // Typed (see `parse_str`): fails the parse on anything but an array.
                de.deserialize_seq(SetVisitor::<Self, T, C> {
                    cx,
                    at,
                    _marker: std::marker::PhantomData,
                })
            }
        }
    )*};
}

sets! {
    impl<T: Ord> for BTreeSet<T>;
    impl<T: Eq | Hash, S: BuildHasher> for HashSet<T, S>;
}

impl<T> AcceptsLength for BTreeSet<T> {}
impl<T, S> AcceptsLength for HashSet<T, S> {}

struct SetVisitor<'a, 'p, S, T, C> {
    cx: &'a mut Cx,
    at: &'a Path<'p>,
    _marker: std::marker::PhantomData<(S, T, C)>,
}

impl<S, T, C> SetVisitor<'_, '_, S, T, C> {
    fn mismatch<R>(self, got: Got<'_>) -> Option<R> {
        self.cx.type_mismatch(self.at, "array", got);
        None
    }
}

impl<'de, S: Set<T>, T: Argument, C: ConstConstraints> Visitor<'de>
    for SetVisitor<'_, '_, S, T, C>
{
    type Value = Option<S>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }

    reject_scalars!();

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        drain_map(map)?;
        Ok(self.mismatch(Got::Object))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        check_depth(self.at)?;
        let mut set = S::default();
        let mut seen = Seen::default();
        let mut repeat: Option<(usize, usize)> = None;
        let mut valid = true;
        let mut count: usize = 0;
        loop {
            let at = self.at.index(count);
            // Each item is read as JSON first, so that repeats are found as JSON Schema finds
            // them, among items refused too; then it is checked as a `T`.
            let Some(item) =
                seq.next_element_seed(Seed::<Value, Unconstrained>::new(self.cx, &at))?
            else {
                break;
            };
            count += 1;
            let Some(item) = item else {
                valid = false;
                continue;
            };
            let parsed =
                T::parse::<_, C::Items>(Untyped(&item), self.cx, &at).map_err(de::Error::custom)?;
            match parsed {
                Some(value) if valid => set.add(value),
                Some(_) => {}
                None => {
                    valid = false;
                    set = S::default();
                }
            }
            if let Some(first) = seen.insert(item, count - 1)
                && repeat.is_none()
            {
                repeat = Some((first, count - 1));
            }
        }
        if let Some((first, again)) = repeat {
            self.cx.report(
                self.at,
                Keyword::Other("uniqueItems"),
                format!("must not repeat an item; item {again} repeats item {first}"),
            );
            valid = false;
        }
        let c = &C::VALUE;
        valid &= check_item_count(self.cx, self.at, count as u64, c.min_length, c.max_length);
        Ok(valid.then_some(set))
    }
}

/// The items of an array so far, found by JSON equality in expected constant time.
#[derive(Default)]
struct Seen {
    hasher: RandomState,
    /// Each item with its index in the array.
    items: Vec<(usize, Value)>,
    /// Positions in `items`, by hash.
    by_hash: HashMap<u64, Vec<usize>>,
}

impl Seen {
    /// Records `item` at `index`; the index of an equal item recorded before, if any.
    fn insert(&mut self, item: Value, index: usize) -> Option<usize> {
        let hash = self.hash(&item);
        let bucket = self.by_hash.entry(hash).or_default();
        if let Some(&position) = bucket
            .iter()
            .find(|&&position| json_equal(&self.items[position].1, &item))
        {
            return Some(self.items[position].0);
        }
        bucket.push(self.items.len());
        self.items.push((index, item));
        None
    }

    fn hash(&self, value: &Value) -> u64 {
        let mut hasher = self.hasher.build_hasher();
        hash_json(&self.hasher, value, &mut hasher);
        hasher.finish()
    }
}

/// The number as the one exact value JSON Schema compares: every representation of an
/// integer (`1`, `1.0`, `1e0`) hashes alike.
fn hash_number(n: &Number, state: &mut impl Hasher) {
    let num = to_num(n);
    match num {
        Num::U(u) => i128::from(u).hash(state),
        Num::I(i) => i128::from(i).hash(state),
        Num::F(f) if f.fract() == 0.0 && f.abs() < 1e38 => (f as i128).hash(state),
        Num::F(f) => f.to_bits().hash(state),
    }
}

fn hash_json(keys: &RandomState, value: &Value, state: &mut impl Hasher) {
    match value {
        Value::Null => state.write_u8(0),
        Value::Bool(b) => {
            state.write_u8(1);
            b.hash(state);
        }
        Value::Number(n) => {
            state.write_u8(2);
            hash_number(n, state);
        }
        Value::String(s) => {
            state.write_u8(3);
            s.hash(state);
        }
        Value::Array(items) => {
            state.write_u8(4);
            state.write_usize(items.len());
            for item in items {
                hash_json(keys, item, state);
            }
        }
        Value::Object(members) => {
            state.write_u8(5);
            state.write_usize(members.len());
            // In any order of the members.
            let mut sum: u64 = 0;
            for (key, member) in members {
                let mut one = keys.build_hasher();
                key.hash(&mut one);
                hash_json(keys, member, &mut one);
                sum = sum.wrapping_add(one.finish());
            }
            state.write_u64(sum);
        }
    }
}

fn to_num(n: &Number) -> Num {
    if let Some(u) = n.as_u64() {
        Num::U(u)
    } else if let Some(i) = n.as_i64() {
        Num::I(i)
    } else {
        Num::F(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// JSON equality as JSON Schema defines it: numbers by value, objects in any order.
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => {
            to_num(a).compare(to_num(b)) == std::cmp::Ordering::Equal
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, value)| b.get(key).is_some_and(|other| json_equal(value, other)))
        }
        (a, b) => a == b,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn finds_repeats_by_json_equality() {
        let mut seen = Seen::default();
        let items = [
            json!(1),
            json!(1.0),
            json!(-0.0),
            json!(0),
            json!({"a": [1, 2], "b": null}),
            json!({"b": null, "a": [1.0, 2]}),
            json!("1"),
            json!([1]),
        ];
        let found: Vec<Option<usize>> = items
            .into_iter()
            .enumerate()
            .map(|(i, item)| seen.insert(item, i))
            .collect();
        assert_eq!(
            found,
            [None, Some(0), None, Some(2), None, Some(4), None, None]
        );
    }
}
