//! The binary as a person uses it: each command end to end, a new process of the real `zamburak` against real
//! Maildirs, files, HTTP servers on loopback, MCP servers from npm, the MCP Python SDK and headless Chromium.
//!
//! One test binary of a few (tests/README.md): a module per topic.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking, with a message saying what went wrong"
)]

#[path = "../common/mod.rs"]
mod common;

mod approvals;
mod cli_output;
mod lint_audience;
mod lint_cli;
mod lint_defaults;
mod lint_snapshots;
mod llm;
mod mcp_servers;
mod policy_check;
mod policy_compile;
mod policy_discovery;
mod queue;
mod remembered;
mod run_e2e;
mod serve;
mod serve_lint;
mod serve_ops;
mod stubs;
mod tools_adapters;
mod view;
