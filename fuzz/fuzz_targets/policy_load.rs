//! The policy loader on arbitrary text: it returns a policy or a located error, never panics. A policy it
//! accepts also yields its signatures and label space, as every command needs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(policy) = zamburak::policy::Policy::from_yaml_str(
        text,
        "fuzz.yaml",
        std::path::Path::new("/nonexistent"),
    ) {
        let _ = policy.signatures();
        let _ = policy.label_space();
        let _ = policy.limits();
    }
});
