//! The house itself: imports go down the layers, every citation resolves, the catalogue's rows and the
//! diagnostic codes agree with their documentation.
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

mod catalogue;
mod citations;
mod diagnostic_codes;
mod layering;
