//! Reversible tool names for providers that restrict them.
//!
//! The registry accepts names of up to 128 characters without whitespace (MCP tools use `.`,
//! e.g. `admin.tools.list`); OpenAI and Anthropic accept only `^[a-zA-Z0-9_-]{1,64}$`, and
//! Gemini up to 128 of letters, digits, `_ . : -`, starting with a letter or `_`. A
//! [`NameMap`] gives each registry name the name the provider sees and maps it back when a
//! call arrives:
//!
//! - a name the provider accepts is sent unchanged;
//! - otherwise `.` becomes `__` (OpenAI, Anthropic) and any other character the provider
//!   refuses becomes `_`;
//! - if that changed more than dots, is too long, or meets another tool's name, the name is
//!   cut and ends with `_` and 8 hex digits of a stable hash (FNV-1a) of the original.
//!
//! Decoding is a table lookup, so it is exact; two names that would still meet are refused
//! when the map is built, never resolved silently.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// A provider's rule for tool names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NameRule {
    /// `^[a-zA-Z0-9_-]{1,64}$`.
    OpenAi,
    /// `^[a-zA-Z0-9_-]{1,64}$`.
    Anthropic,
    /// `^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$`.
    Gemini,
}

impl NameRule {
    /// The longest name, in bytes (all accepted characters are ASCII).
    pub const fn max_len(self) -> usize {
        match self {
            NameRule::OpenAi | NameRule::Anthropic => 64,
            NameRule::Gemini => 128,
        }
    }

    /// The rule as a regular expression, for documentation and tests.
    pub const fn pattern(self) -> &'static str {
        match self {
            NameRule::OpenAi | NameRule::Anthropic => "^[a-zA-Z0-9_-]{1,64}$",
            NameRule::Gemini => "^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$",
        }
    }

    fn allows_char(self, c: char) -> bool {
        match self {
            NameRule::OpenAi | NameRule::Anthropic => {
                c.is_ascii_alphanumeric() || matches!(c, '_' | '-')
            }
            NameRule::Gemini => c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'),
        }
    }

    fn allows_first(self, c: char) -> bool {
        match self {
            NameRule::OpenAi | NameRule::Anthropic => self.allows_char(c),
            NameRule::Gemini => c.is_ascii_alphabetic() || c == '_',
        }
    }

    /// Whether the provider accepts `name` as it is.
    pub fn accepts(self, name: &str) -> bool {
        let mut chars = name.chars();
        match chars.next() {
            None => false,
            Some(first) => {
                name.len() <= self.max_len()
                    && self.allows_first(first)
                    && chars.all(|c| self.allows_char(c))
            }
        }
    }

    /// The readable form, and whether it lost more than dots.
    fn readable(self, name: &str) -> (String, bool) {
        let mut out = String::with_capacity(name.len() + 8);
        let mut lossy = false;
        for c in name.chars() {
            if self.allows_char(c) {
                out.push(c);
            } else if c == '.' {
                out.push_str("__");
            } else {
                out.push('_');
                lossy = true;
            }
        }
        if out.chars().next().is_none_or(|c| !self.allows_first(c)) {
            out.insert(0, '_');
        }
        (out, lossy)
    }

    /// The readable form cut to fit, with the hash of the original.
    fn hashed(self, readable: &str, original: &str) -> String {
        let suffix = format!("_{:08x}", fnv1a(original) as u32);
        let mut keep = self.max_len() - suffix.len();
        keep = keep.min(readable.len());
        // Every character of `readable` is ASCII, so any cut is a boundary.
        let mut out = readable[..keep].to_owned();
        out.push_str(&suffix);
        out
    }
}

fn fnv1a(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash ^ (hash >> 32)
}

/// Why a [`NameMap`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameError {
    /// The same registry name was given twice.
    Duplicate {
        /// The name.
        name: String,
    },
    /// Two registry names would reach the provider as the same name.
    Collision {
        /// The first name.
        first: String,
        /// The second name.
        second: String,
        /// The provider name both map to.
        encoded: String,
    },
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Duplicate { name } => write!(f, "tool name {name:?} is given twice"),
            NameError::Collision {
                first,
                second,
                encoded,
            } => write!(
                f,
                "tool names {first:?} and {second:?} would both be sent as {encoded:?}; rename one"
            ),
        }
    }
}

impl std::error::Error for NameError {}

/// The provider name of each tool and the way back. Cheap to clone.
///
/// ```
/// use tool_core::providers::{NameMap, NameRule};
///
/// let names = NameMap::new(NameRule::OpenAi, ["get_weather", "admin.tools.list"]).unwrap();
/// assert_eq!(names.encode("get_weather"), Some("get_weather"));
/// assert_eq!(names.encode("admin.tools.list"), Some("admin__tools__list"));
/// assert_eq!(names.decode("admin__tools__list"), Some("admin.tools.list"));
/// assert_eq!(names.decode("admin.tools.list"), None); // not a name the provider was given
/// ```
#[derive(Clone, Default)]
pub struct NameMap {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    rule: Option<NameRule>,
    to_provider: HashMap<String, String>,
    to_registry: HashMap<String, String>,
}

impl NameMap {
    /// Maps each registry name under `rule`; refused if a name is repeated or two names
    /// would reach the provider as one.
    pub fn new<'a>(
        rule: NameRule,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<NameMap, NameError> {
        let names: Vec<&str> = names.into_iter().collect();
        let mut inner = Inner {
            rule: Some(rule),
            ..Inner::default()
        };
        // Names the provider accepts keep their spelling: they are placed first, so an
        // encoded name can only give way to them.
        let mut taken: HashMap<String, &str> = HashMap::with_capacity(names.len());
        for &name in &names {
            if rule.accepts(name) {
                if taken.insert(name.to_owned(), name).is_some() {
                    return Err(NameError::Duplicate {
                        name: name.to_owned(),
                    });
                }
                inner.to_provider.insert(name.to_owned(), name.to_owned());
            }
        }
        let mut readable: HashMap<String, Vec<&str>> = HashMap::new();
        let mut pending = Vec::new();
        for &name in &names {
            if rule.accepts(name) {
                continue;
            }
            if inner.to_provider.contains_key(name) || pending.iter().any(|(n, _, _)| *n == name) {
                return Err(NameError::Duplicate {
                    name: name.to_owned(),
                });
            }
            let (form, lossy) = rule.readable(name);
            readable.entry(form.clone()).or_default().push(name);
            pending.push((name, form, lossy));
        }
        for (name, form, lossy) in pending {
            let shared = readable.get(&form).is_some_and(|v| v.len() > 1);
            let encoded =
                if lossy || shared || form.len() > rule.max_len() || taken.contains_key(&form) {
                    rule.hashed(&form, name)
                } else {
                    form
                };
            if let Some(first) = taken.insert(encoded.clone(), name) {
                return Err(NameError::Collision {
                    first: first.to_owned(),
                    second: name.to_owned(),
                    encoded,
                });
            }
            inner.to_provider.insert(name.to_owned(), encoded);
        }
        inner.to_registry = inner
            .to_provider
            .iter()
            .map(|(registry, provider)| (provider.clone(), registry.clone()))
            .collect();
        Ok(NameMap {
            inner: Arc::new(inner),
        })
    }

    /// The rule the names were mapped under (`None` for the empty map of `default()`).
    pub fn rule(&self) -> Option<NameRule> {
        self.inner.rule
    }

    /// The provider name of a registry name, if it was mapped.
    pub fn encode(&self, registry_name: &str) -> Option<&str> {
        self.inner
            .to_provider
            .get(registry_name)
            .map(String::as_str)
    }

    /// The registry name behind a provider name, if it was mapped.
    pub fn decode(&self, provider_name: &str) -> Option<&str> {
        self.inner
            .to_registry
            .get(provider_name)
            .map(String::as_str)
    }

    /// The registry name for a name a provider sent: decoded if it was mapped, else as sent
    /// (so the runtime refuses an unknown name as `unknown_tool`, listing the real ones).
    pub fn resolve<'a>(&'a self, provider_name: &'a str) -> &'a str {
        self.decode(provider_name).unwrap_or(provider_name)
    }

    /// How many names are mapped.
    pub fn len(&self) -> usize {
        self.inner.to_provider.len()
    }

    /// Whether no name is mapped.
    pub fn is_empty(&self) -> bool {
        self.inner.to_provider.is_empty()
    }
}

impl fmt::Debug for NameMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NameMap")
            .field("rule", &self.inner.rule)
            .field("names", &self.inner.to_provider)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_accepted_names_and_hashes_the_rest() {
        let long = "x".repeat(70);
        let names =
            NameMap::new(NameRule::OpenAi, ["a.b", "a__b", "météo", long.as_str()]).unwrap();
        assert_eq!(names.encode("a__b"), Some("a__b"));
        let dotted = names.encode("a.b").unwrap();
        assert!(
            dotted.starts_with("a__b_") && dotted.len() == 13,
            "{dotted}"
        );
        let meteo = names.encode("météo").unwrap();
        assert!(meteo.starts_with("m_t_o_"), "{meteo}");
        assert_eq!(names.encode(&long).unwrap().len(), 64);
        for name in ["a.b", "a__b", "météo", long.as_str()] {
            assert_eq!(names.decode(names.encode(name).unwrap()), Some(name));
        }
    }

    #[test]
    fn gemini_keeps_dots_and_fixes_the_first_character() {
        let names = NameMap::new(NameRule::Gemini, ["admin.tools.list", "1st"]).unwrap();
        assert_eq!(names.encode("admin.tools.list"), Some("admin.tools.list"));
        assert_eq!(names.encode("1st"), Some("_1st"));
    }

    #[test]
    fn refuses_duplicates() {
        assert!(matches!(
            NameMap::new(NameRule::OpenAi, ["a", "a"]),
            Err(NameError::Duplicate { .. })
        ));
        assert!(matches!(
            NameMap::new(NameRule::OpenAi, ["a.b", "a.b"]),
            Err(NameError::Duplicate { .. })
        ));
    }
}
