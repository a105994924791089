//! Argument errors: every violation found in one pass, as data and as lines a model can act on.

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use crate::contract::Format;
use crate::contract::argument::push_num;
use crate::contract::constraints::Num;
use crate::contract::path::Path;
use crate::contract::validate::{push_json_string, push_quoted_list};

/// What a [`Violation`] broke: a JSON Schema keyword of the advertised schema, or a rule of
/// strict JSON that holds before the schema is consulted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Keyword {
    /// The text is not one JSON value: a syntax error, trailing characters, a number out of
    /// range of a double, a lone surrogate escape, or nesting deeper than the limit.
    Syntax,
    /// An object names the same key twice.
    DuplicateKey,
    /// `type`: the value has the wrong JSON type (or a fraction where an integer is expected).
    Type,
    /// `enum`: the value is not one of the allowed values.
    Enum,
    /// `minimum`.
    Minimum,
    /// `maximum`.
    Maximum,
    /// `exclusiveMinimum`.
    ExclusiveMinimum,
    /// `exclusiveMaximum`.
    ExclusiveMaximum,
    /// `minLength`, counted in Unicode code points.
    MinLength,
    /// `maxLength`, counted in Unicode code points.
    MaxLength,
    /// `pattern`.
    Pattern,
    /// `minItems`.
    MinItems,
    /// `maxItems`.
    MaxItems,
    /// `required`: a field that must be present is missing.
    Required,
    /// `additionalProperties`: a field the schema does not name.
    AdditionalProperties,
    /// Another JSON Schema keyword, as a validator names it: `format`, `not` (a zero for a
    /// signed `NonZero` integer), `uniqueItems` (a repeat in a set), `propertyNames` (a map key
    /// of the wrong form), `anyOf` (an `IpAddr` of neither form), `falseSchema` (an item past
    /// the end of a tuple or array), and any keyword of a dynamic tool's schema (`const`,
    /// `oneOf`, …).
    Other(&'static str),
}

impl Keyword {
    /// The keyword as JSON Schema spells it (`"minLength"`); `"syntax"` and `"duplicateKey"`
    /// for the two rules of strict JSON.
    pub const fn as_str(self) -> &'static str {
        match self {
            Keyword::Syntax => "syntax",
            Keyword::DuplicateKey => "duplicateKey",
            Keyword::Type => "type",
            Keyword::Enum => "enum",
            Keyword::Minimum => "minimum",
            Keyword::Maximum => "maximum",
            Keyword::ExclusiveMinimum => "exclusiveMinimum",
            Keyword::ExclusiveMaximum => "exclusiveMaximum",
            Keyword::MinLength => "minLength",
            Keyword::MaxLength => "maxLength",
            Keyword::Pattern => "pattern",
            Keyword::MinItems => "minItems",
            Keyword::MaxItems => "maxItems",
            Keyword::Required => "required",
            Keyword::AdditionalProperties => "additionalProperties",
            Keyword::Other(keyword) => keyword,
        }
    }

    /// The keyword a JSON Schema validator names, e.g. `"minLength"`; keywords without a
    /// variant of their own become [`Keyword::Other`].
    pub fn from_schema_keyword(keyword: &str) -> Keyword {
        const OTHERS: &[&str] = &[
            "$ref",
            "$dynamicRef",
            "additionalItems",
            "allOf",
            "anyOf",
            "const",
            "contains",
            "contentEncoding",
            "contentMediaType",
            "contentSchema",
            "dependencies",
            "dependentRequired",
            "dependentSchemas",
            "else",
            "falseSchema",
            "format",
            "if",
            "items",
            "maxContains",
            "maxProperties",
            "minContains",
            "minProperties",
            "multipleOf",
            "not",
            "oneOf",
            "patternProperties",
            "prefixItems",
            "propertyNames",
            "then",
            "unevaluatedItems",
            "unevaluatedProperties",
            "uniqueItems",
        ];
        match keyword {
            "type" => Keyword::Type,
            "enum" => Keyword::Enum,
            "minimum" => Keyword::Minimum,
            "maximum" => Keyword::Maximum,
            "exclusiveMinimum" => Keyword::ExclusiveMinimum,
            "exclusiveMaximum" => Keyword::ExclusiveMaximum,
            "minLength" => Keyword::MinLength,
            "maxLength" => Keyword::MaxLength,
            "pattern" => Keyword::Pattern,
            "minItems" => Keyword::MinItems,
            "maxItems" => Keyword::MaxItems,
            "required" => Keyword::Required,
            "additionalProperties" => Keyword::AdditionalProperties,
            other => Keyword::Other(
                OTHERS
                    .iter()
                    .find(|known| **known == other)
                    .copied()
                    .unwrap_or("unknown"),
            ),
        }
    }
}

impl fmt::Display for Keyword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One broken rule, located by an RFC 6901 JSON Pointer into the arguments.
///
/// The commonest messages (a wrong type, a value outside an `enum`, a bound or a format
/// broken) are kept as the facts they state and written out the first time they are read, so
/// refusing arguments costs no formatting until someone looks at the reasons.
#[derive(Clone)]
pub struct Violation {
    /// The instance location, then the field named (if any), then the text of the string at
    /// fault that the message quotes (if any): one buffer.
    text: String,
    /// Where the instance location ends in `text`.
    location_end: usize,
    /// Where the field named ends in `text`, if one is.
    property_end: Option<usize>,
    keyword: Keyword,
    message: Message,
}

/// What a violation says, written or still as the facts it states.
#[derive(Clone)]
enum Message {
    Static(&'static str),
    Text(String),
    /// Written from the reason on first read.
    Lazy(Reason, OnceLock<Box<str>>),
}

/// The facts behind a message that is written only when read.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Reason {
    /// `expected {expected}, got {subject}`.
    Type {
        expected: &'static str,
        got: Subject,
    },
    /// `must be one of {allowed}[, null]; got {subject, bare}`.
    Enum {
        allowed: &'static [&'static str],
        nullable: bool,
        got: Subject,
    },
    /// `must be {relation} {limit}; got {got}`.
    Bound {
        relation: &'static str,
        limit: Num,
        got: Num,
    },
    /// `must be {looks like} (format "{name}"); got {the string}`.
    Format { format: Format, got: Subject },
}

/// The value at fault as a message describes it; a string's text is held by the violation.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Subject {
    Null,
    Bool(bool),
    Number(Num),
    /// A string, its text cut after the characters a message quotes (`cut` when it was).
    Str {
        cut: bool,
    },
    Array,
    Object,
}

impl Violation {
    pub(crate) fn new(
        location: String,
        keyword: Keyword,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        let location_end = location.len();
        Violation {
            text: location,
            location_end,
            property_end: None,
            keyword,
            message: Message::from(message.into()),
        }
    }

    pub(crate) fn on_property(
        location: String,
        property: &str,
        keyword: Keyword,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        let mut text = location;
        let location_end = text.len();
        text.push_str(property);
        Violation {
            property_end: Some(text.len()),
            text,
            location_end,
            keyword,
            message: Message::from(message.into()),
        }
    }

    /// A violation at `at` (on its field `property`, if any) whose message is written from
    /// `reason` when first read; `quoted` is the string the message quotes, if any, already
    /// cut to what it shows.
    pub(crate) fn found(
        at: &Path<'_>,
        property: Option<&str>,
        keyword: Keyword,
        reason: Reason,
        quoted: &str,
    ) -> Self {
        let extra = property.map_or(0, str::len) + quoted.len();
        let mut text = String::with_capacity(32 + extra);
        at.write_pointer(&mut text);
        let location_end = text.len();
        let property_end = property.map(|name| {
            text.push_str(name);
            text.len()
        });
        text.push_str(quoted);
        Violation {
            text,
            location_end,
            property_end,
            keyword,
            message: Message::Lazy(reason, OnceLock::new()),
        }
    }

    /// Where the value at fault is, as a JSON Pointer (`""` is the whole argument object).
    ///
    /// For a missing, unknown or repeated field this points at the field itself
    /// (`/currency`), which is where a model has to make its fix.
    pub fn pointer(&self) -> Cow<'_, str> {
        match self.property() {
            None => Cow::Borrowed(self.instance_location()),
            Some(name) => {
                let mut pointer = self.instance_location().to_owned();
                crate::contract::path::push_escaped(&mut pointer, name);
                Cow::Owned(pointer)
            }
        }
    }

    /// The JSON Schema instance location: the same as [`pointer`](Self::pointer) except for
    /// `required`, `additionalProperties` and `duplicateKey`, where it is the enclosing object,
    /// as standard validators report it.
    pub fn instance_location(&self) -> &str {
        &self.text[..self.location_end]
    }

    /// The field named by a `required`, `additionalProperties` or `duplicateKey` violation.
    pub fn property(&self) -> Option<&str> {
        self.property_end
            .map(|end| &self.text[self.location_end..end])
    }

    /// The text of the string at fault, as the message quotes it.
    fn quoted(&self) -> &str {
        &self.text[self.property_end.unwrap_or(self.location_end)..]
    }

    /// Puts `message` in place of the message, handing back the old one.
    pub(crate) fn replace_message(
        &mut self,
        message: impl Into<Cow<'static, str>>,
    ) -> Cow<'static, str> {
        let old = std::mem::replace(&mut self.message, Message::from(message.into()));
        match old {
            Message::Static(text) => Cow::Borrowed(text),
            Message::Text(text) => Cow::Owned(text),
            Message::Lazy(reason, written) => Cow::Owned(match written.into_inner() {
                Some(text) => text.into_string(),
                None => reason.write(self.quoted()),
            }),
        }
    }

    /// The rule that was broken.
    pub fn keyword(&self) -> Keyword {
        self.keyword
    }

    /// A short sentence saying what is wrong and what is expected, without the pointer.
    pub fn message(&self) -> &str {
        match &self.message {
            Message::Static(text) => text,
            Message::Text(text) => text.as_str(),
            Message::Lazy(reason, written) => {
                written.get_or_init(|| reason.write(self.quoted()).into_boxed_str())
            }
        }
    }

    /// The bytes of text this violation holds, or will once its message is written: at least
    /// the length of the message.
    fn held_bytes(&self) -> usize {
        let message = match &self.message {
            Message::Static(text) => text.len(),
            Message::Text(text) => text.len(),
            Message::Lazy(reason, _) => reason.max_len(self.quoted().len()),
        };
        self.text.len().saturating_add(message)
    }
}

impl From<Cow<'static, str>> for Message {
    fn from(message: Cow<'static, str>) -> Self {
        match message {
            Cow::Borrowed(text) => Message::Static(text),
            Cow::Owned(text) => Message::Text(text),
        }
    }
}

impl Reason {
    /// The message, `quoted` being the text of the string at fault.
    fn write(self, quoted: &str) -> String {
        let mut out = String::with_capacity(self.max_len(quoted.len()).min(256));
        match self {
            Reason::Type { expected, got } => {
                out.push_str("expected ");
                out.push_str(expected);
                out.push_str(", got ");
                got.write_to(&mut out, quoted, false);
            }
            Reason::Enum {
                allowed,
                nullable,
                got,
            } => {
                out.push_str("must be one of ");
                push_quoted_list(&mut out, allowed.iter().copied());
                if nullable {
                    out.push_str(", null");
                }
                out.push_str("; got ");
                got.write_to(&mut out, quoted, true);
            }
            Reason::Bound {
                relation,
                limit,
                got,
            } => {
                out.push_str("must be ");
                out.push_str(relation);
                out.push(' ');
                push_num(&mut out, limit);
                out.push_str("; got ");
                push_num(&mut out, got);
            }
            Reason::Format { format, got } => {
                out.push_str("must be ");
                out.push_str(format.looks_like());
                out.push_str(" (format \"");
                out.push_str(format.name());
                out.push_str("\"); got ");
                got.write_to(&mut out, quoted, true);
            }
        }
        out
    }

    /// At least the length of the message, `quoted` bytes long; counted without writing it.
    fn max_len(self, quoted: usize) -> usize {
        // A quoted character takes at most 6 bytes (`\u001f`) for each byte of text.
        let subject = |got: Subject| match got {
            Subject::Str { .. } => 16 + quoted.saturating_mul(6),
            _ => 32,
        };
        match self {
            Reason::Type { expected, got } => 16 + expected.len() + subject(got),
            Reason::Enum { allowed, got, .. } => {
                let listed: usize = allowed
                    .iter()
                    .map(|name| name.len().saturating_mul(6) + 4)
                    .sum();
                32 + listed + subject(got)
            }
            Reason::Bound { relation, .. } => 80 + relation.len(),
            Reason::Format { format, got } => {
                32 + format.looks_like().len() + format.name().len() + subject(got)
            }
        }
    }
}

impl Subject {
    /// Appends the description; `bare` leaves out the word `string` before a quoted string,
    /// whose text is `quoted`.
    fn write_to(self, out: &mut String, quoted: &str, bare: bool) {
        match self {
            Subject::Null => out.push_str("null"),
            Subject::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            Subject::Number(n) => push_num(out, n),
            Subject::Str { cut } => {
                if !bare {
                    out.push_str("string ");
                }
                push_json_string(out, quoted, usize::MAX);
                if cut {
                    out.push('…');
                }
            }
            Subject::Array => out.push_str("array"),
            Subject::Object => out.push_str("object"),
        }
    }
}

impl fmt::Debug for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Violation")
            .field("location", &self.instance_location())
            .field("property", &self.property())
            .field("keyword", &self.keyword)
            .field("message", &self.message())
            .finish()
    }
}

impl PartialEq for Violation {
    fn eq(&self, other: &Self) -> bool {
        self.keyword == other.keyword
            && self.instance_location() == other.instance_location()
            && self.property() == other.property()
            && self.message() == other.message()
    }
}

impl Eq for Violation {}

impl fmt::Display for Violation {
    /// Renders `/amount: expected number, got string "120.5"`; the whole arguments object is
    /// rendered as `(root)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = self.pointer();
        if pointer.is_empty() {
            f.write_str("(root)")?;
        } else {
            f.write_str(&pointer)?;
        }
        f.write_str(": ")?;
        f.write_str(self.message())
    }
}

/// The violations found in a tool call's arguments; never empty.
///
/// Every violation is counted, but arguments can break rules many times over (a megabyte of
/// wrong array items is half a million violations), so only the first ones are held in full:
/// at most [`MAX_KEPT`](Self::MAX_KEPT) of them, and no more once their pointers and messages
/// take [`MAX_KEPT_BYTES`](Self::MAX_KEPT_BYTES) (the first violation is always held, however
/// long). Violations found beyond that are counted by keyword, and not held:
/// [`total`](Self::total) and [`counts`](Self::counts) cover every violation,
/// [`violations`](Self::violations) the ones held.
///
/// `Display` renders one line per violation, in document order with an object's missing
/// fields after its other violations:
///
/// ```text
/// - /amount: expected number, got string "120.5"
/// - /currency: must be one of "USD", "EUR", "GBP"; got "dollars"
/// ```
///
/// It renders at most [`MAX_SHOWN`](Self::MAX_SHOWN) such lines, then one line counting the
/// rest by keyword, `- and 519981 more: 519977 type, 4 required`. A pointer longer than 100
/// bytes and a message longer than 500 bytes are cut, marked `…`. So the rendering stays under
/// 14 KB whatever the arguments; it is the public message of an `invalid_arguments` failure
/// and the body of the repair loop's feedback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentErrors {
    violations: Vec<Violation>,
    /// Violations found but not held, by keyword, in the order each keyword was first found.
    omitted: Vec<(Keyword, usize)>,
}

impl ArgumentErrors {
    /// The most violations held in full; more are only counted.
    pub const MAX_KEPT: usize = 1_000;

    /// Once the pointers and messages of the violations held take this many bytes, further
    /// violations are only counted.
    pub const MAX_KEPT_BYTES: usize = 64 * 1024;

    /// The most violations `Display` renders as lines; the rest are counted on one more line.
    pub const MAX_SHOWN: usize = 20;

    pub(crate) fn new(violations: Vec<Violation>) -> Self {
        debug_assert!(!violations.is_empty());
        let mut collector = Collector::default();
        for violation in violations {
            collector.push(violation);
        }
        ArgumentErrors {
            violations: collector.kept,
            omitted: collector.omitted,
        }
    }

    /// The violations held, in the order they were found: every violation, unless there were
    /// more than the limits described [above](Self) allow.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// How many violations are held (at least one); [`total`](Self::total) counts them all.
    pub fn len(&self) -> usize {
        self.violations.len()
    }

    /// Always `false`: an `ArgumentErrors` holds at least one violation.
    pub fn is_empty(&self) -> bool {
        self.violations.is_empty()
    }

    /// How many violations were found, those not held included.
    pub fn total(&self) -> usize {
        self.omitted
            .iter()
            .fold(self.violations.len(), |total, (_, n)| {
                total.saturating_add(*n)
            })
    }

    /// Every violation found, those not held included, counted by keyword, in the order each
    /// keyword was first found.
    ///
    /// ```
    /// use tool_core::{Tool, contract::Keyword};
    /// # /// Tags things.
    /// # #[derive(Tool, Debug)]
    /// # struct Tag { tags: Vec<String> }
    ///
    /// let items = vec!["0"; 5_000].join(",");
    /// let errors = Tag::parse_arguments(&format!(r#"{{"tags":[{items}],"x":1}}"#)).unwrap_err();
    /// assert_eq!(errors.total(), 5_001);
    /// assert_eq!(errors.len(), 1_000);
    /// assert_eq!(errors.counts(), [(Keyword::Type, 5_000), (Keyword::AdditionalProperties, 1)]);
    /// assert!(errors.to_string().ends_with("\n- and 4981 more: 4980 type, 1 additionalProperties"));
    /// ```
    pub fn counts(&self) -> Vec<(Keyword, usize)> {
        let mut counts = Vec::new();
        for violation in &self.violations {
            add_count(&mut counts, violation.keyword, 1);
        }
        for &(keyword, n) in &self.omitted {
            add_count(&mut counts, keyword, n);
        }
        counts
    }

    /// Iterates over the violations.
    pub fn iter(&self) -> std::slice::Iter<'_, Violation> {
        self.violations.iter()
    }

    /// Whether the text was not valid JSON at all (so no field-level check ran).
    pub fn is_syntax(&self) -> bool {
        self.violations
            .iter()
            .any(|violation| violation.keyword == Keyword::Syntax)
    }

    /// Takes the violations held out.
    pub fn into_violations(self) -> Vec<Violation> {
        self.violations
    }
}

/// The longest pointer `Display` renders in full, in bytes.
const SHOWN_POINTER_BYTES: usize = 100;

/// The longest message `Display` renders in full, in bytes.
const SHOWN_MESSAGE_BYTES: usize = 500;

impl fmt::Display for ArgumentErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = self.violations.len().min(Self::MAX_SHOWN);
        for (i, violation) in self.violations[..shown].iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            f.write_str("- ")?;
            let pointer = violation.pointer();
            if pointer.is_empty() {
                f.write_str("(root)")?;
            } else {
                write_cut(f, &pointer, SHOWN_POINTER_BYTES)?;
            }
            f.write_str(": ")?;
            write_cut(f, violation.message(), SHOWN_MESSAGE_BYTES)?;
        }
        let mut rest = Vec::new();
        for violation in &self.violations[shown..] {
            add_count(&mut rest, violation.keyword, 1);
        }
        for &(keyword, n) in &self.omitted {
            add_count(&mut rest, keyword, n);
        }
        if !rest.is_empty() {
            let more = rest
                .iter()
                .fold(0usize, |sum, (_, n)| sum.saturating_add(*n));
            write!(f, "\n- and {more} more: ")?;
            for (i, (keyword, n)) in rest.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{n} {keyword}")?;
            }
        }
        Ok(())
    }
}

/// Writes `text`, cut to at most `limit` bytes on a character boundary and marked `…` if cut.
fn write_cut(f: &mut fmt::Formatter<'_>, text: &str, limit: usize) -> fmt::Result {
    if text.len() <= limit {
        return f.write_str(text);
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    f.write_str(&text[..end])?;
    f.write_str("…")
}

/// Adds `n` to the count of `keyword`, or appends it.
fn add_count(counts: &mut Vec<(Keyword, usize)>, keyword: Keyword, n: usize) {
    match counts.iter_mut().find(|(k, _)| *k == keyword) {
        Some((_, count)) => *count = count.saturating_add(n),
        None => counts.push((keyword, n)),
    }
}

/// Gathers the violations of one check: holds them while within the limits of
/// [`ArgumentErrors`], and only counts the rest.
#[derive(Debug, Default)]
pub(crate) struct Collector {
    kept: Vec<Violation>,
    kept_bytes: usize,
    omitted: Vec<(Keyword, usize)>,
}

impl Collector {
    /// Whether the next violation will be held. When not, the caller should [`omit`](Self::omit)
    /// it without building it: its pointer may be as long as the input.
    #[inline]
    pub(crate) fn has_room(&self) -> bool {
        self.kept.len() < ArgumentErrors::MAX_KEPT
            && self.kept_bytes < ArgumentErrors::MAX_KEPT_BYTES
    }

    /// Holds `violation`, or counts it when there is no room.
    pub(crate) fn push(&mut self, violation: Violation) {
        if self.has_room() {
            self.kept_bytes = self.kept_bytes.saturating_add(violation.held_bytes());
            self.kept.push(violation);
        } else {
            self.omit(violation.keyword);
        }
    }

    /// Counts a violation that is not held.
    pub(crate) fn omit(&mut self, keyword: Keyword) {
        add_count(&mut self.omitted, keyword, 1);
    }

    /// The violations held so far.
    pub(crate) fn kept(&self) -> &[Violation] {
        &self.kept
    }

    /// Puts `message` in place of the message of the held violation at `index`, keeping the
    /// count of bytes held exact; hands back the old message.
    pub(crate) fn replace_message(
        &mut self,
        index: usize,
        message: impl Into<Cow<'static, str>>,
    ) -> Cow<'static, str> {
        let violation = &mut self.kept[index];
        let before = violation.held_bytes();
        let old = violation.replace_message(message);
        self.kept_bytes = self.kept_bytes.saturating_sub(before) + violation.held_bytes();
        old
    }

    /// Whether no violation was found.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.kept.is_empty() && self.omitted.is_empty()
    }

    /// The violations found, if any.
    pub(crate) fn finish(self) -> Option<ArgumentErrors> {
        // The first violation is always held, so counts alone never make an error.
        (!self.kept.is_empty()).then_some(ArgumentErrors {
            violations: self.kept,
            omitted: self.omitted,
        })
    }
}

impl std::error::Error for ArgumentErrors {}

impl<'a> IntoIterator for &'a ArgumentErrors {
    type Item = &'a Violation;
    type IntoIter = std::slice::Iter<'a, Violation>;

    fn into_iter(self) -> Self::IntoIter {
        self.violations.iter()
    }
}

impl IntoIterator for ArgumentErrors {
    type Item = Violation;
    type IntoIter = std::vec::IntoIter<Violation>;

    fn into_iter(self) -> Self::IntoIter {
        self.violations.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::{Reason, Subject, Violation};
    use crate::contract::Keyword;
    use crate::contract::constraints::Num;
    use crate::contract::path::Path;
    use crate::contract::validate::Got;

    fn type_mismatch(at: &Path<'_>, got: Got<'_>) -> Violation {
        let (got, quoted) = got.subject();
        let reason = Reason::Type {
            expected: "integer",
            got,
        };
        Violation::found(at, None, Keyword::Type, reason, quoted)
    }

    #[test]
    fn a_message_written_when_read_says_what_it_would_have_said_at_once() {
        let root = Path::root();
        let at = root.key("a~b");
        let long = "\"é\n".repeat(40);
        let violation = type_mismatch(&at, Got::Str(&long));
        assert_eq!(violation.pointer(), "/a~0b");
        assert_eq!(violation.property(), None);
        let mut eager = String::from("expected integer, got ");
        Got::Str(&long).write_to(&mut eager, false);
        assert_eq!(violation.message(), eager);
        assert!(
            violation.message().ends_with("\"…"),
            "{}",
            violation.message()
        );
        let number = type_mismatch(&at, Got::Number(Num::F(1.5)));
        assert_eq!(number.message(), "expected integer, got 1.5");
        let bound = Violation::found(
            &at,
            None,
            Keyword::Maximum,
            Reason::Bound {
                relation: "<=",
                limit: Num::U(1440),
                got: Num::I(-3),
            },
            "",
        );
        assert_eq!(bound.message(), "must be <= 1440; got -3");
        let listed = Violation::found(
            &at,
            Some("x"),
            Keyword::Enum,
            Reason::Enum {
                allowed: &["USD", "EUR"],
                nullable: true,
                got: Subject::Bool(false),
            },
            "",
        );
        assert_eq!(
            listed.message(),
            r#"must be one of "USD", "EUR", null; got false"#
        );
        assert_eq!(listed.pointer(), "/a~0b/x");
        assert_eq!(listed.instance_location(), "/a~0b");
        assert_eq!(listed.property(), Some("x"));
    }

    #[test]
    fn equal_violations_compare_equal_whether_or_not_their_messages_were_read() {
        let root = Path::root();
        let at = root.key("limit");
        let first = type_mismatch(&at, Got::Str("10"));
        let second = first.clone();
        assert_eq!(first.message(), r#"expected integer, got string "10""#);
        assert_eq!(first, second);
        assert_eq!(second, first);
        assert_ne!(first, type_mismatch(&at, Got::Str("11")));
        assert_ne!(first, type_mismatch(&root, Got::Str("10")));
        let debug = format!("{second:?}");
        assert!(
            debug.contains(r#"expected integer, got string \"10\""#),
            "{debug}"
        );
    }

    #[test]
    fn the_bytes_counted_for_a_message_not_yet_written_are_at_least_its_length() {
        let root = Path::root();
        let texts = [
            String::new(),
            "\u{1}".repeat(100),
            "\"\\".repeat(100),
            "😀".repeat(70),
        ];
        for text in &texts {
            let violation = type_mismatch(&root, Got::Str(text));
            let counted = violation.held_bytes();
            let written = violation.message().len() + violation.instance_location().len();
            assert!(counted >= written, "{counted} < {written} for {text:?}");
        }
        let violation = type_mismatch(&root, Got::Number(Num::F(-1.5e-300)));
        assert!(violation.held_bytes() >= violation.message().len());
    }
}
