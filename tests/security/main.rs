//! Attacks and failures, each asserting the decision and that the side effect did not happen: hostile plans,
//! tool outputs, MCP servers, policies and traces; laundering, recipients, approvals, secrets, kill -9.
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

mod adversarial;
mod approval_binding;
mod approval_effect;
mod argument_shapes;
mod contract_holes;
mod crash_safe_trace;
mod outside_text;
mod scanners;
mod scenarios_corpus;
mod secrets;
mod shareable_trace;
mod sinks;
mod trace_tamper;
mod worker;
