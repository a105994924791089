//! The registry: the allow-list of tools a model may call, each with its contract, its
//! handler and its policy settings.
//!
//! [`ToolDef`](crate::ToolDef) describes one tool; [`Registry::register`](crate::Registry::register)
//! checks it and keeps it with its type erased, as the runtime drives it (`kind`);
//! [`DynamicTool`]s are tools whose contract is a JSON Schema document rather than a Rust type.
//! The registry itself, [`ToolDef`](crate::ToolDef) and [`Effect`](crate::Effect) are at the
//! crate root; this module holds the rest.

use std::fmt;

pub(crate) mod def;
pub(crate) mod dynamic;
pub(crate) mod kind;
pub(crate) mod list;

pub use def::{Handler, ToolError, ToolInfo};
pub use dynamic::DynamicTool;
pub(crate) use kind::{OutputError, Refusal, WorkError};

/// A registration refused by [`Registry::register`](crate::Registry::register).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryError {
    /// A tool with this name is already registered.
    DuplicateName {
        /// The name.
        name: String,
    },
    /// The name is empty, too long or contains whitespace or control characters.
    InvalidName {
        /// The name.
        name: String,
    },
    /// A dynamic tool's schema does not compile.
    InvalidSchema {
        /// The tool.
        tool: String,
        /// `"input"` or `"output"`.
        which: &'static str,
        /// What the schema compiler said.
        reason: String,
    },
    /// A derived tool's contract has a mistake (see
    /// [`Tool::contract_errors`](crate::Tool::contract_errors)).
    InvalidContract {
        /// The tool.
        tool: String,
        /// The mistake.
        reason: String,
    },
    /// A dynamic tool's schema declares a `$schema` dialect this crate does not validate.
    UnsupportedDialect {
        /// The tool.
        tool: String,
        /// The `$schema` value.
        dialect: String,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::DuplicateName { name } => {
                write!(f, "a tool named `{name}` is already registered")
            }
            RegistryError::InvalidName { name } => write!(
                f,
                "invalid tool name {name:?}: use 1 to 128 characters without whitespace or control characters"
            ),
            RegistryError::InvalidSchema {
                tool,
                which,
                reason,
            } => write!(
                f,
                "the {which} schema of `{tool}` does not compile: {reason}"
            ),
            RegistryError::InvalidContract { tool, reason } => {
                write!(f, "the contract of `{tool}` is unsound: {reason}")
            }
            RegistryError::UnsupportedDialect { tool, dialect } => write!(
                f,
                "the schema of `{tool}` declares $schema {dialect:?}; supported: Draft 4, 6, 7, 2019-09 and 2020-12 (the default when $schema is absent)"
            ),
        }
    }
}

impl std::error::Error for RegistryError {}
