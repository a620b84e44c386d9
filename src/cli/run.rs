//! `zamburak run`: loads the policy and the plan, runs the plan against the built-in adapters, writes the
//! trace and reports in text or JSON.

use super::output::{err, errln, out, outln};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::exit;
use crate::plan;
use crate::policy::discover::{self, Chosen};
use crate::policy::{Outcome, Policy};
use crate::runtime::run::{RunReport, Status};
use crate::runtime::setup::{self, RunSetupError};
use crate::runtime::snapshot;

/// `zamburak run`'s arguments (its help and exit codes are on `Command::Run`).
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The plan, a Python file in Monty's subset.
    pub plan: PathBuf,
    #[command(flatten)]
    pub policy: super::PolicyArgs,
    /// Where to write the trace. Default: PLAN.zjson beside the plan.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = super::RunFormat::Text)]
    pub format: super::RunFormat,
    /// Seconds a `confirm` claim may wait for `zamburak approve` (default 600).
    #[arg(long, value_name = "SECONDS")]
    pub approval_ttl: Option<u64>,
    /// `ask`: put each `confirm` claim to you on the terminal (only when stdin is a terminal);
    /// `suspend` (default): save the run and exit 4.
    #[arg(long, value_enum, default_value_t = Confirm::Suspend)]
    pub confirm: Confirm,
    /// Do not keep the run's values in PLAN.zvalues (private to you, read by `view --reveal`).
    #[arg(long)]
    pub no_values: bool,
    /// Print every decision (default: one line per call site, repeats counted: `allow read_file ×95`).
    #[arg(short, long, conflicts_with = "quiet")]
    pub verbose: bool,
    /// Print no decision lines, only the outcome.
    #[arg(short, long)]
    pub quiet: bool,
}

/// What `run` does with a `confirm` claim.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confirm {
    Suspend,
    Ask,
}

impl RunArgs {
    fn json(&self) -> bool {
        self.format == super::RunFormat::Json
    }

    /// The decision lines: every call (`-v`), one per call site (default), or none (`-q`).
    fn verbosity(&self) -> super::decisions::Verbosity {
        match (self.verbose, self.quiet) {
            (true, _) => super::decisions::Verbosity::Every,
            (_, true) => super::decisions::Verbosity::Quiet,
            _ => super::decisions::Verbosity::Grouped,
        }
    }
}

/// The one JSON document `run --format json` prints (and `approve`/`reject --format json`, for the continued
/// run).
#[derive(Serialize)]
pub(super) struct JsonReport<'a> {
    #[serde(flatten)]
    report: &'a RunReport,
    diagnostics: Vec<JsonDiagnostic>,
    trace: Option<String>,
    head: Option<String>,
    /// Which policy decided (`approve` and `reject` name none: the snapshot binds the policy).
    #[serde(skip_serializing_if = "Option::is_none")]
    policy: Option<JsonPolicy>,
    /// A suspended run: the claim it waits on, with the values the approver decides on.
    approval: Option<JsonApproval<'a>>,
    /// What a planner model may be told about this run (docs/semantics.md, "What the planner and the person
    /// are told"): the same answer `mcp serve` gives, for programs that hand the run back to a model.
    planner: serde_json::Value,
}

#[derive(Serialize)]
struct JsonApproval<'a> {
    snapshot: String,
    /// The claim's code, which `approve --claim` takes.
    code: String,
    /// The claim as a person deciding it reads it (what `run` prints on stderr).
    text: String,
    claim: &'a crate::trace::record::Call,
    /// Each argument's value by name (the approver may read them all).
    values: serde_json::Map<String, serde_json::Value>,
    /// Per guarded argument, the recipients who may not read it.
    non_readers: serde_json::Map<String, serde_json::Value>,
    /// Each consequential value looked up among the remembered ones: `known`, `new` or `looks_like`.
    novelty: &'a [crate::known::Novelty],
}

#[derive(Serialize)]
pub(super) struct JsonPolicy {
    /// `flag`, `discovered` or `built-in`.
    origin: &'static str,
    /// The file, or `built-in default`.
    path: String,
    sha256: String,
}

#[derive(Serialize)]
struct JsonDiagnostic {
    code: &'static str,
    line: u32,
    column: u32,
    message: String,
    hint: Option<String>,
}

/// Runs `zamburak run` and returns its exit code.
pub fn run_command(opts: &RunArgs) -> i32 {
    match start(opts) {
        Ok(ran) => report(opts, &ran),
        Err(e) => setup_failed(opts, &e),
    }
}

/// What a run did, with what reporting it needs; holds the run's lock until the command ends.
struct Ran {
    chosen: Chosen,
    source: String,
    trace_path: PathBuf,
    report: RunReport,
    /// Where a suspended run's snapshot was saved.
    snapshot_path: Option<PathBuf>,
    /// The trace's head, or `None` when it could not be completed.
    head: Option<String>,
    /// A suspension that could not be saved makes the run a configuration error.
    exit_override: Option<i32>,
    _lock: std::fs::File,
}

/// Finds the policy and reads the plan, then goes through the one run driver ([`setup::check`],
/// [`setup::Checked::prepare`], [`setup::Prepared::run`]), printing on the way: a warning for an empty plan,
/// which policy decides (after the tools are checked: when the built-in default cannot work here, the first
/// line says what to do), the decision lines as they are recorded, and the claim a suspended run waits on.
fn start(opts: &RunArgs) -> Result<Ran, RunSetupError> {
    let chosen = discover::choose(opts.policy.policy.as_deref(), &opts.plan)?;
    let source = setup::read_plan(&opts.plan)?;
    if plan::is_empty(&source) {
        errln!(
            "warning: {} is empty: it calls no tool and prints nothing",
            opts.plan.display()
        );
    }
    let mode = opts.policy.mode.unwrap_or(chosen.policy.mode());
    let checked = setup::check(&chosen, &opts.plan, source, mode)?;
    errln!("{}", chosen.announce_in(mode));
    for w in &chosen.warnings {
        errln!("warning: {w}");
    }
    let trace_path = opts
        .trace
        .clone()
        .unwrap_or_else(|| opts.plan.with_extension("zjson"));
    let mut prepared = checked.prepare(setup::Setup {
        trace: trace_path.clone(),
        engine: super::worker_engine()?,
        context: None,
        stop: None,
        keep_values: !opts.no_values,
        ttl_secs: opts.approval_ttl.unwrap_or(snapshot::DEFAULT_TTL_SECS),
        before_servers: Some(&super::interrupt::on_interrupt_kill_servers),
    })?;
    if let Some(w) = &prepared.values_warning {
        errln!("warning: {w}");
    }
    let decisions = super::decisions::Decisions::new(
        opts.plan.display().to_string(),
        if opts.json() {
            super::decisions::Verbosity::Quiet
        } else {
            opts.verbosity()
        },
    );
    print_decisions_as_recorded(&mut prepared, &decisions);
    let finished = run_plan(opts, prepared, &decisions);
    decisions.flush();
    let (mut snapshot_path, mut exit_override) = (None, None);
    match finished.snapshot {
        Some(Ok(path)) => {
            errln!("{}", crate::claim::describe_claim(&finished.report, &path));
            snapshot_path = Some(path);
        }
        Some(Err(e)) => {
            errln!("error: the run cannot be suspended: {e}");
            exit_override = Some(exit::USAGE);
        }
        None => {}
    }
    if let Some(problem) = &finished.values_problem {
        errln!("warning: values stopped being kept for `view --reveal`: {problem}");
    }
    let head = match finished.head {
        Ok(head) => Some(head),
        Err(e) => {
            errln!(
                "error: the trace {} could not be completed: {e}",
                trace_path.display()
            );
            None
        }
    };
    Ok(Ran {
        chosen,
        source: finished.source,
        trace_path,
        report: finished.report,
        snapshot_path,
        head,
        exit_override,
        _lock: finished.lock,
    })
}

/// Says why the run did not start, and returns the exit code its kind of failure calls for: a plan that is
/// not UTF-8 is a rejected plan (shown as a diagnostic), everything else a configuration problem.
fn setup_failed(opts: &RunArgs, e: &RunSetupError) -> i32 {
    let json = opts.json();
    match e {
        RunSetupError::PlanNotUtf8 { text, diagnostic } => {
            let filename = opts.plan.display().to_string();
            err!(
                "{}",
                plan::render(std::slice::from_ref(&**diagnostic), text, &filename)
            );
            if json {
                let (line, column) = plan::line_col(text, diagnostic.start);
                outln!(
                    "{}",
                    serde_json::json!({ "error": diagnostic.message, "line": line, "column": column })
                );
            }
            exit::REJECTED
        }
        RunSetupError::McpStart(call) => {
            let code = usage(json, &e.to_string());
            if let Some(said) = call.said() {
                errln!("  {}", said.for_terminal());
            }
            code
        }
        _ => usage(json, &e.to_string()),
    }
}

/// Prints the decisions as they are recorded (before their side effects), so a long run shows its progress
/// and a `--confirm ask` question comes after the lines of the calls before it: every call, one line per
/// call site, or none ([`super::decisions`]).
fn print_decisions_as_recorded(
    prepared: &mut setup::Prepared<'_>,
    decisions: &super::decisions::Decisions,
) {
    let decisions = decisions.clone();
    prepared.observe(move |record| {
        if let crate::trace::Record::Call(c) = record {
            decisions.record(c);
        }
    });
}

/// Runs the plan to its end, a denial or a claim (asking at the terminal under `--confirm ask`); what it
/// prints goes to the terminal.
fn run_plan(
    opts: &RunArgs,
    prepared: setup::Prepared<'_>,
    decisions: &super::decisions::Decisions,
) -> setup::Finished {
    let json = opts.json();
    let mut print = |text: &str| {
        // `print` output is for the person at the terminal; in JSON mode stdout carries only the document.
        // Mail a plan prints can hold escape sequences: escaped, so it cannot erase or forge the decision
        // lines around it (the same rule as a claim's values, line breaks kept).
        let text = crate::text::visible_lines(text);
        if json {
            err!("{text}");
        } else {
            out!("{text}");
        }
    };
    let ask = (opts.confirm == Confirm::Ask) && std::io::IsTerminal::is_terminal(&std::io::stdin());
    if (opts.confirm == Confirm::Ask) && !ask {
        errln!(
            "not asking: stdin is not a terminal (text piped in never approves); a claim suspends the run"
        );
    }
    // The repeats counted so far are said before the question, so it comes after every line it follows.
    let asked = decisions.clone();
    let mut asking = move |call: &crate::trace::record::Call,
                           shown: &crate::runtime::run::ClaimShown| {
        asked.flush();
        ask_on_terminal(call, shown)
    };
    prepared.run(setup::How {
        print: &mut print,
        approver: if ask { Some(&mut asking) } else { None },
        audience: crate::plan::Audience::Person,
    })
}

/// Prints what the run did (the plan's diagnostics, then the JSON document or the text summary) and
/// returns the exit code.
fn report(opts: &RunArgs, ran: &Ran) -> i32 {
    let Ran {
        chosen,
        source,
        trace_path,
        report,
        head,
        exit_override,
        ..
    } = ran;
    let filename = opts.plan.display().to_string();
    if !report.diagnostics.is_empty() {
        err!("{}", plan::render(&report.diagnostics, source, &filename));
    }
    if opts.json() {
        let doc = json_report(ran);
        match serde_json::to_string_pretty(&doc) {
            Ok(text) => outln!("{text}"),
            Err(e) => errln!("error: cannot print the report: {e}"),
        }
    } else {
        print_text(report, &chosen.policy, source, &filename);
        match head {
            Some(h) => errln!("trace: {} (head {h})", trace_path.display()),
            None => errln!("trace: {} (incomplete)", trace_path.display()),
        }
    }
    if head.is_none() && report.exit_code == exit::OK {
        // An unfinished trace is an audit failure: do not report success.
        return exit::USAGE;
    }
    exit_override.unwrap_or(report.exit_code)
}

/// The JSON document of a run, from what it did.
fn json_report(ran: &Ran) -> JsonReport<'_> {
    let Ran {
        chosen,
        source,
        trace_path,
        report,
        snapshot_path,
        head,
        ..
    } = ran;
    json_document(
        report,
        source,
        trace_path,
        head.as_deref(),
        snapshot_path.as_deref(),
        Some(JsonPolicy {
            origin: chosen.origin.kind(),
            path: chosen.display_path(),
            sha256: chosen.sha256.clone(),
        }),
        &crate::runtime::answer::Knows::of(&chosen.policy),
    )
}

/// The JSON document of a run writing `trace` (a first run, or one a decision continued): the report, its
/// diagnostics, the claim a suspended run waits on (saved at `snapshot`), and the planner's answer.
pub(super) fn json_document<'a>(
    report: &'a RunReport,
    source: &str,
    trace: &Path,
    head: Option<&str>,
    snapshot: Option<&Path>,
    policy: Option<JsonPolicy>,
    knows: &crate::runtime::answer::Knows,
) -> JsonReport<'a> {
    // The planner's answer names the run by its trace, read back from it as `mcp serve` reads a run's.
    let run = trace
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut told = crate::runtime::answer::read_back(&run, trace, knows);
    told.answer.diagnostics = crate::runtime::answer::diagnostics(report, source);
    told.answer.person = Some(format!(
        "this terminal, and `zamburak view {} --reveal`",
        trace.display()
    ));
    let planner = told.answer.to_value();
    JsonReport {
        report,
        diagnostics: report
            .diagnostics
            .iter()
            .map(|d| {
                let (line, column) = plan::line_col(source, d.start);
                JsonDiagnostic {
                    code: d.code.as_str(),
                    line,
                    column,
                    message: d.message.clone(),
                    hint: d.hint.clone(),
                }
            })
            .collect(),
        trace: Some(trace.display().to_string()),
        head: head.map(str::to_string),
        policy,
        approval: match (&report.suspension, snapshot) {
            (Some(s), Some(p)) => Some(JsonApproval {
                snapshot: p.display().to_string(),
                code: s.claim.claim_code(),
                text: crate::claim::claim_text(&s.claim, &s.shown),
                claim: &s.claim,
                values: s.shown.values.iter().cloned().collect(),
                non_readers: s
                    .shown
                    .non_readers
                    .iter()
                    .map(|(arg, who)| (arg.clone(), serde_json::json!(who)))
                    .collect(),
                novelty: &s.shown.novelty,
            }),
            _ => None,
        },
        planner,
    }
}

/// Puts a claim to the person at the terminal. Only `y` or `yes` approves.
fn ask_on_terminal(
    call: &crate::trace::record::Call,
    shown: &crate::runtime::run::ClaimShown,
) -> (bool, String) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{}", crate::claim::claim_text(call, shown));
    let _ = write!(err, "approve? [y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    let _ = std::io::stdin().read_line(&mut answer);
    let yes = matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes");
    let by = std::env::var("USER").unwrap_or_else(|_| "terminal".into());
    let what = if call.on_approval.as_deref() == Some("draft") {
        "drafting it (nothing is sent)"
    } else {
        "running it"
    };
    if yes {
        let _ = writeln!(
            err,
            "approved by {}: {what}, `{}` #{}",
            crate::text::visible(&by),
            call.tool,
            call.call_id
        );
    } else {
        let _ = writeln!(
            err,
            "rejected by {}: `{}` #{} does not run",
            crate::text::visible(&by),
            call.tool,
            call.call_id
        );
    }
    (yes, by)
}

/// A configuration problem (exit 2): on stderr, and on stdout as `{"error": …}` when the caller asked
/// for JSON, so a program reading stdout never gets an empty document.
fn usage(json: bool, message: &str) -> i32 {
    // Policy errors span lines (a snippet of the policy); nothing else a person cannot see passes.
    errln!("error: {}", crate::text::visible_lines(message));
    if json {
        outln!("{}", serde_json::json!({ "error": message }));
    }
    exit::USAGE
}

/// The end of a text run (its decision lines were printed as they were recorded): the error, what a tool
/// said, and one line that sums up the run.
fn print_text(report: &RunReport, policy: &Policy, source: &str, filename: &str) {
    // A rejected plan's error repeats its first diagnostic, which is already shown above.
    if let Some(e) = report
        .error
        .as_ref()
        .filter(|_| report.status != Status::Rejected)
    {
        err!(
            "{}",
            crate::plan::render::render_runtime(&e.exc_type, &e.message, source, filename, e.line)
        );
    }
    if let Some(said) = &report.tool_said {
        // The tool's, server's or model's own words: escaped, on the terminal only (JSON and the trace
        // have them redacted).
        errln!("  {}", said.for_terminal());
    }
    let counts = decision_counts(report, policy);
    let summary = match report.status {
        Status::Completed => format!("completed ({}){counts}", report.outcome),
        Status::Rejected => "rejected before the run: no tool ran".to_string(),
        Status::Error => format!("stopped by an error{counts}"),
        Status::Denied => format!("stopped: a tool call was denied{counts}"),
        Status::Suspended => {
            format!("suspended: a tool call waits for your decision (exit 4){counts}")
        }
    };
    errln!("{summary}");
}

/// `: 2 allowed, 3 drafted → examples/out/drafts/new` (empty when no call was decided): how many calls
/// each decision met, and where drafted mail waits for review.
fn decision_counts(report: &RunReport, policy: &Policy) -> String {
    let count = |o: Outcome, approval: Option<&str>| {
        report
            .decisions
            .iter()
            .filter(|d| d.decision == o && d.approval.as_deref() == approval)
            .count()
    };
    let parts: Vec<String> = [
        (Outcome::Allow, None, "allowed"),
        (Outcome::Draft, None, "drafted"),
        (Outcome::Confirm, Some("approved"), "approved by you"),
        (Outcome::Confirm, Some("rejected"), "rejected by you"),
        (Outcome::Confirm, None, "held for confirmation"),
        (Outcome::Deny, None, "denied"),
    ]
    .into_iter()
    .filter_map(|(o, approval, word)| {
        let n = count(o, approval);
        (n > 0).then(|| format!("{n} {word}"))
    })
    .collect();
    if parts.is_empty() {
        return String::new();
    }
    let drafts = match policy.builtins().mail.as_ref() {
        Some(mail) if count(Outcome::Draft, None) > 0 => {
            format!(
                " → {}",
                super::output::shown_path(&mail.drafts.join("new")).display()
            )
        }
        _ => String::new(),
    };
    format!(": {}{drafts}", parts.join(", "))
}
