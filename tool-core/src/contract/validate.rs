//! The checked parse: one pass over the JSON text that builds the typed value and records
//! every violation on the way, instead of stopping at the first.
//!
//! A value that breaks a rule is recorded in [`Cx`] and parsed on (its subtree is skipped),
//! so the caller learns about all of them. Only text that is not JSON at all, or nests deeper
//! than [`MAX_DEPTH`], stops the pass. (Objects and arrays are read with `deserialize_any`,
//! so a value of another JSON type reaches their visitors and is recorded like any other
//! violation; see [`parse_str`].)

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::Argument;
use crate::contract::constraints::Constraints;
use crate::contract::constraints::{ConstConstraints, Num, Unconstrained};
use crate::contract::error::{ArgumentErrors, Collector, Keyword, Reason, Subject, Violation};
use crate::contract::path::Path;
use crate::contract::untyped::Untyped;

mod enums;
mod reader;

pub use enums::parse_enum;

/// The deepest nesting of arrays and objects accepted, the same in both entry points.
///
/// Text nested deeper is rejected by the JSON parser itself (its recursion limit is 128
/// containers); an already-parsed value is held to the same bound here.
pub const MAX_DEPTH: u32 = 127;

/// Collects violations during one checked parse, within the limits of [`ArgumentErrors`]:
/// beyond them a violation is counted without building its pointer or message.
#[derive(Debug, Default)]
pub struct Cx {
    violations: Collector,
    /// Set while an untagged union tries its variants.
    pub(crate) untagged: crate::contract::untagged::Trial,
}

impl Cx {
    /// Records a violation at `at`.
    #[cold]
    pub fn report(
        &mut self,
        at: &Path<'_>,
        keyword: Keyword,
        message: impl Into<Cow<'static, str>>,
    ) {
        if self.counted_only(keyword) {
            return;
        }
        self.violations
            .push(Violation::new(at.pointer(), keyword, message));
    }

    /// Counts a violation of `keyword` and answers `true` when there is no room to hold it.
    fn counted_only(&mut self, keyword: Keyword) -> bool {
        let full = !self.violations.has_room();
        if full {
            self.violations.omit(keyword);
        }
        full
    }

    /// Records a violation naming the field `name` of the object at `at`.
    #[cold]
    pub fn report_property(
        &mut self,
        at: &Path<'_>,
        name: &str,
        keyword: Keyword,
        message: impl Into<Cow<'static, str>>,
    ) {
        if self.counted_only(keyword) {
            return;
        }
        self.violations
            .push(Violation::on_property(at.pointer(), name, keyword, message));
    }

    /// Records a violation a standard validator found at the JSON Pointer `location` (on the
    /// field `property` of the object there, if any); `message` is built only when there is
    /// room to hold it.
    #[cold]
    pub(crate) fn report_found(
        &mut self,
        location: String,
        property: Option<&str>,
        keyword: Keyword,
        message: impl FnOnce() -> Cow<'static, str>,
    ) {
        if self.counted_only(keyword) {
            return;
        }
        let violation = match property {
            Some(name) => Violation::on_property(location, name, keyword, message()),
            None => Violation::new(location, keyword, message()),
        };
        self.violations.push(violation);
    }

    /// Records a missing required field.
    #[cold]
    pub fn missing(&mut self, at: &Path<'_>, name: &str) {
        self.report_property(at, name, Keyword::Required, "missing required field");
    }

    /// Records a field the object's schema does not list. The known fields are named once
    /// per object, on the unknown field whose name sorts first: the same field whether the
    /// keys came in the text's order or a parsed value's (sorted) order.
    #[cold]
    pub fn unknown_field(&mut self, at: &Path<'_>, name: &str, known: &[&str]) {
        if self.counted_only(Keyword::AdditionalProperties) {
            return;
        }
        let location = at.pointer();
        if known.is_empty() {
            self.violations.push(Violation::on_property(
                location,
                name,
                Keyword::AdditionalProperties,
                "unknown field; this object takes no fields",
            ));
            return;
        }
        // Here the collector has room (`counted_only` returned otherwise), so this violation is
        // held and may take the list from an earlier one.
        let hinted = self.violations.kept().iter().position(|violation| {
            violation.keyword() == Keyword::AdditionalProperties
                && violation.instance_location() == location
                && violation
                    .message()
                    .starts_with("unknown field; expected one of")
        });
        let message = match hinted {
            // An earlier field sorts first and keeps the list.
            Some(index)
                if self.violations.kept()[index]
                    .property()
                    .is_some_and(|p| p <= name) =>
            {
                Cow::Borrowed("unknown field")
            }
            // This one sorts first: the list moves here.
            Some(index) => Cow::Owned(
                self.violations
                    .replace_message(index, "unknown field")
                    .into_owned(),
            ),
            None => {
                let mut message = String::from("unknown field; expected one of ");
                push_quoted_list(&mut message, known.iter().copied());
                Cow::Owned(message)
            }
        };
        self.violations.push(Violation::on_property(
            location,
            name,
            Keyword::AdditionalProperties,
            message,
        ));
    }

    /// Records a key that appears twice in one object.
    #[cold]
    pub fn duplicate_key(&mut self, at: &Path<'_>, name: &str) {
        self.report_property(
            at,
            name,
            Keyword::DuplicateKey,
            "duplicate field: each key may appear once",
        );
    }

    /// Records a value of the wrong JSON type.
    #[cold]
    pub fn type_mismatch(&mut self, at: &Path<'_>, expected: &'static str, got: Got<'_>) {
        let (got, quoted) = got.subject();
        self.report_reason(at, Keyword::Type, Reason::Type { expected, got }, quoted);
    }

    /// Records a value outside an `enum`.
    #[cold]
    pub fn not_in_enum(
        &mut self,
        at: &Path<'_>,
        allowed: &'static [&'static str],
        nullable: bool,
        got: Got<'_>,
    ) {
        let (got, quoted) = got.subject();
        let reason = Reason::Enum {
            allowed,
            nullable,
            got,
        };
        self.report_reason(at, Keyword::Enum, reason, quoted);
    }

    /// Records a value outside an `enum` whose values are not known for the whole program.
    #[cold]
    pub(crate) fn not_in_listed(&mut self, at: &Path<'_>, allowed: &[&str], got: Got<'_>) {
        if self.counted_only(Keyword::Enum) {
            return;
        }
        let mut message = String::from("must be one of ");
        push_quoted_list(&mut message, allowed.iter().copied());
        message.push_str("; got ");
        got.write_to(&mut message, true);
        self.report(at, Keyword::Enum, message);
    }

    /// Records a violation at `at` whose message is written from `reason` when first read;
    /// `quoted` is the text of the string at fault, if the message quotes one.
    #[cold]
    pub(crate) fn report_reason(
        &mut self,
        at: &Path<'_>,
        keyword: Keyword,
        reason: Reason,
        quoted: &str,
    ) {
        if self.counted_only(keyword) {
            return;
        }
        self.violations
            .push(Violation::found(at, None, keyword, reason, quoted));
    }

    /// Whether numbers are read as serde reads them, as while an untagged union first tries
    /// its variants: an integer does not take `2.0`.
    #[inline]
    pub(crate) fn serde_numbers(&self) -> bool {
        self.untagged.serde_numbers
    }

    pub(crate) fn is_clean(&self) -> bool {
        self.violations.is_empty()
    }

    pub(crate) fn into_errors(self) -> Option<ArgumentErrors> {
        self.violations.finish()
    }
}

pub(crate) fn push_quoted_list<'a>(out: &mut String, items: impl Iterator<Item = &'a str>) {
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_json_string(out, item, usize::MAX);
    }
}

/// Longest string quoted back to the model in a message, in characters.
const QUOTE_LIMIT: usize = 60;

/// Appends `text` as a JSON string literal, cut after `limit` characters (marked `…`).
pub(crate) fn push_json_string(out: &mut String, text: &str, limit: usize) {
    out.reserve(text.len().min(limit.saturating_mul(4)) + 2);
    out.push('"');
    // Where the text is cut: after `limit` characters, if it has more (it cannot when it has
    // no more bytes than that).
    let end = if text.len() <= limit {
        None
    } else {
        text.char_indices().nth(limit).map(|(end, _)| end)
    };
    let (kept, cut) = match end {
        Some(end) => (&text[..end], true),
        None => (text, false),
    };
    // Runs of characters that need no escape are copied whole.
    let mut run = 0;
    for (at, byte) in kept.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..0x20 => "",
            _ => continue,
        };
        out.push_str(&kept[run..at]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{:04x}", byte);
        } else {
            out.push_str(escape);
        }
        run = at + 1;
    }
    out.push_str(&kept[run..]);
    out.push('"');
    if cut {
        out.push('…');
    }
}

/// The value a visitor was handed, described for a message (`string "120.5"`, `1.5`, `array`).
#[derive(Debug, Clone, Copy)]
pub enum Got<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Num),
    /// A string.
    Str(&'a str),
    /// An array (its items are not described).
    Array,
    /// An object (its members are not described).
    Object,
}

impl<'a> Got<'a> {
    /// The value as a violation keeps it, and the text of a string cut to what a message
    /// quotes of it.
    pub(crate) fn subject(self) -> (Subject, &'a str) {
        match self {
            Got::Null => (Subject::Null, ""),
            Got::Bool(b) => (Subject::Bool(b), ""),
            Got::Number(n) => (Subject::Number(n), ""),
            Got::Str(s) => {
                // Cut after `QUOTE_LIMIT` characters, if it has more (it cannot when it has
                // no more bytes than that).
                let end = if s.len() <= QUOTE_LIMIT {
                    None
                } else {
                    s.char_indices().nth(QUOTE_LIMIT).map(|(end, _)| end)
                };
                match end {
                    Some(end) => (Subject::Str { cut: true }, &s[..end]),
                    None => (Subject::Str { cut: false }, s),
                }
            }
            Got::Array => (Subject::Array, ""),
            Got::Object => (Subject::Object, ""),
        }
    }

    /// Appends the description; `bare` leaves out the word `string` before a quoted string.
    pub(crate) fn write_to(self, out: &mut String, bare: bool) {
        match self {
            Got::Null => out.push_str("null"),
            Got::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            Got::Number(n) => {
                let _ = write!(out, "{n}");
            }
            Got::Str(s) => {
                if !bare {
                    out.push_str("string ");
                }
                push_json_string(out, s, QUOTE_LIMIT);
            }
            Got::Array => out.push_str("array"),
            Got::Object => out.push_str("object"),
        }
    }

    /// The value without the word `string` before a quoted string: `"dollars"`, `5`, `array`.
    pub fn bare(self) -> impl fmt::Display + 'a {
        struct Bare<'a>(Got<'a>);
        impl fmt::Display for Bare<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut text = String::new();
                self.0.write_to(&mut text, true);
                f.write_str(&text)
            }
        }
        Bare(self)
    }
}

impl fmt::Display for Got<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        self.write_to(&mut text, false);
        f.write_str(&text)
    }
}

/// A value that is checked by looking at one JSON scalar (or at the type of a container).
pub(crate) trait Scalar: Sized {
    /// Checks `got`, recording violations; `None` when it is not acceptable.
    fn accept(got: Got<'_>, cx: &mut Cx, at: &Path<'_>, c: &Constraints) -> Option<Self>;
}

struct ScalarVisitor<'a, 'p, T, C> {
    cx: &'a mut Cx,
    at: &'a Path<'p>,
    _marker: std::marker::PhantomData<(T, C)>,
}

/// Parses one scalar-checked value under the constraints `C`.
#[inline]
pub(crate) fn parse_scalar<'de, T: Scalar, C: ConstConstraints, D: Deserializer<'de>>(
    de: D,
    cx: &mut Cx,
    at: &Path<'_>,
) -> Result<Option<T>, D::Error> {
    de.deserialize_any(ScalarVisitor::<T, C> {
        cx,
        at,
        _marker: std::marker::PhantomData,
    })
}

impl<'de, T: Scalar, C: ConstConstraints> Visitor<'de> for ScalarVisitor<'_, '_, T, C> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    #[inline(always)]
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(T::accept(Got::Bool(v), self.cx, self.at, &C::VALUE))
    }

    #[inline(always)]
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        let n = if v >= 0 { Num::U(v as u64) } else { Num::I(v) };
        Ok(T::accept(Got::Number(n), self.cx, self.at, &C::VALUE))
    }

    #[inline(always)]
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(T::accept(
            Got::Number(Num::U(v)),
            self.cx,
            self.at,
            &C::VALUE,
        ))
    }

    #[inline(always)]
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(T::accept(
            Got::Number(Num::F(v)),
            self.cx,
            self.at,
            &C::VALUE,
        ))
    }

    #[inline(always)]
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(T::accept(Got::Str(v), self.cx, self.at, &C::VALUE))
    }

    #[inline(always)]
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(T::accept(Got::Str(v), self.cx, self.at, &C::VALUE))
    }

    #[inline(always)]
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(T::accept(Got::Null, self.cx, self.at, &C::VALUE))
    }

    #[inline(always)]
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(T::accept(Got::Null, self.cx, self.at, &C::VALUE))
    }

    #[inline(always)]
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        drain_seq(seq)?;
        Ok(T::accept(Got::Array, self.cx, self.at, &C::VALUE))
    }

    #[inline(always)]
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        drain_map(map)?;
        Ok(T::accept(Got::Object, self.cx, self.at, &C::VALUE))
    }
}

/// Consumes the rest of an array whose content no longer matters.
pub(crate) fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Consumes the rest of an object whose content no longer matters.
pub fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Fails the whole parse when `at` is deeper than [`MAX_DEPTH`].
#[inline]
pub(crate) fn check_depth<E: de::Error>(at: &Path<'_>) -> Result<(), E> {
    if at.depth() >= MAX_DEPTH {
        Err(E::custom(format_args!(
            "nesting deeper than {MAX_DEPTH} levels at {}",
            at.pointer()
        )))
    } else {
        Ok(())
    }
}

/// Deserializes one `T` at `at` under the constraints `C`, as a map value or array element.
#[derive(Debug)]
pub struct Seed<'a, 'p, T, C> {
    cx: &'a mut Cx,
    at: &'a Path<'p>,
    _marker: std::marker::PhantomData<(T, C)>,
}

impl<'a, 'p, T, C> Seed<'a, 'p, T, C> {
    /// A seed for the value at `at`.
    #[inline]
    pub fn new(cx: &'a mut Cx, at: &'a Path<'p>) -> Self {
        Seed {
            cx,
            at,
            _marker: std::marker::PhantomData,
        }
    }
}

impl<'de, T: Argument, C: ConstConstraints> DeserializeSeed<'de> for Seed<'_, '_, T, C> {
    type Value = Option<T>;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        T::parse::<D, C>(de, self.cx, self.at)
    }
}

/// An object type whose members are matched field by field (generated by the derive).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a struct with named fields",
    label = "its members must share one object with their neighbours",
    note = "the content of an internally tagged variant and a `#[serde(flatten)]` field are \
            read as members of the enclosing object: use a struct deriving `Argument`"
)]
pub trait Object: Sized {
    /// Reads the members of the object at `at`.
    fn visit_members<'de, A: MapAccess<'de>>(
        map: A,
        cx: &mut Cx,
        at: &Path<'_>,
    ) -> Result<Option<Self>, A::Error>;
}

struct ObjectVisitor<'a, 'p, T> {
    cx: &'a mut Cx,
    at: &'a Path<'p>,
    expected: &'static str,
    _marker: std::marker::PhantomData<T>,
}

/// Parses an object of type `T`; anything else is a `type` violation.
#[inline]
pub fn parse_object<'de, T: Object, D: Deserializer<'de>>(
    de: D,
    cx: &mut Cx,
    at: &Path<'_>,
) -> Result<Option<T>, D::Error> {
    de.deserialize_any(ObjectVisitor::<T> {
        cx,
        at,
        expected: "object",
        _marker: std::marker::PhantomData,
    })
}

impl<T> ObjectVisitor<'_, '_, T> {
    fn mismatch<R>(self, got: Got<'_>) -> Option<R> {
        self.cx.type_mismatch(self.at, self.expected, got);
        None
    }
}

/// Implements the non-container `visit_*` methods as type mismatches.
macro_rules! reject_scalars {
    () => {
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
            Ok(self.mismatch(Got::Bool(v)))
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            let n = if v >= 0 { Num::U(v as u64) } else { Num::I(v) };
            Ok(self.mismatch(Got::Number(n)))
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok(self.mismatch(Got::Number(Num::U(v))))
        }

        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            Ok(self.mismatch(Got::Number(Num::F(v))))
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(self.mismatch(Got::Str(v)))
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(self.mismatch(Got::Null))
        }

        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(self.mismatch(Got::Null))
        }
    };
}
pub(crate) use reject_scalars;

impl<'de, T: Object> Visitor<'de> for ObjectVisitor<'_, '_, T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    reject_scalars!();

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        drain_seq(seq)?;
        Ok(self.mismatch(Got::Array))
    }

    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        check_depth(self.at)?;
        T::visit_members(map, self.cx, self.at)
    }
}

/// Reads an object key as a borrowed string and classifies it with `F`.
#[derive(Debug)]
pub struct KeySeed<F>(pub F);

impl<'de, K, F: FnOnce(&str) -> K> DeserializeSeed<'de> for KeySeed<F> {
    type Value = K;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<K, D::Error> {
        de.deserialize_str(KeyVisitor(self.0))
    }
}

struct KeyVisitor<F>(F);

impl<'de, K, F: FnOnce(&str) -> K> Visitor<'de> for KeyVisitor<F> {
    type Value = K;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    #[inline]
    fn visit_str<E: de::Error>(self, v: &str) -> Result<K, E> {
        Ok((self.0)(v))
    }
}

/// Parses `raw` as the arguments of `T`, strictly: one JSON value, nothing after it.
///
/// One pass: the parsers of this crate read objects and arrays with `deserialize_any`, whose
/// visitors take every JSON type, so a value of the wrong type (a number where an object
/// goes) is recorded and skipped like any other violation. serde's typed calls
/// (`deserialize_map`, `deserialize_seq`) would fail the whole parse on it before a visitor
/// saw it, and reading the text a second time cost more than twice the floor. The pass stops
/// only at text that is not JSON, at nesting too deep, or at a typed call made by an
/// [`Argument`] implemented outside this crate; then the text is parsed again through
/// [`Untyped`], which turns every call into `deserialize_any`, and its outcome is the answer.
///
/// The first pass reads the text with [`reader::Reader`], which accepts exactly what
/// `serde_json` accepts, with the same values, and explains nothing: whenever it stops, the
/// second pass reads the text with `serde_json`, whose messages are the ones reported.
pub(crate) fn parse_str<T: Argument>(raw: &str) -> Result<T, ArgumentErrors> {
    let mut de = reader::Reader::new(raw);
    let mut cx = Cx::default();
    let parsed = T::parse::<_, Unconstrained>(&mut de, &mut cx, &Path::root());
    // Matched where it lies, so that the value is moved once, into the answer.
    let read = parsed.is_ok() && de.end().is_ok();
    match parsed {
        Ok(Some(value)) if read && cx.is_clean() => Ok(value),
        Ok(_) if read => Err(refused(cx)),
        _ => parse_str_untyped(raw),
    }
}

thread_local! {
    static READ_AGAIN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The texts [`parse_str`] read a second time on this thread so far, because its first pass
/// stopped. Deterministic, for tests that check a shape is read in one pass.
#[doc(hidden)]
pub fn texts_read_again() -> u64 {
    READ_AGAIN.with(std::cell::Cell::get)
}

/// The untyped pass of [`parse_str`], out of line: it runs only after the first pass stopped.
///
/// The reader reads it again, with every typed call made untyped but the 128-bit reads, which
/// it answers for every type and reads with every digit. If the reader stops once more, the
/// text is not JSON or nests too deep, and `serde_json` reads it again for its message.
#[inline(never)]
fn parse_str_untyped<T: Argument>(raw: &str) -> Result<T, ArgumentErrors> {
    READ_AGAIN.with(|n| n.set(n.get().wrapping_add(1)));
    let mut de = reader::Reader::new(raw);
    let mut cx = Cx::default();
    let parsed = T::parse::<_, Unconstrained>(Untyped::<_, true>(&mut de), &mut cx, &Path::root());
    match parsed.and_then(|value| de.end().map(|()| value)) {
        Ok(Some(value)) if cx.is_clean() => Ok(value),
        Ok(_) => Err(refused(cx)),
        Err(_) => parse_str_explained(raw),
    }
}

/// Reads text the reader stopped at twice with `serde_json`, whose messages are reported.
#[cold]
#[inline(never)]
fn parse_str_explained<T: Argument>(raw: &str) -> Result<T, ArgumentErrors> {
    let mut de = serde_json::Deserializer::from_str(raw);
    let mut cx = Cx::default();
    let parsed = T::parse::<_, Unconstrained>(Untyped::<_, false>(&mut de), &mut cx, &Path::root());
    let parsed = parsed.and_then(|value| de.end().map(|()| value));
    finish(parsed, cx)
}

/// Checks an already-parsed JSON value as the arguments of `T`.
pub(crate) fn parse_value<T: Argument>(value: &serde_json::Value) -> Result<T, ArgumentErrors> {
    let mut cx = Cx::default();
    let parsed = T::parse::<_, Unconstrained>(Untyped::<_, false>(value), &mut cx, &Path::root());
    finish(parsed, cx)
}

#[inline]
fn finish<T>(parsed: Result<Option<T>, serde_json::Error>, cx: Cx) -> Result<T, ArgumentErrors> {
    match parsed {
        Ok(Some(value)) if cx.is_clean() => Ok(value),
        Ok(_) => Err(refused(cx)),
        Err(error) => Err(not_json(&error)),
    }
}

/// The violations recorded in `cx`, for a refused value.
#[cold]
#[inline(never)]
fn refused(cx: Cx) -> ArgumentErrors {
    cx.into_errors().unwrap_or_else(|| {
        // A value was refused without a recorded reason: refuse, and say so.
        ArgumentErrors::new(vec![Violation::new(
            String::new(),
            Keyword::Type,
            "arguments were refused without a recorded reason",
        )])
    })
}

/// The one violation for every call to a tool whose contract has a mistake.
#[cold]
#[inline(never)]
pub(crate) fn unsound_contract(problem: &str) -> ArgumentErrors {
    ArgumentErrors::new(vec![Violation::new(
        String::new(),
        Keyword::Other("default"),
        format!("the tool cannot accept calls: {problem}"),
    )])
}

/// The one violation for text that is not JSON (or nests too deep).
#[cold]
#[inline(never)]
fn not_json(error: &serde_json::Error) -> ArgumentErrors {
    ArgumentErrors::new(vec![Violation::new(
        String::new(),
        Keyword::Syntax,
        format!("invalid JSON: {error}"),
    )])
}

#[cfg(test)]
mod tests {
    use super::push_json_string;

    fn quoted(text: &str, limit: usize) -> String {
        let mut out = String::new();
        push_json_string(&mut out, text, limit);
        out
    }

    #[test]
    fn quotes_as_json_escapes_and_cuts_after_the_limit_in_characters() {
        assert_eq!(quoted("plain", 60), r#""plain""#);
        assert_eq!(
            quoted("a\"b\\c\nd\re\tf\u{1}g", 60),
            r#""a\"b\\c\nd\re\tf\u0001g""#
        );
        assert_eq!(quoted("é€😀x", 3), "\"é€😀\"…");
        assert_eq!(quoted("abc", 3), r#""abc""#);
        assert_eq!(quoted("", 0), r#""""#);
        assert_eq!(quoted("ab", 0), "\"\"…");
        // Every escape is what serde_json writes for the same text.
        let text = "x\"\\\n\r\t\u{0}\u{1f} é";
        assert_eq!(
            quoted(text, usize::MAX),
            serde_json::to_string(text).unwrap()
        );
    }
}
