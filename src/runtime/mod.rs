//! Running a lowered plan on Monty: the driver loop, the host boundary, verifiers and tool dispatch.
pub mod boxing;
pub mod exec;
pub mod run;
pub mod snapshot;
