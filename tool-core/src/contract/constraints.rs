//! Field constraints (`length`, `range`, `pattern`): how they are held, advertised and checked.

use std::cmp::Ordering;
use std::fmt;
use std::sync::OnceLock;

use num_cmp::NumCmp;
use serde_json::{Map, Number, Value};

use crate::contract::format::Format;

mod accepts;
mod engine;

pub use accepts::{AcceptsFormat, AcceptsLength, AcceptsPattern, AcceptsRange, HasItems};

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

    /// The `f32` serde gives for this number: the one nearest to its value, rounded once.
    pub(crate) const fn to_f32(self) -> f32 {
        match self {
            Num::U(u) => u as f32,
            Num::I(i) => i as f32,
            Num::F(f) => f as f32,
        }
    }

    /// The `f64` serde gives for this number.
    const fn to_f64(self) -> f64 {
        match self {
            Num::U(u) => u as f64,
            Num::I(i) => i as f64,
            Num::F(f) => f,
        }
    }

    /// The least integer not below the number, clamped to ±2^100.
    const fn ceil(self) -> i128 {
        match self {
            Num::U(u) => u as i128,
            Num::I(i) => i as i128,
            Num::F(f) => {
                let t = clamp_to_i128(f);
                if (t as f64) < f { t + 1 } else { t }
            }
        }
    }

    /// The greatest integer not above the number, clamped to ±2^100.
    const fn floor(self) -> i128 {
        match self {
            Num::U(u) => u as i128,
            Num::I(i) => i as i128,
            Num::F(f) => {
                let t = clamp_to_i128(f);
                if (t as f64) > f { t - 1 } else { t }
            }
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

/// `f` truncated toward zero, within ±2^100 (far beyond every 64-bit integer).
const fn clamp_to_i128(f: f64) -> i128 {
    const LIMIT: f64 = 1_267_650_600_228_229_401_496_703_205_376.0; // 2^100
    if f > LIMIT {
        LIMIT as i128
    } else if f < -LIMIT {
        -(LIMIT as i128)
    } else {
        f as i128
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

/// A `pattern` constraint: the ECMA-262 source as advertised, compiled once on first use the
/// way the `jsonschema` crate compiles it: the same translation to Rust regex syntax, the same
/// fast path for anchored sequences of character classes, the same character count for a whole
/// pattern `^X{m,n}$` over one class, and the same size limit for the `regex` engine (10 MiB per
/// compiled pattern). The derives build every pattern this way at compile time and refuse one
/// beyond the limit, so a derived pattern can always be evaluated.
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
    matcher: OnceLock<Option<Matcher>>,
}

#[derive(Debug)]
enum Matcher {
    Count(jsonschema_regex::RepeatedClass),
    Regex(regex::Regex),
}

impl Compiled {
    fn matcher(&self, source: &str) -> Option<&Matcher> {
        self.matcher
            .get_or_init(|| match engine::form(source, &self.translated) {
                engine::Form::Count(class) => Some(Matcher::Count(class)),
                engine::Form::Engine(regex) => engine::build_regex(&regex).ok().map(Matcher::Regex),
            })
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
                    matcher: OnceLock::new(),
                };
                // A pattern the engine cannot build is refused up front, not on first use.
                if compiled.sequence.is_none() {
                    compiled.matcher(self.source)?;
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
        Some(match compiled.matcher(self.source)? {
            Matcher::Count(class) => class.is_match(text),
            Matcher::Regex(regex) => regex.is_match(text),
        })
    }
}

/// The constraints declared on one field; the field's type decides which apply.
#[derive(Debug, Clone, Copy)]
pub struct Constraints {
    /// Least number of characters (strings), items (arrays) or entries (maps).
    pub min_length: Option<u64>,
    /// Greatest number of characters (strings), items (arrays) or entries (maps).
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
    /// The constraints on each item of a collection (each value of a map).
    pub items: Option<&'static Constraints>,
    /// The format strings must be of (`format`, asserted).
    pub format: Option<Format>,
    /// The constraints on each key of a map, as its property name (`propertyNames`).
    pub keys: Option<&'static Constraints>,
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
        items: None,
        format: None,
        keys: None,
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

    /// The bounds for a JSON number `x` read into an `f32` field: `x` and the `f32` nearest to
    /// it, which the field receives, must both meet every declared bound. Rounding is monotonic,
    /// so each side comes down to one bound on `x`, the tighter of the declared one and the
    /// midpoint between two neighbouring `f32` values where rounding crosses it.
    pub(crate) fn rounded_to_f32(&self) -> Constraints {
        let mut lower: Option<Bound> = None;
        for (declared, exclusive) in [(self.minimum, false), (self.exclusive_minimum, true)] {
            if let Some(value) = declared {
                lower = Bound::tighter(lower, Bound { value, exclusive }, Ordering::Greater);
                if let Some(rounded) = f32_lower_threshold(value, exclusive) {
                    lower = Bound::tighter(lower, rounded, Ordering::Greater);
                }
            }
        }
        let mut upper: Option<Bound> = None;
        for (declared, exclusive) in [(self.maximum, false), (self.exclusive_maximum, true)] {
            if let Some(value) = declared {
                upper = Bound::tighter(upper, Bound { value, exclusive }, Ordering::Less);
                if let Some(rounded) = f32_upper_threshold(value, exclusive) {
                    upper = Bound::tighter(upper, rounded, Ordering::Less);
                }
            }
        }
        let pick = |bound: Option<Bound>, exclusive: bool| {
            bound
                .filter(|bound| bound.exclusive == exclusive)
                .map(|bound| bound.value)
        };
        Constraints {
            minimum: pick(lower, false),
            exclusive_minimum: pick(lower, true),
            maximum: pick(upper, false),
            exclusive_maximum: pick(upper, true),
            ..*self
        }
    }

    /// Whether some value of a type holding `domain` meets every declared bound.
    pub(crate) const fn admits(&self, domain: Domain) -> bool {
        match domain {
            Domain::Integer { min, max } => {
                let (mut lo, mut hi) = (min, max);
                if let Some(bound) = self.minimum {
                    lo = max_i128(lo, bound.ceil());
                }
                if let Some(bound) = self.exclusive_minimum {
                    lo = max_i128(lo, bound.floor() + 1);
                }
                if let Some(bound) = self.maximum {
                    hi = min_i128(hi, bound.floor());
                }
                if let Some(bound) = self.exclusive_maximum {
                    hi = min_i128(hi, bound.ceil() - 1);
                }
                lo <= hi
            }
            Domain::F32 => {
                let mut lo = -f32::MAX;
                let mut hi = f32::MAX;
                if let Some(bound) = self.minimum {
                    lo = lo.max(least_f32(bound, false));
                }
                if let Some(bound) = self.exclusive_minimum {
                    lo = lo.max(least_f32(bound, true));
                }
                if let Some(bound) = self.maximum {
                    hi = hi.min(greatest_f32(bound, false));
                }
                if let Some(bound) = self.exclusive_maximum {
                    hi = hi.min(greatest_f32(bound, true));
                }
                lo <= hi && lo.is_finite() && hi.is_finite()
            }
            Domain::F64 => {
                let mut lo = -f64::MAX;
                let mut hi = f64::MAX;
                if let Some(bound) = self.minimum {
                    lo = lo.max(least_f64(bound, false));
                }
                if let Some(bound) = self.exclusive_minimum {
                    lo = lo.max(least_f64(bound, true));
                }
                if let Some(bound) = self.maximum {
                    hi = hi.min(greatest_f64(bound, false));
                }
                if let Some(bound) = self.exclusive_maximum {
                    hi = hi.min(greatest_f64(bound, true));
                }
                lo <= hi && lo.is_finite() && hi.is_finite()
            }
        }
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
        if let Some(format) = self.format {
            schema.insert("format".to_owned(), Value::from(format.name()));
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

/// One bound on a number: `> value` when `exclusive`, else `>=` (or `<`, `<=` for an upper one).
#[derive(Clone, Copy)]
struct Bound {
    value: Num,
    exclusive: bool,
}

impl Bound {
    /// The tighter of `a` and `b`, where `keep` is the ordering of a tighter value (`Greater`
    /// for lower bounds); at equal values the exclusive one.
    fn tighter(a: Option<Bound>, b: Bound, keep: Ordering) -> Option<Bound> {
        let Some(a) = a else { return Some(b) };
        Some(match b.value.compare(a.value) {
            Ordering::Equal if b.exclusive => b,
            Ordering::Equal => a,
            order if order == keep => b,
            _ => a,
        })
    }
}

/// The bound on `x` equivalent to `round(x) > value` (`>=` unless `exclusive`), where `round`
/// gives the nearest `f32`; `None` when every `x` within the `f32` range meets it (or none does,
/// which the declared bound already says).
fn f32_lower_threshold(value: Num, exclusive: bool) -> Option<Bound> {
    // The least f32 meeting the bound, and the one below it: `x` must round up to the former.
    let least = least_f32(value, exclusive);
    if !least.is_finite() || least == -f32::MAX {
        return None;
    }
    let below = least.next_down();
    let midpoint = (f64::from(below) + f64::from(least)) / 2.0;
    Some(Bound {
        value: Num::F(midpoint),
        // At the midpoint itself, rounding picks the neighbour with an even significand.
        exclusive: midpoint as f32 != least,
    })
}

/// The bound on `x` equivalent to `round(x) < value` (`<=` unless `exclusive`); see
/// [`f32_lower_threshold`].
fn f32_upper_threshold(value: Num, exclusive: bool) -> Option<Bound> {
    let greatest = greatest_f32(value, exclusive);
    if !greatest.is_finite() || greatest == f32::MAX {
        return None;
    }
    let above = greatest.next_up();
    let midpoint = (f64::from(greatest) + f64::from(above)) / 2.0;
    Some(Bound {
        value: Num::F(midpoint),
        exclusive: midpoint as f32 != greatest,
    })
}

/// The least `f32` above `bound` (or equal to it, unless `exclusive`); infinite if none is finite.
const fn least_f32(bound: Num, exclusive: bool) -> f32 {
    let nearest = bound.to_f32();
    match compare_exact(nearest as f64, bound) {
        Ordering::Less => nearest.next_up(),
        Ordering::Equal if exclusive => nearest.next_up(),
        _ => nearest,
    }
}

/// The greatest `f32` below `bound` (or equal to it, unless `exclusive`); infinite if none is
/// finite.
const fn greatest_f32(bound: Num, exclusive: bool) -> f32 {
    let nearest = bound.to_f32();
    match compare_exact(nearest as f64, bound) {
        Ordering::Greater => nearest.next_down(),
        Ordering::Equal if exclusive => nearest.next_down(),
        _ => nearest,
    }
}

/// [`least_f32`] for `f64`.
const fn least_f64(bound: Num, exclusive: bool) -> f64 {
    let nearest = bound.to_f64();
    match compare_exact(nearest, bound) {
        Ordering::Less => nearest.next_up(),
        Ordering::Equal if exclusive => nearest.next_up(),
        _ => nearest,
    }
}

/// [`greatest_f32`] for `f64`.
const fn greatest_f64(bound: Num, exclusive: bool) -> f64 {
    let nearest = bound.to_f64();
    match compare_exact(nearest, bound) {
        Ordering::Greater => nearest.next_down(),
        Ordering::Equal if exclusive => nearest.next_down(),
        _ => nearest,
    }
}

/// `x` against `n`, exactly, in a `const fn` (where [`Num::compare`] cannot run).
const fn compare_exact(x: f64, n: Num) -> Ordering {
    let v = match n {
        Num::U(u) => u as i128,
        Num::I(i) => i as i128,
        Num::F(f) => {
            return if x < f {
                Ordering::Less
            } else if x > f {
                Ordering::Greater
            } else {
                Ordering::Equal
            };
        }
    };
    // Beyond ±1e30 no 64-bit integer is near; within, truncation is exact.
    if x < -1e30 {
        return Ordering::Less;
    }
    if x > 1e30 {
        return Ordering::Greater;
    }
    let t = x as i128;
    if t < v {
        Ordering::Less
    } else if t > v {
        Ordering::Greater
    } else if x < t as f64 {
        Ordering::Less
    } else if x > t as f64 {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

const fn max_i128(a: i128, b: i128) -> i128 {
    if a > b { a } else { b }
}

const fn min_i128(a: i128, b: i128) -> i128 {
    if a < b { a } else { b }
}

/// The values a field type with `range` holds, for the compile-time check that a declared
/// range admits one of them.
#[derive(Debug, Clone, Copy)]
pub enum Domain {
    /// The integers from `min` to `max`.
    Integer {
        /// The least value.
        min: i128,
        /// The greatest value.
        max: i128,
    },
    /// The finite `f32` values.
    F32,
    /// The finite `f64` values.
    F64,
}

/// The constraints of one field as a type: the checked parser of the field is compiled with
/// them as constants, so that a bound not declared costs nothing.
pub trait ConstConstraints {
    /// The constraints.
    const VALUE: Constraints;
    /// The constraints on each item of a collection (each value of a map), as a type.
    type Items: ConstConstraints;
}

/// No constraint, as a type.
#[derive(Debug, Clone, Copy)]
pub struct Unconstrained;

impl ConstConstraints for Unconstrained {
    const VALUE: Constraints = Constraints::NONE;
    type Items = Unconstrained;
}

impl Constraints {
    /// The constraints on each item of a collection (each value of a map).
    pub(crate) fn item_constraints(&self) -> &'static Constraints {
        self.items.unwrap_or(&Constraints::NONE)
    }
}

fn merge(a: Option<Num>, b: Option<Num>, keep: Ordering) -> Option<Num> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.tighter(b, keep)),
        (a, b) => a.or(b),
    }
}

/// Compile-time check that `inner(..)` applies to `T`.
pub const fn has_items<T: HasItems + ?Sized>() {}

/// Compile-time check that `length` applies to `T`.
pub const fn accepts_length<T: AcceptsLength + ?Sized>() {}

/// Compile-time check that `range` applies to `T`; whether the bounds `c` admit a value of it.
pub const fn accepts_range<T: AcceptsRange + ?Sized>(c: &Constraints) -> bool {
    c.admits(T::DOMAIN)
}

/// Compile-time check that `pattern` applies to `T`.
pub const fn accepts_pattern<T: AcceptsPattern + ?Sized>() {}

/// Compile-time check that `format` applies to `T`.
pub const fn accepts_format<T: AcceptsFormat + ?Sized>() {}

#[cfg(test)]
mod tests;
