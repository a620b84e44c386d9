//! Running a lowered plan on Monty: the driver loop, the host boundary, verifiers and tool dispatch.
pub mod answer;
pub mod backend;
pub mod boxing;
pub mod exec;
mod host;
pub mod machine;
pub mod memory;
pub mod output;
mod remembered;
mod report;
pub mod run;
pub mod setup;
pub mod snapshot;
mod stores;
pub mod worker;
