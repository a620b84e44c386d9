//! The Maildir adapter's message parser on arbitrary bytes: a record with string fields, or `None`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(record) = zamburak::tools::mail::record(data, "fuzz", 1_762_300_000) {
        for field in ["from", "subject", "date", "received", "body"] {
            assert!(record[field].is_string(), "{field}: {record}");
        }
        for field in ["to", "cc"] {
            assert!(record[field].is_array(), "{field}: {record}");
        }
    }
});
