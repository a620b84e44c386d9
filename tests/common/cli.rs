//! The binary as the MCP and approval tests run it: in a directory, its whole output as text, and the code
//! of the claim a snapshot holds (as a person copies it from the claim `run` printed).
#![allow(
    dead_code,
    reason = "each test crate uses its own part of the shared helpers"
)]

use std::path::Path;
use std::process::Output;

use assert_cmd::Command;

/// A store of remembered values no test writes, so the person's own never decides a test.
pub fn no_store() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("zamburak-tests-known-{}.json", std::process::id()))
}

/// `zamburak ARGS…` run in `dir`.
pub fn zamburak_in(dir: &Path, args: &[&str]) -> Output {
    Command::cargo_bin("zamburak")
        .unwrap()
        .env("ZAMBURAK_KNOWN", no_store())
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// Standard output, then standard error.
pub fn output_text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The claim code of the snapshot at `path` (`0000-0000-0000`, which names no claim, when it is unreadable).
pub fn snapshot_claim_code(path: &Path) -> String {
    let digest = std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v["claim_digest"].as_str().map(str::to_string))
        .unwrap_or_default();
    zamburak::trace::record::claim_code(&digest)
}
