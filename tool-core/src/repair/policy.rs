//! How many attempts a call may take and what to tell the model about each tool.

use std::collections::HashMap;
use std::fmt;

/// How many attempts a call may take, and what to tell the model about each tool.
///
/// The bound counts the first pass: 3 (the default) means the model's arguments and at most two
/// repairs. It must be at least 1, which is checked when the policy is built.
///
/// ```
/// use tool_core::repair::RepairPolicy;
///
/// let policy = RepairPolicy::new(3)?
///     .with_tool_attempts("create_invoice", 2)?
///     .with_hint("create_invoice", "amount is a number in major units, e.g. 120.5");
/// assert_eq!(policy.attempts_for("create_invoice"), 2);
/// assert_eq!(policy.attempts_for("get_weather"), 3);
/// assert!(RepairPolicy::new(0).is_err());
/// # Ok::<(), tool_core::repair::RepairPolicyError>(())
/// ```
#[derive(Debug, Clone)]
pub struct RepairPolicy {
    max_attempts: u32,
    attempts: HashMap<String, u32>,
    hints: HashMap<String, String>,
}

impl Default for RepairPolicy {
    /// Three attempts, no hints.
    fn default() -> Self {
        RepairPolicy {
            max_attempts: 3,
            attempts: HashMap::new(),
            hints: HashMap::new(),
        }
    }
}

/// A [`RepairPolicy`] with fewer than one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairPolicyError {
    tool: Option<String>,
}

impl fmt::Display for RepairPolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.tool {
            Some(tool) => write!(
                f,
                "the attempts of `{tool}` must be at least 1 (the first pass counts)"
            ),
            None => f.write_str("max attempts must be at least 1 (the first pass counts)"),
        }
    }
}

impl std::error::Error for RepairPolicyError {}

impl RepairPolicy {
    /// At most `max_attempts` attempts per call, the first pass included.
    pub fn new(max_attempts: u32) -> Result<Self, RepairPolicyError> {
        if max_attempts == 0 {
            return Err(RepairPolicyError { tool: None });
        }
        Ok(RepairPolicy {
            max_attempts,
            ..RepairPolicy::default()
        })
    }

    /// One attempt, no repairs: refused arguments are final.
    pub(crate) fn single_pass() -> Self {
        RepairPolicy {
            max_attempts: 1,
            ..RepairPolicy::default()
        }
    }

    /// A different bound for one tool.
    pub fn with_tool_attempts(
        mut self,
        tool: impl Into<String>,
        max_attempts: u32,
    ) -> Result<Self, RepairPolicyError> {
        let tool = tool.into();
        if max_attempts == 0 {
            return Err(RepairPolicyError { tool: Some(tool) });
        }
        self.attempts.insert(tool, max_attempts);
        Ok(self)
    }

    /// A hint added to every repair request for `tool`.
    pub fn with_hint(mut self, tool: impl Into<String>, hint: impl Into<String>) -> Self {
        self.hints.insert(tool.into(), hint.into());
        self
    }

    /// The bound for `tool`.
    pub fn attempts_for(&self, tool: &str) -> u32 {
        self.attempts
            .get(tool)
            .copied()
            .unwrap_or(self.max_attempts)
    }

    /// The hint for `tool`.
    pub fn hint_for(&self, tool: &str) -> Option<&str> {
        self.hints.get(tool).map(String::as_str)
    }
}
