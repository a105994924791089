#![doc = include_str!("../README.md")]
// Links of the README to items behind a feature: to the item when it is built, else to the
// table of features.
#![cfg_attr(
    feature = "mcp",
    doc = "\n[`McpServer`]: crate::mcp::McpServer\n[`McpClient`]: crate::mcp::McpClient\n[`McpImport::trust_hints`]: crate::mcp::McpImport::trust_hints\n[`McpImport::trust_output`]: crate::mcp::McpImport::trust_output\n[`tool_core::mcp`]: crate::mcp\n"
)]
#![cfg_attr(
    not(feature = "mcp"),
    doc = "\n[`McpServer`]: #dependencies-and-features\n[`McpClient`]: #dependencies-and-features\n[`McpImport::trust_hints`]: #dependencies-and-features\n[`McpImport::trust_output`]: #dependencies-and-features\n[`tool_core::mcp`]: #dependencies-and-features\n"
)]
#![cfg_attr(feature = "mcp-http", doc = "\n[`McpHttp`]: crate::mcp::McpHttp\n")]
#![cfg_attr(
    not(feature = "mcp-http"),
    doc = "\n[`McpHttp`]: #dependencies-and-features\n"
)]
#![cfg_attr(
    feature = "http",
    doc = "\n[`tool_core::http::HttpModel`]: crate::http::HttpModel\n[`tool_core::http`]: crate::http\n"
)]
#![cfg_attr(
    not(feature = "http"),
    doc = "\n[`tool_core::http::HttpModel`]: #dependencies-and-features\n[`tool_core::http`]: #dependencies-and-features\n"
)]
#![cfg_attr(
    feature = "sqlite",
    doc = "\n[`SqliteLedger`]: crate::ledger::SqliteLedger\n"
)]
#![cfg_attr(
    not(feature = "sqlite"),
    doc = "\n[`SqliteLedger`]: #dependencies-and-features\n"
)]
#![cfg_attr(
    feature = "postgres",
    doc = "\n[`PostgresLedger`]: crate::ledger::PostgresLedger\n"
)]
#![cfg_attr(
    not(feature = "postgres"),
    doc = "\n[`PostgresLedger`]: #dependencies-and-features\n"
)]
#![cfg_attr(
    feature = "schemars",
    doc = "\n[`ViaSchemars`]: crate::contract::ViaSchemars\n"
)]
#![cfg_attr(
    not(feature = "schemars"),
    doc = "\n[`ViaSchemars`]: #dependencies-and-features\n"
)]
#![cfg_attr(
    feature = "test-util",
    doc = "\n[`testing::ScriptedTurns::from_transcript`]: crate::testing::ScriptedTurns::from_transcript\n[`tool_core::testing`]: crate::testing\n[`testing::ledger_suite`]: crate::testing::ledger_suite\n"
)]
#![cfg_attr(
    not(feature = "test-util"),
    doc = "\n[`testing::ScriptedTurns::from_transcript`]: #dependencies-and-features\n[`tool_core::testing`]: #dependencies-and-features\n[`testing::ledger_suite`]: #dependencies-and-features\n"
)]
#![cfg_attr(
    feature = "sandbox",
    doc = "\n[`tool_core::sandbox`]: crate::sandbox\n"
)]
#![cfg_attr(
    not(feature = "sandbox"),
    doc = "\n[`tool_core::sandbox`]: #dependencies-and-features\n"
)]
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

// The modules in groups, from the bottom up: a module uses only modules of its own group or of
// a group before it, and no two modules use each other (doc links aside). `tests/layering.rs`
// holds the crate to this. Groups are separated by blank lines (rustfmt sorts the modules
// within one).

// Shared plumbing.
mod canonical;
mod digest;
#[cfg(test)]
mod json_pieces;
mod recent;
mod sync;

// The contract of a tool's arguments: schema and checked parser (the derive's runtime half).
pub mod contract;

// A proposed call and how it ends.
mod call;
mod context;
pub mod observe;
mod outcome;
pub mod provenance;
#[cfg(feature = "sandbox")]
#[cfg_attr(docsrs, doc(cfg(feature = "sandbox")))]
pub mod sandbox;

// The allow-list: tools with their contracts, handlers and settings.
pub mod registry;

// Claims, outcomes and the audit trail kept across restarts and workers.
pub mod ledger;

// One call through its stages.
pub mod authz;
pub mod runtime;

// What a model is asked and what it answers: the vocabulary of the loops, the wire formats
// and the model clients.
pub mod model;

// Around the runtime: approval receipts, JSON found in prose, counts, the repair loop and the
// agent loop.
pub mod agent;
pub mod approval;
pub mod extract;
pub mod metrics;
pub mod repair;

// Calls as the providers' wire formats and open models' text carry them.
#[cfg(feature = "providers")]
#[cfg_attr(docsrs, doc(cfg(feature = "providers")))]
pub mod providers;
#[cfg(feature = "text-calls")]
#[cfg_attr(docsrs, doc(cfg(feature = "text-calls")))]
pub mod text_calls;

// The edges: models over HTTP, MCP servers and clients.
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;

// Stand-ins for models.
#[cfg(feature = "test-util")]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub mod testing;

pub use call::{CallArguments, ToolCall};
pub use context::{Context, ContextBuilder};
pub use contract::argument::Argument;
#[doc(hidden)]
pub use contract::constraints::Constraints;
pub use contract::error::ArgumentErrors;
#[doc(hidden)]
pub use contract::maps::ArgumentKey;
pub use contract::tool::{Tool, ToolOutput};
pub use outcome::{Code, Denied, Failure, InvocationId, Outcome, Output, UnknownCode};
pub use registry::def::{Effect, ToolDef};
pub use registry::list::Registry;
pub use runtime::invoke::Runtime;
pub use tokio_util::sync::CancellationToken;

/// Derives [`Tool`] (and [`Argument`]) for a struct with named fields.
pub use tool_derive::Tool;

/// Derives [`Argument`] for a struct or unit-variant enum used inside tool arguments.
pub use tool_derive::Argument;

/// Items used by the code that `#[derive(Tool)]` and `#[derive(Argument)]` expand to.
/// Not public API: anything here may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use core::marker::PhantomData;
    pub use core::option::Option::{self, None, Some};
    pub use core::result::Result::{self, Err, Ok};
    pub use std::sync::OnceLock;

    pub use serde::de::{Deserializer, IgnoredAny, MapAccess};
    pub use serde_json::{Map, Value};

    pub use crate::contract::constraints::Constraints;
    pub use crate::contract::constraints::{
        AcceptsFormat, AcceptsLength, AcceptsPattern, AcceptsRange, ConstConstraints, Num, Pattern,
        Unconstrained,
    };
    pub use crate::contract::constraints::{
        HasItems, accepts_format, accepts_length, accepts_pattern, accepts_range, has_items,
    };
    pub use crate::contract::format::Format;
    pub use crate::contract::maps::{ArgumentKey, HasKeys, has_keys};
    pub use crate::contract::path::Path;
    pub use crate::contract::resource::resource_of;
    pub use crate::contract::schema::{
        Contract, SchemaGen, advertise_default, annotate_field, enum_schema, field_schema,
        object_schema, root_contract, root_schema,
    };
    pub use crate::contract::tool::object_arguments;
    pub use crate::contract::union::{
        Buffer, Repr, Union, flatten_schema, parse_flattened, parse_union, skip_value,
        union_branch, union_schema, union_value,
    };
    pub use crate::contract::untagged::{untagged_bytes, untagged_work};
    pub use crate::contract::validate::{drain_map, texts_read_again};
    pub use crate::contract::with::{With, with_option_value, with_value};

    /// Types whose contract is their `schemars::JsonSchema` (`#[tool(schemars)]`).
    #[cfg(feature = "schemars")]
    pub use crate::contract::ViaSchemars;
    /// A stand-in without the `schemars` feature: the derive's check below says what is missing.
    #[cfg(not(feature = "schemars"))]
    #[derive(Debug)]
    pub struct ViaSchemars<T>(pub T);

    /// Built with the `schemars` feature (the check `#[tool(schemars)]` expands to).
    #[diagnostic::on_unimplemented(
        message = "#[tool(schemars)] needs tool-core's `schemars` feature",
        label = "enable it: tool-core = {{ features = [\"schemars\"] }}"
    )]
    pub trait SchemarsFeature {}
    #[cfg(feature = "schemars")]
    impl SchemarsFeature for () {}

    /// Compile-time check that the `schemars` feature is on.
    pub const fn schemars_feature<T: SchemarsFeature>() {}

    /// The JSON of a value whose type cannot say (a `#[tool(schemars)]` field): none.
    pub fn no_value<T>(_: &T) -> Option<Value> {
        None
    }

    /// Parses JSON text as one `T` at the root, whatever JSON type `T` takes (the checked
    /// parse of [`Tool::parse_arguments`](crate::Tool::parse_arguments)).
    pub fn parse_argument<T: crate::Argument>(raw: &str) -> Result<T, crate::ArgumentErrors> {
        crate::contract::validate::parse_str(raw)
    }

    /// Checks a parsed JSON value as one `T` at the root (the checked parse of
    /// [`Tool::parse_value`](crate::Tool::parse_value)).
    pub fn parse_argument_value<T: crate::Argument>(
        value: &Value,
    ) -> Result<T, crate::ArgumentErrors> {
        crate::contract::validate::parse_value(value)
    }
    pub use crate::contract::validate::{Cx, Got, KeySeed, Object, Seed, parse_enum, parse_object};
    pub use crate::{Argument, contract::Keyword};
}
