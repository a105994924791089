//! Sets as JSON arrays without repeats (`uniqueItems`): `BTreeSet` and `HashSet`.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::rc::Rc;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::Argument;
use crate::contract::argument::check_item_count;
use crate::contract::constraints::{AcceptsLength, ConstConstraints, Constraints, Num};
use crate::contract::error::Keyword;
use crate::contract::path::Path;
use crate::contract::schema::SchemaGen;
use crate::contract::untagged::{Interner, ValueId, read_named};
use crate::contract::validate::{Cx, Got, check_depth, drain_map, reject_scalars};

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
        /// member of the set. `length` bounds the number of items. (Holding each item as
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
                de.deserialize_any(SetVisitor::<Self, T, C> {
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
        let values = Rc::new(RefCell::new(Interner::default()));
        // Each item's index by its JSON value.
        let mut seen: HashMap<ValueId, usize> = HashMap::new();
        let mut repeat: Option<(usize, usize)> = None;
        let mut valid = true;
        let mut count: usize = 0;
        loop {
            let at = self.at.index(count);
            // Each item is held once (or found held, in a set inside a held value) and named
            // by its JSON value, so that repeats are found as JSON Schema finds them, among
            // items refused too; then it is read as a `T`.
            let Some((parsed, id)) = seq.next_element_seed(Item::<T, C::Items> {
                cx: self.cx,
                at: &at,
                values: &values,
                _marker: std::marker::PhantomData,
            })?
            else {
                break;
            };
            count += 1;
            match parsed {
                Some(value) if valid => set.add(value),
                Some(_) => {}
                None => {
                    valid = false;
                    set = S::default();
                }
            }
            if let Some(&first) = seen.get(&id) {
                if repeat.is_none() {
                    repeat = Some((first, count - 1));
                }
            } else {
                seen.insert(id, count - 1);
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

/// One item of a set: read as a `T` and named by its JSON value.
struct Item<'a, 'p, T, C> {
    cx: &'a mut Cx,
    at: &'a Path<'p>,
    values: &'a Rc<RefCell<Interner>>,
    _marker: std::marker::PhantomData<(T, C)>,
}

impl<'de, T: Argument, C: ConstConstraints> DeserializeSeed<'de> for Item<'_, '_, T, C> {
    type Value = (Option<T>, ValueId);

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        let at = self.at;
        read_named(de, self.cx, at, self.values, |held, cx| {
            T::parse::<_, C>(held.de(), cx, at)
        })
    }
}
