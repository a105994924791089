//! Argument errors: every violation found in one pass, as data and as lines a model can act on.

use std::borrow::Cow;
use std::fmt;

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
    /// Another JSON Schema keyword (`const`, `format`, `oneOf`, …), reported when a dynamic
    /// tool's schema is checked.
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    location: String,
    property: Option<Box<str>>,
    keyword: Keyword,
    message: Cow<'static, str>,
}

impl Violation {
    pub(crate) fn new(
        location: String,
        keyword: Keyword,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Violation {
            location,
            property: None,
            keyword,
            message: message.into(),
        }
    }

    pub(crate) fn on_property(
        location: String,
        property: &str,
        keyword: Keyword,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Violation {
            location,
            property: Some(property.into()),
            keyword,
            message: message.into(),
        }
    }

    /// Where the value at fault is, as a JSON Pointer (`""` is the whole argument object).
    ///
    /// For a missing, unknown or repeated field this points at the field itself
    /// (`/currency`), which is where a model has to make its fix.
    pub fn pointer(&self) -> Cow<'_, str> {
        match &self.property {
            None => Cow::Borrowed(&self.location),
            Some(name) => {
                let mut pointer = self.location.clone();
                crate::path::push_escaped(&mut pointer, name);
                Cow::Owned(pointer)
            }
        }
    }

    /// The JSON Schema instance location: the same as [`pointer`](Self::pointer) except for
    /// `required`, `additionalProperties` and `duplicateKey`, where it is the enclosing object,
    /// as standard validators report it.
    pub fn instance_location(&self) -> &str {
        &self.location
    }

    /// The field named by a `required`, `additionalProperties` or `duplicateKey` violation.
    pub fn property(&self) -> Option<&str> {
        self.property.as_deref()
    }

    /// The rule that was broken.
    pub fn keyword(&self) -> Keyword {
        self.keyword
    }

    /// A short sentence saying what is wrong and what is expected, without the pointer.
    pub fn message(&self) -> &str {
        &self.message
    }
}

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
        write!(f, ": {}", self.message)
    }
}

/// Every violation found in a tool call's arguments; never empty.
///
/// `Display` renders one line per violation, in document order with missing fields last:
///
/// ```text
/// - /amount: expected number, got string "120.5"
/// - /currency: must be one of "USD", "EUR", "GBP"; got "dollars"
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentErrors {
    violations: Vec<Violation>,
}

impl ArgumentErrors {
    pub(crate) fn new(violations: Vec<Violation>) -> Self {
        debug_assert!(!violations.is_empty());
        ArgumentErrors { violations }
    }

    /// The violations, in the order they were found.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// How many violations there are (at least one).
    pub fn len(&self) -> usize {
        self.violations.len()
    }

    /// Always `false`: an `ArgumentErrors` holds at least one violation.
    pub fn is_empty(&self) -> bool {
        self.violations.is_empty()
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

    /// Takes the violations out.
    pub fn into_violations(self) -> Vec<Violation> {
        self.violations
    }
}

impl fmt::Display for ArgumentErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, violation) in self.violations.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "- {violation}")?;
        }
        Ok(())
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
