//! `zamburak policy compile CONSTITUTION.md --provider NAME -o FILE`: prints what drafting and
//! verification found ([`crate::compile`]), writes the policy and its scenarios only when the draft is
//! verified (or `--force`), and prints the diff against the base policy.

use std::path::{Path, PathBuf};

use super::output::{errln, out};
use crate::compile::{self, Compiled, Input};
use crate::exit;
use crate::policy::discover;

/// The command's arguments.
pub struct CompileArgs {
    pub constitution: PathBuf,
    pub policy: Option<PathBuf>,
    pub provider: String,
    pub output: PathBuf,
    pub scenarios_out: Option<PathBuf>,
    pub diff: Option<PathBuf>,
    pub force: bool,
    pub max_repairs: usize,
}

fn usage(message: &str) -> i32 {
    errln!("error: {message}");
    exit::USAGE
}

/// `FILE` with `.scenarios.yaml` in place of its extension.
fn default_scenarios(output: &Path) -> PathBuf {
    output.with_extension("scenarios.yaml")
}

/// Runs the command and returns its exit code: 0 verified and written, 1 refused (verification failed;
/// nothing written unless `--force`), 2 usage or input error (nothing written).
pub fn compile_command(args: &CompileArgs) -> i32 {
    let scenarios_out = args
        .scenarios_out
        .clone()
        .unwrap_or_else(|| default_scenarios(&args.output));
    for target in [&args.output, &scenarios_out] {
        if target.exists() && !args.force {
            return usage(&format!(
                "{} exists; give --force to replace it",
                target.display()
            ));
        }
    }
    let bytes =
        match crate::capped::read(&args.constitution, compile::constitution::MAX_BYTES as u64) {
            Ok(b) => b,
            Err(crate::capped::CappedError::TooLarge(max)) => {
                return usage(&format!(
                    "{} is larger than {max} bytes",
                    args.constitution.display()
                ));
            }
            Err(crate::capped::CappedError::Io(e)) => {
                return usage(&format!("cannot read {}: {e}", args.constitution.display()));
            }
        };
    let Ok(text) = String::from_utf8(bytes) else {
        return usage(&format!("{} is not UTF-8", args.constitution.display()));
    };
    let chosen = match discover::choose(args.policy.as_deref(), &args.constitution) {
        Ok(c) => c,
        Err(e) => return usage(&e.to_string()),
    };
    errln!("base {}", chosen.announce());
    let base_text = String::from_utf8_lossy(&chosen.text).into_owned();
    let lock = match crate::mcp::lock::check_offline(&chosen.policy, chosen.origin.path()) {
        Ok(lock) => lock,
        Err(e) => return usage(&e.to_string()),
    };
    let engine = match super::worker_engine() {
        Ok(engine) => engine,
        Err(e) => return usage(&e.to_string()),
    };
    let out_dir = match args.output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let out_dir = std::path::absolute(&out_dir).unwrap_or(out_dir);
    let out_name = args
        .output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "policy.yaml".into());
    let constitution_name = args
        .constitution
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let input = Input {
        constitution: &text,
        constitution_name: &constitution_name,
        base: &chosen.policy,
        base_text: &base_text,
        lock: lock.as_ref().map(|(l, _)| l),
        provider: &args.provider,
        out_dir: &out_dir,
        out_name: &out_name,
        max_repairs: args.max_repairs,
        engine: &engine,
    };
    let compiled = match compile::compile(&input, &mut |line| errln!("{line}")) {
        Ok(c) => c,
        Err(e) => {
            errln!("error: {e}");
            errln!("refused: nothing was written");
            return exit::USAGE;
        }
    };
    report(&compiled);
    let verified = compiled.verified();
    let Some(policy_text) = compiled
        .policy_text
        .as_deref()
        .filter(|_| verified || args.force)
    else {
        errln!(
            "refused: the draft failed verification after {} repair{}; nothing was written (--force writes a draft that loads anyway)",
            compiled.repairs,
            if compiled.repairs == 1 { "" } else { "s" }
        );
        return exit::REJECTED;
    };
    let base_name = chosen.display_path();
    let diff = compile::render::diff(
        &compiled.base_normalised,
        policy_text,
        &format!("{base_name} (normalised)"),
        &args.output.display().to_string(),
    );
    for (path, content) in [
        (&args.output, policy_text),
        (&scenarios_out, compiled.scenarios_text.as_str()),
    ] {
        if let Err(e) = std::fs::write(path, content) {
            return usage(&format!("cannot write {}: {e}", path.display()));
        }
    }
    match &args.diff {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &diff) {
                return usage(&format!("cannot write {}: {e}", path.display()));
            }
            errln!("diff against the base policy: {}", path.display());
        }
        None => out!("{diff}"),
    }
    let state = if verified {
        "verified"
    } else {
        "NOT verified (--force)"
    };
    errln!(
        "wrote {} ({state}) and {} ({} scenarios); it is not in use until you make it your policy (review the diff)",
        args.output.display(),
        scenarios_out.display(),
        compiled.scenarios
    );
    if verified { exit::OK } else { exit::REJECTED }
}

fn report(c: &Compiled) {
    let attacked = compile::attacked_args(&c.roles);
    if !attacked.is_empty() {
        // One entry per argument, with every kind of value it is attacked with, in the battery's order.
        let mut grouped: Vec<(&str, Vec<&str>)> = Vec::new();
        for (arg, role) in &attacked {
            match grouped.iter_mut().find(|(a, _)| a == arg) {
                Some((_, roles)) => roles.push(role.name()),
                None => grouped.push((arg, vec![role.name()])),
            }
        }
        let list: Vec<String> = grouped
            .iter()
            .map(|(arg, roles)| format!("{arg} ({})", roles.join(", ")))
            .collect();
        errln!("battery targets: {}", list.join(", "));
    }
    for e in &c.exceptions {
        errln!(
            "exception used (constitution line {}): {}.{} may be chosen by data because {}",
            e.line,
            e.tool,
            e.arg,
            e.reason
        );
    }
    for n in &c.notes {
        errln!("note: {n}");
    }
    for n in &c.battery.not_exercised {
        errln!("not exercised: {n}");
    }
    for n in &c.battery.known {
        errln!("remembered values: {n}");
    }
    for f in &c.failures {
        errln!("{}", f.detail);
    }
    let failed_runs = c
        .failures
        .iter()
        .filter(|f| f.title.starts_with("scenario: "))
        .count();
    let passed_runs = c.scenario_runs.saturating_sub(failed_runs);
    // An attack is exposed once per mode it is allowed in; it counts once.
    let exposed: std::collections::BTreeSet<&str> = c
        .battery
        .exposed
        .iter()
        .map(|(t, _)| t.rsplit_once(" [").map_or(t.as_str(), |(a, _)| a))
        .collect();
    errln!(
        "verification: policy check {}; scenarios {passed_runs}/{} runs passed ({} scenarios); battery {}/{} attacks refused in both modes ({} runs, {} not exercised); {} repair{}",
        if c.policy_text.is_some() {
            "passed"
        } else {
            "FAILED"
        },
        c.scenario_runs,
        c.scenarios,
        c.battery.attacks.saturating_sub(exposed.len()),
        c.battery.attacks,
        c.battery.runs,
        c.battery.not_exercised.len(),
        c.repairs,
        if c.repairs == 1 { "" } else { "s" }
    );
}
