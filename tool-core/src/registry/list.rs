//! The allow-list itself.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use super::RegistryError;
use super::def::{ToolDef, ToolInfo};
use super::kind::Erased;

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
