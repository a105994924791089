//! API keys: held so that they never show in `Debug` output, errors or logs.

use std::fmt;

/// A provider API key. Its `Debug` output is redacted and it has no `Display`: the key is
/// only ever written into the request's authentication header (marked sensitive), and any
/// error text a provider echoes back has the key removed before it is reported.
///
/// ```
/// use tool_core::http::ApiKey;
///
/// let key = ApiKey::new("sk-do-not-print");
/// assert_eq!(format!("{key:?}"), "ApiKey(redacted)");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// A key given by the application (from its secret store, say).
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key in the environment variable `name`, when it is set and not empty.
    pub fn from_env(name: &str) -> Option<Self> {
        std::env::var(name)
            .ok()
            .filter(|key| !key.trim().is_empty())
            .map(|key| ApiKey(key.trim().to_owned()))
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `[redacted]`.
    pub(crate) fn redact(&self, text: String) -> String {
        if self.0.len() < 4 || !text.contains(&self.0) {
            return text;
        }
        text.replace(&self.0, "[redacted]")
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(redacted)")
    }
}
