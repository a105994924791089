//! Unit-variant enums: a string that must name one of the variants.

use super::*;

struct EnumVisitor<'a, 'p, F> {
    cx: &'a mut Cx,
    at: &'a Path<'p>,
    variants: &'static [&'static str],
    name: F,
}

/// Parses a string that must be one of `variants`: the variant `name` maps it to (`name`
/// answers `None` for any string not in `variants`).
#[inline]
pub fn parse_enum<'de, D: Deserializer<'de>, E, F: FnOnce(&str) -> Option<E>>(
    de: D,
    cx: &mut Cx,
    at: &Path<'_>,
    variants: &'static [&'static str],
    name: F,
) -> Result<Option<E>, D::Error> {
    de.deserialize_any(EnumVisitor {
        cx,
        at,
        variants,
        name,
    })
}

impl<F> EnumVisitor<'_, '_, F> {
    fn mismatch<R>(self, got: Got<'_>) -> Option<R> {
        self.cx.not_in_enum(self.at, self.variants, false, got);
        None
    }
}

impl<'de, E, F: FnOnce(&str) -> Option<E>> Visitor<'de> for EnumVisitor<'_, '_, F> {
    type Value = Option<E>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("one of the enum's strings")
    }

    fn visit_bool<Er: de::Error>(self, v: bool) -> Result<Self::Value, Er> {
        Ok(self.mismatch(Got::Bool(v)))
    }

    fn visit_i64<Er: de::Error>(self, v: i64) -> Result<Self::Value, Er> {
        let n = if v >= 0 { Num::U(v as u64) } else { Num::I(v) };
        Ok(self.mismatch(Got::Number(n)))
    }

    fn visit_u64<Er: de::Error>(self, v: u64) -> Result<Self::Value, Er> {
        Ok(self.mismatch(Got::Number(Num::U(v))))
    }

    fn visit_f64<Er: de::Error>(self, v: f64) -> Result<Self::Value, Er> {
        Ok(self.mismatch(Got::Number(Num::F(v))))
    }

    #[inline]
    fn visit_str<Er: de::Error>(self, v: &str) -> Result<Self::Value, Er> {
        let EnumVisitor {
            cx,
            at,
            variants,
            name,
        } = self;
        match name(v) {
            Some(variant) => Ok(Some(variant)),
            None => {
                cx.not_in_enum(at, variants, false, Got::Str(v));
                Ok(None)
            }
        }
    }

    #[inline]
    fn visit_borrowed_str<Er: de::Error>(self, v: &'de str) -> Result<Self::Value, Er> {
        self.visit_str(v)
    }

    fn visit_unit<Er: de::Error>(self) -> Result<Self::Value, Er> {
        Ok(self.mismatch(Got::Null))
    }

    fn visit_none<Er: de::Error>(self) -> Result<Self::Value, Er> {
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
