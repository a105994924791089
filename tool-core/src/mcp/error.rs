//! What can go wrong with an MCP connection itself (not with one tool call: those are
//! outcomes).

use std::fmt;

use super::client::{MAX_LISTING_BYTES, MAX_TOOLS};

/// A failure to connect, serve or talk to an MCP peer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpError {
    /// The server process could not be started.
    Spawn {
        /// What the operating system said.
        reason: String,
    },
    /// The `initialize` handshake failed.
    Initialize {
        /// What went wrong.
        reason: String,
    },
    /// A request to the peer failed: a JSON-RPC error, a closed connection or a malformed
    /// reply.
    Request {
        /// The MCP method, e.g. `"tools/list"`.
        method: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// The server listed tools without end (more pages than [`McpClient`](super::McpClient)
    /// follows, or a cursor it already sent).
    EndlessListing {
        /// How many pages were read.
        pages: usize,
    },
    /// The server listed more tools, or more bytes of tool definitions, than
    /// [`McpClient::list_tools`](super::McpClient::list_tools) keeps.
    ListingTooLarge {
        /// Tools read when the listing was abandoned.
        tools: usize,
        /// Bytes of tool definitions (their JSON text) read when the listing was abandoned.
        bytes: usize,
    },
    /// The serving loop stopped abnormally.
    Serve {
        /// What went wrong.
        reason: String,
    },
}

impl fmt::Display for McpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpError::Spawn { reason } => write!(f, "could not start the mcp server: {reason}"),
            McpError::Initialize { reason } => {
                write!(f, "the mcp initialize handshake failed: {reason}")
            }
            McpError::Request { method, reason } => write!(f, "mcp {method} failed: {reason}"),
            McpError::EndlessListing { pages } => write!(
                f,
                "the mcp server's tool listing did not end after {pages} pages"
            ),
            McpError::ListingTooLarge { tools, .. } if *tools > MAX_TOOLS => write!(
                f,
                "the mcp server's tool listing exceeds {MAX_TOOLS} tools ({tools} read)"
            ),
            McpError::ListingTooLarge { bytes, .. } => write!(
                f,
                "the mcp server's tool listing exceeds {MAX_LISTING_BYTES} bytes of tool definitions ({bytes} read)"
            ),
            McpError::Serve { reason } => write!(f, "the mcp service stopped: {reason}"),
        }
    }
}

impl std::error::Error for McpError {}
