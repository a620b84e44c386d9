//! `zamburak mcp list|lock|diff` and `zamburak policy init --mcp`: looking at a server's tools, writing a
//! starting policy for them, pinning them, and showing what changed since they were pinned.

use super::output::{errln, outln};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::exit;
use crate::mcp::client::{Client, ServerCommand, ServerIdentity};
use crate::mcp::lock::{self, LockError, LockFile};
use crate::mcp::pin;
use crate::mcp::review;
use crate::policy::Policy;
use crate::text::{OutsideText, one_line, visible, visible_lines};

/// A configuration problem (exit 2). A policy error spans lines (a snippet of the policy); nothing else a
/// person cannot see passes.
fn usage(message: &str) -> i32 {
    errln!("error: {}", visible_lines(message));
    exit::USAGE
}

/// A problem with a server or the lock (exit 2), on one line (it can name what the server sent, such as the
/// arguments a tool takes), followed by the server's own words it carries, escaped and marked as the
/// server's.
fn server_usage(message: &str, said: Option<&OutsideText>) -> i32 {
    errln!("error: {}", visible(message));
    let code = exit::USAGE;
    if let Some(said) = said {
        errln!("  {}", said.for_terminal());
    }
    code
}

/// The server's own words a lock error carries, if any.
fn lock_said(e: &LockError) -> Option<&OutsideText> {
    match e {
        LockError::Server { source, .. } => source.said(),
        _ => None,
    }
}

/// The policy `mcp lock|diff` work on: `--policy`, else `zamburak.yaml` in the current directory.
fn policy_path(flag: Option<&Path>) -> PathBuf {
    flag.map_or_else(|| PathBuf::from("zamburak.yaml"), Path::to_path_buf)
}

fn load(path: &Path) -> Result<Policy, String> {
    Policy::load(path).map_err(|e| e.to_string())
}

/// Starts the server given after `--`, lists its tools and shuts it down.
/// The error is a message and the server's own words, if it sent any.
fn fetch_tools(
    command: &[String],
    env: &[String],
    stderr: std::process::Stdio,
) -> Result<(ServerIdentity, Vec<Value>), (String, Option<OutsideText>)> {
    let Some((program, args)) = command.split_first() else {
        return Err(("no server command: give it after `--`, e.g. `-- npx -y @modelcontextprotocol/server-memory`".into(), None));
    };
    let mut client =
        Client::start_with_stderr(&ServerCommand::scrubbed(program, args, env), stderr)
            .map_err(|e| (e.to_string(), e.said().cloned()))?;
    let tools = client.list_tools().map_err(|e| {
        (
            format!("cannot list the server's tools: {e}"),
            e.said().cloned(),
        )
    })?;
    let id = client.identity().clone();
    client.shutdown();
    Ok((id, tools))
}

/// Longest piece of a server's stderr line shown at once (a line without an end is shown in pieces).
const MAX_STDERR_LINE: u64 = 4096;

/// A stderr for the server whose lines reach ours escaped ([`visible`]) and marked as the server's, so a
/// server cannot clear the terminal or print lines that look like Zamburak's; and a receiver that hears
/// when the server's stderr is closed. With no pipe to be had, the server's stderr is discarded.
fn relay_server_stderr() -> (std::process::Stdio, std::sync::mpsc::Receiver<()>) {
    use std::io::{BufRead, Read};
    let (done, relayed) = std::sync::mpsc::channel();
    let Ok((reader, writer)) = std::io::pipe() else {
        let _ = done.send(());
        return (std::process::Stdio::null(), relayed);
    };
    std::thread::spawn(move || {
        let mut reader = std::io::BufReader::new(reader);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader
                .by_ref()
                .take(MAX_STDERR_LINE)
                .read_until(b'\n', &mut line)
            {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let text = String::from_utf8_lossy(&line);
                    let text = text.strip_suffix('\n').unwrap_or(&text);
                    errln!("server stderr: {}", visible(text));
                }
            }
        }
        let _ = done.send(());
    });
    (std::process::Stdio::from(writer), relayed)
}

/// `zamburak mcp list [--json] -- COMMAND ARGS…`
pub fn list_command(command: &[String], env: &[String], json: bool) -> i32 {
    // `mcp list` shows what the server says on stderr: it is how a server explains a failed start.
    let (stderr, relayed) = relay_server_stderr();
    let fetched = fetch_tools(command, env, stderr);
    // The server has exited; its last lines arrive when every process holding its stderr has (a child it
    // left behind may hold it for ever, so the wait is short).
    let _ = relayed.recv_timeout(std::time::Duration::from_secs(1));
    let (id, tools) = match fetched {
        Ok(found) => found,
        Err((e, said)) => return server_usage(&e, said.as_ref()),
    };
    if json {
        let doc = serde_json::json!({ "server": id, "tools": tools });
        outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return exit::OK;
    }
    outln!(
        "server {} {} (protocol {}), {} tool(s)",
        one_line(&id.name, 80),
        one_line(&id.version, 40),
        one_line(&id.protocol_version, 40),
        tools.len()
    );
    for tool in &tools {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
        outln!();
        outln!("{}", one_line(name, 128));
        let schema = tool.get("inputSchema").cloned().unwrap_or_default();
        let required = crate::mcp::schema::required(&schema);
        if let Some(Value::Object(props)) = schema.get("properties") {
            for (arg, s) in props {
                let ty = s.get("type").map_or("any".to_string(), |t| match t {
                    Value::String(t) => one_line(t, 64),
                    other => one_line(&other.to_string(), 64),
                });
                let need = if required.contains(&arg.as_str()) {
                    "required"
                } else {
                    "optional"
                };
                outln!("  arg {}: {ty} ({need})", one_line(arg, 64));
            }
        }
        if let Some(out) = tool.get("outputSchema") {
            outln!("  output schema: {}", one_line(&pin::canonical(out), 200));
        }
        let h = crate::mcp::starter::hints(tool);
        if !h.is_empty() {
            outln!("  hints (the server's claims, not trusted): {h}");
        }
        print_texts(tool);
        outln!("  pin: sha256:{}", pin::tool_hash(tool));
    }
    exit::OK
}

/// Every text of `tool` a model may read, escaped, each where it sits ([`review::texts`]): what the person
/// reviews before pinning it.
fn print_texts(tool: &Value) {
    let texts = review::texts(tool);
    if texts.is_empty() {
        outln!("  what a model may read of it: nothing (no description, no schema texts)");
        return;
    }
    outln!("  what a model may read of it (the server's words, escaped):");
    for t in &texts {
        outln!("    {}", t.line());
    }
}

/// `zamburak mcp serve [--policy P] [--runs DIR]`: announces the policy and the runs directory on stderr
/// (stdout is the MCP session), then serves until the client closes stdin.
/// How `mcp serve` reaches the person: the review queue's address, forms through the client, and the name
/// decisions are recorded under.
#[derive(clap::Args, Debug)]
pub struct PersonArgs {
    /// Serve the review queue of the runs directory on this loopback address (default 127.0.0.1 on a free
    /// port). A waiting run's answer links to its claim's page there.
    #[arg(long, value_name = "IP:PORT", conflicts_with = "no_queue")]
    queue_addr: Option<String>,
    /// Serve no review queue: claims are decided with `zamburak view --queue RUNS` or `zamburak approve`.
    #[arg(long)]
    no_queue: bool,
    /// Never put a claim to the person through the client's forms (MCP elicitation), even when the client
    /// offers them: only the review queue and `zamburak approve` decide.
    #[arg(long)]
    no_elicit: bool,
    /// Who decides in the queue and the forms, as recorded in the trace. Default: $USER, else "the person".
    #[arg(long, value_name = "NAME")]
    by: Option<String>,
}

/// `zamburak mcp serve`: serves until the client closes the session (exit 0); 2 when the policy, its lock,
/// the runs directory or the review queue cannot be used.
pub fn serve_command(
    policy_flag: Option<&Path>,
    runs: Option<PathBuf>,
    approval_ttl_secs: Option<u64>,
    ops: &crate::serve::Ops,
    person: &PersonArgs,
) -> i32 {
    // Plans have no file of their own: discovery starts in the current directory, as for `stubs`.
    let chosen = match crate::policy::discover::choose(policy_flag, Path::new("plan.py")) {
        Ok(c) => c,
        Err(e) => return usage(&e.to_string()),
    };
    if let Some(why) = chosen.policy.refuses_planner_model() {
        return usage(&why);
    }
    // MCP clients often start servers with a bare environment: without `--by` or $USER the decider is
    // recorded as "the person" rather than the server refusing to start.
    let by = crate::claim::decider(person.by.as_deref()).unwrap_or_else(|| "the person".into());
    let queue_addr = if person.no_queue {
        None
    } else {
        match crate::view::server::loopback_addr(person.queue_addr.as_deref()) {
            Ok(a) => Some(a),
            Err(e) => return usage(&e.to_string()),
        }
    };
    errln!("{}", chosen.announce_in(chosen.policy.mode()));
    for w in &chosen.warnings {
        errln!("warning: {w}");
    }
    let runs = match crate::serve::runs_dir(runs) {
        Ok(dir) => dir,
        Err(e) => return usage(&e.to_string()),
    };
    errln!("runs: {}", runs.display());
    let ttl = approval_ttl_secs.unwrap_or(crate::runtime::snapshot::DEFAULT_TTL_SECS);
    let asker = crate::serve::ask::Person {
        by: by.clone(),
        elicit: !person.no_elicit,
    };
    let mut ready = |address: &str| {
        errln!(
            "review queue (for you, not the model; also in {}): {address}",
            runs.join(crate::serve::queue::URL_FILE).display()
        );
    };
    use crate::serve::Ended;
    if let (_, Some(problem)) = crate::serve::context::Session::in_runs(&runs) {
        errln!("warning: {problem}");
    }
    match crate::serve::serve(
        chosen,
        runs.clone(),
        ttl,
        ops,
        asker,
        queue_addr,
        &mut ready,
    ) {
        Ok(Ended::TooLarge) => {
            errln!(
                "error: the client sent a message larger than {} bytes; the session was closed (the runs are in {})",
                crate::serve::input::MAX_MESSAGE_BYTES,
                runs.display()
            );
            exit::USAGE
        }
        Ok(Ended::Signal(sig)) => {
            errln!(
                "stopped by signal {sig}: every run was stopped; the runs are in {}",
                runs.display()
            );
            // The shell's convention for a process ended by a signal.
            128 + sig
        }
        Ok(_) => {
            errln!("session closed; the runs are in {}", runs.display());
            exit::OK
        }
        Err(e) => usage(&e.to_string()),
    }
}

/// `zamburak mcp lock [--policy P]`
pub fn lock_command(policy_flag: Option<&Path>) -> i32 {
    let path = policy_path(policy_flag);
    let policy = match load(&path) {
        Ok(p) => p,
        Err(e) => return usage(&e),
    };
    if policy.servers().next().is_none() {
        return usage(&format!(
            "{} declares no `servers`, so there is nothing to lock",
            path.display()
        ));
    }
    let lock = match lock::build(&policy) {
        Ok(l) => l,
        Err(e) => return server_usage(&e.to_string(), lock_said(&e)),
    };
    match lock.write_for(&path) {
        Ok(written) => {
            print_locked(&policy, &lock);
            let tools: usize = lock.servers.values().map(|s| s.tools.len()).sum();
            outln!(
                "locked {tools} tool(s) of {} server(s) in {}",
                lock.servers.len(),
                written.display()
            );
            exit::OK
        }
        Err(e) => usage(&e.to_string()),
    }
}

/// What `mcp lock` pinned: each tool, the plan tools that use it, and every text of it a model may read.
fn print_locked(policy: &Policy, lock: &LockFile) {
    for (server, locked) in &lock.servers {
        for (tool, pinned) in &locked.tools {
            let mut names: Vec<&str> = policy
                .mcp_tools()
                .filter(|(_, m)| m.server == *server && m.tool == *tool)
                .map(|(n, _)| n)
                .collect();
            names.sort_unstable();
            outln!(
                "{}.{} (plan tool {}), pin sha256:{}",
                one_line(server, 64),
                one_line(tool, 128),
                names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                pinned.sha256
            );
            print_texts(&pinned.definition);
            outln!();
        }
    }
}

/// `zamburak mcp diff [--policy P]`: exit 0 when the live servers match the lock, 1 when they differ.
pub fn diff_command(policy_flag: Option<&Path>) -> i32 {
    let path = policy_path(policy_flag);
    let policy = match load(&path) {
        Ok(p) => p,
        Err(e) => return usage(&e),
    };
    let (lock, _) = match LockFile::read_for(&path) {
        Ok(l) => l,
        Err(e) => return usage(&e.to_string()),
    };
    let diffs = match lock::diff(&policy, &lock) {
        Ok(d) => d,
        Err(e) => return server_usage(&e.to_string(), lock_said(&e)),
    };
    if diffs.is_empty() {
        outln!("every locked tool matches its pin");
        return exit::OK;
    }
    for d in &diffs {
        let Some(field) = d.field else {
            outln!("{}.{}: gone from the server", d.server, d.tool);
            continue;
        };
        outln!("{}.{}: {field} changed", d.server, d.tool);
        // First the texts a model reads that changed, each where it sits; then, for a field with structure
        // (a schema, the annotations), the whole field, which also shows a changed type, bound or
        // requirement.
        for t in &d.locked_texts {
            outln!("  - locked {}", t.line());
        }
        for t in &d.live_texts {
            outln!("  + live   {}", t.line());
        }
        let texts = !d.locked_texts.is_empty() || !d.live_texts.is_empty();
        if !(texts && matches!(field, "title" | "description")) {
            let whole = |t: Option<&str>| t.map_or("(absent)".into(), |t| one_line(t, 2000));
            let label = if texts { " (the whole field)" } else { "" };
            outln!("  - locked{label}: {}", whole(d.locked.as_deref()));
            outln!("  + live{label}:   {}", whole(d.live.as_deref()));
        }
    }
    exit::REJECTED
}

/// `zamburak policy init --mcp NAME -o FILE [--env VAR]… [--force] -- COMMAND ARGS…`
pub fn init_command(
    server: &str,
    out: &Path,
    command: &[String],
    env: &[String],
    force: bool,
) -> i32 {
    if !crate::policy::servers::is_server_name(server) {
        return usage(&format!(
            "`{server}` cannot name a server: use letters, digits, `_` and `-`"
        ));
    }
    if out.exists() && !force {
        return usage(&format!(
            "{} exists; give --force to replace it",
            out.display()
        ));
    }
    let Some((program, _)) = command.split_first() else {
        return usage("no server command: give it after `--`");
    };
    // The policy resolves a relative program against its own directory, so a path is written absolute; a
    // bare name stays a `PATH` lookup.
    let mut command = command.to_vec();
    if program.contains('/') {
        command[0] = std::path::absolute(program)
            .unwrap_or_else(|_| PathBuf::from(program))
            .to_string_lossy()
            .into_owned();
    }
    let here = std::env::current_dir().ok();
    let out_dir = std::path::absolute(out)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf));
    // Relative arguments mean what they meant here: the server runs in this directory when the policy lives
    // elsewhere.
    let cwd = match (&here, &out_dir) {
        (Some(h), Some(o)) if h != o => Some(h.as_path()),
        _ => None,
    };
    let (id, tools) = match fetch_tools(&command, env, std::process::Stdio::null()) {
        Ok(found) => found,
        Err((e, said)) => return server_usage(&e, said.as_ref()),
    };
    let text = crate::mcp::starter::starting_policy(server, &id, &command, cwd, env, &tools);
    if let Err(e) = std::fs::write(out, &text) {
        return usage(&format!("cannot write {}: {e}", out.display()));
    }
    let policy = match load(out) {
        Ok(p) => p,
        Err(e) => {
            return usage(&format!(
                "the written policy does not pass its own check (a defect; please report it): {e}"
            ));
        }
    };
    let declared = policy.mcp_tools().count();
    let lock = match lock::build(&policy) {
        Ok(l) => l,
        Err(e) => return server_usage(&e.to_string(), lock_said(&e)),
    };
    match lock.write_for(out) {
        Ok(written) => {
            // It locked every tool it declared: what it pinned is shown as `mcp lock` shows it.
            print_locked(&policy, &lock);
            outln!(
                "wrote {} ({declared} tool(s) of server `{server}`) and its lock {}",
                out.display(),
                written.display()
            );
            outln!(
                "review the tools, then check it with `zamburak policy check {}`",
                out.display()
            );
            exit::OK
        }
        Err(e) => usage(&e.to_string()),
    }
}

/// `zamburak mcp forget-context --runs DIR`: the person returns the planner context of a runs directory to
/// trusted (docs/serve.md, "The two planner modes"). No tool of the server does this.
pub fn forget_context_command(runs: &Path) -> i32 {
    match crate::serve::context::forget(runs) {
        Ok(true) => {
            outln!(
                "forgot the planner context kept in {}: the next session there starts trusted",
                runs.display()
            );
            exit::OK
        }
        Ok(false) => {
            outln!("no planner context is kept in {}", runs.display());
            exit::OK
        }
        Err(e) => usage(&format!(
            "cannot remove {}: {e}",
            runs.join(crate::serve::context::CONTEXT_FILE).display()
        )),
    }
}
