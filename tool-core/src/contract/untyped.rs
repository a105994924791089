//! A deserializer adapter that answers every typed request with `deserialize_any`.
//!
//! The checked parsers of this crate read every value with `deserialize_any` (or
//! `deserialize_option`), and their visitors accept every JSON type and record a wrong one as
//! a violation. A parser outside this crate (a hand-written [`crate::Argument`]) may still use
//! serde's typed calls, which fail the whole parse on a value of another JSON type; through
//! [`Untyped`] (every call but `deserialize_option` and `deserialize_ignored_any` becomes
//! `deserialize_any`, down to the last nested value) no parser fails on a type.
//! [`crate::contract::validate`] parses text again through [`Untyped`] only if the first pass
//! stopped; already-parsed values always go through [`Untyped`].

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};

/// Wraps a deserializer so that every value below it is read with `deserialize_any`.
///
/// With `EXACT`, 128-bit reads are passed on as they are: only for a deserializer whose
/// 128-bit reads take a value of any type (the crate's own reader, which reads an integer
/// with every digit and anything else as `deserialize_any` does). Without it, an integer beyond
/// 64 bits reaches the visitor as the double nearest to it, as a `serde_json::Value` holds it.
#[derive(Debug)]
pub(crate) struct Untyped<D, const EXACT: bool = false>(pub(crate) D);

/// Forwards the typed `deserialize_*` methods to `deserialize_any`.
macro_rules! forward_to_any {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        #[inline]
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            $(let _ = $arg;)*
            self.0.deserialize_any(UntypedVisitor::<V, EXACT>(visitor))
        }
    )*};
}

impl<'de, D: Deserializer<'de>, const EXACT: bool> Deserializer<'de> for Untyped<D, EXACT> {
    type Error = D::Error;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(UntypedVisitor::<V, EXACT>(visitor))
    }

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0
            .deserialize_option(UntypedVisitor::<V, EXACT>(visitor))
    }

    /// With `EXACT`, passed on: the crate's reader answers a name of its own under it.
    #[inline]
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        if EXACT {
            self.0
                .deserialize_newtype_struct(name, UntypedVisitor::<V, EXACT>(visitor))
        } else {
            self.0.deserialize_any(UntypedVisitor::<V, EXACT>(visitor))
        }
    }

    #[inline]
    fn deserialize_i128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        if EXACT {
            self.0.deserialize_i128(UntypedVisitor::<V, EXACT>(visitor))
        } else {
            self.0.deserialize_any(UntypedVisitor::<V, EXACT>(visitor))
        }
    }

    #[inline]
    fn deserialize_u128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        if EXACT {
            self.0.deserialize_u128(UntypedVisitor::<V, EXACT>(visitor))
        } else {
            self.0.deserialize_any(UntypedVisitor::<V, EXACT>(visitor))
        }
    }

    #[inline]
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_ignored_any(visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
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

/// Hands the visitor [`Untyped`] access to nested values.
struct UntypedVisitor<V, const EXACT: bool>(V);

/// Forwards `visit_*` methods that carry no nested deserializer.
macro_rules! forward_visit {
    ($($method:ident($ty:ty);)*) => {$(
        #[inline]
        fn $method<E: serde::de::Error>(self, v: $ty) -> Result<V::Value, E> {
            self.0.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>, const EXACT: bool> Visitor<'de> for UntypedVisitor<V, EXACT> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    forward_visit! {
        visit_bool(bool);
        visit_i8(i8);
        visit_i16(i16);
        visit_i32(i32);
        visit_i64(i64);
        visit_i128(i128);
        visit_u8(u8);
        visit_u16(u16);
        visit_u32(u32);
        visit_u64(u64);
        visit_u128(u128);
        visit_f32(f32);
        visit_f64(f64);
        visit_char(char);
        visit_str(&str);
        visit_borrowed_str(&'de str);
        visit_string(String);
        visit_bytes(&[u8]);
        visit_borrowed_bytes(&'de [u8]);
        visit_byte_buf(Vec<u8>);
    }

    #[inline]
    fn visit_unit<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_unit()
    }

    #[inline]
    fn visit_none<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_none()
    }

    #[inline]
    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        self.0.visit_some(Untyped::<D, EXACT>(de))
    }

    #[inline]
    fn visit_newtype_struct<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        self.0.visit_newtype_struct(Untyped::<D, EXACT>(de))
    }

    #[inline]
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(UntypedAccess::<A, EXACT>(seq))
    }

    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(UntypedAccess::<A, EXACT>(map))
    }

    #[inline]
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        // No JSON deserializer calls this from `deserialize_any`.
        self.0.visit_enum(data)
    }
}

/// A map or sequence whose values are read through [`Untyped`].
struct UntypedAccess<A, const EXACT: bool>(A);

impl<'de, A: MapAccess<'de>, const EXACT: bool> MapAccess<'de> for UntypedAccess<A, EXACT> {
    type Error = A::Error;

    #[inline]
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(UntypedSeed::<K, EXACT>(seed))
    }

    #[inline]
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(UntypedSeed::<T, EXACT>(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: SeqAccess<'de>, const EXACT: bool> SeqAccess<'de> for UntypedAccess<A, EXACT> {
    type Error = A::Error;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(UntypedSeed::<T, EXACT>(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

/// A seed that deserializes through [`Untyped`].
struct UntypedSeed<S, const EXACT: bool>(S);

impl<'de, S: DeserializeSeed<'de>, const EXACT: bool> DeserializeSeed<'de>
    for UntypedSeed<S, EXACT>
{
    type Value = S::Value;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Untyped::<D, EXACT>(de))
    }
}
