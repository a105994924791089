//! Free-form JSON (`serde_json::Value`) as an argument: any value, held to strict JSON.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value, json};

use crate::Argument;
use crate::contract::constraints::Constraints;
use crate::contract::constraints::{ConstConstraints, Unconstrained};
use crate::contract::path::Path;
use crate::contract::schema::SchemaGen;
use crate::contract::validate::{Cx, Seed, check_depth};

/// Any JSON value, advertised as the schema `{}`. The JSON is still strict: a repeated key
/// anywhere inside is a `duplicateKey` violation and nesting is bounded by
/// [`MAX_DEPTH`](crate::contract::MAX_DEPTH).
impl Argument for Value {
    fn schema(_: &mut SchemaGen, _: &Constraints) -> Value {
        json!({})
    }

    fn parse<'de, D: Deserializer<'de>, C: ConstConstraints>(
        de: D,
        cx: &mut Cx,
        at: &Path<'_>,
    ) -> Result<Option<Self>, D::Error> {
        de.deserialize_any(AnyVisitor { cx, at })
    }
}

struct AnyVisitor<'a, 'p> {
    cx: &'a mut Cx,
    at: &'a Path<'p>,
}

impl<'de> Visitor<'de> for AnyVisitor<'_, '_> {
    type Value = Option<Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Some(Value::Bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(Value::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(Value::from(v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        match Number::from_f64(v) {
            Some(n) => Ok(Some(Value::Number(n))),
            None => Err(E::custom("number is not finite")),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(Value::String(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(Value::String(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Some(Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Some(Value::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        Value::parse::<D, Unconstrained>(de, self.cx, self.at)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        check_depth(self.at)?;
        let mut items = Vec::new();
        let mut valid = true;
        loop {
            let at = self.at.index(items.len());
            match seq.next_element_seed(Seed::<Value, Unconstrained>::new(self.cx, &at))? {
                None => break,
                Some(Some(item)) => items.push(item),
                Some(None) => {
                    valid = false;
                    items.push(Value::Null);
                }
            }
        }
        Ok(valid.then_some(Value::Array(items)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        check_depth(self.at)?;
        let mut members = Map::new();
        let mut valid = true;
        while let Some(key) = map.next_key::<String>()? {
            let at = self.at.key(&key);
            let value = map.next_value_seed(Seed::<Value, Unconstrained>::new(self.cx, &at))?;
            if members.contains_key(&key) {
                self.cx.duplicate_key(self.at, &key);
                valid = false;
                continue;
            }
            match value {
                Some(value) => {
                    members.insert(key, value);
                }
                None => valid = false,
            }
        }
        Ok(valid.then_some(Value::Object(members)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::contract::Keyword;
    use crate::contract::validate::{parse_str, parse_value};

    #[test]
    fn accepts_any_json() {
        let raw = r#"{"a":[1,-2,3.5,"x",null,true,{"b":{}}],"c":"\u00e9"}"#;
        let value: Value = parse_str(raw).unwrap();
        assert_eq!(value, serde_json::from_str::<Value>(raw).unwrap());
        assert_eq!(parse_value::<Value>(&value).unwrap(), value);
        assert_eq!(parse_str::<Value>("7").unwrap(), json!(7));
    }

    #[test]
    fn rejects_duplicate_keys_at_any_depth() {
        let errors = parse_str::<Value>(r#"{"a":{"b":1,"b":2},"c":[{"d":0,"d":0}]}"#).unwrap_err();
        let found: Vec<_> = errors
            .iter()
            .map(|v| (v.pointer().into_owned(), v.keyword()))
            .collect();
        assert_eq!(
            found,
            [
                ("/a/b".to_owned(), Keyword::DuplicateKey),
                ("/c/0/d".to_owned(), Keyword::DuplicateKey)
            ]
        );
    }

    #[test]
    fn rejects_trailing_text_and_deep_nesting() {
        assert!(parse_str::<Value>("{} {}").unwrap_err().is_syntax());
        let deep = "[".repeat(100_000);
        assert!(parse_str::<Value>(&deep).unwrap_err().is_syntax());
        let mut value = json!(0);
        for _ in 0..200 {
            value = json!([value]);
        }
        assert!(parse_value::<Value>(&value).unwrap_err().is_syntax());
    }
}
