//! Compiles the lowering's prelude (`src/lower/prelude.py`) into a Monty session once, at build time, and
//! writes its dump to `OUT_DIR/prelude.monty`. Every run loads that dump (a fraction of a millisecond) and
//! feeds only the plan's own code, instead of compiling the ~1,400-line prelude again (about 2 ms).
//! A prelude Monty cannot compile or run fails the build.

use std::path::PathBuf;

use monty::{MontyRepl, SessionRef, dump};
use monty_types::{CompileOptions, PrintWriter, ResourceTracker};

/// Must equal `runtime::exec::SCRIPT`: tracebacks and dumps name the session by it.
const SCRIPT: &str = "plan.py";

fn main() {
    println!("cargo:rerun-if-changed=src/lower/prelude.py");
    println!("cargo:rerun-if-changed=build.rs");
    let source =
        std::fs::read_to_string("src/lower/prelude.py").expect("src/lower/prelude.py is readable");
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
