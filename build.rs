//! Compiles the lowering's prelude (`src/lower/prelude.py`) into a Monty session once, at build time, and
//! writes its dump to `OUT_DIR/prelude.monty`. Every run loads that dump (a fraction of a millisecond) and
//! feeds only the plan's own code, instead of compiling the ~1,400-line prelude again (about 2 ms).
//! A prelude Monty cannot compile or run fails the build.
//!
//! The prelude's method dispatch tables and `str` fast paths (`src/lower/generated.rs`) are generated from
//! the subset catalogue (`src/plan/catalogue.rs`), and every catalogue row must have its prelude helper: a
//! row without one fails the build, naming it.
#![expect(
    clippy::expect_used,
    clippy::panic,
    reason = "a build script reports a failure by panicking: cargo shows the message and stops the build"
)]

use std::path::PathBuf;

// The build uses the tables and helper names; the crate uses the rest. Clippy judges the enums as private here
// (they are public API in the crate, where it leaves their names alone).
#[allow(
    dead_code,
    clippy::enum_variant_names,
    reason = "the build reads only the tables and helper names; the enums are public API in the crate"
)]
#[path = "src/plan/catalogue.rs"]
mod catalogue;

#[path = "src/lower/generated.rs"]
mod generated;

use monty::{MontyRepl, SessionRef, dump};
use monty_types::{CompileOptions, PrintWriter, ResourceTracker};

/// Must equal `runtime::exec::SCRIPT`: tracebacks and dumps name the session by it.
const SCRIPT: &str = "plan.py";

fn main() {
    println!("cargo:rerun-if-changed=src/lower/prelude.py");
    println!("cargo:rerun-if-changed=src/plan/catalogue.rs");
    println!("cargo:rerun-if-changed=src/lower/generated.rs");
    println!("cargo:rerun-if-changed=build.rs");
    let mut source =
        std::fs::read_to_string("src/lower/prelude.py").expect("src/lower/prelude.py is readable");
    let missing: Vec<String> = catalogue::helpers()
        .into_iter()
        .filter(|h| !source.contains(&format!("\ndef {h}(")))
        .collect();
    if !missing.is_empty() {
        panic!(
            "src/plan/catalogue.rs has rows without their prelude helper; define in src/lower/prelude.py: {}",
            missing.join(", ")
        );
    }
    source.push_str(&catalogue::dispatch_tables());
    source.push_str(&generated::helpers(
        catalogue::METHODS
            .iter()
            .filter_map(|m| m.str_fast.map(|list| (m.name, list))),
    ));
    let mut repl = MontyRepl::new(
        SCRIPT,
        ResourceTracker::default(),
        CompileOptions::default(),
    );
    if let Err(e) = repl.feed_run(&source, Vec::new(), PrintWriter::Disabled) {
        panic!("the prelude does not run on Monty: {e:?}");
    }
    let bytes =
        dump(SCRIPT, None, SessionRef::Idle(&repl)).expect("the prelude session serialises");
    let out =
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("prelude.monty");
    std::fs::write(&out, bytes).expect("OUT_DIR is writable");
}
