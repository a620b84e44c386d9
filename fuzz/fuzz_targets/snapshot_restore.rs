//! What `approve` reads from a snapshot, on arbitrary bytes: the snapshot document, then Monty's paused run
//! restored in a machine, the paused call read as the host reads it, and the run resumed with a value. Any
//! of these may refuse; none may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zamburak::runtime::exec::paused_call;
use zamburak::runtime::machine::{InProcess, Machine, MachineLimits};

fuzz_target!(|data: &[u8]| {
    let _ = serde_json::from_slice::<zamburak::runtime::snapshot::Snapshot>(data);
    let Ok(paused) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let limits = MachineLimits {
        timeout_ms: 200,
        max_recursion_depth: 200,
        max_suspensions: 100,
        max_memory: Some(64 << 20),
    };
    let mut machine = InProcess::new();
    let Ok(call) = machine.restore(&paused, &limits) else {
        return;
    };
    let _ = paused_call(&call);
    let _ = machine.resume(monty_types::MontyObject::None);
});
