//! The registry: the allow-list of tools a model may call, each with its contract, its
//! handler and its policy settings.
//!
//! [`ToolDef`] describes one tool; [`Registry::register`] checks it and keeps it with its type
//! erased, as the runtime drives it (`kind`); [`DynamicTool`](crate::DynamicTool)s are tools
//! whose contract is a JSON Schema document rather than a Rust type.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

mod def;
pub(crate) mod dynamic;
pub(crate) mod kind;

pub use def::{Effect, Handler, ToolDef, ToolError, ToolInfo};
pub(crate) use kind::{Erased, OutputError, Refusal, WorkError};

/// A registration refused by [`Registry::register`].
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

/// The allow-list: the only tools a model's call can reach, by exact name.
///
/// Build it once and share it (`Arc<Registry>`) between [`Runtime`](crate::Runtime)s.
#[derive(Default)]
pub struct Registry {
    index: HashMap<Arc<str>, usize, foldhash::fast::RandomState>,
    entries: Vec<Box<dyn Erased>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Adds a tool. Refused if the name is taken or invalid, or if a dynamic tool's schema
    /// does not compile.
    pub fn register<A>(&mut self, tool: ToolDef<A>) -> Result<&mut Self, RegistryError> {
        let name = Arc::clone(&tool.info.name);
        if name.is_empty()
            || name.len() > 128
            || name.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(RegistryError::InvalidName {
                name: name.to_string(),
            });
        }
        if self.index.contains_key(&name) {
            return Err(RegistryError::DuplicateName {
                name: name.to_string(),
            });
        }
        let entry = (tool.build)(tool.info, tool.authorize, tool.effect_of)?;
        self.index.insert(name, self.entries.len());
        self.entries.push(entry);
        Ok(self)
    }

    /// The tool registered under `name`.
    pub fn get(&self, name: &str) -> Option<&ToolInfo> {
        self.index(name).map(|index| self.entries[index].info())
    }

    /// The tools, in registration order.
    pub fn tools(&self) -> impl ExactSizeIterator<Item = &ToolInfo> + '_ {
        self.entries.iter().map(|entry| entry.info())
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn index(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    pub(crate) fn at(&self, index: usize) -> &dyn Erased {
        &*self.entries[index]
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.tools().map(ToolInfo::name))
            .finish()
    }
}
