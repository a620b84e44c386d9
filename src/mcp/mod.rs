//! MCP: tools served by Model Context Protocol servers, under the same policy, labels and trace as the
//! built-in ones.
//!
//! * [`client`] speaks MCP over stdio to one server (the `rmcp` SDK, a scrubbed environment, server
//!   requests refused, tool listings bounded);
//! * [`transport`] bounds what a server may send: one message, and a listing's bytes;
//! * [`pin`] is a tool's pin (sha256 over the canonical JSON of what a reviewer and a model read);
//! * [`review`] is what a person reviews of a tool: every text of it a model may read;
//! * [`lock`] is the lock file beside the policy, its freshness check and `mcp diff`;
//! * [`schema`] checks arguments and structured results against a tool's JSON Schema;
//! * [`content`] turns a tool result into the value a plan receives;
//! * [`hub`] is the servers of one run: lazy start, the live check against the lock, calls, shutdown.
//! * [`starter`] is the starting policy `policy init --mcp` writes from a server's listed tools.
//!
//! Decisions are not made here: the runtime decides every call with `policy::decide` before the hub sees it.

pub mod client;
pub mod content;
pub mod hub;
pub mod lock;
pub mod pin;
pub mod review;
pub mod schema;
pub mod starter;
pub mod transport;
