//! Members held as values: one value read into a [`Value`] within the depth limit.

use super::*;

/// Reads one value into a [`Value`], refusing nesting beyond [`MAX_DEPTH`] the way the
/// checked parsers do (`depth` containers enclose it).
#[doc(hidden)]
#[derive(Debug)]
pub struct Buffer {
    depth: u32,
}

impl Buffer {
    /// A buffer for a member of the object at `at`.
    pub fn member_of(at: &Path<'_>) -> Buffer {
        Buffer {
            depth: at.depth() + 1,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Buffer {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        crate::contract::untagged::work();
        de.deserialize_any(self)
    }
}

impl Buffer {
    fn enter<E: de::Error>(&self) -> Result<Buffer, E> {
        if self.depth >= MAX_DEPTH {
            Err(E::custom(format_args!(
                "nesting deeper than {MAX_DEPTH} levels"
            )))
        } else {
            Ok(Buffer {
                depth: self.depth + 1,
            })
        }
    }
}

impl<'de> Visitor<'de> for Buffer {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number out of range"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        crate::contract::untagged::bytes(v.len());
        Ok(Value::from(v))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        crate::contract::untagged::bytes(v.len());
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        self.deserialize(de)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inner = self.enter()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Buffer { depth: inner.depth })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let inner = self.enter()?;
        // Duplicate keys are refused where the buffered value is read, not here: a
        // `Map` keeps the last, so an object with one is held as its members.
        let mut object = Map::new();
        while let Some(key) = map.next_key_seed(KeySeed(str::to_owned))? {
            crate::contract::untagged::bytes(key.len());
            let value = map.next_value_seed(Buffer { depth: inner.depth })?;
            if object.contains_key(&key) {
                return Err(de::Error::custom(format_args!(
                    "duplicate key {key:?} in an object held until its tag was read"
                )));
            }
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// An object key, borrowed from the input whenever the input allows: most members held
/// until their tag comes cost no allocation for their key.
pub(super) struct CowKey;

impl<'de> DeserializeSeed<'de> for CowKey {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for CowKey {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
}
