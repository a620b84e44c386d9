//! `zamburak view TRACE.zjson [--addr 127.0.0.1:PORT] [--export FILE.html]`: a trace as a redacted lineage
//! graph, on a local server or as one self-contained HTML file.
//!
//! The trace is untrusted input. [`model`] reads it line by line and keeps what parses; [`sites`] groups
//! its calls by call site for the summary; [`graph`] builds the lineage and [`layout`] places it (layered,
//! no edge through a node not its own); [`render`] fills the templates with autoescaping; [`server`] serves them on
//! loopback behind a token with a script-free Content-Security-Policy. [`reader`] makes the export for a
//! named reader (`--for READER`), cut where the planner's answer would be. [`queue`] is the review queue
//! (`view --queue`): pending claims to approve or reject in the browser, served the same way. The command
//! itself is `cli::view`.
//!
//! ```no_run
//! let view = zamburak::view::model::load(std::path::Path::new("plan.zjson")).unwrap();
//! let html = zamburak::view::render::Pages::new(view).unwrap().export().unwrap();
//! assert!(html.starts_with("<!"));
//! ```

pub mod graph;
pub mod layout;
pub mod model;
pub mod queue;
pub mod reader;
pub mod render;
pub mod run_shown;
pub mod server;
pub mod sites;
