//! A command whose stdout cannot be written (`> /dev/full`) finishes its work, says so on stderr and exits 2
//! (or its own non-zero code), instead of panicking halfway with exit 101 (#18).

use std::path::Path;
use std::process::Stdio;

fn to_dev_full(args: &[&str], dir: &Path) -> std::process::Output {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full exists on Linux");
    std::process::Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::from(full))
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_full_stdout_is_an_error_not_a_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = to_dev_full(&["policy", "check", "policies/default.yaml"], root);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot write the output to stdout"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_run_with_a_full_stdout_still_completes_its_trace() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.py"), "print('hello')\n").unwrap();
    let out = to_dev_full(&["run", "p.py"], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let verify = std::process::Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
        .args(["verify", dir.path().join("p.zjson").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        verify.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
}
