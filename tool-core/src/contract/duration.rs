//! `std::time::Duration` as serde reads it: `{"secs": u64, "nanos": u32}`, or the array
//! `[secs, nanos]`, with `nanos` of any `u32` value (a billion or more carries into the
//! seconds) as long as the seconds do not overflow.

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

use crate::Argument;
use crate::contract::constraints::{ConstConstraints, Constraints, Num, Unconstrained};
use crate::contract::error::Keyword;
use crate::contract::path::Path;
use crate::contract::schema::SchemaGen;
use crate::contract::validate::{Cx, Got, KeySeed, Scalar, check_depth, parse_scalar};

const NANOS_PER_SEC: u64 = 1_000_000_000;
/// How many whole seconds a `u32` of nanoseconds can carry.
const MAX_CARRY: u64 = u32::MAX as u64 / NANOS_PER_SEC;
const FIELDS: &[&str] = &["secs", "nanos"];

/// A JSON object `{"secs": ..., "nanos": ...}` (both required, nothing else), or the array
/// `[secs, nanos]`, as serde reads a `Duration`; `nanos` of a billion or more carries into the
/// seconds (`{"secs": 1, "nanos": 1500000000}` is 2.5 s), and a sum beyond `u64::MAX` seconds
/// is refused (`not`), as serde refuses it.
impl Argument for Duration {
    fn schema(_: &mut SchemaGen, _: &Constraints) -> Value {
        let secs = json!({ "type": "integer", "minimum": 0, "maximum": u64::MAX });
        let nanos = json!({ "type": "integer", "minimum": 0, "maximum": u32::MAX });
        // The seconds overflow when `nanos` carries `k` of them onto `secs > u64::MAX - k`.
        let overflows: Vec<Value> = (1..=MAX_CARRY)
            .map(|k| {
                let secs = json!({ "type": "integer", "minimum": u64::MAX - k + 1 });
                let nanos = json!({ "type": "integer", "minimum": k * NANOS_PER_SEC });
                // Both numbers present, so that a branch never matches one alone.
                json!({
                    "type": ["object", "array"],
                    "properties": { "secs": secs, "nanos": nanos },
                    "required": FIELDS,
                    "prefixItems": [secs, nanos],
                    "minItems": 2,
                })
            })
            .collect();
        let mut schema = Map::new();
        schema.insert(
            "description".to_owned(),
            Value::from(
                "A duration: {\"secs\": whole seconds, \"nanos\": nanoseconds}, or the array \
                 [secs, nanos].",
            ),
        );
        schema.insert("type".to_owned(), json!(["object", "array"]));
        schema.insert(
            "properties".to_owned(),
            json!({ "secs": secs, "nanos": nanos }),
        );
        schema.insert("required".to_owned(), json!(FIELDS));
        schema.insert("additionalProperties".to_owned(), Value::Bool(false));
        schema.insert("prefixItems".to_owned(), json!([secs, nanos]));
        schema.insert("items".to_owned(), Value::Bool(false));
        schema.insert("minItems".to_owned(), Value::from(2));
        schema.insert("maxItems".to_owned(), Value::from(2));
        schema.insert("not".to_owned(), json!({ "anyOf": overflows }));
        Value::Object(schema)
    }

    fn to_value(&self) -> Option<Value> {
        Some(json!({ "secs": self.as_secs(), "nanos": self.subsec_nanos() }))
    }

    fn parse<'de, D: Deserializer<'de>, C: ConstConstraints>(
        de: D,
        cx: &mut Cx,
        at: &Path<'_>,
    ) -> Result<Option<Self>, D::Error> {
        // Either container: `deserialize_any`, which no JSON type fails.
        de.deserialize_any(DurationVisitor { cx, at })
    }
}

/// One of the two numbers: the number as sent when it is an integer (for the overflow rule,
/// which a validator applies whatever the range), and the value when it is in range.
struct Part<T> {
    integer: Option<Num>,
    value: Option<T>,
}

impl<T: Scalar> Scalar for Part<T> {
    fn accept(got: Got<'_>, cx: &mut Cx, at: &Path<'_>, c: &Constraints) -> Option<Self> {
        let integer = match got {
            Got::Number(n) if n.is_integer() => Some(n),
            _ => None,
        };
        Some(Part {
            integer,
            value: T::accept(got, cx, at, c),
        })
    }
}

type Secs = Part<u64>;
type Nanos = Part<u32>;

fn read_part<'de, T: Scalar, D: Deserializer<'de>>(
    de: D,
    cx: &mut Cx,
    at: &Path<'_>,
) -> Result<Part<T>, D::Error> {
    let part = parse_scalar::<Part<T>, Unconstrained, D>(de, cx, at)?;
    Ok(part.unwrap_or(Part {
        integer: None,
        value: None,
    }))
}

struct PartSeed<'a, 'p, T> {
    cx: &'a mut Cx,
    at: Path<'p>,
    _marker: std::marker::PhantomData<T>,
}

impl<'de, T: Scalar> de::DeserializeSeed<'de> for PartSeed<'_, '_, T> {
    type Value = Part<T>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        read_part::<T, D>(de, self.cx, &self.at)
    }
}

struct DurationVisitor<'a, 'p> {
    cx: &'a mut Cx,
    at: &'a Path<'p>,
}

impl DurationVisitor<'_, '_> {
    fn mismatch(self, got: Got<'_>) -> Option<Duration> {
        self.cx.type_mismatch(self.at, "object or array", got);
        None
    }

    /// The duration of two numbers read without violations, or the overflow refused.
    fn finish(self, secs: Option<Secs>, nanos: Option<Nanos>, ok: bool) -> Option<Duration> {
        let (Some(secs), Some(nanos)) = (secs, nanos) else {
            return None;
        };
        if let (Some(s), Some(n)) = (secs.integer, nanos.integer)
            && overflows(s, n)
        {
            self.cx.report(
                self.at,
                Keyword::Other("not"),
                "secs plus the whole seconds in nanos must fit in a u64 (at most \
                 18446744073709551615 seconds)",
            );
            return None;
        }
        let (Some(secs), Some(nanos)) = (secs.value, nanos.value) else {
            return None;
        };
        let whole = Duration::from_secs(secs);
        let duration = whole.checked_add(Duration::from_nanos(u64::from(nanos)));
        duration.filter(|_| ok)
    }
}

/// Whether the integers `secs` and `nanos` (either of them possibly out of its type's range)
/// meet one of the schema's overflow branches.
fn overflows(secs: Num, nanos: Num) -> bool {
    use std::cmp::Ordering::Less;
    (1..=MAX_CARRY).any(|k| {
        secs.compare(Num::U(u64::MAX - k + 1)) != Less
            && nanos.compare(Num::U(k * NANOS_PER_SEC)) != Less
    })
}

impl<'de> Visitor<'de> for DurationVisitor<'_, '_> {
    type Value = Option<Duration>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a duration")
    }

    crate::contract::validate::reject_scalars!();

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        check_depth(self.at)?;
        let mut secs: Option<Secs> = None;
        let mut nanos: Option<Nanos> = None;
        let mut ok = true;
        while let Some(key) = map.next_key_seed(KeySeed(|key: &str| match key {
            "secs" => Ok(0),
            "nanos" => Ok(1),
            other => Err(other.to_owned()),
        }))? {
            match key {
                Ok(0) if secs.is_none() => {
                    secs = Some(map.next_value_seed(PartSeed::<u64> {
                        cx: self.cx,
                        at: self.at.key("secs"),
                        _marker: std::marker::PhantomData,
                    })?);
                }
                Ok(1) if nanos.is_none() => {
                    nanos = Some(map.next_value_seed(PartSeed::<u32> {
                        cx: self.cx,
                        at: self.at.key("nanos"),
                        _marker: std::marker::PhantomData,
                    })?);
                }
                Ok(index) => {
                    self.cx.duplicate_key(self.at, FIELDS[index]);
                    map.next_value::<de::IgnoredAny>()?;
                    ok = false;
                }
                Err(name) => {
                    self.cx.unknown_field(self.at, &name, FIELDS);
                    map.next_value::<de::IgnoredAny>()?;
                    ok = false;
                }
            }
        }
        for (name, present) in FIELDS.iter().zip([secs.is_some(), nanos.is_some()]) {
            if !present {
                self.cx.missing(self.at, name);
            }
        }
        Ok(self.finish(secs, nanos, ok))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        check_depth(self.at)?;
        let secs = seq.next_element_seed(PartSeed::<u64> {
            cx: self.cx,
            at: self.at.index(0),
            _marker: std::marker::PhantomData,
        })?;
        let nanos = match secs {
            Some(_) => seq.next_element_seed(PartSeed::<u32> {
                cx: self.cx,
                at: self.at.index(1),
                _marker: std::marker::PhantomData,
            })?,
            None => None,
        };
        let mut count = usize::from(secs.is_some()) + usize::from(nanos.is_some());
        let mut ok = true;
        if count == 2 {
            // Items past the second are refused one by one (`items: false`).
            while seq.next_element::<de::IgnoredAny>()?.is_some() {
                self.cx.report(
                    &self.at.index(count),
                    Keyword::Other("falseSchema"),
                    "no item is allowed here: a duration is [secs, nanos]",
                );
                count += 1;
            }
        }
        if count < 2 {
            self.cx.report(
                self.at,
                Keyword::MinItems,
                format!("must have at least 2 items; got {count}"),
            );
            ok = false;
        } else if count > 2 {
            self.cx.report(
                self.at,
                Keyword::MaxItems,
                format!("must have at most 2 items; got {count}"),
            );
            ok = false;
        }
        Ok(self.finish(secs, nanos, ok))
    }
}
