//! A copy of the example world (Maildir, files) in a temporary directory, and the binary run against it.
#![allow(
    dead_code,
    reason = "each test crate uses its own part of the shared helpers"
)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// A plan that sends to a list it wrote around a recipient read from a file (`todo.txt`): the list's
/// own label is trusted, its second element is not. Under the default policy the send waits (exit 4).
/// (The file's first line only: several lines are not one recipient, which is refused as malformed before any
/// label is read.)
pub const LIST_AROUND_A_READ: &str = "who = read_file(path=\"todo.txt\").splitlines()[0]\nsend_email(to=[\"me@example.com\", who], subject=\"todo\", body=\"hi\")\n";

/// The variable naming the store of remembered values: every run a test starts names its own, so a
/// developer's own remembered values never change a test's decisions.
pub const KNOWN_ENV: &str = "ZAMBURAK_KNOWN";

/// A copy of the example world in a temporary directory, with a policy pointing at it.
pub struct World {
    pub dir: tempfile::TempDir,
}

/// Copies a directory tree, leaving out what runs wrote into it (traces, snapshots, value stores, the
/// examples' outbox and drafts), so a copy of `examples/` is what a fresh clone has.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        let name = entry.file_name().to_string_lossy().to_string();
        if entry.file_type().unwrap().is_dir() {
            // `examples/out/` is the mail the examples sent and drafted (ignored by git).
            if name == "out" && from.ends_with("examples") {
                continue;
            }
            copy_dir(&entry.path(), &target);
        } else if [".zjson", ".zsnap", ".zvalues"]
            .iter()
            .any(|e| name.ends_with(e))
        {
            continue;
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

impl World {
    pub fn new(web_port: Option<u16>) -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        copy_dir(&root.join("examples/mail"), &dir.path().join("mail"));
        copy_dir(&root.join("examples/files"), &dir.path().join("files"));
        let policy = std::fs::read_to_string(root.join("policies/default.yaml")).unwrap();
        let allow = match web_port {
            Some(p) => format!("http://127.0.0.1:{p}/"),
            None => "http://127.0.0.1:9/".to_string(),
        };
        let policy = policy
            .replace("../examples/mail/inbox", "mail/inbox")
            .replace("../examples/out/outbox", "out/outbox")
            .replace("../examples/out/drafts", "out/drafts")
            .replace("../examples/files", "files")
            .replace("\"http://127.0.0.1\"", &format!("\"{allow}\""));
        std::fs::write(dir.path().join("policy.yaml"), policy).unwrap();
        World { dir }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// This world's remembered values (`ZAMBURAK_KNOWN`): never the person's own store.
    pub fn known(&self) -> PathBuf {
        self.path("known.json")
    }

    pub fn write_plan(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    pub fn run(&self, plan: &Path, extra: &[&str]) -> std::process::Output {
        Command::cargo_bin("zamburak")
            .unwrap()
            .env(KNOWN_ENV, self.known())
            .arg("run")
            .arg(plan)
            .arg("--policy")
            .arg(self.path("policy.yaml"))
            .args(extra)
            .output()
            .unwrap()
    }

    /// Starts `zamburak run PLAN` in the background, its output discarded: for tests that watch the process.
    pub fn spawn_run(&self, plan: &Path) -> std::process::Child {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
            .env(KNOWN_ENV, self.known())
            .arg("run")
            .arg(plan)
            .arg("--policy")
            .arg(self.path("policy.yaml"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    }

    /// Runs a plan and asserts its exit code, showing stderr when it differs.
    pub fn run_expect(&self, plan: &Path, extra: &[&str], code: i32) -> std::process::Output {
        let out = self.run(plan, extra);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Messages delivered into a Maildir folder (new/ and cur/).
    pub fn messages(&self, folder: &str) -> Vec<String> {
        let mut out = Vec::new();
        for sub in ["new", "cur"] {
            let Ok(rd) = std::fs::read_dir(self.path(folder).join(sub)) else {
                continue;
            };
            for e in rd {
                let e = e.unwrap();
                if !e.file_name().to_string_lossy().starts_with('.') {
                    out.push(std::fs::read_to_string(e.path()).unwrap());
                }
            }
        }
        out
    }
}

/// Every record of a trace, parsed (a test's own run writes only valid lines).
pub fn records(trace: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The call records of a trace, of `tool` only when given.
pub fn calls(trace: &Path, tool: Option<&str>) -> Vec<serde_json::Value> {
    records(trace)
        .into_iter()
        .filter(|r| r["type"] == "call" && tool.is_none_or(|t| r["tool"] == t))
        .collect()
}

/// Every path under `dir` (sorted, relative) with a file's bytes: to assert that nothing was written.
#[allow(
    dead_code,
    reason = "each test binary uses a different part of `common`"
)]
pub fn file_tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            if path.is_dir() {
                out.push((rel, Vec::new()));
                walk(root, &path, out);
            } else {
                out.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out
}

/// The child processes of `pid`, from /proc (Linux; empty elsewhere or once it is gone).
#[allow(
    dead_code,
    reason = "each test binary uses a different part of `common`"
)]
pub fn child_pids(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|c| c.parse().ok())
        .collect()
}
