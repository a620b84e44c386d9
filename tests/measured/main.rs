//! Measurements that also assert: AgentDojo's suites, the repair loop, the scanners' corpus, peak memory.
//! Results are committed (docs/benchmark.md, docs/lint.md, docs/policy.md, docs/reliability.md).
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

mod agentdojo;
mod repair;
mod scanner_corpus;
