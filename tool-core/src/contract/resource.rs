//! What a call acts on: a typed reference named by one of the tool's arguments.

use std::fmt;

/// The resource a call acts on: an entity type the application names (`"Account"`) and the
/// id taken from the call's validated arguments (`"acc_17"`, or an integer id as its decimal
/// text).
///
/// A tool names it with `#[tool(resource = "Account")]` on one field, a string or an integer;
/// [`Tool::resource`](crate::Tool::resource) then returns it for every call, and
/// authorization policies see it ([`authz::Request::resource`](crate::authz::Request::resource)).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResourceRef {
    kind: &'static str,
    id: String,
}

impl ResourceRef {
    /// A reference to the entity `id` of type `kind`.
    pub fn new(kind: &'static str, id: impl Into<String>) -> Self {
        ResourceRef {
            kind,
            id: id.into(),
        }
    }

    /// The entity type, as written in `#[tool(resource = "...")]`.
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// The entity id, from the call's arguments.
    pub fn id(&self) -> &str {
        &self.id
    }
}

impl fmt::Display for ResourceRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}::{:?}", self.kind, self.id)
    }
}

/// A field type that can be a resource's id: strings and integers. The derive's check for
/// `#[tool(resource = "...")]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a resource id",
    label = "#[tool(resource = \"...\")] takes a string or integer field",
    note = "a resource id is a string (`String`, `&str`, `Box<str>`, `Arc<str>`) or an integer, optionally in an `Option`"
)]
pub trait ResourceId {
    /// The id as text, or `None` when the field holds none (an absent `Option`).
    fn resource_id(&self) -> Option<String>;
}

macro_rules! resource_id_display {
    ($($t:ty),*) => {$(
        impl ResourceId for $t {
            fn resource_id(&self) -> Option<String> {
                Some(self.to_string())
            }
        }
    )*};
}

resource_id_display!(
    String,
    str,
    Box<str>,
    std::sync::Arc<str>,
    std::borrow::Cow<'_, str>,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize
);

impl<T: ResourceId + ?Sized> ResourceId for &T {
    fn resource_id(&self) -> Option<String> {
        (**self).resource_id()
    }
}

impl<T: ResourceId> ResourceId for Option<T> {
    fn resource_id(&self) -> Option<String> {
        self.as_ref().and_then(ResourceId::resource_id)
    }
}

/// The resource of a call whose field `value` is marked `#[tool(resource = "kind")]` (the
/// code the derive expands to).
pub fn resource_of<T: ResourceId + ?Sized>(kind: &'static str, value: &T) -> Option<ResourceRef> {
    value.resource_id().map(|id| ResourceRef::new(kind, id))
}
