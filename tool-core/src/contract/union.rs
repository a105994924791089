//! Enums whose variants carry data, in serde's four representations: externally tagged
//! (`{"Insert": {...}}`), internally tagged (`{"type": "Insert", ...}`), adjacently tagged
//! (`{"t": "Insert", "c": {...}}`) and untagged.
//!
//! For the tagged ones the tag picks the variant and only that variant's violations are
//! reported, at their real pointers; the schema is a `oneOf` of closed branches, each with the
//! tag as a required `const`, so a validator reaches the same verdict. An untagged value is
//! tried against each variant in declaration order, as serde does, and one that matches none is
//! one violation naming the alternatives tried (the schema is an `anyOf`); the `untagged` module
//! does that in time linear in the value.
//!
//! A tag may come anywhere in its object. When it comes first (as models write it) the rest is
//! read straight into the variant; otherwise the members before it are held, as an untagged
//! value is (to the same depth limit as everything else, and without being held again by the
//! unions inside them), and read once the tag is known.

use std::borrow::Cow;
use std::fmt;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IgnoredAny, IntoDeserializer, MapAccess,
    SeqAccess, VariantAccess, Visitor,
};
use serde_json::{Map, Number, Value, json};

use crate::contract::error::Keyword;
use crate::contract::path::Path;
use crate::contract::schema::SchemaGen;
use crate::contract::untagged::{HeldMembers, HeldObject, HeldOne, HeldValue};
use crate::contract::untyped::Untyped;
use crate::contract::validate::{Cx, Got, KeySeed, MAX_DEPTH, check_depth, parse_enum};

mod buffer;
mod schema;

pub use buffer::Buffer;
use buffer::CowKey;
pub use schema::{flatten_schema, union_branch, union_schema, union_value};

/// An enum with data-carrying variants, as the derive describes it to the parsers here.
#[doc(hidden)]
pub trait Union: Sized + 'static {
    /// The wire names of the variants that can be deserialized, in declaration order.
    const VARIANTS: &'static [&'static str];
    /// Whether each variant of [`VARIANTS`](Self::VARIANTS) is a unit variant.
    const UNIT: &'static [bool];

    /// The name under which a tagged union's object is asked for (`deserialize_newtype_struct`):
    /// `$tool_core::private::TagFirstEnum:` and the tag's name for an internally tagged union,
    /// `$tool_core::private::TagFirst:` and the tag's name for an adjacently tagged one; empty
    /// otherwise.
    const TAG_REQUEST: &'static str;

    /// The index in [`VARIANTS`](Self::VARIANTS) of the first variant named `name`.
    fn index(name: &str) -> Option<usize>;

    /// The value of the unit variant `index`.
    fn unit(index: usize) -> Option<Self>;

    /// Parses the content of the data variant `index`: a newtype variant's value, a struct
    /// variant's object.
    fn content<'de, D: Deserializer<'de>>(
        index: usize,
        de: D,
        cx: &mut Cx,
        at: &Path<'_>,
    ) -> Result<Option<Self>, D::Error>;

    /// Reads the members of an internally tagged object, after its tag, as the data variant
    /// `index`.
    fn fields<'de, A: MapAccess<'de>>(
        index: usize,
        map: A,
        cx: &mut Cx,
        at: &Path<'_>,
    ) -> Result<Option<Self>, A::Error>;
}

/// How an enum's variants are told apart on the wire.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum Repr {
    /// `{"Variant": content}`, or `"Variant"` for a unit variant.
    External,
    /// `{"tag": "Variant", ...fields}`.
    Internal(&'static str),
    /// `{"tag": "Variant", "content": content}`.
    Adjacent(&'static str, &'static str),
    /// The content alone; unit variants are `null`.
    Untagged,
}

fn names<E: Union>(unit: bool) -> impl Iterator<Item = &'static str> {
    E::VARIANTS
        .iter()
        .zip(E::UNIT)
        .filter(move |(_, is_unit)| **is_unit == unit)
        .map(|(name, _)| *name)
}

fn quoted(names: impl Iterator<Item = &'static str>) -> String {
    names
        .map(|name| Value::from(name).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

// ---- parsing ----

/// Parses a union in the representation `repr`.
#[doc(hidden)]
#[inline]
pub fn parse_union<'de, E: Union, D: Deserializer<'de>>(
    de: D,
    cx: &mut Cx,
    at: &Path<'_>,
    repr: Repr,
) -> Result<Option<E>, D::Error> {
    match repr {
        Repr::External => de.deserialize_any(External::<E> {
            cx,
            at,
            _marker: std::marker::PhantomData,
        }),
        // Inside an untagged union's held value, the tag is handed over first.
        Repr::Internal(tag) => de.deserialize_newtype_struct(
            E::TAG_REQUEST,
            Internal::<E> {
                cx,
                at,
                tag,
                _marker: std::marker::PhantomData,
            },
        ),
        Repr::Adjacent(tag, content) => de.deserialize_newtype_struct(
            E::TAG_REQUEST,
            Adjacent::<E> {
                cx,
                at,
                tag,
                content,
                _marker: std::marker::PhantomData,
            },
        ),
        Repr::Untagged => crate::contract::untagged::parse_untagged::<E, D>(de, cx, at),
    }
}

/// Implements the scalar `visit_*` methods by handing the value, described, to `self.other`.
macro_rules! scalars_to_other {
    () => {
        fn visit_bool<Er: de::Error>(self, v: bool) -> Result<Self::Value, Er> {
            Ok(self.other(Got::Bool(v)))
        }

        fn visit_i64<Er: de::Error>(self, v: i64) -> Result<Self::Value, Er> {
            Ok(self.other(Got::Number(crate::contract::constraints::Num::from(v))))
        }

        fn visit_u64<Er: de::Error>(self, v: u64) -> Result<Self::Value, Er> {
            Ok(self.other(Got::Number(crate::contract::constraints::Num::U(v))))
        }

        fn visit_f64<Er: de::Error>(self, v: f64) -> Result<Self::Value, Er> {
            Ok(self.other(Got::Number(crate::contract::constraints::Num::F(v))))
        }

        fn visit_unit<Er: de::Error>(self) -> Result<Self::Value, Er> {
            Ok(self.other(Got::Null))
        }

        fn visit_none<Er: de::Error>(self) -> Result<Self::Value, Er> {
            Ok(self.other(Got::Null))
        }

        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            crate::contract::validate::drain_seq(seq)?;
            Ok(self.other(Got::Array))
        }
    };
}

struct External<'a, 'p, E> {
    cx: &'a mut Cx,
    at: &'a Path<'p>,
    _marker: std::marker::PhantomData<E>,
}

impl<E: Union> External<'_, '_, E> {
    fn other(self, got: Got<'_>) -> Option<E> {
        let expected = if E::UNIT.contains(&true) {
            "string or object"
        } else {
            "object"
        };
        self.cx.type_mismatch(self.at, expected, got);
        None
    }
}

impl<'de, E: Union> Visitor<'de> for External<'_, '_, E> {
    type Value = Option<E>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a variant")
    }

    scalars_to_other!();

    fn visit_str<Er: de::Error>(self, v: &str) -> Result<Self::Value, Er> {
        if !E::UNIT.contains(&true) {
            return Ok(self.other(Got::Str(v)));
        }
        match E::index(v).filter(|&index| E::UNIT[index]) {
            Some(index) => Ok(E::unit(index)),
            None => {
                let units: Vec<&str> = names::<E>(true).collect();
                self.cx.not_in_listed(self.at, &units, Got::Str(v));
                Ok(None)
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        check_depth(self.at)?;
        let External { cx, at, .. } = self;
        let Some(first) = map.next_key_seed(KeySeed(|key: &str| {
            E::index(key)
                .filter(|&index| !E::UNIT[index])
                .ok_or_else(|| key.to_owned())
        }))?
        else {
            cx.report(
                at,
                Keyword::Required,
                format!(
                    "expected one key naming the variant, one of {}",
                    quoted(names::<E>(false))
                ),
            );
            return Ok(None);
        };
        let parsed = match first {
            Ok(index) => {
                let child = at.key(E::VARIANTS[index]);
                map.next_value_seed(Content::<E> {
                    index,
                    cx: &mut *cx,
                    at: &child,
                    _marker: std::marker::PhantomData,
                })?
            }
            Err(key) => {
                // serde takes `{"Unit": null}`; the advertised schema does not, so the model is
                // shown the form it does take.
                let message = if E::index(&key).is_some() {
                    format!(
                        "{key:?} carries no content: write the string {key:?} alone, not an object"
                    )
                } else {
                    format!(
                        "unknown variant; expected one of {}",
                        quoted(names::<E>(false))
                    )
                };
                cx.report_property(at, &key, Keyword::AdditionalProperties, message);
                map.next_value::<IgnoredAny>()?;
                None
            }
        };
        let mut single = true;
        while let Some(key) = map.next_key_seed(KeySeed(str::to_owned))? {
            cx.report_property(
                at,
                &key,
                Keyword::AdditionalProperties,
                "a variant is one key; this object already names one",
            );
            map.next_value::<IgnoredAny>()?;
            single = false;
        }
        Ok(parsed.filter(|_| single))
    }
}

/// Parses the content of the variant `index` as a map value.
struct Content<'a, 'p, E> {
    index: usize,
    cx: &'a mut Cx,
    at: &'a Path<'p>,
    _marker: std::marker::PhantomData<E>,
}

impl<'de, E: Union> DeserializeSeed<'de> for Content<'_, '_, E> {
    type Value = Option<E>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Option<E>, D::Error> {
        E::content(self.index, de, self.cx, self.at)
    }
}

/// Reads a tag's value at `at/tag`: the index of the variant it names.
#[inline]
fn read_tag<'de, E: Union, D: Deserializer<'de>>(
    de: D,
    cx: &mut Cx,
    at: &Path<'_>,
    tag: &str,
) -> Result<Option<usize>, D::Error> {
    let at = at.key(tag);
    parse_enum(de, cx, &at, E::VARIANTS, E::index)
}

struct TagSeed<'a, 'p, E> {
    cx: &'a mut Cx,
    at: &'a Path<'p>,
    tag: &'static str,
    _marker: std::marker::PhantomData<E>,
}

impl<'de, E: Union> DeserializeSeed<'de> for TagSeed<'_, '_, E> {
    type Value = Option<usize>;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Option<usize>, D::Error> {
        read_tag::<E, D>(de, self.cx, self.at, self.tag)
    }
}

struct Internal<'a, 'p, E> {
    cx: &'a mut Cx,
    at: &'a Path<'p>,
    tag: &'static str,
    _marker: std::marker::PhantomData<E>,
}

impl<E> Internal<'_, '_, E> {
    fn other(self, got: Got<'_>) -> Option<E> {
        self.cx.type_mismatch(self.at, "object", got);
        None
    }
}

impl<'de, E: Union> Visitor<'de> for Internal<'_, '_, E> {
    type Value = Option<E>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    #[inline]
    fn visit_newtype_struct<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_any(self)
    }

    scalars_to_other!();

    fn visit_str<Er: de::Error>(self, v: &str) -> Result<Self::Value, Er> {
        Ok(self.other(Got::Str(v)))
    }

    /// The object with its tag first, as the crate's reader hands it over: the tag's value as
    /// the variant, then the other members.
    #[inline(always)]
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        check_depth(self.at)?;
        let (index, rest) = data.variant_seed(TagSeed::<E> {
            cx: &mut *self.cx,
            at: self.at,
            tag: self.tag,
            _marker: std::marker::PhantomData,
        })?;
        rest.struct_variant(&[], AfterTag { index, union: self })
    }

    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        check_depth(self.at)?;
        let Internal { cx, at, tag, .. } = self;
        let first = map.next_key_seed(CowKey)?;
        match first.map(|key| (key != tag).then_some(key)) {
            None => {
                cx.missing(at, tag);
                Ok(None)
            }
            // The tag first: the rest is read straight into the variant.
            Some(None) => {
                let index = map.next_value_seed(TagSeed::<E> {
                    cx: &mut *cx,
                    at,
                    tag,
                    _marker: std::marker::PhantomData,
                })?;
                after_tag(index, map, cx, at, tag)
            }
            // Members before the tag are held until it comes.
            Some(Some(first)) => {
                let depth = at.depth() + 1;
                let mut held = HeldMembers::new(cx);
                held.hold(&first, &mut map, depth)?;
                while let Some(key) = map.next_key_seed(CowKey)? {
                    if !held.has_tag() && key == tag {
                        held.hold_tag(&mut map, depth)?;
                    } else {
                        held.hold(&key, &mut map, depth)?;
                    }
                }
                held.read(cx, |tag_value, rest, cx| {
                    internal_held::<E>(tag_value, rest, cx, at, tag)
                })
                .map_err(de::Error::custom)
            }
        }
    }
}

/// Reads the members after the tag of an internally tagged object, the tag naming the
/// variant `index` (`None`: a tag that names none, already reported).
#[inline]
fn after_tag<'de, E: Union, A: MapAccess<'de>>(
    index: Option<usize>,
    mut map: A,
    cx: &mut Cx,
    at: &Path<'_>,
    tag: &str,
) -> Result<Option<E>, A::Error> {
    match index {
        Some(index) if E::UNIT[index] => {
            let clean = unit_rest(&mut map, cx, at, tag)?;
            Ok(E::unit(index).filter(|_| clean))
        }
        Some(index) => E::fields(index, map, cx, at),
        None => {
            crate::contract::validate::drain_map(map)?;
            Ok(None)
        }
    }
}

/// The members after the tag, handed over by `VariantAccess::struct_variant`: the tag named
/// the variant `index` of the union being read.
struct AfterTag<'a, 'p, E> {
    index: Option<usize>,
    union: Internal<'a, 'p, E>,
}

impl<'de, E: Union> Visitor<'de> for AfterTag<'_, '_, E> {
    type Value = Option<E>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the members after the tag")
    }

    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let Internal { cx, at, tag, .. } = self.union;
        after_tag(self.index, map, cx, at, tag)
    }
}

/// The members after the tag of a unit variant: there should be none.
fn unit_rest<'de, A: MapAccess<'de>>(
    map: &mut A,
    cx: &mut Cx,
    at: &Path<'_>,
    tag: &str,
) -> Result<bool, A::Error> {
    let mut clean = true;
    while let Some(key) = map.next_key_seed(KeySeed(str::to_owned))? {
        if key == tag {
            cx.duplicate_key(at, &key);
        } else {
            cx.unknown_field(at, &key, &[tag]);
        }
        map.next_value::<IgnoredAny>()?;
        clean = false;
    }
    Ok(clean)
}

/// Reads an internally tagged object whose members came before its tag, held.
fn internal_held<E: Union>(
    tag_value: Option<HeldValue<'_>>,
    rest: HeldObject<'_>,
    cx: &mut Cx,
    at: &Path<'_>,
    tag: &'static str,
) -> Result<Option<E>, serde_json::Error> {
    let Some(tag_value) = tag_value else {
        cx.missing(at, tag);
        return Ok(None);
    };
    let Some(index) = read_tag::<E, _>(tag_value.de(), cx, at, tag)? else {
        return Ok(None);
    };
    let mut rest = rest.map();
    if E::UNIT[index] {
        let clean = unit_rest(&mut rest, cx, at, tag)?;
        return Ok(E::unit(index).filter(|_| clean));
    }
    E::fields(index, rest, cx, at)
}

struct Adjacent<'a, 'p, E> {
    cx: &'a mut Cx,
    at: &'a Path<'p>,
    tag: &'static str,
    content: &'static str,
    _marker: std::marker::PhantomData<E>,
}

impl<E> Adjacent<'_, '_, E> {
    fn other(self, got: Got<'_>) -> Option<E> {
        self.cx.type_mismatch(self.at, "object", got);
        None
    }
}

enum Key {
    Tag,
    Content,
    Other(String),
}

/// What an adjacently tagged object has said of its content so far.
enum Held<E> {
    None,
    /// Read into the variant the tag named.
    Parsed(Option<E>),
    /// Seen before the tag.
    Buffered(HeldOne),
}

impl<'de, E: Union> Visitor<'de> for Adjacent<'_, '_, E> {
    type Value = Option<E>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_any(self)
    }

    scalars_to_other!();

    fn visit_str<Er: de::Error>(self, v: &str) -> Result<Self::Value, Er> {
        Ok(self.other(Got::Str(v)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        check_depth(self.at)?;
        let Adjacent {
            cx,
            at,
            tag,
            content,
            ..
        } = self;
        // `None` until the tag is read; then the variant it names, if any.
        let mut variant: Option<Option<usize>> = None;
        let mut held = Held::None;
        let mut clean = true;
        while let Some(key) = map.next_key_seed(KeySeed(|key: &str| {
            if key == tag {
                Key::Tag
            } else if key == content {
                Key::Content
            } else {
                Key::Other(key.to_owned())
            }
        }))? {
            match key {
                Key::Tag if variant.is_some() => {
                    cx.duplicate_key(at, tag);
                    map.next_value::<IgnoredAny>()?;
                    clean = false;
                }
                Key::Tag => {
                    variant = Some(map.next_value_seed(TagSeed::<E> {
                        cx: &mut *cx,
                        at,
                        tag,
                        _marker: std::marker::PhantomData,
                    })?);
                }
                Key::Content if !matches!(held, Held::None) => {
                    cx.duplicate_key(at, content);
                    map.next_value::<IgnoredAny>()?;
                    clean = false;
                }
                Key::Content => match variant {
                    Some(Some(index)) if E::UNIT[index] => {
                        unit_content::<E>(cx, at, tag, content, index);
                        map.next_value::<IgnoredAny>()?;
                        held = Held::Parsed(None);
                        clean = false;
                    }
                    Some(Some(index)) => {
                        let child = at.key(content);
                        held = Held::Parsed(map.next_value_seed(Content::<E> {
                            index,
                            cx: &mut *cx,
                            at: &child,
                            _marker: std::marker::PhantomData,
                        })?);
                    }
                    Some(None) => {
                        map.next_value::<IgnoredAny>()?;
                        held = Held::Parsed(None);
                    }
                    None => {
                        held = Held::Buffered(HeldMembers::hold_one(&mut map, at.depth() + 1)?);
                    }
                },
                Key::Other(key) => {
                    cx.unknown_field(at, &key, &[tag, content]);
                    map.next_value::<IgnoredAny>()?;
                    clean = false;
                }
            }
        }
        let Some(variant) = variant else {
            cx.missing(at, tag);
            return Ok(None);
        };
        let Some(index) = variant else {
            return Ok(None);
        };
        let parsed = if E::UNIT[index] {
            if let Held::Buffered(_) = held {
                unit_content::<E>(cx, at, tag, content, index);
                None
            } else {
                E::unit(index)
            }
        } else {
            match held {
                Held::None => {
                    cx.missing(at, content);
                    None
                }
                Held::Parsed(parsed) => parsed,
                Held::Buffered(value) => {
                    let child = at.key(content);
                    value
                        .read(cx, |value, cx| E::content(index, value.de(), cx, &child))
                        .map_err(de::Error::custom)?
                }
            }
        };
        Ok(parsed.filter(|_| clean))
    }
}

/// Reports content given to the unit variant `index`, adjacently tagged: serde takes `null`
/// there, the advertised schema takes no content at all, so the model is shown that form.
fn unit_content<E: Union>(cx: &mut Cx, at: &Path<'_>, tag: &str, content: &str, index: usize) {
    let name = E::VARIANTS[index];
    cx.report_property(
        at,
        content,
        Keyword::AdditionalProperties,
        format!("{name:?} carries no content: write {{{tag:?}: {name:?}}} without {content:?}"),
    );
}

/// Consumes a value whose content no longer matters.
#[doc(hidden)]
pub fn skip_value<'de, D: Deserializer<'de>>(de: D) -> Result<(), D::Error> {
    de.deserialize_ignored_any(IgnoredAny).map(|_| ())
}

// ---- members held as values ----

/// The members of an object held as values, read back as a map.
#[derive(Debug)]
struct Buffered<'de> {
    entries: std::vec::IntoIter<(Cow<'de, str>, Value)>,
    value: Option<Value>,
}

/// Reads the members of a `#[serde(flatten)]` field, held while the outer object was read, as
/// the object `T`; a mistake of the text itself (nesting too deep) fails the parse.
#[doc(hidden)]
pub fn parse_flattened<T: crate::contract::validate::Object, E: de::Error>(
    entries: Vec<(String, Value)>,
    cx: &mut Cx,
    at: &Path<'_>,
) -> Result<Option<T>, E> {
    let entries: Vec<(Cow<'static, str>, Value)> = entries
        .into_iter()
        .map(|(key, value)| {
            // The generated code copied each key to hold its member.
            crate::contract::untagged::bytes(key.len());
            crate::contract::untagged::work();
            (Cow::Owned(key), value)
        })
        .collect();
    let held = Buffered {
        entries: entries.into_iter(),
        value: None,
    };
    T::visit_members(held, cx, at).map_err(E::custom)
}

impl<'de> MapAccess<'de> for Buffered<'de> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        match key {
            Cow::Borrowed(key) => seed.deserialize(BorrowedStrDeserializer::new(key)),
            Cow::Owned(key) => seed.deserialize(key.into_deserializer()),
        }
        .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        let value = self.value.take().unwrap_or(Value::Null);
        seed.deserialize(Untyped::<_, false>(value))
    }
}
