//! Properties that hold for every plan, not only for the examples: non-interference, lint against the
//! runtime, the lowering against plain Monty, labels and lineage, generated plans where a generator exists.
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

mod callbacks;
mod constant_labels;
mod fused_idioms;
mod lineage;
mod lint_consistency;
mod lint_differential;
mod lower_exec;
mod lower_transparency;
mod noninterference;
mod output_labels;
mod plan_check;
mod planner_answer;
mod raw_containers;
mod result_labels;
mod verifier_or_none;
