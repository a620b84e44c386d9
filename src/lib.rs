//! Zamburak: run an AI agent's plan on private data without letting prompt injection steer it.
//!
//! A plan is Python in Monty's subset. [`policy`] says which tools it may call and how their results are
//! labelled; [`label`] is the lattice every value carries; [`plan`] parses and checks the subset;
//! [`lower`] compiles a plan so every value travels with its label; [`runtime`] runs the compiled plan on
//! Monty and checks every tool call with [`policy::decide`]; [`trace`] writes the hash-chained audit log.

pub mod analysis;
pub mod capped;
pub mod claim;
pub mod cli;
pub mod compile;
pub mod digest;
pub mod exit;
pub mod known;
pub mod label;
pub mod lower;
pub mod mcp;
pub mod mode;
pub mod plan;
pub mod planner;
pub mod policy;
pub mod runtime;
pub mod scenario;
pub mod serve;
pub mod stubs;
pub mod text;
pub mod tools;
pub mod trace;
pub mod value;
pub mod view;
