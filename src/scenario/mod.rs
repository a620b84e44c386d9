//! `zamburak policy test`: runs policy scenarios — plan snippets with fixed tool results and the expected
//! outcome per mode — through the real checker, lowering, Monty and decision procedure. Only the adapters
//! are replaced: each tool returns the next fixture given for it, labelled by the policy like a real result.
//!
//! ```yaml
//! policy: ../policies/default.yaml      # relative to this file, or an inline mapping
//! scenarios:
//!   - name: a literal note to the user is sent
//!     plan: |
//!       send_email(to="me@example.com", subject="done", body="triage finished")
//!     expect: { strict: allow, normal: allow }
//!     expect_calls: [send_email]
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::lower::Mode;
use crate::policy::{Policy, PolicyError};
use crate::runtime::run::{Backend, Engine, Run, RunInput, RunReport};

/// Largest scenarios file read, so a hostile file cannot exhaust memory.
const MAX_FILE_BYTES: u64 = 8 << 20;

/// Why a scenarios file could not be run (a scenario that fails is a result, not an error).
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The scenarios file, or the policy file it names, could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is larger than {max} bytes", path.display())]
    TooLarge { path: PathBuf, max: u64 },
    /// The file is not YAML of the scenarios format, located like a policy error (the same YAML reader).
    #[error("not a scenarios file: {0}")]
    NotScenarios(Box<PolicyError>),
    /// The policy the scenarios run against does not load.
    #[error(transparent)]
    Policy(Box<PolicyError>),
    /// Neither the file's `policy:` nor `--policy` names a policy.
    #[error("the file names no `policy:` and no --policy was given")]
    NoPolicy,
    /// The inline policy could not be turned into text for the loader.
    #[error("{0}")]
    InlinePolicy(#[source] serde_json::Error),
}

impl From<PolicyError> for ScenarioError {
    fn from(e: PolicyError) -> ScenarioError {
        ScenarioError::Policy(Box::new(e))
    }
}

/// Reads `file` whole, or says why not.
/// The scenarios file's text: at most [`MAX_FILE_BYTES`], UTF-8.
fn read_text(file: &Path) -> Result<String, ScenarioError> {
    let unreadable = |source| ScenarioError::Unreadable {
        path: file.to_path_buf(),
        source,
    };
    let bytes = crate::capped::read(file, MAX_FILE_BYTES).map_err(|e| match e {
        crate::capped::CappedError::TooLarge(max) => ScenarioError::TooLarge {
            path: file.to_path_buf(),
            max,
        },
        crate::capped::CappedError::Io(e) => unreadable(e),
    })?;
    String::from_utf8(bytes)
        .map_err(|e| unreadable(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    policy: Option<PolicyRef>,
    scenarios: Vec<Scenario>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum PolicyRef {
    Path(String),
    Inline(Value),
}

/// One scenario of a file: a plan, its tools' results, the outcome expected per mode.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    pub plan: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, Vec<Value>>,
    pub expect: Expect,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_calls: Option<ExpectCalls>,
}

/// The outcome a scenario expects in each mode it runs in.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<Expected>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normal: Option<Expected>,
}

/// The outcomes a scenario may expect (docs/semantics.md, "Decisions").
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Expected {
    Allow,
    Draft,
    Confirm,
    Deny,
    Rejected,
    Error,
}

impl Expected {
    pub fn name(self) -> &'static str {
        match self {
            Expected::Allow => "allow",
            Expected::Draft => "draft",
            Expected::Confirm => "confirm",
            Expected::Deny => "deny",
            Expected::Rejected => "rejected",
            Expected::Error => "error",
        }
    }
}

/// The calls expected to run: one list for both modes, or one per mode.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum ExpectCalls {
    Both(Vec<String>),
    PerMode {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        strict: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        normal: Option<Vec<String>>,
    },
}

impl ExpectCalls {
    fn for_mode(&self, mode: Mode) -> Option<&Vec<String>> {
        match (self, mode) {
            (ExpectCalls::Both(calls), _) => Some(calls),
            (ExpectCalls::PerMode { strict, .. }, Mode::Strict) => strict.as_ref(),
            (ExpectCalls::PerMode { normal, .. }, Mode::Normal) => normal.as_ref(),
        }
    }
}

/// Fixtures stand in for adapters: each call of a tool returns its next fixture, `None` when none is left.
struct FixtureBackend {
    fixtures: BTreeMap<String, VecDeque<Value>>,
}

impl Backend for FixtureBackend {
    fn invoke(
        &mut self,
        tool: &str,
        _source: Option<&crate::policy::servers::ToolSource>,
        _args: &Map<String, Value>,
        _draft: Option<&str>,
    ) -> Result<Value, crate::runtime::backend::Failure> {
        Ok(self
            .fixtures
            .get_mut(tool)
            .and_then(VecDeque::pop_front)
            .unwrap_or(Value::Null))
    }
}

/// Totals of one `policy test` run.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub passed: usize,
    pub failed: usize,
}

/// Runs every scenario of `file` in each mode it states an expectation for; `out` receives one line per
/// result and the details of each failure.
/// Each plan's interpreter runs on `engine` (`policy test` uses a worker process, like `run`).
pub fn run_file(
    file: &Path,
    policy_override: Option<&Path>,
    engine: &Engine,
    out: &mut dyn FnMut(&str),
) -> Result<Totals, ScenarioError> {
    let text = read_text(file)?;
    let parsed: ScenarioFile =
        serde_saphyr::from_str(&text).map_err(|e| not_scenarios(file, &text, &e))?;
    let base = file.parent().unwrap_or(Path::new("."));
    let (policy, policy_line) = load_policy(parsed.policy.as_ref(), policy_override, base)?;
    out(&policy_line);

    let mut totals = Totals::default();
    for verdict in check(&parsed.scenarios, &policy, engine) {
        if verdict.passed {
            totals.passed += 1;
            out(&format!("ok     {} [{}]", verdict.name, verdict.mode));
        } else {
            totals.failed += 1;
            out(&verdict.detail);
        }
    }
    Ok(totals)
}

/// The result of one scenario in one mode.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub name: String,
    pub mode: &'static str,
    pub passed: bool,
    /// For a failure, what `policy test` prints: the expected and actual outcome and every decision.
    pub detail: String,
}

/// Runs `scenarios` against `policy` in each mode they state an expectation for: what `policy test` does
/// with a file's scenarios (and `policy compile` with the drafted ones).
pub fn check(scenarios: &[Scenario], policy: &Policy, engine: &Engine) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    for scenario in scenarios {
        for (mode, expected) in [
            (Mode::Strict, scenario.expect.strict),
            (Mode::Normal, scenario.expect.normal),
        ] {
            let Some(expected) = expected else { continue };
            let report = run_scenario(scenario, policy, mode, engine);
            let mode_name = mode.name();
            let expected_calls = scenario
                .expect_calls
                .as_ref()
                .and_then(|c| c.for_mode(mode));
            let outcome_ok = report.outcome == expected.name();
            let calls_ok = expected_calls.is_none_or(|calls| *calls == report.calls_run);
            let passed = outcome_ok && calls_ok;
            verdicts.push(Verdict {
                name: scenario.name.clone(),
                mode: mode_name,
                passed,
                detail: if passed {
                    String::new()
                } else {
                    failure(scenario, mode_name, expected, expected_calls, &report)
                },
            });
        }
    }
    verdicts
}

/// Parses the `scenarios:` of a scenarios document given as text (`what` names it in errors); its
/// `policy:` key, if any, is not read.
pub fn parse_scenarios(text: &str, what: &str) -> Result<Vec<Scenario>, ScenarioError> {
    let parsed: ScenarioFile =
        serde_saphyr::from_str(text).map_err(|e| not_scenarios(Path::new(what), text, &e))?;
    Ok(parsed.scenarios)
}

/// Runs one plan against `policy` in `mode` with `tools` standing in for the adapters, as a scenario does.
pub fn run_plan(
    plan: &str,
    tools: &BTreeMap<String, Vec<Value>>,
    policy: &Policy,
    mode: Mode,
    engine: &Engine,
) -> RunReport {
    let mut backend = FixtureBackend {
        fixtures: tools
            .iter()
            .map(|(tool, values)| (tool.clone(), values.iter().cloned().collect()))
            .collect(),
    };
    let input = RunInput {
        source: plan,
        policy,
        mode,
    };
    Run::new(&input)
        .on(engine.clone())
        .execute(&mut backend, None, &mut |_| {})
}

/// A scenarios file that does not parse, located like a policy error (the same YAML reader).
fn not_scenarios(file: &Path, text: &str, e: &serde_saphyr::Error) -> ScenarioError {
    let located = crate::policy::yaml_error(&file.display().to_string(), e).with_source(text);
    ScenarioError::NotScenarios(Box::new(located))
}

/// One scenario run in one mode, for tests that check other parts (the lint) against the runtime.
pub struct ScenarioRun<'a> {
    pub name: &'a str,
    pub plan: &'a str,
    pub mode: Mode,
    pub policy: &'a Policy,
    pub report: RunReport,
}

/// Runs every scenario of `file` in each mode it states an expectation for, without the pre-flight
/// analysis (so every reachable call is decided by the runtime), and hands each run to `f`.
pub fn each_run_without_preflight(
    file: &Path,
    f: &mut dyn FnMut(ScenarioRun<'_>),
) -> Result<(), ScenarioError> {
    each_run_compiled_with(file, crate::lower::Options::default(), f)
}

/// [`each_run_without_preflight`] with the plan compiled with `options` (tests compare the options).
pub fn each_run_compiled_with(
    file: &Path,
    options: crate::lower::Options,
    f: &mut dyn FnMut(ScenarioRun<'_>),
) -> Result<(), ScenarioError> {
    let text = read_text(file)?;
    let parsed: ScenarioFile =
        serde_saphyr::from_str(&text).map_err(|e| not_scenarios(file, &text, &e))?;
    let base = file.parent().unwrap_or(Path::new("."));
    let (policy, _) = load_policy(parsed.policy.as_ref(), None, base)?;
    for scenario in &parsed.scenarios {
        for (mode, expected) in [
            (Mode::Strict, scenario.expect.strict),
            (Mode::Normal, scenario.expect.normal),
        ] {
            if expected.is_none() {
                continue;
            }
            let mut backend = fixtures(scenario);
            let input = RunInput {
                source: &scenario.plan,
                policy: &policy,
                mode,
            };
            let report = Run::new(&input)
                .without_preflight()
                .compiled_with(options)
                .execute(&mut backend, None, &mut |_| {});
            f(ScenarioRun {
                name: &scenario.name,
                plan: &scenario.plan,
                mode,
                policy: &policy,
                report,
            });
        }
    }
    Ok(())
}

fn fixtures(scenario: &Scenario) -> FixtureBackend {
    FixtureBackend {
        fixtures: scenario
            .tools
            .iter()
            .map(|(tool, values)| (tool.clone(), values.iter().cloned().collect()))
            .collect(),
    }
}

/// The policy the scenarios run against, and a line naming it (`policy: PATH (sha256 …)`).
fn load_policy(
    reference: Option<&PolicyRef>,
    over: Option<&Path>,
    base: &Path,
) -> Result<(Policy, String), ScenarioError> {
    let from_file = |path: &Path| -> Result<(Policy, String), ScenarioError> {
        let policy = Policy::load(path)?;
        let bytes = std::fs::read(path).map_err(|source| ScenarioError::Unreadable {
            path: path.to_path_buf(),
            source,
        })?;
        Ok((policy, named(&path.display().to_string(), &bytes)))
    };
    if let Some(path) = over {
        return from_file(path);
    }
    match reference {
        None => Err(ScenarioError::NoPolicy),
        Some(PolicyRef::Path(p)) => from_file(&base.join(p)),
        Some(PolicyRef::Inline(value)) => {
            // JSON is YAML, so the inline mapping goes through the same loader and validation as a file.
            let text = serde_json::to_string_pretty(value).map_err(ScenarioError::InlinePolicy)?;
            let policy = Policy::from_yaml_str(&text, "<inline policy>", base)?;
            Ok((policy, named("the inline policy", text.as_bytes())))
        }
    }
}

fn named(what: &str, bytes: &[u8]) -> String {
    let digest = crate::trace::redact::sha256_bytes(bytes);
    let hex = digest.trim_start_matches("sha256:");
    format!("policy: {what} (sha256 {})", hex.get(..12).unwrap_or(hex))
}

fn run_scenario(scenario: &Scenario, policy: &Policy, mode: Mode, engine: &Engine) -> RunReport {
    run_plan(&scenario.plan, &scenario.tools, policy, mode, engine)
}

fn failure(
    scenario: &Scenario,
    mode: &str,
    expected: Expected,
    expected_calls: Option<&Vec<String>>,
    report: &RunReport,
) -> String {
    let mut s = format!("FAILED {} [{mode}]\n", scenario.name);
    let _ = writeln!(s, "  expected: {}", expected.name());
    let _ = writeln!(s, "  actual:   {}", report.outcome);
    if let Some(calls) = expected_calls {
        let _ = writeln!(s, "  expected calls: [{}]", calls.join(", "));
        let _ = writeln!(s, "  actual calls:   [{}]", report.calls_run.join(", "));
    }
    for d in &report.decisions {
        let _ = writeln!(
            s,
            "  line {}: {} -> {} ({}): {}",
            d.line,
            d.tool,
            serde_json::to_value(d.decision)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            d.rule,
            d.reason
        );
    }
    if let Some(e) = &report.error {
        let line = e.line.map_or_else(String::new, |l| format!(" at line {l}"));
        let _ = writeln!(s, "  {}{line}: {}", e.exc_type, e.message);
    }
    for d in &report.diagnostics {
        let _ = writeln!(s, "  {}: {}", d.code, d.message);
    }
    s.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(file: &Path) -> Result<Totals, ScenarioError> {
        run_file(file, None, &Engine::InProcess, &mut |_| {})
    }

    #[test]
    fn a_file_that_cannot_be_run_says_why_by_variant() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none.yaml");
        let e = run(&missing).unwrap_err();
        assert!(
            matches!(&e, ScenarioError::Unreadable { path, .. } if *path == missing),
            "{e}"
        );

        let file = dir.path().join("s.yaml");
        std::fs::write(&file, "scenarios: []\n").unwrap();
        let e = run(&file).unwrap_err();
        assert!(matches!(e, ScenarioError::NoPolicy), "{e}");

        std::fs::write(&file, "scenarios: 3\n").unwrap();
        let e = run(&file).unwrap_err();
        let ScenarioError::NotScenarios(located) = &e else {
            panic!("{e:?}");
        };
        assert_eq!((located.line, located.column), (1, 12), "{e}");
        assert!(e.to_string().starts_with("not a scenarios file: "), "{e}");

        std::fs::write(&file, "policy: { version: 9 }\nscenarios: []\n").unwrap();
        let e = run(&file).unwrap_err();
        let ScenarioError::Policy(p) = &e else {
            panic!("{e:?}");
        };
        assert_eq!(
            p.kind,
            crate::policy::PolicyErrorKind::UnsupportedVersion,
            "{e}"
        );
    }
}
