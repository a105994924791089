//! Field constraints (`length`, `range`, `pattern`): how they are held, advertised and checked.

use std::cmp::Ordering;
use std::fmt;
use std::sync::OnceLock;

use num_cmp::NumCmp;
use serde_json::{Map, Number, Value};

/// A JSON number as the parser produced it, compared exactly across representations
/// (the way standard validators compare them: `u64::MAX` is not rounded to 2^64).
#[derive(Debug, Clone, Copy)]
pub enum Num {
    /// A non-negative integer.
    U(u64),
    /// A negative integer.
    I(i64),
    /// Any other number (fraction, exponent, or out of 64-bit range).
    F(f64),
}

impl Num {
    /// Exact ordering between two numbers.
    pub fn compare(self, other: Num) -> Ordering {
        fn ord<A: NumCmp<B> + Copy, B: Copy>(a: A, b: B) -> Ordering {
            if a.num_lt(b) {
                Ordering::Less
            } else if a.num_gt(b) {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        }
        match (self, other) {
            (Num::U(a), Num::U(b)) => a.cmp(&b),
            (Num::U(a), Num::I(b)) => ord(a, b),
            (Num::U(a), Num::F(b)) => ord(a, b),
            (Num::I(a), Num::U(b)) => ord(a, b),
            (Num::I(a), Num::I(b)) => a.cmp(&b),
            (Num::I(a), Num::F(b)) => ord(a, b),
            (Num::F(a), Num::U(b)) => ord(a, b),
            (Num::F(a), Num::I(b)) => ord(a, b),
            (Num::F(a), Num::F(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
        }
    }

    /// Whether the number has no fractional part (JSON Schema's `integer`: `1.0` and `1e2` are).
    pub fn is_integer(self) -> bool {
        match self {
            Num::U(_) | Num::I(_) => true,
            Num::F(f) => f.fract() == 0.0,
        }
    }

    /// The value if it was written as an integer in 64-bit range.
    #[inline]
    pub fn as_exact_int(self) -> Option<i128> {
        match self {
            Num::U(u) => Some(i128::from(u)),
            Num::I(i) => Some(i128::from(i)),
            Num::F(_) => None,
        }
    }

    /// The value as an `f64` when that conversion is exact.
    #[inline]
    pub fn as_exact_f64(self) -> Option<f64> {
        const EXACT: u64 = 1 << 53;
        match self {
            Num::U(u) if u <= EXACT => Some(u as f64),
            Num::I(i) if i.unsigned_abs() <= EXACT => Some(i as f64),
            Num::F(f) => Some(f),
            _ => None,
        }
    }

    /// The nearest `f64`.
    pub fn as_f64(self) -> f64 {
        match self {
            Num::U(u) => u as f64,
            Num::I(i) => i as f64,
            Num::F(f) => f,
        }
    }

    /// The value as an `i128`, if it is an integer that fits.
    pub fn as_i128(self) -> Option<i128> {
        match self {
            Num::U(u) => Some(i128::from(u)),
            Num::I(i) => Some(i128::from(i)),
            // Every integral f64 below 2^127 in magnitude converts exactly.
            Num::F(f) if f.fract() == 0.0 && f.abs() < 1.7e38 => Some(f as i128),
            Num::F(_) => None,
        }
    }

    pub(crate) fn to_value(self) -> Value {
        match self {
            Num::U(u) => Value::from(u),
            Num::I(i) => Value::from(i),
            Num::F(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
        }
    }

    fn tighter(self, other: Num, keep: Ordering) -> Num {
        if other.compare(self) == keep {
            other
        } else {
            self
        }
    }
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Num::U(u) => write!(f, "{u}"),
            Num::I(i) => write!(f, "{i}"),
            Num::F(x) => match Number::from_f64(*x) {
                Some(number) => write!(f, "{number}"),
                None => write!(f, "{x}"),
            },
        }
    }
}

/// A `pattern` constraint: the ECMA-262 source as advertised, compiled once on first use with
/// the same translation to Rust regex syntax, and the same fast path for anchored sequences of
/// character classes, that the `jsonschema` crate applies.
#[derive(Debug)]
pub struct Pattern {
    source: &'static str,
    compiled: OnceLock<Option<Compiled>>,
}

#[derive(Debug)]
struct Compiled {
    /// Decides ASCII subjects of simple anchored patterns without a regex engine.
    sequence: Option<jsonschema_regex::Sequence>,
    translated: String,
    regex: OnceLock<Option<regex::Regex>>,
}

impl Compiled {
    fn regex(&self) -> Option<&regex::Regex> {
        self.regex
            .get_or_init(|| regex::Regex::new(&self.translated).ok())
            .as_ref()
    }
}

impl Pattern {
    /// A pattern from its advertised source (checked when the derive expanded).
    pub const fn new(source: &'static str) -> Self {
        Pattern {
            source,
            compiled: OnceLock::new(),
        }
    }

    /// The pattern as advertised.
    pub fn source(&self) -> &'static str {
        self.source
    }

    /// Whether `text` matches; `None` if the pattern cannot be compiled here.
    pub fn is_match(&self, text: &str) -> Option<bool> {
        let compiled = self
            .compiled
            .get_or_init(|| {
                let translated = jsonschema_regex::to_rust_regex(self.source).ok()?;
                let compiled = Compiled {
                    sequence: jsonschema_regex::Sequence::compile(&translated),
                    translated: translated.into_owned(),
                    regex: OnceLock::new(),
                };
                // A pattern the engine cannot build is refused up front, not on first use.
                if compiled.sequence.is_none() {
                    compiled.regex()?;
                }
                Some(compiled)
            })
            .as_ref()?;
        if let Some(matched) = compiled
            .sequence
            .as_ref()
            .and_then(|sequence| sequence.is_match(text.as_bytes()))
        {
            return Some(matched);
        }
        compiled.regex().map(|regex| regex.is_match(text))
    }
}

/// The constraints declared on one field; the field's type decides which apply.
#[derive(Debug, Clone, Copy)]
pub struct Constraints {
    /// Least number of characters (strings) or items (arrays).
    pub min_length: Option<u64>,
    /// Greatest number of characters (strings) or items (arrays).
    pub max_length: Option<u64>,
    /// Inclusive lower bound.
    pub minimum: Option<Num>,
    /// Inclusive upper bound.
    pub maximum: Option<Num>,
    /// Exclusive lower bound.
    pub exclusive_minimum: Option<Num>,
    /// Exclusive upper bound.
    pub exclusive_maximum: Option<Num>,
    /// A regular expression strings must match (unanchored, as in JSON Schema).
    pub pattern: Option<&'static Pattern>,
}

impl Constraints {
    /// No constraint.
    pub const NONE: Constraints = Constraints {
        min_length: None,
        max_length: None,
        minimum: None,
        maximum: None,
        exclusive_minimum: None,
        exclusive_maximum: None,
        pattern: None,
    };

    /// The inclusive integer window left by the type's range `[lo, hi]` and the declared
    /// bounds, when every declared bound is an integer.
    #[inline]
    pub(crate) fn integer_window(&self, mut lo: i128, mut hi: i128) -> Option<(i128, i128)> {
        if let Some(min) = self.minimum {
            lo = lo.max(min.as_exact_int()?);
        }
        if let Some(min) = self.exclusive_minimum {
            lo = lo.max(min.as_exact_int()? + 1);
        }
        if let Some(max) = self.maximum {
            hi = hi.min(max.as_exact_int()?);
        }
        if let Some(max) = self.exclusive_maximum {
            hi = hi.min(max.as_exact_int()? - 1);
        }
        Some((lo, hi))
    }

    /// Whether `v` lies within every declared bound and `[type_min, type_max]`, decided in
    /// `f64` arithmetic; `None` when a bound is not exactly an `f64`.
    #[inline]
    pub(crate) fn float_within(&self, v: f64, type_min: f64, type_max: f64) -> Option<bool> {
        let mut within = type_min <= v && v <= type_max;
        if let Some(min) = self.minimum {
            within &= min.as_exact_f64()? <= v;
        }
        if let Some(max) = self.maximum {
            within &= v <= max.as_exact_f64()?;
        }
        if let Some(min) = self.exclusive_minimum {
            within &= min.as_exact_f64()? < v;
        }
        if let Some(max) = self.exclusive_maximum {
            within &= v < max.as_exact_f64()?;
        }
        Some(within)
    }

    /// The lower bound after merging the type's own range, keeping the tighter one.
    pub(crate) fn merged_minimum(&self, type_min: Option<Num>) -> Option<Num> {
        merge(type_min, self.minimum, Ordering::Greater)
    }

    /// The upper bound after merging the type's own range, keeping the tighter one.
    pub(crate) fn merged_maximum(&self, type_max: Option<Num>) -> Option<Num> {
        merge(type_max, self.maximum, Ordering::Less)
    }

    /// Writes the numeric keywords into `schema`.
    pub(crate) fn number_keywords(
        &self,
        schema: &mut Map<String, Value>,
        type_min: Option<Num>,
        type_max: Option<Num>,
    ) {
        let bounds = [
            ("minimum", self.merged_minimum(type_min)),
            ("maximum", self.merged_maximum(type_max)),
            ("exclusiveMinimum", self.exclusive_minimum),
            ("exclusiveMaximum", self.exclusive_maximum),
        ];
        for (keyword, bound) in bounds {
            if let Some(bound) = bound {
                schema.insert(keyword.to_owned(), bound.to_value());
            }
        }
    }

    /// Writes `minLength`/`maxLength`/`pattern` into a string schema.
    pub(crate) fn string_keywords(&self, schema: &mut Map<String, Value>) {
        if let Some(min) = self.min_length {
            schema.insert("minLength".to_owned(), Value::from(min));
        }
        if let Some(max) = self.max_length {
            schema.insert("maxLength".to_owned(), Value::from(max));
        }
        if let Some(pattern) = self.pattern {
            schema.insert("pattern".to_owned(), Value::from(pattern.source));
        }
    }

    /// Writes `minItems`/`maxItems` into an array schema.
    pub(crate) fn array_keywords(&self, schema: &mut Map<String, Value>) {
        if let Some(min) = self.min_length {
            schema.insert("minItems".to_owned(), Value::from(min));
        }
        if let Some(max) = self.max_length {
            schema.insert("maxItems".to_owned(), Value::from(max));
        }
    }
}

/// The constraints of one field as a type: the checked parser of the field is compiled with
/// them as constants, so that a bound not declared costs nothing.
pub trait ConstConstraints {
    /// The constraints.
    const VALUE: Constraints;
}

/// No constraint, as a type.
#[derive(Debug, Clone, Copy)]
pub struct Unconstrained;

impl ConstConstraints for Unconstrained {
    const VALUE: Constraints = Constraints::NONE;
}

fn merge(a: Option<Num>, b: Option<Num>, keep: Ordering) -> Option<Num> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.tighter(b, keep)),
        (a, b) => a.or(b),
    }
}

/// Field types that `length(min = .., max = ..)` applies to.
#[diagnostic::on_unimplemented(
    message = "`length` does not apply to `{Self}`",
    label = "`length` applies to strings (characters) and arrays (items)",
    note = "use `range(..)` for numbers"
)]
pub trait AcceptsLength {}

/// Field types that `range(min = .., max = .., exclusive_min = .., exclusive_max = ..)` applies to.
#[diagnostic::on_unimplemented(
    message = "`range` does not apply to `{Self}`",
    label = "`range` applies to integers and floats",
    note = "use `length(..)` for strings and arrays"
)]
pub trait AcceptsRange {}

/// Field types that `pattern` / `regex(pattern = ..)` applies to.
#[diagnostic::on_unimplemented(
    message = "`pattern` does not apply to `{Self}`",
    label = "`pattern` applies to strings"
)]
pub trait AcceptsPattern {}

impl AcceptsLength for String {}
impl<T> AcceptsLength for Vec<T> {}
impl AcceptsPattern for String {}
macro_rules! accepts_range {
    ($($ty:ty)*) => { $(impl AcceptsRange for $ty {})* };
}
accepts_range!(u8 u16 u32 u64 usize i8 i16 i32 i64 isize f32 f64);
macro_rules! through_wrappers {
    ($($marker:ident)*) => {$(
        impl<T: $marker> $marker for Option<T> {}
        impl<T: $marker> $marker for Box<T> {}
    )*};
}
through_wrappers!(AcceptsLength AcceptsRange AcceptsPattern);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_across_representations_exactly() {
        assert_eq!(
            Num::U(u64::MAX).compare(Num::F(18446744073709551616.0)),
            Ordering::Less
        );
        assert_eq!(Num::I(-1).compare(Num::U(0)), Ordering::Less);
        assert_eq!(Num::F(-0.0).compare(Num::U(0)), Ordering::Equal);
        assert_eq!(
            Num::U(9007199254740993).compare(Num::F(9007199254740992.0)),
            Ordering::Greater
        );
    }

    #[test]
    fn merges_to_the_tighter_bound() {
        let c = Constraints {
            minimum: Some(Num::U(1)),
            maximum: Some(Num::U(1000)),
            ..Constraints::NONE
        };
        assert!(matches!(c.merged_minimum(Some(Num::U(0))), Some(Num::U(1))));
        assert!(matches!(
            c.merged_maximum(Some(Num::U(255))),
            Some(Num::U(255))
        ));
    }

    #[test]
    fn patterns_follow_ecma_digit_classes() {
        static DIGITS: Pattern = Pattern::new(r"^\d+$");
        assert_eq!(DIGITS.is_match("123"), Some(true));
        // ECMA-262 `\d` is ASCII only.
        assert_eq!(DIGITS.is_match("١٢٣"), Some(false));
    }
}
