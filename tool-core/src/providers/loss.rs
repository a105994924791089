//! What a lowering gave up ([`Loss`]) and why one was refused ([`LowerError`]).
//!
//! A loss never weakens the contract: the runtime validates every call against the canonical
//! schema, whatever the provider was shown. A loss says what the provider no longer enforces
//! or the model no longer sees, so an operator can decide whether the lowering is good enough.

use std::borrow::Cow;
use std::fmt;

/// How a lowering departs from the canonical schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum LossKind {
    /// An assertion was removed or weakened: the provider may send values the contract
    /// refuses. The runtime still refuses them (`invalid_arguments`).
    Unenforced,
    /// The provider schema accepts fewer values than the contract (an open object closed,
    /// an unconstrained value limited to scalars): some valid calls cannot be proposed.
    Narrowed,
    /// An annotation (`default`, `examples`, …) the model will no longer see.
    Hidden,
}

impl LossKind {
    /// `"unenforced"`, `"narrowed"` or `"hidden"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            LossKind::Unenforced => "unenforced",
            LossKind::Narrowed => "narrowed",
            LossKind::Hidden => "hidden",
        }
    }
}

impl fmt::Display for LossKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing a provider lowering lost, located in the canonical schema.
///
/// `Display` reads like `maxLength at /customerId is not enforced by OpenAI strict`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Loss {
    pub(crate) pointer: String,
    pub(crate) keyword: Cow<'static, str>,
    pub(crate) kind: LossKind,
    pub(crate) dialect: &'static str,
    pub(crate) note: Option<&'static str>,
}

impl Loss {
    /// JSON Pointer to the subschema, in the canonical schema, that holds the keyword
    /// (`/properties/customerId`; `""` for the root).
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// The JSON Schema keyword lost (`maxLength`).
    pub fn keyword(&self) -> &str {
        &self.keyword
    }

    /// How it was lost.
    pub fn kind(&self) -> LossKind {
        self.kind
    }

    /// The provider dialect that lost it, e.g. `"OpenAI strict"`.
    pub fn dialect(&self) -> &'static str {
        self.dialect
    }

    /// A short explanation, when the keyword alone does not say enough.
    pub fn note(&self) -> Option<&'static str> {
        self.note
    }

    /// Where the keyword applies in the arguments, for people: `/passengers/*/age`, or
    /// `(root)`. Schema-only steps (`properties`, `anyOf/0`) are left out.
    pub fn location(&self) -> String {
        let mut out = String::new();
        let mut tokens = self.pointer.split('/').skip(1).map(unescape);
        while let Some(token) = tokens.next() {
            match token.as_ref() {
                "properties" | "patternProperties" | "$defs" | "definitions" => {
                    if let Some(name) = tokens.next() {
                        out.push('/');
                        out.push_str(&name);
                    }
                }
                "items" | "additionalProperties" | "additionalItems" => out.push_str("/*"),
                "prefixItems" => {
                    if let Some(index) = tokens.next() {
                        out.push('/');
                        out.push_str(&index);
                    }
                }
                "anyOf" | "oneOf" | "allOf" => {
                    tokens.next();
                }
                _ => {}
            }
        }
        if out.is_empty() {
            out.push_str("(root)");
        }
        out
    }
}

fn unescape(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(token)
    }
}

impl fmt::Display for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.location();
        match self.kind {
            LossKind::Unenforced => write!(
                f,
                "{} at {at} is not enforced by {}",
                self.keyword, self.dialect
            )?,
            LossKind::Narrowed => write!(
                f,
                "{} at {at} is narrowed by {}",
                self.keyword, self.dialect
            )?,
            LossKind::Hidden => write!(
                f,
                "{} at {at} is not shown to {}",
                self.keyword, self.dialect
            )?,
        }
        if let Some(note) = self.note {
            write!(f, " ({note})")?;
        }
        Ok(())
    }
}

/// A schema that cannot be lowered to a provider's dialect at all.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LowerError {
    /// The root does not describe an object; every provider sends arguments as an object.
    RootNotObject {
        /// The root's `type`.
        found: String,
    },
    /// A `$ref` cycle, which the dialect cannot express.
    Recursive {
        /// The subschema holding the `$ref`.
        pointer: String,
        /// The `$ref` value.
        reference: String,
        /// The dialect.
        dialect: &'static str,
    },
    /// A `$ref` whose target is not in the schema.
    UnresolvedRef {
        /// The subschema holding the `$ref`.
        pointer: String,
        /// The `$ref` value.
        reference: String,
    },
    /// A `$ref` to another document (nothing is fetched) or a dynamic reference.
    NonLocalRef {
        /// The subschema holding the `$ref`.
        pointer: String,
        /// The `$ref` value.
        reference: String,
    },
    /// The schema is not valid JSON Schema where lowering has to read it.
    InvalidSchema {
        /// Where.
        pointer: String,
        /// What is wrong.
        reason: Cow<'static, str>,
    },
    /// A subschema the dialect cannot express at all (a `false` schema, an `allOf` whose
    /// members cannot be merged).
    Inexpressible {
        /// Where.
        pointer: String,
        /// What.
        what: &'static str,
        /// The dialect.
        dialect: &'static str,
    },
    /// A property name Gemini's `parameters` form refuses (`^[A-Za-z_][A-Za-z0-9_]{0,63}$`).
    PropertyName {
        /// The object holding the property.
        pointer: String,
        /// The name.
        name: String,
    },
    /// Inlining `$ref`s made the schema larger than the lowering budget.
    TooLarge {
        /// The budget, in subschemas.
        limit: usize,
    },
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |pointer: &str| {
            if pointer.is_empty() {
                "(root)".to_owned()
            } else {
                pointer.to_owned()
            }
        };
        match self {
            LowerError::RootNotObject { found } => {
                write!(
                    f,
                    "the root schema must describe an object, found type {found}"
                )
            }
            LowerError::Recursive {
                pointer,
                reference,
                dialect,
            } => write!(
                f,
                "recursive $ref {reference:?} at {} cannot be expressed in {dialect}",
                at(pointer)
            ),
            LowerError::UnresolvedRef { pointer, reference } => {
                write!(
                    f,
                    "$ref {reference:?} at {} does not resolve in the schema",
                    at(pointer)
                )
            }
            LowerError::NonLocalRef { pointer, reference } => write!(
                f,
                "$ref {reference:?} at {} points outside the schema; nothing is fetched",
                at(pointer)
            ),
            LowerError::InvalidSchema { pointer, reason } => {
                write!(f, "invalid schema at {}: {reason}", at(pointer))
            }
            LowerError::Inexpressible {
                pointer,
                what,
                dialect,
            } => {
                write!(
                    f,
                    "{what} at {} cannot be expressed in {dialect}",
                    at(pointer)
                )
            }
            LowerError::PropertyName { pointer, name } => write!(
                f,
                "property name {name:?} at {} is not allowed in Gemini parameters (use parametersJsonSchema)",
                at(pointer)
            ),
            LowerError::TooLarge { limit } => write!(
                f,
                "the schema exceeds {limit} subschemas once its $refs are inlined"
            ),
        }
    }
}

impl std::error::Error for LowerError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn loss(pointer: &str, kind: LossKind) -> Loss {
        Loss {
            pointer: pointer.to_owned(),
            keyword: Cow::Borrowed("maxLength"),
            kind,
            dialect: "OpenAI strict",
            note: None,
        }
    }

    #[test]
    fn displays_the_argument_location() {
        let l = loss("/properties/customerId", LossKind::Unenforced);
        assert_eq!(
            l.to_string(),
            "maxLength at /customerId is not enforced by OpenAI strict"
        );
        let l = loss(
            "/properties/passengers/items/properties/age",
            LossKind::Hidden,
        );
        assert_eq!(l.location(), "/passengers/*/age");
        assert_eq!(loss("", LossKind::Narrowed).location(), "(root)");
        assert_eq!(
            loss("/properties/a~1b/anyOf/0", LossKind::Narrowed).location(),
            "/a/b"
        );
    }
}
