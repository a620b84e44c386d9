//! The trace verifier on arbitrary bytes: a report (intact, incomplete, broken at a seq), never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = zamburak::trace::verify::verify_reader(std::io::BufReader::new(data));
});
