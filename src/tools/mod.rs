//! Built-in tool adapters (mail, files, web) and the verifiers.
pub mod config;
pub mod verify;
