//! `zamburak lint PLAN.py [--policy FILE] [--mode M] [--format text|json|sarif]`.
//!
//! Exit codes: 0 clean or warnings only, 1 errors, 2 usage (unreadable plan or policy).

use super::output::{errln, out, outln};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::analysis::{LintReport, lint, output};
use crate::exit;
use crate::plan::parse::MAX_SOURCE_BYTES;
use crate::policy::discover;

/// How `lint` prints its report.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Sarif,
}

/// `zamburak lint`'s arguments (its help and exit codes are on `Command::Lint`).
#[derive(clap::Args, Debug)]
pub struct LintArgs {
    /// The plan, a Python file in Monty's subset.
    pub plan: PathBuf,
    #[command(flatten)]
    pub policy: super::PolicyArgs,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

fn usage(format: Format, message: &str) -> i32 {
    errln!("error: {message}");
    match format {
        Format::Text => {}
        Format::Json => outln!("{}", serde_json::json!({ "error": message })),
        Format::Sarif => outln!("{}", output::sarif_failure(message)),
    }
    exit::USAGE
}

/// A usage error clap found before `lint` started (a missing plan, a bad flag), when the command line asked
/// for SARIF: the log says so on stdout, as for every other usage error.
pub fn sarif_usage_error(message: &str) {
    outln!("{}", output::sarif_failure(message));
}

/// Reads at most one byte past the plan size limit, so a huge file is refused without reading it whole.
fn read_capped(path: &Path) -> Result<Vec<u8>, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_SOURCE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(bytes)
}

/// Runs `zamburak lint` and returns its exit code.
pub fn lint_command(opts: &LintArgs) -> i32 {
    let chosen = match discover::choose(opts.policy.policy.as_deref(), &opts.plan) {
        Ok(c) => c,
        Err(e) => return usage(opts.format, &e.to_string()),
    };
    // On stderr, so stdout stays the report a planner parses; the mode is the one the lint predicts.
    errln!(
        "{}",
        chosen.announce_in(opts.policy.mode.unwrap_or_else(|| chosen.policy.mode()))
    );
    for w in &chosen.warnings {
        errln!("warning: {w}");
    }
    if let Err(e) = crate::mcp::lock::check_offline(&chosen.policy, chosen.origin.path()) {
        return usage(opts.format, &e.to_string());
    }
    let policy = chosen.policy;
    let bytes = match read_capped(&opts.plan) {
        Ok(b) => b,
        Err(e) => return usage(opts.format, &e),
    };
    let filename = opts.plan.display().to_string();
    let mode = opts.policy.mode.unwrap_or_else(|| policy.mode());
    let report = match crate::plan::decode(bytes) {
        Ok(source) => lint(&source, &policy, mode),
        Err((source, diagnostic)) => LintReport {
            lines: crate::plan::render::LineIndex::new(&source),
            source,
            diagnostics: vec![diagnostic],
            calls: Vec::new(),
        },
    };
    let rendered = match opts.format {
        Format::Text => output::text(&report, &filename),
        Format::Json => format!("{}\n", output::json_text(&report, &filename)),
        Format::Sarif => format!("{}\n", output::sarif(&report, &filename)),
    };
    out!("{rendered}");
    let code = if report.has_errors() {
        exit::REJECTED
    } else {
        exit::OK
    };
    // The process ends right after this; freeing a large report would only delay the planner's loop.
    std::mem::forget(report);
    code
}
