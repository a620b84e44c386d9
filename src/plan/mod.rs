//! Parsing a plan and checking it against the subset of SEMANTICS.md §6.
pub mod diagnostic;
pub mod signatures;
pub use diagnostic::{Diagnostic, Severity};
pub use signatures::Signatures;
