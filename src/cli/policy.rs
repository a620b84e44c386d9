//! `zamburak policy check FILE` and `zamburak policy test SCENARIOS`.

use super::output::{errln, outln};
use std::path::Path;

use crate::exit;
use crate::policy::Policy;
use crate::scenario::run_file;

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
                    outln!("#   {}", one_line(&d.to_string()));
                }
            }
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

/// A comment line stays one line: a name in it cannot end the comment and start YAML of its own.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}
