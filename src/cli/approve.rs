//! `zamburak approve|reject SNAPSHOT`: records a human's decision on a suspended claim and continues the
//! run; and how a claim is put to a person on a terminal. With `--format json`, stdout carries one JSON
//! document of the continued run, as `run --format json` prints it, and the plan's prints go to stderr.

use super::output::{err, errln, out, outln};
use std::path::{Path, PathBuf};

use crate::claim::{claim_is_cut, claim_text, claim_text_full, decider, describe_claim};
use crate::exit;
use crate::runtime::snapshot::{self, Decided, Verdict};

/// What the person said on the command line.
struct Decision<'a> {
    pub approve: bool,
    /// `--claim CODE`.
    pub claim: Option<&'a str>,
    /// `--by NAME`.
    pub by: Option<&'a str>,
    /// `--remember [ARG]`: the arguments whose values to remember; an empty name asks at a terminal.
    pub remember: &'a [String],
    /// `--full`: the claim shown again with every value whole.
    pub full: bool,
    /// `--format json`.
    pub json: bool,
}

/// `zamburak approve`'s arguments (its help and exit codes are on `Command::Approve`).
#[derive(clap::Args, Debug)]
pub struct ApproveArgs {
    /// The snapshot `run` wrote (TRACE.zsnap).
    pub snapshot: PathBuf,
    /// The claim's code, as shown with the claim (`7KQF-3MZD-A1XR`): what you approve. Without it,
    /// the claim is shown again at a terminal and you are asked; elsewhere nothing is approved.
    #[arg(long, value_name = "CODE")]
    pub claim: Option<String>,
    /// Who decides (recorded in the trace). Default: $USER.
    #[arg(long)]
    pub by: Option<String>,
    /// Also remember the values of argument ARG (repeatable), so a later claim with the same value
    /// says `known` and a policy's `known(ROLE)` accepts it. Without ARG, at a terminal: names the
    /// values it would remember and asks.
    #[arg(long, value_name = "ARG", num_args = 0..=1, default_missing_value = "")]
    pub remember: Vec<String>,
    /// Show every value of the claim whole (a terminal shows 600 characters of each; approving from a
    /// cut view is refused).
    #[arg(long)]
    pub full: bool,
    /// `json`: one JSON document of the continued run on stdout, as `run --format json` prints it (the
    /// plan's prints go to stderr).
    #[arg(long, value_enum, default_value_t = super::RunFormat::Text)]
    pub format: super::RunFormat,
}

/// `zamburak reject`'s arguments (its help and exit codes are on `Command::Reject`).
#[derive(clap::Args, Debug)]
pub struct RejectArgs {
    /// The snapshot `run` wrote (TRACE.zsnap).
    pub snapshot: PathBuf,
    /// The claim's code, as shown with the claim: refuses when the snapshot holds another claim.
    #[arg(long, value_name = "CODE")]
    pub claim: Option<String>,
    /// Who decides (recorded in the trace). Default: $USER.
    #[arg(long)]
    pub by: Option<String>,
    /// `json`: one JSON document of the closed run on stdout, as `run --format json` prints it.
    #[arg(long, value_enum, default_value_t = super::RunFormat::Text)]
    pub format: super::RunFormat,
}

/// `zamburak approve`.
pub fn approve_command(args: &ApproveArgs) -> i32 {
    decide_command(
        &args.snapshot,
        Decision {
            approve: true,
            claim: args.claim.as_deref(),
            by: args.by.as_deref(),
            remember: &args.remember,
            full: args.full,
            json: args.format == super::RunFormat::Json,
        },
    )
}

/// `zamburak reject`.
pub fn reject_command(args: &RejectArgs) -> i32 {
    decide_command(
        &args.snapshot,
        Decision {
            approve: false,
            claim: args.claim.as_deref(),
            by: args.by.as_deref(),
            remember: &[],
            full: false,
            json: args.format == super::RunFormat::Json,
        },
    )
}

/// `zamburak approve|reject SNAPSHOT [--claim CODE] [--by NAME] [--remember [ARG]] [--full] [--format
/// json]`: records the decision in the trace and continues the run. An approval names its claim: by
/// `--claim`, or by the person's `y` after the claim is shown again at a terminal.
fn decide_command(path: &Path, decision: Decision<'_>) -> i32 {
    let Decision {
        approve,
        claim,
        by,
        remember,
        full,
        json,
    } = decision;
    // Nothing was decided: said on stderr, and on stdout as `{"error": …}` when the caller asked for JSON.
    let nothing_run = |message: &str| {
        errln!("error: {message}");
        errln!("nothing was run.");
        if json {
            outln!("{}", serde_json::json!({ "error": message }));
        }
        exit::USAGE
    };
    let Some(by) = decider(by) else {
        return nothing_run(
            "who decides is recorded in the trace: name yourself with `--by NAME` (no $USER is set and the account has no name)",
        );
    };
    let verb = if approve { "approve" } else { "reject" };
    let mut code = claim.map(str::to_string);
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stdin());
    if code.is_none() && terminal {
        // Show the claim again, exactly as the snapshot's code binds it, and let the person say.
        match ask_again(path, verb, full) {
            Ok(Some(c)) => code = Some(c),
            Ok(None) => {
                errln!("not {verb}d: the claim still waits.");
                if json {
                    outln!(
                        "{}",
                        serde_json::json!({ "error": format!("not {verb}d: the claim still waits") })
                    );
                }
                return exit::USAGE;
            }
            Err(e) => return nothing_run(&e),
        }
    }
    // `--remember` without an argument: the values it would remember are named, and the person asked.
    let remember = match resolve_remember(path, remember, terminal) {
        Ok(Some(args)) => args,
        Ok(None) => {
            errln!("not approved: nothing was remembered, and the claim still waits.");
            return exit::USAGE;
        }
        Err(e) => return nothing_run(&e),
    };
    // A resumed run may start MCP servers again.
    super::interrupt::on_interrupt_kill_servers();
    let engine = match super::worker_engine() {
        Ok(engine) => engine,
        Err(e) => return nothing_run(&e.to_string()),
    };
    let verdict = Verdict {
        approve,
        code: code.as_deref(),
        remember: &remember,
    };
    let decided = match snapshot::decide(path, verdict, &by, &engine, &mut |text| {
        // In JSON mode stdout carries only the document, as for `run`.
        let text = crate::text::visible_lines(text);
        if json {
            err!("{text}");
        } else {
            out!("{text}");
        }
    }) {
        Ok(d) => d,
        Err(e) => return nothing_run(&e.to_string()),
    };
    let headline = decided.headline(approve, &by);
    let ending = decided.ending(approve);
    let Decided {
        snapshot,
        report,
        suspended_again,
        snapshot_removed,
        head,
        planner,
        remembered,
    } = decided;
    for e in &remembered {
        errln!(
            "remembered: `{}` = {} as {} until {}",
            e.arg,
            serde_json::Value::String(visible(&e.value)),
            e.role,
            e.expires.get(..10).unwrap_or(&e.expires)
        );
    }
    let filename = super::output::shown_path(&snapshot.plan)
        .display()
        .to_string();
    let mut code = report.exit_code;
    match &suspended_again {
        Some(Ok(p)) => errln!("{}", describe_claim(&report, p)),
        Some(Err(e)) => {
            errln!("error: {e}");
            code = exit::USAGE;
        }
        None => {}
    }
    errln!("{}", headline);
    for d in report.decisions.iter().skip(snapshot.state.decisions.len()) {
        errln!(
            "{filename}:{}: {} {}: {} ({})",
            d.line,
            serde_json::to_value(d.decision)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            d.tool,
            visible(&d.reason),
            d.rule
        );
    }
    if let Some(e) = &report.error {
        // The plan's text for the snippet, only if it is still the plan that ran.
        let source = std::fs::read(&snapshot.plan)
            .ok()
            .filter(|b| crate::digest::sha256_bytes(b) == snapshot.plan_sha256)
            .and_then(|b| String::from_utf8(b).ok())
            .unwrap_or_default();
        err!(
            "{}",
            crate::plan::render::render_runtime(
                &e.exc_type,
                &e.message,
                &source,
                &filename,
                e.line
            )
        );
    }
    if let Some(said) = &report.tool_said {
        // The tool's, server's or model's own words: escaped, on the terminal only.
        errln!("  {}", said.for_terminal());
    }
    let ended = ending.unwrap_or_else(|| {
        "suspended again: another call waits for your decision (exit 4)".to_string()
    });
    errln!("{ended}");
    if let Err(e) = snapshot_removed {
        errln!(
            "warning: the used snapshot {} was not removed: {e}",
            path.display()
        );
    }
    let head = match head {
        Ok(head) => {
            errln!(
                "trace: {} (head {head})",
                super::output::shown_path(&snapshot.trace).display()
            );
            head
        }
        Err(e) => {
            errln!("error: the trace could not be completed: {e}");
            if json {
                outln!(
                    "{}",
                    serde_json::json!({ "error": format!("the trace could not be completed: {e}") })
                );
            }
            return exit::USAGE;
        }
    };
    if json {
        let again = suspended_again.as_ref().and_then(|r| r.as_ref().ok());
        let doc = super::run::json_document(
            &report,
            "",
            &snapshot.trace,
            Some(&head),
            again.map(|p| p.as_path()),
            None,
            &planner,
        );
        match serde_json::to_string_pretty(&doc) {
            Ok(text) => outln!("{text}"),
            Err(e) => errln!("error: cannot print the report: {e}"),
        }
    }
    // A rejection that is recorded is the command succeeding: the run stopped as asked.
    if !approve && code == report.exit_code {
        return exit::OK;
    }
    code
}

pub use crate::text::visible;

/// `zamburak claim renew SNAPSHOT`: the claim again, checked, with a new expiry; nothing runs.
pub fn renew_command(path: &Path, ttl_secs: Option<u64>) -> i32 {
    let engine = match super::worker_engine() {
        Ok(engine) => engine,
        Err(e) => {
            errln!("error: {e}");
            errln!("nothing was renewed.");
            return exit::USAGE;
        }
    };
    let renewed = match snapshot::renew(path, ttl_secs, &engine) {
        Ok(s) => s,
        Err(e) => {
            errln!("error: {e}");
            errln!("nothing was renewed.");
            return exit::USAGE;
        }
    };
    let Ok(shown) = renewed.shown_checked() else {
        // `renew` checked the values before writing: a defect, said as one.
        errln!("error: the renewed claim's values do not check");
        return exit::USAGE;
    };
    let code = renewed.claim_code();
    err!("{}", claim_text(&renewed.claim, shown));
    errln!(
        "renewed claim {code}: it waits until {}\napprove: zamburak approve {1} --claim {code}\nreject:  zamburak reject {1}",
        visible(&renewed.expires_at),
        path.display()
    );
    exit::OK
}

/// At a terminal without `--claim`: shows the snapshot's claim again (its values checked against the
/// claim's digests) and asks. Returns the code of the claim shown when the person says yes. A view that
/// cuts a value asks nothing: approving what one has not seen whole is refused (`--full` shows it).
fn ask_again(path: &Path, verb: &str, full: bool) -> Result<Option<String>, String> {
    use std::io::Write;
    let (snap, _) = snapshot::peek(path).map_err(|e| e.to_string())?;
    let shown = snap.shown_checked().map_err(|e| e.to_string())?;
    let code = snap.claim_code();
    let mut err = std::io::stderr().lock();
    let expired = if snap.expired() { " (expired)" } else { "" };
    let text = if full {
        claim_text_full(&snap.claim, shown)
    } else {
        claim_text(&snap.claim, shown)
    };
    let _ = writeln!(
        err,
        "{text}  claim {code}, waiting since {}, until {}{expired}",
        visible(&snap.created_at),
        visible(&snap.expires_at)
    );
    if verb == "approve" && !full && claim_is_cut(shown) {
        let _ = writeln!(
            err,
            "a value above is cut: see the claim whole before approving it: zamburak approve {} --full",
            path.display()
        );
        return Ok(None);
    }
    let _ = write!(err, "{verb} claim {code}? [y/N] ");
    let _ = err.flush();
    Ok(yes_on_stdin()?.then_some(code))
}

/// Whether the person typed `y` or `yes`.
fn yes_on_stdin() -> Result<bool, String> {
    let mut answer = String::new();
    std::io::stdin()
        .read_line(&mut answer)
        .map_err(|e| format!("cannot read the answer: {e}"))?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// The arguments `--remember` names. An empty name (a bare `--remember`) stands for every argument whose
/// values the policy lets be remembered, named with their values and asked at a terminal (one answer
/// never remembers a value the person was not shown); elsewhere it is refused with the names to give.
/// `Ok(None)`: the person said no.
fn resolve_remember(
    path: &Path,
    remember: &[String],
    terminal: bool,
) -> Result<Option<Vec<String>>, String> {
    use std::io::Write;
    if !remember.iter().any(String::is_empty) {
        return Ok(Some(remember.to_vec()));
    }
    let (snap, _) = snapshot::peek(path).map_err(|e| e.to_string())?;
    let shown = snap.shown_checked().map_err(|e| e.to_string())?;
    let mut args: Vec<String> = remember.iter().filter(|a| !a.is_empty()).cloned().collect();
    let mut lines = Vec::new();
    // Only values the policy lets be remembered (a value with no `known` role is new, and stays so).
    for n in shown.novelty.iter().filter(|n| !n.roles.is_empty()) {
        if !args.contains(&n.arg) {
            args.push(n.arg.clone());
        }
        lines.push(format!(
            "  {} = {} ({}; as {})",
            n.place(),
            serde_json::Value::String(visible(&n.value)),
            n.line(),
            n.roles.join(", ")
        ));
    }
    if lines.is_empty() {
        return Err(
            "this claim has no value the policy lets be remembered (no argument of it accepts `known(ROLE)`)"
                .into(),
        );
    }
    if !terminal {
        return Err(format!(
            "say which values to remember: --remember ARG (this claim's: {})",
            args.join(", ")
        ));
    }
    let mut err = std::io::stderr().lock();
    let _ = write!(
        err,
        "approving will also remember:\n{}\nremember these {} value(s)? [y/N] ",
        lines.join("\n"),
        lines.len()
    );
    let _ = err.flush();
    Ok(yes_on_stdin()?.then_some(args))
}
