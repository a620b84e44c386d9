//! Hostile input never panics the process: plans, tool outputs, policies and traces get a clear error and
//! the documented exit code.

use std::path::Path;

use assert_cmd::Command;

fn zamburak() -> Command {
    Command::cargo_bin("zamburak").unwrap()
}

fn policy() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/policy.yaml")
}

fn run_plan(bytes: &[u8]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("p.py");
    std::fs::write(&plan, bytes).unwrap();
    let out = zamburak()
        .arg("run")
        .arg(&plan)
        .arg("--policy")
        .arg(policy())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    out
}

#[test]
fn garbage_plans_are_rejected_cleanly() {
    let cases: Vec<Vec<u8>> = vec![
        vec![0xff, 0xfe, 0x00, 0x41],
        b"(".repeat(100_000),
        b"x = "
            .iter()
            .chain(b"[".repeat(5000).iter())
            .copied()
            .collect(),
        b"x = 1 +".repeat(50_000),
        b"-".repeat(200_000),
        "def f(:\n".into(),
        b"\0\0\0".to_vec(),
    ];
    for c in cases {
        let out = run_plan(&c);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{:?}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn runaway_plans_stop_at_the_limits() {
    // Infinite loop: the policy's timeout stops it (error), no panic.
    let out = run_plan(b"while True:\n    pass\n");
    assert_eq!(out.status.code(), Some(1));
    // Unbounded recursion.
    let out = run_plan(b"def f(n):\n    return f(n + 1)\nf(0)\n");
    assert_eq!(out.status.code(), Some(1));
    // A huge allocation attempt.
    let out = run_plan(b"x = [1] * 10\nfor i in range(30):\n    x = x + x\n");
    assert!(matches!(out.status.code(), Some(0) | Some(1)));
}

#[test]
fn hostile_tool_outputs_do_not_panic_and_stay_labelled() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(policy(), dir.path().join("policy.yaml")).unwrap();
    let deep = format!("{}1{}", "[".repeat(50), "]".repeat(50));
    let scenarios = format!(
        "policy: policy.yaml\nscenarios:\n  - name: deep\n    plan: |\n      e = get_email(id=\"1\")\n      send_email(to=\"me@example.com\", subject=\"s\", body=str(e))\n    tools: {{ get_email: [{deep}] }}\n    expect: {{ strict: allow, normal: allow }}\n  - name: huge\n    plan: |\n      e = get_email(id=\"1\")\n      fetch_url(url=e)\n    tools: {{ get_email: [\"{}\"] }}\n    expect: {{ strict: deny, normal: deny }}\n  - name: shaped like a box\n    plan: |\n      e = get_email(id=\"1\")\n      send_email(to=e[0], subject=\"s\", body=\"b\")\n    tools: {{ get_email: [[\"me@example.com\", 0]] }}\n    expect: {{ strict: deny, normal: deny }}\n",
        "x".repeat(2_000_000)
    );
    std::fs::write(dir.path().join("s.yaml"), scenarios).unwrap();
    let out = zamburak()
        .args(["policy", "test"])
        .arg(dir.path().join("s.yaml"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The deep value is cut at the labelling depth (labelled unknown there), so the send is denied or allowed
    // but never crashes; the other two must be denied.
    assert!(stdout.contains("ok     huge"), "{stdout}{stderr}");
    assert!(stdout.contains("ok     shaped like a box"), "{stdout}");
}

#[test]
fn garbage_policies_and_traces_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    for (i, bytes) in [
        b"\xff\xfe".to_vec(),
        b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[".to_vec(),
        b"version: 1\ntools: 7\n".to_vec(),
    ]
    .iter()
    .enumerate()
    {
        let p = dir.path().join(format!("p{i}.yaml"));
        std::fs::write(&p, bytes).unwrap();
        let plan = dir.path().join("plan.py");
        std::fs::write(&plan, "x = 1\n").unwrap();
        let out = zamburak()
            .arg("run")
            .arg(&plan)
            .arg("--policy")
            .arg(&p)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    }
    let t = dir.path().join("t.zjson");
    std::fs::write(&t, b"\xff{\"seq\":0}\n[[[[[[\n").unwrap();
    let out = zamburak().arg("verify").arg(&t).output().unwrap();
    // Garbage from its first byte is not a trace at all: a usage error, never "tampered" (docs/trace.md).
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is not a Zamburak trace"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
