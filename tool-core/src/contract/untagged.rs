//! Untagged unions, decided in time linear in the value.
//!
//! An untagged value is held once, as a tree of nodes, and each variant is tried on it in
//! declaration order, as serde tries them; the first that takes it wins. Trying a variant
//! decides only whether it takes the value: an untagged union nested inside is decided once
//! per node and remembered (which variant took it, or the one violation that refused it),
//! and a trial does not build it. Once a value's variant is known it is built, once. So every
//! node is visited a bounded number of times (at most twice per variant of the unions above
//! it, and once more to build), however the unions nest: a recursive untagged type is not
//! tried again for each way down to a node. A tagged union inside reads the held members, its
//! tag first, without holding them again. Where a part of the value is read from a copy (a
//! flattened struct's members), the union there is held anew, but what was decided at
//! its place is remembered by the place (named by a number given once per place, not by its
//! JSON Pointer, which would cost the length of every key above it each time), so it is not
//! decided again either.
//!
//! Numbers are tried as serde tries them first: a variant that reads an integer does not take
//! `2.0` while a later variant that reads a float does (`{"k": 2.0}` is `Ratio(2.0)`, not
//! `Count(2)`). Only when no variant takes the value that way are the variants tried again as
//! JSON Schema reads numbers (`2.0` is an integer), so the value is accepted exactly when a
//! standard validator accepts it.

use std::any::TypeId;
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::contract::error::Keyword;
use crate::contract::path::{Path, Places};
use crate::contract::union::Union;
use crate::contract::untyped::Untyped;
use crate::contract::validate::{Cx, MAX_DEPTH};

mod members;
mod named;

pub(crate) use members::{HeldMembers, HeldObject, HeldOne, HeldValue};
use named::{Enter, Entered};
pub(crate) use named::{Interner, ValueId, read_named};

/// The name under which a held node answers `deserialize_newtype_struct` with its identity,
/// so that a union nested in a held value finds the node rather than copying it.
const HELD_NODE: &str = "$tool_core::private::HeldNode";

/// The start of the name under which an adjacently tagged union's object is asked for, its
/// tag's name following: a held object then hands over the member of that name first, so that
/// a tagged union inside a held value reads the members before its tag without holding them
/// again. Any other deserializer hands the value to the visitor as it is. The derive writes
/// these names out (`Union::TAG_REQUEST`).
pub(crate) const TAG_FIRST: &str = "$tool_core::private::TagFirst:";

/// [`TAG_FIRST`], for an internally tagged union, whose visitor also takes the object as an
/// enum: the tag's value as the variant, then the other members through `struct_variant`, as
/// the crate's reader hands it over when the tag comes first.
pub(crate) const TAG_ENUM: &str = "$tool_core::private::TagFirstEnum:";

/// The tag asked for under the name `name` ([`TAG_FIRST`] or [`TAG_ENUM`] and the tag's
/// name), with whether the visitor takes the object as an enum.
#[inline(always)]
pub(crate) fn tag_request(name: &'static str) -> Option<(&'static str, bool)> {
    if let Some(tag) = name.strip_prefix(TAG_ENUM) {
        Some((tag, true))
    } else {
        name.strip_prefix(TAG_FIRST).map(|tag| (tag, false))
    }
}

/// The name under which a value is asked to be held with its integers beyond 64 bits exact:
/// the crate's reader, and a held node, hand such an integer over as `visit_i128` or
/// `visit_u128`; any other deserializer hands the value to the visitor as it is.
pub(crate) const EXACT_ANY: &str = "$tool_core::private::ExactNumbers";

thread_local! {
    static WORK: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
}

pub(crate) fn work() {
    WORK.with(|w| w.set(w.get().wrapping_add(1)));
}

/// The work unions did on this thread so far: values held (by an untagged union, or by a
/// tagged one until its tag comes), nodes read back and variants tried, each counted once.
/// Deterministic, for tests that check it grows linearly.
#[doc(hidden)]
pub fn untagged_work() -> u64 {
    WORK.with(Cell::get)
}

/// Counts `n` bytes of text copied or hashed (see [`untagged_bytes`]).
pub(crate) fn bytes(n: usize) {
    BYTES.with(|b| b.set(b.get().wrapping_add(n as u64)));
}

/// The bytes of text unions handled on this thread so far: keys and strings copied into held
/// values and into the copies of flattened members, the bytes read to name the places whose
/// verdicts are remembered, and the bytes looked through for tags written late.
/// Deterministic, for tests that check it grows linearly.
#[doc(hidden)]
pub fn untagged_bytes() -> u64 {
    BYTES.with(Cell::get)
}

/// What an untagged union's trial knows, carried by [`Cx`].
#[derive(Debug, Default, Clone)]
pub(crate) struct Trial {
    /// The value being tried, when inside one.
    scope: Option<Rc<Scope>>,
    /// Deciding only: a nested union that takes its value vouches for it rather than build it.
    probing: bool,
    /// Numbers as serde reads them: an integer does not take `2.0`.
    pub(crate) serde_numbers: bool,
    /// A nested union took its value without building it.
    vouched: bool,
    /// The buffers of a value held and read back, kept to hold the next one in.
    spare: Spare,
}

/// A builder's buffers between held values; a copy of a [`Trial`] starts without them.
#[derive(Default)]
struct Spare(Option<Builder>);

impl Clone for Spare {
    fn clone(&self) -> Self {
        Spare(None)
    }
}

impl fmt::Debug for Spare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Spare")
    }
}

impl Trial {
    /// A builder for a value to hold: the buffers of the last value read back, if any.
    fn builder(&mut self) -> Builder {
        self.spare.0.take().unwrap_or_default()
    }

    /// Keeps the buffers of `scope`'s value for the next value held, when nothing else holds
    /// the scope.
    fn recycle(&mut self, scope: Rc<Scope>) {
        if let Ok(scope) = Rc::try_unwrap(scope) {
            self.spare.0 = Some(scope.arena.recycle());
        }
    }
}

/// A held value and what is known of the unions tried on its nodes.
struct Scope {
    arena: Arena,
    /// (node, union type, serde numbers) → verdict.
    memo: RefCell<HashMap<(usize, TypeId, bool), Verdict>>,
    /// (place, union type, serde numbers) → verdict, for values held again inside a
    /// held value (a flattened struct's members are read from copies): shared
    /// by every scope of one check, so each such value is decided once too.
    /// Made when first asked for (see [`Scope::copies`]).
    copies: OnceCell<Rc<RefCell<Copies>>>,
    /// Whether this value was held inside another: a copy of a part of it, which the trials
    /// above may read again, so its verdicts are also remembered by place.
    copied: bool,
    /// The JSON values of nodes, as sets compare their items: shared like `copies`, and
    /// made when first asked for (see [`Scope::values`]).
    values: OnceCell<Rc<RefCell<Interner>>>,
}

/// Verdicts by (place, union type, serde numbers), places named by `places`.
#[derive(Default)]
struct Copies {
    places: Places,
    verdicts: HashMap<(u64, TypeId, bool), Verdict>,
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("id", &self.arena.id)
            .field("nodes", &self.arena.nodes.len())
            .finish_non_exhaustive()
    }
}

#[derive(Clone)]
enum Verdict {
    /// The variant that takes the node.
    Accepted(usize),
    /// The one violation refusing it.
    Rejected(Rc<str>),
}

// ---- the held value ----

#[derive(Debug)]
enum Node {
    Null,
    Bool(bool),
    U(u64),
    I(i64),
    F(f64),
    /// An integer beyond 64 bits, every digit kept.
    Wide(Box<WideInt>),
    /// `text[span]`.
    Str(Span),
    /// `items[start..start + len]`.
    Array(usize, usize),
    /// `members[start..start + len]`.
    Object(usize, usize),
}

/// An integer read with every digit: negative as `i128`, else as `u128`. A held node holds one
/// only when neither `u64` nor `i64` does.
#[derive(Debug, Clone, Copy)]
pub(crate) enum WideInt {
    Negative(i128),
    Positive(u128),
}

impl WideInt {
    /// The integer `digits` (JSON's grammar, no fraction or exponent), if 128 bits hold it.
    pub(crate) fn parse(digits: &str) -> Option<WideInt> {
        if digits.starts_with('-') {
            digits.parse().ok().map(WideInt::Negative)
        } else {
            digits.parse().ok().map(WideInt::Positive)
        }
    }

    /// Whether neither `u64` nor `i64` holds it.
    pub(crate) fn beyond_64_bits(self) -> bool {
        match self {
            WideInt::Negative(v) => i64::try_from(v).is_err(),
            WideInt::Positive(v) => u64::try_from(v).is_err(),
        }
    }

    /// The double nearest to it, as a `serde_json::Value` holds it.
    #[allow(clippy::cast_precision_loss)]
    fn nearest(self) -> f64 {
        match self {
            WideInt::Negative(v) => v as f64,
            WideInt::Positive(v) => v as f64,
        }
    }

    /// Hands it over exactly.
    pub(crate) fn visit<'de, V: Visitor<'de>, E: de::Error>(
        self,
        visitor: V,
    ) -> Result<V::Value, E> {
        match self {
            WideInt::Negative(v) => visitor.visit_i128(v),
            WideInt::Positive(v) => visitor.visit_u128(v),
        }
    }
}

/// Where a string of a held value is in its arena's `text`.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
}

struct Arena {
    id: u64,
    nodes: Vec<Node>,
    items: Vec<usize>,
    /// Each object's members, its keys in `text`.
    members: Vec<(Span, usize)>,
    /// Every key and string of the value, one after another.
    text: String,
    root: usize,
    /// Kept for the next value held (see [`HeldMembers`]).
    held: Vec<(Span, usize)>,
}

impl Arena {
    /// The string at `span`.
    fn str(&self, span: Span) -> &str {
        &self.text[span.start..span.end]
    }

    /// Its buffers, emptied, to hold another value in.
    fn recycle(self) -> Builder {
        let Arena {
            mut nodes,
            mut items,
            mut members,
            mut text,
            mut held,
            ..
        } = self;
        nodes.clear();
        items.clear();
        members.clear();
        text.clear();
        held.clear();
        Builder {
            nodes,
            items,
            members,
            text,
            held,
        }
    }
}

#[derive(Default)]
struct Builder {
    nodes: Vec<Node>,
    items: Vec<usize>,
    members: Vec<(Span, usize)>,
    text: String,
    /// The members of the object whose tag is awaited (see [`HeldMembers`]).
    held: Vec<(Span, usize)>,
}

impl Builder {
    fn push(&mut self, node: Node) -> usize {
        work();
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// The string at `span`.
    fn str(&self, span: Span) -> &str {
        &self.text[span.start..span.end]
    }

    /// Copies `s` into the text.
    fn string(&mut self, s: &str) -> Span {
        bytes(s.len());
        let start = self.text.len();
        self.text.push_str(s);
        Span {
            start,
            end: self.text.len(),
        }
    }

    fn finish(self, root: usize) -> Arena {
        static IDS: AtomicU64 = AtomicU64::new(0);
        Arena {
            id: IDS.fetch_add(1, Ordering::Relaxed),
            nodes: self.nodes,
            items: self.items,
            members: self.members,
            text: self.text,
            root,
            held: self.held,
        }
    }
}

/// Reads one value into the builder, refusing nesting beyond [`MAX_DEPTH`] the way the
/// checked parsers do (`depth` containers enclose it).
struct Build<'b> {
    builder: &'b mut Builder,
    depth: u32,
}

impl Build<'_> {
    fn inner<E: de::Error>(&self) -> Result<u32, E> {
        if self.depth >= MAX_DEPTH {
            Err(E::custom(format_args!(
                "nesting deeper than {MAX_DEPTH} levels"
            )))
        } else {
            Ok(self.depth + 1)
        }
    }
}

impl<'de> DeserializeSeed<'de> for Build<'_> {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<usize, D::Error> {
        de.deserialize_newtype_struct(EXACT_ANY, self)
    }
}

impl<'de> Visitor<'de> for Build<'_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<usize, E> {
        Ok(self.builder.push(Node::Bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<usize, E> {
        // As a `serde_json::Value` holds it: a non-negative integer is unsigned.
        let node = u64::try_from(v).map_or(Node::I(v), Node::U);
        Ok(self.builder.push(node))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<usize, E> {
        Ok(self.builder.push(Node::U(v)))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<usize, E> {
        let node = match (u64::try_from(v), i64::try_from(v)) {
            (Ok(u), _) => Node::U(u),
            (_, Ok(i)) => Node::I(i),
            _ => Node::Wide(Box::new(WideInt::Negative(v))),
        };
        Ok(self.builder.push(node))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<usize, E> {
        let node = u64::try_from(v).map_or(Node::Wide(Box::new(WideInt::Positive(v))), Node::U);
        Ok(self.builder.push(node))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, de: D) -> Result<usize, D::Error> {
        de.deserialize_any(self)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<usize, E> {
        if !v.is_finite() {
            return Err(E::custom("a number out of range"));
        }
        Ok(self.builder.push(Node::F(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<usize, E> {
        let span = self.builder.string(v);
        Ok(self.builder.push(Node::Str(span)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<usize, E> {
        Ok(self.builder.push(Node::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<usize, E> {
        Ok(self.builder.push(Node::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<usize, D::Error> {
        self.deserialize(de)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let depth = self.inner()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Build {
            builder: &mut *self.builder,
            depth,
        })? {
            items.push(item);
        }
        let start = self.builder.items.len();
        let len = items.len();
        self.builder.items.extend(items);
        Ok(self.builder.push(Node::Array(start, len)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<usize, A::Error> {
        let depth = self.inner()?;
        let mut members: Vec<(Span, usize)> = Vec::new();
        // A small object is searched for a repeated key; a large one keeps a set of its keys.
        let mut keys: Option<HashSet<Box<str>>> = None;
        while let Some(key) = map.next_key_seed(Key(&mut *self.builder))? {
            let value = map.next_value_seed(Build {
                builder: &mut *self.builder,
                depth,
            })?;
            let text = self.builder.str(key);
            let repeated = match &mut keys {
                Some(keys) => !keys.insert(text.into()),
                None => {
                    let repeated = members
                        .iter()
                        .any(|(seen, _)| self.builder.str(*seen) == text);
                    if members.len() >= 16 {
                        let mut set: HashSet<Box<str>> = members
                            .iter()
                            .map(|(seen, _)| self.builder.str(*seen).into())
                            .collect();
                        set.insert(text.into());
                        keys = Some(set);
                    }
                    repeated
                }
            };
            if repeated {
                return Err(de::Error::custom(format_args!(
                    "duplicate key {text:?} in an object held to be read again"
                )));
            }
            members.push((key, value));
        }
        let start = self.builder.members.len();
        let len = members.len();
        self.builder.members.extend(members);
        Ok(self.builder.push(Node::Object(start, len)))
    }
}

/// Reads a key of a held object into the builder's text.
struct Key<'b>(&'b mut Builder);

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = Span;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Span, D::Error> {
        de.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = Span;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Span, E> {
        Ok(self.0.string(v))
    }
}

/// A node of a held value, read as [`Untyped`] reads a `serde_json::Value`: every typed call is
/// answered as `deserialize_any`.
struct Held<'a> {
    arena: &'a Arena,
    node: usize,
}

impl<'a> Held<'a> {
    fn at(&self, node: usize) -> Held<'a> {
        Held {
            arena: self.arena,
            node,
        }
    }
}

macro_rules! forward_to_any {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'a>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, serde_json::Error> {
            $(let _ = $arg;)*
            self.deserialize_any(visitor)
        }
    )*};
}

impl<'a> Deserializer<'a> for Held<'a> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, serde_json::Error> {
        work();
        let arena = self.arena;
        match &arena.nodes[self.node] {
            Node::Null => visitor.visit_unit(),
            Node::Bool(b) => visitor.visit_bool(*b),
            Node::U(u) => visitor.visit_u64(*u),
            Node::I(i) => visitor.visit_i64(*i),
            Node::F(f) => visitor.visit_f64(*f),
            Node::Wide(wide) => visitor.visit_f64(wide.nearest()),
            Node::Str(span) => visitor.visit_borrowed_str(arena.str(*span)),
            Node::Array(start, len) => visitor.visit_seq(HeldSeq {
                arena,
                items: arena.items[*start..*start + *len].iter(),
            }),
            Node::Object(start, len) => visitor.visit_map(HeldMap::new(
                arena,
                &arena.members[*start..*start + *len],
                None,
            )),
        }
    }

    fn deserialize_option<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, serde_json::Error> {
        match self.arena.nodes[self.node] {
            Node::Null => {
                work();
                visitor.visit_none()
            }
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'a>>(
        self,
        visitor: V,
    ) -> Result<V::Value, serde_json::Error> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, serde_json::Error> {
        if let Some((tag, _)) = tag_request(name) {
            if let Node::Object(start, len) = &self.arena.nodes[self.node] {
                let members = &self.arena.members[*start..*start + *len];
                work();
                let first = members
                    .iter()
                    .position(|(key, _)| self.arena.str(*key) == tag);
                let mut map = HeldMap::new(self.arena, members, first);
                // Without its tag a tagged union reads none of the values (it only names the
                // members it does not know): they are handed over as `null`, not held again.
                map.hollow = first.is_none();
                return visitor.visit_map(map);
            }
            self.deserialize_any(visitor)
        } else if name == HELD_NODE {
            let mut identity = [0u8; 16];
            identity[..8].copy_from_slice(&self.arena.id.to_le_bytes());
            identity[8..].copy_from_slice(&(self.node as u64).to_le_bytes());
            visitor.visit_bytes(&identity)
        } else if name == EXACT_ANY
            && let Node::Wide(wide) = &self.arena.nodes[self.node]
        {
            work();
            wide.visit(visitor)
        } else {
            self.deserialize_any(visitor)
        }
    }

    fn deserialize_i128<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, serde_json::Error> {
        match &self.arena.nodes[self.node] {
            Node::Wide(wide) => {
                work();
                wide.visit(visitor)
            }
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_u128<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, serde_json::Error> {
        self.deserialize_i128(visitor)
    }

    forward_to_any! {
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_f32();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
    }
}

struct HeldSeq<'a> {
    arena: &'a Arena,
    items: std::slice::Iter<'a, usize>,
}

impl<'a> SeqAccess<'a> for HeldSeq<'a> {
    type Error = serde_json::Error;

    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, serde_json::Error> {
        match self.items.next() {
            Some(&node) => seed
                .deserialize(Held {
                    arena: self.arena,
                    node,
                })
                .map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct HeldMap<'a> {
    arena: &'a Arena,
    members: &'a [(Span, usize)],
    /// The next member in order.
    next: usize,
    /// The member handed over first, out of order (the tag); `None` once handed over.
    first: Option<usize>,
    /// Skipped where it stands.
    skip: Option<usize>,
    /// Every value read as `null`.
    hollow: bool,
    value: Option<usize>,
}

impl<'a> HeldMap<'a> {
    fn new(arena: &'a Arena, members: &'a [(Span, usize)], first: Option<usize>) -> Self {
        HeldMap {
            arena,
            members,
            next: 0,
            first,
            skip: first,
            hollow: false,
            value: None,
        }
    }
}

impl<'a> MapAccess<'a> for HeldMap<'a> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, serde_json::Error> {
        let index = match self.first.take() {
            Some(first) => first,
            None => {
                if self.skip == Some(self.next) {
                    self.next += 1;
                }
                self.next += 1;
                self.next - 1
            }
        };
        let Some((key, node)) = self.members.get(index) else {
            return Ok(None);
        };
        self.value = Some(*node);
        seed.deserialize(Untyped::<_, false>(BorrowedStrDeserializer::new(
            self.arena.str(*key),
        )))
        .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, serde_json::Error> {
        match self.value.take() {
            Some(_) if self.hollow => seed.deserialize(serde::de::value::UnitDeserializer::new()),
            Some(node) => seed.deserialize(Held {
                arena: self.arena,
                node,
            }),
            None => Err(de::Error::custom("a value asked for before its key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        let skipped_ahead = self.first.is_none() && self.skip.is_some_and(|at| at >= self.next);
        Some(
            self.members
                .len()
                .saturating_sub(self.next + usize::from(skipped_ahead)),
        )
    }
}

/// Parses an untagged union at `at`.
pub(crate) fn parse_untagged<'de, E: Union, D: Deserializer<'de>>(
    de: D,
    cx: &mut Cx,
    at: &Path<'_>,
) -> Result<Option<E>, D::Error> {
    match de.deserialize_newtype_struct(HELD_NODE, Enter { depth: at.depth() })? {
        Entered::Held { arena, node } => {
            let scope = cx
                .untagged
                .scope
                .clone()
                .filter(|scope| scope.arena.id == arena && node < scope.arena.nodes.len())
                .ok_or_else(|| de::Error::custom("a held value read outside its union"))?;
            resolve::<E>(&scope, node, cx, at).map_err(de::Error::custom)
        }
        Entered::Fresh(arena) => {
            let root = arena.root;
            let scope = Scope::new(arena, cx);
            let outer = cx.untagged.scope.replace(Rc::clone(&scope));
            let parsed = resolve::<E>(&scope, root, cx, at);
            cx.untagged.scope = outer;
            cx.untagged.recycle(scope);
            parsed.map_err(de::Error::custom)
        }
    }
}

/// The union `E` at `node`: decided once, then built (or, in a trial, vouched for).
fn resolve<E: Union>(
    scope: &Rc<Scope>,
    node: usize,
    cx: &mut Cx,
    at: &Path<'_>,
) -> Result<Option<E>, serde_json::Error> {
    let serde_numbers = cx.untagged.serde_numbers;
    let key = (node, TypeId::of::<E>(), serde_numbers);
    let mut known = scope.memo.borrow().get(&key).cloned();
    if known.is_none() && scope.copied {
        let copies = &mut *scope.copies().borrow_mut();
        let place = at.place(&mut copies.places);
        known = copies
            .verdicts
            .get(&(place, TypeId::of::<E>(), serde_numbers))
            .cloned();
    }
    let (verdict, built) = match known {
        Some(verdict) => (verdict, None),
        None => decide::<E>(scope, node, at, serde_numbers)?,
    };
    match verdict {
        Verdict::Rejected(message) => {
            cx.report(at, Keyword::Other("anyOf"), message.to_string());
            Ok(None)
        }
        Verdict::Accepted(_) if built.is_some() => Ok(built),
        Verdict::Accepted(_) if cx.untagged.probing => {
            cx.untagged.vouched = true;
            Ok(None)
        }
        Verdict::Accepted(index) => {
            work();
            if E::UNIT[index] {
                return Ok(E::unit(index));
            }
            E::content(
                index,
                Held {
                    arena: &scope.arena,
                    node,
                },
                cx,
                at,
            )
        }
    }
}

/// Tries each variant of `E` on `node`, in declaration order, with numbers as serde reads them
/// and then (unless `serde_numbers`) as JSON Schema reads them; records the verdicts. The
/// value is handed back when the trial that took it built it.
fn decide<E: Union>(
    scope: &Rc<Scope>,
    node: usize,
    at: &Path<'_>,
    serde_numbers: bool,
) -> Result<(Verdict, Option<E>), serde_json::Error> {
    let held = Held {
        arena: &scope.arena,
        node,
    };
    let passes: &[bool] = if serde_numbers {
        &[true]
    } else {
        &[true, false]
    };
    let mut rejected = None;
    for &pass in passes {
        let mut refused: Vec<(&str, Option<Cx>)> = Vec::with_capacity(E::VARIANTS.len());
        let mut taken = None;
        for (index, name) in E::VARIANTS.iter().enumerate() {
            work();
            if E::UNIT[index] {
                if matches!(scope.arena.nodes[node], Node::Null) {
                    taken = Some((index, E::unit(index)));
                    break;
                }
                refused.push((name, None));
                continue;
            }
            let mut trial = Cx::default();
            trial.untagged = Trial {
                scope: Some(Rc::clone(scope)),
                probing: true,
                serde_numbers: pass,
                vouched: false,
                spare: Spare::default(),
            };
            let parsed = E::content(index, held.at(node), &mut trial, at)?;
            if trial.is_clean() && (parsed.is_some() || trial.untagged.vouched) {
                taken = Some((index, parsed.filter(|_| !trial.untagged.vouched)));
                break;
            }
            refused.push((name, Some(trial)));
        }
        let verdict = match taken {
            Some((index, _)) => Verdict::Accepted(index),
            None => Verdict::Rejected(describe(refused).into()),
        };
        scope.record::<E>(node, at, pass, &verdict);
        if let Some((_, built)) = taken {
            // Whenever a variant takes the value as serde reads numbers, that variant is the
            // verdict outside serde's reading too (the second pass runs only when none does).
            scope.record::<E>(node, at, false, &verdict);
            return Ok((verdict, built));
        }
        rejected = Some(verdict);
    }
    Ok((
        rejected.unwrap_or_else(|| Verdict::Rejected(Rc::from("refused"))),
        None,
    ))
}

/// The longest reason quoted for one refused variant, in bytes.
const REASON_BYTES: usize = 200;

/// The message of a value no variant takes: each variant with the first violation it met.
fn describe(refused: Vec<(&str, Option<Cx>)>) -> String {
    let tried: Vec<String> = refused
        .into_iter()
        .map(|(name, attempt)| {
            let Some(attempt) = attempt else {
                return format!("`{name}` (null)");
            };
            let reason = attempt
                .into_errors()
                .and_then(|errors| {
                    errors.iter().next().map(|violation| {
                        let pointer = violation.pointer();
                        if pointer.is_empty() {
                            violation.message().to_owned()
                        } else {
                            format!("{pointer}: {}", violation.message())
                        }
                    })
                })
                .unwrap_or_else(|| "refused".to_owned());
            format!("`{name}` ({})", cut(reason, REASON_BYTES))
        })
        .collect();
    format!("matches none of the alternatives: {}", tried.join("; "))
}

/// `text` cut to at most `limit` bytes on a character boundary, marked `…` if cut.
fn cut(mut text: String, limit: usize) -> String {
    if text.len() > limit {
        let mut end = limit;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}
