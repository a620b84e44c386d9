//! `zamburak policy init` (for the built-in tools; `--mcp` is in `cli::mcp`), `zamburak policy check FILE` and
//! `zamburak policy test SCENARIOS`.

use super::output::{errln, outln};
use std::path::Path;

use crate::exit;
use crate::policy::Policy;
use crate::scenario::run_file;
use crate::text::one_line;

/// Most characters of one policy text (a reason, a warning) on a comment line.
const MAX_LINE: usize = 500;

/// `zamburak policy init [-o FILE]`: writes the starting policy for the built-in tools
/// ([`crate::policy::starter`]) and creates the empty folders it reads, so that `zamburak run plan.py` works
/// in that directory at once. Never replaces a file without `force`, and never touches a folder that exists.
pub fn init_command(out: &Path, force: bool) -> i32 {
    if out.exists() && !force {
        errln!(
            "error: {} exists; give --force to replace it",
            out.display()
        );
        return exit::USAGE;
    }
    // Empty for a file in the current directory: the folders are then shown as plain relative names.
    let dir = out.parent().unwrap_or(Path::new(""));
    let mut created = Vec::new();
    for rel in crate::policy::starter::READ_DIRS {
        let folder = dir.join(rel);
        if folder.exists() {
            continue;
        }
        // A Maildir is three folders; the files sandbox is one.
        let parts: &[&str] = if rel.starts_with("mail") {
            &["cur", "new", "tmp"]
        } else {
            &[""]
        };
        for part in parts {
            if let Err(e) = std::fs::create_dir_all(folder.join(part)) {
                errln!("error: cannot create {}: {e}", folder.display());
                return exit::USAGE;
            }
        }
        created.push(folder.display().to_string());
    }
    let text = crate::policy::starter::builtin_policy();
    if let Err(e) = std::fs::write(out, &text) {
        errln!("error: cannot write {}: {e}", out.display());
        return exit::USAGE;
    }
    if let Err(e) = Policy::load(out) {
        errln!(
            "error: the written policy does not pass its own check (a defect; please report it): {e}"
        );
        return exit::USAGE;
    }
    outln!(
        "wrote {}: the built-in mail, files and web tools",
        out.display()
    );
    if !created.is_empty() {
        outln!("created (empty): {}", created.join(", "));
    }
    outln!(
        "next: put your address in `user:` and your data in the folders it names, then run plans beside it \
         (`zamburak run plan.py`); `zamburak policy check {}` shows every rule",
        out.display()
    );
    exit::OK
}

/// `zamburak policy check FILE`: validates a policy and prints it normalised (defaults filled in, paths
/// resolved) on stdout. Returns the exit code: 0, or [`crate::exit::USAGE`] with the error on stderr.
pub fn check_command(file: &Path) -> i32 {
    let policy = match Policy::load(file) {
        Ok(p) => p,
        Err(e) => {
            errln!("error: {e}");
            return crate::exit::USAGE;
        }
    };
    match policy.to_yaml() {
        Ok(text) => {
            outln!("{}", text.trim_end());
            // As YAML comments, so what is printed still reads back as the same policy.
            let defaulted = policy.defaulted();
            if !defaulted.is_empty() {
                let count = match defaulted.len() {
                    1 => "1 argument leaves".to_string(),
                    n => format!("{n} arguments leave"),
                };
                outln!(
                    "# {count} the process without a declared confidentiality check and got the strictest \
                     check against where it goes (docs/policy.md, \"Arguments that leave\"):"
                );
                for d in defaulted {
                    outln!("#   {}", one_line(&d.to_string(), MAX_LINE));
                }
            }
            // Every argument whose readers are deliberately unchecked, with the policy's reason, so a reviewer
            // sees each one (docs/semantics.md, "A `forbid_tags` never replaces the readers check").
            for (tool, spec) in policy.file().tools.iter() {
                for (arg, a) in spec.args.iter() {
                    if a.readers.is_some() {
                        outln!(
                            "# readers not checked: `{tool}` argument `{arg}` (readers: any): {}",
                            one_line(a.reason.as_deref().unwrap_or(""), MAX_LINE)
                        );
                    }
                }
            }
            for w in crate::policy::advice::warnings(&policy) {
                outln!(
                    "# warning: `{}` argument `{}` {}",
                    w.tool,
                    w.arg,
                    one_line(&w.why, MAX_LINE)
                );
            }
            // What a run would refuse before starting, for every tool (a plan names only some).
            let all = policy
                .file()
                .tools
                .iter()
                .map(|(name, _)| name.to_string())
                .collect();
            let problems = crate::runtime::setup::problems(&policy, &all);
            for p in &problems {
                outln!(
                    "# cannot work on this machine: {}; change `{}`",
                    one_line(&p.to_string(), MAX_LINE),
                    p.key()
                );
            }
            outln!("{}", verdict(&policy, problems.len()));
            crate::exit::OK
        }
        Err(e) => {
            errln!(
                "error: cannot print the policy {}: {e}",
                policy.display_name()
            );
            crate::exit::USAGE
        }
    }
}

/// `zamburak policy test FILE [--policy P]`. Returns the exit code: 0 all passed, 1 any failed, 2 when
/// the file or the policy cannot be used.
pub fn test_command(file: &Path, policy_override: Option<&Path>) -> i32 {
    let engine = match super::worker_engine() {
        Ok(engine) => engine,
        Err(e) => {
            errln!("error: {e}");
            return exit::USAGE;
        }
    };
    match run_file(file, policy_override, &engine, &mut |line| outln!("{line}")) {
        Ok(totals) => {
            outln!("{} passed, {} failed", totals.passed, totals.failed);
            if totals.failed == 0 {
                exit::OK
            } else {
                exit::REJECTED
            }
        }
        Err(message) => {
            errln!("error: {message}");
            exit::USAGE
        }
    }
}

/// The last line of `policy check`, a YAML comment: valid, what it declares, and whether every tool can work here.
fn verdict(policy: &Policy, problems: usize) -> String {
    let tools = policy.file().tools.iter().count();
    let verifiers = policy.file().verifiers.iter().count();
    let plural = |n: usize, one: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {one}s")
        }
    };
    let mut line = format!(
        "# valid: {} ({}, {}, mode {})",
        policy.display_name(),
        plural(tools, "tool"),
        plural(verifiers, "verifier"),
        policy.mode().name()
    );
    if problems > 0 {
        line.push_str(&format!(
            "; {} cannot work on this machine (above): `zamburak run` refuses plans that name them",
            plural(problems, "tool")
        ));
    }
    one_line(&line, MAX_LINE)
}
