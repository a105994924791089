//! Maps as JSON objects: [`ArgumentKey`], the types whose values name the members, and the
//! `Argument` implementations of `BTreeMap` and `HashMap` over them.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::hash::{BuildHasher, Hash};

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

use crate::Argument;
use crate::contract::argument::refuse_string;
use crate::contract::constraints::{AcceptsLength, ConstConstraints, Constraints, Num};
use crate::contract::error::Keyword;
use crate::contract::path::Path;
use crate::contract::schema::SchemaGen;
use crate::contract::validate::{Cx, Got, KeySeed, Seed, check_depth, drain_seq, reject_scalars};

/// A type whose values are the keys of a map in tool arguments: JSON object keys are
/// strings, and this says which strings name a key and which key each one names.
///
/// Implemented for `String` (every string is a key) and for every integer type (a key is the
/// integer written as JSON writes a number: `0`, `42`, `-7`, without a `+`, spaces or leading
/// zeros, within the type's range; the same keys `serde_json` reads, except that `-0` is not a
/// key here, so that no two names make one key). A unit-variant enum implements it with its
/// variant names, `{"enum": [...]}`. A map advertises the keys as `propertyNames`, and a
/// member whose name is not a key is refused with that keyword.
///
/// The three required methods must agree: `parse_key` accepts exactly the names that meet
/// `key_schema`, and `key_name` gives back the name a key was read from.
#[doc(hidden)]
pub trait ArgumentKey: Sized {
    /// The schema every property name meets (`propertyNames`); `{}` when every string is a
    /// key.
    fn key_schema() -> Value;

    /// The key `name` names, or `None` when it names none: exactly when `name` does not meet
    /// [`key_schema`](Self::key_schema).
    fn parse_key(name: &str) -> Option<Self>;

    /// The property name of this key: the one [`parse_key`](Self::parse_key) reads it from.
    fn key_name(&self) -> Cow<'_, str>;

    /// What a property name must be, for the message refusing one that is not a key.
    fn expected_keys() -> Cow<'static, str> {
        Cow::Owned(format!("a property name meeting {}", Self::key_schema()))
    }

    /// [`parse_key`](Self::parse_key) on a name already owned; `Err` hands it back.
    fn from_name(name: String) -> Result<Self, String> {
        Self::parse_key(&name).ok_or(name)
    }
}

impl ArgumentKey for String {
    fn key_schema() -> Value {
        json!({})
    }

    fn parse_key(name: &str) -> Option<Self> {
        Some(name.to_owned())
    }

    fn key_name(&self) -> Cow<'_, str> {
        Cow::Borrowed(self)
    }

    fn from_name(name: String) -> Result<Self, String> {
        Ok(name)
    }
}

/// Whether `name` is an integer as JSON writes it: `0`, or digits without a leading zero,
/// with a `-` before any but `0`.
fn integer_syntax(name: &str) -> bool {
    let digits = name.strip_prefix('-').unwrap_or(name);
    match digits.as_bytes() {
        [b'0'] => digits.len() == name.len(),
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// A regular expression (ECMA-262, anchored) matching the decimal numerals of the integers
/// `-below..=above` written as [`integer_syntax`] says (`below` is the magnitude of the least).
pub(crate) fn integer_key_pattern(below: u128, above: u128) -> String {
    let mut alternatives = vec!["0".to_owned()];
    if above >= 1 {
        alternatives.push(positive_up_to(above));
    }
    if below >= 1 {
        alternatives.push(format!("-({})", positive_up_to(below)));
    }
    format!("^({})$", alternatives.join("|"))
}

/// The numerals of `1..=max` without leading zeros, as alternatives.
fn positive_up_to(max: u128) -> String {
    let digits: Vec<u8> = max.to_string().bytes().map(|b| b - b'0').collect();
    let n = digits.len();
    let mut alternatives = Vec::new();
    // Every numeral shorter than `max`.
    match n {
        1 => {}
        2 => alternatives.push("[1-9]".to_owned()),
        _ => alternatives.push(format!("[1-9][0-9]{{0,{}}}", n - 2)),
    }
    // Numerals as long as `max`: its first `i` digits, then a smaller one, then any.
    let mut prefix = String::new();
    for (i, &digit) in digits.iter().enumerate() {
        let lowest = u8::from(i == 0);
        if digit > lowest {
            let rest = n - i - 1;
            let class = if digit - 1 == lowest {
                lowest.to_string()
            } else {
                format!("[{lowest}-{}]", digit - 1)
            };
            let tail = match rest {
                0 => String::new(),
                1 => "[0-9]".to_owned(),
                _ => format!("[0-9]{{{rest}}}"),
            };
            alternatives.push(format!("{prefix}{class}{tail}"));
        }
        prefix.push(char::from(b'0' + digit));
    }
    alternatives.push(prefix);
    alternatives.join("|")
}

macro_rules! integer_keys {
    ($($ty:ty),*) => {$(
        impl ArgumentKey for $ty {
            fn key_schema() -> Value {
                json!({
                    "pattern": integer_key_pattern(
                        (<$ty>::MIN as i128).unsigned_abs(),
                        <$ty>::MAX as u128,
                    ),
                })
            }

            fn parse_key(name: &str) -> Option<Self> {
                if integer_syntax(name) { name.parse().ok() } else { None }
            }

            fn key_name(&self) -> Cow<'_, str> {
                Cow::Owned(self.to_string())
            }

            fn expected_keys() -> Cow<'static, str> {
                Cow::Owned(format!(
                    "an integer from {} to {}, without a sign + or leading zeros",
                    <$ty>::MIN,
                    <$ty>::MAX
                ))
            }
        }
    )*};
}

integer_keys!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize
);

/// A map from keys `K` to values `T`, filled from a JSON object.
trait KeyedMap<K, T>: Default {
    /// Inserts `key` with the value `parse` yields for it, unless `key` is already present
    /// (`Duplicate`, and `parse` is not called).
    fn insert_new<E>(
        &mut self,
        key: K,
        parse: impl FnOnce(&K) -> Result<Option<T>, E>,
    ) -> Result<Insert<K>, E>;
}

enum Insert<K> {
    Inserted,
    /// The name of the key already present.
    Duplicate(String),
    Refused(K),
}

/// `KeyedMap` and `Argument` for the standard maps, through their entry APIs.
macro_rules! maps {
    ($(impl<K: $($kbound:path)|+, T $(, $s:ident: $bound:path)?> for $map:ty => $entry:ident;)*) => {$(
        impl<K: ArgumentKey + $($kbound +)+, T $(, $s: $bound + Default)?> KeyedMap<K, T> for $map {
            fn insert_new<E>(
                &mut self,
                key: K,
                parse: impl FnOnce(&K) -> Result<Option<T>, E>,
            ) -> Result<Insert<K>, E> {
                use std::collections::$entry::Entry;
                match self.entry(key) {
                    Entry::Occupied(entry) => {
                        Ok(Insert::Duplicate(entry.key().key_name().into_owned()))
                    }
                    Entry::Vacant(entry) => Ok(match parse(entry.key())? {
                        Some(value) => {
                            entry.insert(value);
                            Insert::Inserted
                        }
                        None => Insert::Refused(entry.into_key()),
                    }),
                }
            }
        }

        /// A JSON object whose values are `T` (`additionalProperties`) and whose property
        /// names are keys `K` (`propertyNames`, unless every string is one).
        impl<K: ArgumentKey + $($kbound +)+, T: Argument $(, $s: $bound + Default)?> Argument for $map {
            fn schema(generator: &mut SchemaGen, c: &Constraints) -> Value {
                map_schema::<K>(T::schema(generator, c.item_constraints()), c)
            }

            fn to_value(&self) -> Option<Value> {
                self.iter()
                    .map(|(key, value)| Some((key.key_name().into_owned(), value.to_value()?)))
                    .collect::<Option<Map<_, _>>>()
                    .map(Value::Object)
            }

            fn parse<'de, D: Deserializer<'de>, C: ConstConstraints>(
                de: D,
                cx: &mut Cx,
                at: &Path<'_>,
            ) -> Result<Option<Self>, D::Error> {
                de.deserialize_any(MapVisitor::<Self, K, T, C> {
                    cx,
                    at,
                    _marker: std::marker::PhantomData,
                })
            }
        }
    )*};
}

maps! {
    impl<K: Ord, T> for BTreeMap<K, T> => btree_map;
    impl<K: Eq | Hash, T, S: BuildHasher> for HashMap<K, T, S> => hash_map;
}

/// `length(..)` on a map bounds its number of entries (`minProperties`, `maxProperties`).
impl<K, T> AcceptsLength for BTreeMap<K, T> {}
impl<K, T, S> AcceptsLength for HashMap<K, T, S> {}

/// Collections whose keys `keys(..)` constrains: maps.
#[diagnostic::on_unimplemented(
    message = "`keys(..)` does not apply to `{Self}`",
    label = "`keys` applies to maps (`BTreeMap`, `HashMap`): it constrains their property names",
    note = "use `inner(..)` for the items of an array or set"
)]
pub trait HasKeys {}

impl<K, T> HasKeys for BTreeMap<K, T> {}
impl<K, T, S> HasKeys for HashMap<K, T, S> {}
impl<M: HasKeys> HasKeys for Option<M> {}
impl<M: HasKeys> HasKeys for Box<M> {}

/// Compile-time check that `keys(..)` applies to `T`.
pub const fn has_keys<T: HasKeys + ?Sized>() {}

fn map_schema<K: ArgumentKey>(values: Value, c: &Constraints) -> Value {
    let mut schema = Map::new();
    schema.insert("type".to_owned(), Value::from("object"));
    schema.insert("additionalProperties".to_owned(), values);
    let mut keys = K::key_schema();
    if let Some(declared) = c.keys {
        let mut names = Map::new();
        declared.string_keywords(&mut names);
        keys = match keys {
            // The key type's own keywords and the declared ones side by side, unless one
            // keyword is in both (the key type's `pattern` and a declared one).
            Value::Object(mut own) if names.keys().all(|name| !own.contains_key(name)) => {
                own.extend(names);
                Value::Object(own)
            }
            own => json!({ "allOf": [own, Value::Object(names)] }),
        };
    }
    if keys.as_object().is_none_or(|keys| !keys.is_empty()) {
        schema.insert("propertyNames".to_owned(), keys);
    }
    if let Some(min) = c.min_length {
        schema.insert("minProperties".to_owned(), Value::from(min));
    }
    if let Some(max) = c.max_length {
        schema.insert("maxProperties".to_owned(), Value::from(max));
    }
    Value::Object(schema)
}

/// Whether the property name `name` meets the declared key constraints `keys`; records one
/// `propertyNames` violation naming what it breaks when it does not.
fn check_key(cx: &mut Cx, at: &Path<'_>, name: &str, keys: &Constraints) -> bool {
    let mut scratch = Cx::default();
    if refuse_string(
        crate::contract::validate::Got::Str(name),
        &mut scratch,
        at,
        keys,
    ) {
        return true;
    }
    let reasons = scratch.into_errors().map_or_else(String::new, |errors| {
        errors
            .iter()
            .map(|violation| violation.message().to_owned())
            .collect::<Vec<_>>()
            .join("; ")
    });
    cx.report_property(
        at,
        name,
        Keyword::Other("propertyNames"),
        format!("not a key of this object: the name {reasons}"),
    );
    false
}

/// Checks the number of entries of a map against `minProperties`/`maxProperties`.
fn check_entry_count(cx: &mut Cx, at: &Path<'_>, count: u64, c: &Constraints) -> bool {
    let mut ok = true;
    if let Some(min) = c.min_length.filter(|&min| count < min) {
        let unit = if min == 1 { "entry" } else { "entries" };
        cx.report(
            at,
            Keyword::Other("minProperties"),
            format!("must have at least {min} {unit}; got {count}"),
        );
        ok = false;
    }
    if let Some(max) = c.max_length.filter(|&max| count > max) {
        let unit = if max == 1 { "entry" } else { "entries" };
        cx.report(
            at,
            Keyword::Other("maxProperties"),
            format!("must have at most {max} {unit}; got {count}"),
        );
        ok = false;
    }
    ok
}

struct MapVisitor<'a, 'p, M, K, T, I> {
    cx: &'a mut Cx,
    at: &'a Path<'p>,
    _marker: std::marker::PhantomData<(M, K, T, I)>,
}

impl<M, K, T, I> MapVisitor<'_, '_, M, K, T, I> {
    fn mismatch<R>(self, got: Got<'_>) -> Option<R> {
        self.cx.type_mismatch(self.at, "object", got);
        None
    }
}

impl<'de, M: KeyedMap<K, T>, K: ArgumentKey, T: Argument, C: ConstConstraints> Visitor<'de>
    for MapVisitor<'_, '_, M, K, T, C>
{
    type Value = Option<M>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    reject_scalars!();

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        drain_seq(seq)?;
        Ok(self.mismatch(Got::Array))
    }

    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        check_depth(self.at)?;
        let mut entries = M::default();
        // Names whose values were refused, so that a repeat of one is still caught.
        let mut refused: BTreeSet<String> = BTreeSet::new();
        let mut valid = true;
        let c = &C::VALUE;
        let mut count: u64 = 0;
        while let Some(name) = map.next_key_seed(KeySeed(str::to_owned))? {
            count += 1;
            if !refused.is_empty() && refused.contains(&name) {
                self.cx.duplicate_key(self.at, &name);
                map.next_value::<de::IgnoredAny>()?;
                continue;
            }
            let declared_ok = c
                .keys
                .is_none_or(|keys| check_key(self.cx, self.at, &name, keys));
            let key = match K::from_name(name) {
                Ok(key) if declared_ok => key,
                Ok(key) => {
                    // Not a key here; its value is still checked, as a validator checks it.
                    let name = key.key_name().into_owned();
                    let at = self.at.key(&name);
                    map.next_value_seed(Seed::<T, C::Items>::new(self.cx, &at))?;
                    refused.insert(name);
                    valid = false;
                    continue;
                }
                Err(name) => {
                    // Not a key; its value is still checked, as a validator checks it.
                    if declared_ok {
                        self.cx.report_property(
                            self.at,
                            &name,
                            Keyword::Other("propertyNames"),
                            format!("not a key of this object: expected {}", K::expected_keys()),
                        );
                    }
                    let at = self.at.key(&name);
                    map.next_value_seed(Seed::<T, C::Items>::new(self.cx, &at))?;
                    refused.insert(name);
                    valid = false;
                    continue;
                }
            };
            let cx = &mut *self.cx;
            let at = self.at;
            let outcome = entries.insert_new(key, |key| {
                let name = key.key_name();
                let at = at.key(&name);
                map.next_value_seed(Seed::<T, C::Items>::new(cx, &at))
            })?;
            match outcome {
                Insert::Inserted => {}
                Insert::Duplicate(name) => {
                    self.cx.duplicate_key(self.at, &name);
                    map.next_value::<de::IgnoredAny>()?;
                    valid = false;
                }
                Insert::Refused(key) => {
                    valid = false;
                    refused.insert(key.key_name().into_owned());
                }
            }
        }
        valid &= check_entry_count(self.cx, self.at, count, c);
        Ok(valid.then_some(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_syntax_is_json_numerals() {
        for good in ["0", "7", "10", "-1", "-10", "18446744073709551615"] {
            assert!(integer_syntax(good), "{good}");
        }
        for bad in [
            "", "-", "-0", "01", "+1", " 1", "1 ", "1.0", "1e2", "--1", "0x1", "٣",
        ] {
            assert!(!integer_syntax(bad), "{bad}");
        }
    }

    #[test]
    fn key_patterns_match_exactly_the_keys_of_each_range() {
        let ranges: [(u128, u128); 8] = [
            (0, 0),
            (0, 1),
            (0, 9),
            (0, 10),
            (0, 255),
            (128, 127),
            (0, 1000),
            (32768, 32767),
        ];
        for (below, above) in ranges {
            let source = integer_key_pattern(below, above);
            let regex = regex::Regex::new(&source).unwrap();
            for i in -40_000i128..=40_000 {
                let inside = -(below as i128) <= i && i <= above as i128;
                assert_eq!(
                    regex.is_match(&i.to_string()),
                    inside,
                    "{i} against {source}"
                );
            }
            for bad in ["-0", "00", "01", "+1", " 1", "1.0", ""] {
                assert!(!regex.is_match(bad), "{bad:?} against {source}");
            }
        }
        let wide = integer_key_pattern(i128::MIN.unsigned_abs(), i128::MAX as u128);
        let regex = regex::Regex::new(&wide).unwrap();
        for key in [i128::MIN, i128::MIN + 1, -1, 0, i128::MAX - 1, i128::MAX] {
            assert!(regex.is_match(&key.to_string()), "{key}");
        }
        assert!(!regex.is_match("170141183460469231731687303715884105728"));
        assert!(!regex.is_match("-170141183460469231731687303715884105729"));
        let unsigned = integer_key_pattern(0, u128::MAX);
        let regex = regex::Regex::new(&unsigned).unwrap();
        assert!(regex.is_match(&u128::MAX.to_string()));
        assert!(!regex.is_match("340282366920938463463374607431768211456"));
    }
}
