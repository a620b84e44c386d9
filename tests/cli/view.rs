//! `zamburak view`: real traces from real runs, the real server on loopback, and a real headless Chromium
//! (Debian's `chromium`; `.ci/run` installs it). Security tests assert both what is shown and that nothing
//! happened: no request left the page, no script ran, no private value appeared.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command as Proc, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use assert_cmd::Command;
use common::world::{LIST_AROUND_A_READ, World};
use serde_json::Value;
use zamburak::label::LabelView;
use zamburak::trace::TraceWriter;
use zamburak::trace::record::{ArgRecord, Call, CallResult, End, Header, Record};

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("zamburak")
}

/// Runs an example plan in a fresh world; returns the world and the trace.
fn traced(example: &str, code: i32) -> (World, PathBuf) {
    let world = World::new(None);
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(example),
    )
    .unwrap();
    let plan = world.write_plan(example, &src);
    let out = world.run(&plan, &[]);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let trace = plan.with_extension("zjson");
    (world, trace)
}

fn export(trace: &Path) -> (i32, String) {
    let out_file = trace.with_extension("html");
    let out = Command::new(bin())
        .arg("view")
        .arg(trace)
        .arg("--export")
        .arg(&out_file)
        .output()
        .unwrap();
    let html = std::fs::read_to_string(&out_file).unwrap_or_default();
    (out.status.code().unwrap_or(-1), html)
}

/// The lineage edges a trace implies, computed here from its records (not by the viewer's code).
fn expected_edges(trace: &Path) -> Vec<(u64, u64, &'static str)> {
    let mut edges = Vec::new();
    for line in std::fs::read_to_string(trace).unwrap().lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        if r["type"] != "call" {
            continue;
        }
        let to = r["call_id"].as_u64().unwrap();
        let ids = |label: &Value| -> Vec<u64> {
            label["sources"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    s.as_str()
                        .unwrap()
                        .rsplit_once('#')
                        .unwrap()
                        .1
                        .parse()
                        .unwrap()
                })
                .filter(|id| *id < to)
                .collect()
        };
        let mut data: Vec<u64> = r["args"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|a| ids(&a["label"]))
            .collect();
        data.sort();
        data.dedup();
        edges.extend(data.into_iter().map(|f| (f, to, "data")));
        edges.extend(ids(&r["pc"]).into_iter().map(|f| (f, to, "control")));
    }
    edges.sort();
    edges
}

/// The page's `graph` section: the lineage of the whole run.
fn graph_section(html: &str) -> &str {
    html.split_once("<section id=\"graph\">")
        .and_then(|(_, rest)| rest.split_once("</section>"))
        .map_or(html, |(graph, _)| graph)
}

/// The edges a page's lineage graph shows, read from its DOM (the `graph` section: call sections also
/// draw each call's own lineage).
fn shown_edges(html: &str) -> Vec<(u64, u64, &'static str)> {
    let html = graph_section(html);
    let re = regex::Regex::new(r#"class="edge (data|control)" data-from="(\d+)" data-to="(\d+)""#)
        .unwrap();
    let mut edges: Vec<(u64, u64, &'static str)> = re
        .captures_iter(html)
        .map(|c| {
            let kind = if &c[1] == "data" { "data" } else { "control" };
            (c[2].parse().unwrap(), c[3].parse().unwrap(), kind)
        })
        .collect();
    edges.sort();
    edges
}

#[test]
fn export_shows_the_run_its_lineage_and_the_chain() {
    let (_world, trace) = traced("triage.py", 0);
    let (code, html) = export(&trace);
    assert_eq!(code, 0);
    assert!(html.contains("Hash chain verified"));
    let edges = expected_edges(&trace);
    assert!(!edges.is_empty());
    assert_eq!(shown_edges(&html), edges);
    // Every call of the trace is a node, drafts marked as such.
    let calls = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"type\":\"call\""))
        .count();
    assert_eq!(html.matches("id=\"node-").count(), calls);
    assert!(html.contains("class=\"node call decision-draft"));
    // Self-contained: no script, no external reference.
    assert!(!html.contains("<script"));
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
}

#[test]
fn a_denied_call_stands_out() {
    let (_world, trace) = traced("attack.py", 3);
    let (code, html) = export(&trace);
    assert_eq!(code, 0);
    assert!(
        html.contains("class=\"node call decision-deny"),
        "the denied call is a red node"
    );
    assert!(html.contains("decided before the run"));
    assert!(html.contains("<td class=\"decision-deny\">1</td>"));
}

/// A synthetic `send` call at line 1 whose untrusted `body` comes from `arg_sources` and whose trusted
/// control context names `pc_sources`, decided by `args.body.require`.
fn send_call(
    id: u32,
    arg_sources: &[&str],
    pc_sources: &[&str],
    decision: &str,
    before_run: bool,
) -> Record {
    Record::Call(Call {
        call_id: id,
        line: 1,
        tool: "send".into(),
        args: vec![ArgRecord {
            name: "body".into(),
            elements: None,
            label: view_label("untrusted", &[], false, arg_sources),
            digest: "none".into(),
            preview: None,
        }],
        pc: view_label("trusted", &[], true, pc_sources),
        decision: decision.into(),
        rule: "args.body.require".into(),
        reason: "r".into(),
        before_run,
        tool_sha256: None,
        on_approval: None,
        remembered: Vec::new(),
    })
}

fn view_label(integrity: &str, tags: &[&str], public: bool, sources: &[&str]) -> LabelView {
    LabelView {
        integrity: integrity.into(),
        verified: vec![],
        tags: tags.iter().map(|t| t.to_string()).collect(),
        readers: if public { None } else { Some(vec![]) },
        sources: sources.iter().map(|s| s.to_string()).collect(),
    }
}

const PRIVATE: &str = "PRIVATE-MARKER-7f3a";

/// A trace whose every string is hostile, chained properly so the viewer shows it all.
fn hostile_trace(dir: &Path, port: u16) -> PathBuf {
    let p = |s: &str| s.replace("PORT", &port.to_string());
    let script = p("<script>fetch('http://127.0.0.1:PORT/script')</script>");
    let img = p("<img src=x onerror=\"fetch('http://127.0.0.1:PORT/img')\">");
    let link = "<a href=\"javascript:fetch('http://127.0.0.1:PORT/js')\">x</a>"
        .replace("PORT", &port.to_string());
    let path = dir.join("hostile.zjson");
    let plan = format!("x = 1  # {script}\ny = 2  # {img} {link}\n");
    let mut w =
        TraceWriter::create(&path, Header::new(&plan, format!("sha256:{img}"), &script)).unwrap();
    w.append(Record::Call(Call {
        call_id: 1,
        line: 1,
        tool: script.clone(),
        args: vec![ArgRecord {
            name: img.clone(),
            elements: None,
            label: view_label("trusted", &[], true, &[]),
            digest: link.clone(),
            preview: Some(Value::String(img.clone())),
        }],
        pc: view_label(&img, &[&script], false, &[]),
        decision: img.clone(),
        rule: script.clone(),
        reason: link.clone(),
        before_run: false,
        tool_sha256: None,
        on_approval: None,
        remembered: Vec::new(),
    }))
    .unwrap();
    w.append(Record::Result(CallResult {
        call_id: 1,
        tool: script.clone(),
        label: view_label("untrusted", &["PRIVATE"], false, &["x#1"]),
        digest: "sha256:00".into(),
        // A forged preview of an untrusted, private value: never shown.
        preview: Some(Value::String(PRIVATE.into())),
        scanned: Vec::new(),
    }))
    .unwrap();
    w.append(Record::Call(Call {
        call_id: 2,
        line: 2,
        tool: "send".into(),
        args: vec![ArgRecord {
            name: "body".into(),
            elements: None,
            label: view_label("untrusted", &[&img], false, &[&format!("{script}#1")]),
            digest: "sha256:01".into(),
            preview: Some(Value::String(PRIVATE.into())),
        }],
        pc: view_label("trusted", &[], true, &[]),
        decision: "deny".into(),
        rule: "args.body.require".into(),
        reason: script.clone(),
        before_run: false,
        tool_sha256: None,
        on_approval: None,
        remembered: Vec::new(),
    }))
    .unwrap();
    w.append(Record::End(End {
        status: script.clone(),
        exit_code: 3,
        outcome: img.clone(),
    }))
    .unwrap();
    w.close().unwrap();
    path
}

/// A loopback listener that counts every connection made to it.
fn canary() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            h.fetch_add(1, Ordering::SeqCst);
            if let Ok(mut s) = s {
                let _ = s.write_all(b"HTTP/1.1 204 No Content\r\n\r\n");
            }
        }
    });
    (port, hits)
}

struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(trace: &Path) -> Server {
    serve_with(trace, &[])
}

fn serve_with(trace: &Path, extra: &[&str]) -> Server {
    let mut child = Proc::new(bin())
        .arg("view")
        .arg(trace)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().to_string();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with('/'),
        "{url}"
    );
    Server { child, url }
}

fn chromium(args: &[&str]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = Proc::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .output()
        .expect("chromium (Debian's package; .ci/run installs it)");
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// Raw HTTP/1.1 GET; returns the status code.
fn get_status(url: &str) -> u16 {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest
        .split_once('/')
        .map(|(h, p)| (h, format!("/{p}")))
        .unwrap();
    let mut s = std::net::TcpStream::connect(host).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    resp.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn chromium_renders_the_graph_and_marks_the_denial() {
    let (_world, trace) = traced("triage.py", 0);
    let server = serve(&trace);
    let dom = chromium(&["--dump-dom", &format!("{}graph", server.url)]);
    assert_eq!(shown_edges(&dom), expected_edges(&trace), "{dom}");
    assert!(dom.contains("id=\"node-1\""));
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let shot = artifacts.join("view-graph.png");
    let _ = std::fs::remove_file(&shot);
    chromium(&[
        &format!("--screenshot={}", shot.display()),
        "--window-size=1400,1000",
        &format!("{}graph", server.url),
    ]);
    assert!(
        std::fs::metadata(&shot)
            .map(|m| m.len() > 1000)
            .unwrap_or(false),
        "a screenshot was saved"
    );

    let (_w2, denied) = traced("attack.py", 3);
    let server = serve(&denied);
    let dom = chromium(&["--dump-dom", &format!("{}graph", server.url)]);
    assert!(dom.contains("decision-deny"), "{dom}");
}

#[test]
fn hostile_trace_strings_execute_nothing_and_leak_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (port, hits) = canary();
    let trace = hostile_trace(dir.path(), port);
    let server = serve(&trace);
    let (code, html) = export(&trace);
    assert_eq!(code, 0, "the hostile trace's chain is intact");
    let export_file = trace.with_extension("html");
    let mut pages: Vec<String> = ["", "plan", "graph", "call/1", "call/2"]
        .iter()
        .map(|p| format!("{}{p}", server.url))
        .collect();
    pages.push(format!("file://{}", export_file.display()));
    for page in &pages {
        let dom = chromium(&["--virtual-time-budget=2000", "--dump-dom", page]);
        assert!(dom.contains("Summary"), "{page} rendered: {dom}");
        assert!(!dom.contains("<script"), "{page}: a script element exists");
        assert!(
            !dom.contains("<img"),
            "{page}: an injected image element exists"
        );
        assert!(
            !dom.to_lowercase().contains("<a href=\"javascript:"),
            "{page}: a javascript: link exists"
        );
        assert!(!dom.contains(PRIVATE), "{page}: the private value is shown");
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0, "a payload made a request");
    // The payloads are shown, as text.
    assert!(html.contains("&lt;script&gt;fetch("));
    assert!(!html.contains(PRIVATE));
}

#[test]
fn requests_need_the_token_and_the_server_only_binds_loopback() {
    let (_world, trace) = traced("summary.py", 0);
    let server = serve(&trace);
    assert_eq!(get_status(&server.url), 200);
    let base = server
        .url
        .trim_end_matches('/')
        .rsplit_once('/')
        .unwrap()
        .0
        .to_string();
    assert_eq!(get_status(&format!("{base}/")), 404, "no token");
    assert_eq!(get_status(&format!("{base}/graph")), 404, "no token");
    let wrong = format!("{base}/{}/", "0".repeat(64));
    assert_eq!(get_status(&wrong), 404, "wrong token");
    assert_eq!(get_status(&format!("{}static/view.css", server.url)), 200);
    for addr in [
        "0.0.0.0:0",
        "192.168.1.5:80",
        "[::]:0",
        "localhost:8080",
        "example.com:80",
    ] {
        let out = Command::new(bin())
            .arg("view")
            .arg(&trace)
            .arg("--addr")
            .arg(addr)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{addr}");
        assert!(
            out.stdout.is_empty(),
            "{addr}: no URL is printed, nothing is served"
        );
    }
}

#[test]
fn a_tampered_trace_says_where_it_breaks_and_still_shows_the_rest() {
    let (_world, trace) = traced("triage.py", 0);
    let text = std::fs::read_to_string(&trace).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mid = lines.len() / 2;
    let mut bytes = text.clone().into_bytes();
    let offset = lines[..mid].iter().map(|l| l.len() + 1).sum::<usize>() + lines[mid].len() / 2;
    bytes[offset] ^= 0x01;
    std::fs::write(&trace, &bytes).unwrap();
    let verify = Command::new(bin())
        .arg("verify")
        .arg(&trace)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&verify.stdout).to_string();
    let seq = said.split_whitespace().nth(3).unwrap().to_string();
    let (code, html) = export(&trace);
    assert_eq!(code, 1);
    assert!(
        html.contains(&format!("BROKEN at seq {seq}")),
        "{said}\n{html}"
    );
    assert!(
        html.contains("id=\"node-1\""),
        "calls before the break are shown"
    );
}

#[test]
fn garbage_traces_render_what_they_can() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("binary.zjson", vec![0, 255, 10, 159, 146, 150]),
        ("empty.zjson", Vec::new()),
        (
            "deep.zjson",
            format!("{}{}\n", "[".repeat(100_000), "]".repeat(100_000)).into_bytes(),
        ),
        ("long.zjson", vec![b'a'; 17 * 1024 * 1024]),
        ("notjson.zjson", b"{\"type\": \"call\"}\nhello\n".to_vec()),
    ];
    // None of these is a trace (#39): one line, exit 2, no page; not a "broken chain" page.
    for (name, bytes) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let (code, html) = export(&p);
        assert_eq!(code, 2, "{name}: exit {code}");
        assert!(html.is_empty(), "{name}: no page");
    }
    // A trace followed by garbage renders what parses and lists the rest.
    let p = dir.path().join("tail.zjson");
    TraceWriter::create(&p, Header::new("x = 1\n", "sha256:00".into(), "strict"))
        .unwrap()
        .close()
        .unwrap();
    let mut bytes = std::fs::read(&p).unwrap();
    bytes.extend_from_slice(b"hello\n\x00\xff\n");
    std::fs::write(&p, bytes).unwrap();
    let (code, html) = export(&p);
    assert_eq!(code, 1);
    assert!(html.contains("Run summary") && html.contains("Hash chain BROKEN at seq 1"));
    assert!(html.contains("line 2 is not a record"), "{html}");
    let missing = Command::new(bin())
        .arg("view")
        .arg(dir.path().join("missing.zjson"))
        .arg("--export")
        .arg(dir.path().join("m.html"))
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
}

/// A call denied before the run has no runtime sources: the trace records lint's predicted call sites and
/// the viewer draws them as predicted nodes feeding the denied call (it said "plan literals only").
#[test]
fn a_call_denied_before_the_run_shows_its_predicted_sources() {
    let (_world, trace) = traced("attack.py", 3);
    let text = std::fs::read_to_string(&trace).unwrap();
    let call: Value = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["type"] == "call")
        .unwrap();
    assert_eq!(call["before_run"], true);
    assert_eq!(
        call["args"][0]["label"]["sources"],
        serde_json::json!([
            "search_email (line 3, predicted)",
            "read_file (line 5, predicted)"
        ])
    );
    let (code, html) = export(&trace);
    assert_eq!(code, 0);
    assert_eq!(
        graph_section(&html)
            .matches("class=\"node predicted\"")
            .count(),
        2
    );
    assert!(html.contains(">search_email (line 3, predicted)</text>"));
    // Both predicted nodes feed the denied call with a data edge.
    let node = regex::Regex::new(r#"<g class="node call[^"]*" id="node-1""#).unwrap();
    assert!(node.is_match(&html));
    let edges = shown_edges(&html);
    assert_eq!(edges.len(), 2, "{edges:?}");
    assert!(
        edges
            .iter()
            .all(|(_, to, kind)| *to == 3 && *kind == "data")
    );
    assert!(html.contains("predicted by lint, no call ran: search_email (line 3, predicted), read_file (line 5, predicted)"));
    assert!(!html.contains("Data from: plan literals only"));
}

/// Rows after the point where the chain breaks are marked and left out of the totals: a forger who flips a
/// denial to `allow` does not get an extra "allowed" in the summary.
#[test]
fn a_tampered_trace_does_not_count_rows_after_the_break() {
    let (_world, trace) = traced("triage.py", 0);
    let text = std::fs::read_to_string(&trace).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let calls_at: Vec<usize> = (0..lines.len())
        .filter(|i| lines[*i].contains("\"type\":\"call\""))
        .collect();
    assert!(calls_at.len() >= 3, "the fixture has calls to forge");
    // Forge the second call: claim it was denied... then allowed, whichever it was not.
    let victim = calls_at[1];
    let forged_line = if lines[victim].contains("\"decision\":\"allow\"") {
        lines[victim].replacen("\"decision\":\"allow\"", "\"decision\":\"deny\"", 1)
    } else {
        let d = regex::Regex::new(r#""decision":"[a-z]+""#).unwrap();
        d.replace(lines[victim], "\"decision\":\"allow\"")
            .to_string()
    };
    let mut forged: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    forged[victim] = forged_line;
    std::fs::write(&trace, forged.join("\n") + "\n").unwrap();

    // Independently: the calls before the forged line, by decision.
    let before: Vec<Value> = calls_at
        .iter()
        .filter(|i| **i < victim)
        .map(|i| serde_json::from_str(lines[*i]).unwrap())
        .collect();
    let count = |d: &str| before.iter().filter(|c| c["decision"] == d).count();
    let (code, html) = export(&trace);
    assert_eq!(code, 1);
    assert!(
        html.contains(&format!(
            "<td class=\"decision-allow\">{}</td>",
            count("allow")
        )),
        "{html}"
    );
    assert!(html.contains(&format!(
        "<td class=\"decision-deny\">{}</td>",
        count("deny")
    )));
    assert!(html.contains(&format!(
        "<td class=\"decision-draft\">{}</td>",
        count("draft")
    )));
    let unverified = calls_at.len() - before.len();
    assert!(html.contains(&format!("<td class=\"unverified-note\">{unverified}</td>")));
    assert_eq!(
        html.matches("<span class=\"unverified-note\">NOT VERIFIED</span>")
            .count(),
        unverified
    );
    assert!(
        html.contains("NOT VERIFIED (after the break)"),
        "the end record is after the break too"
    );
}

/// Owner mode: the user sees their own private values, escaped, with text someone else wrote quoted and
/// attributed; hostile markup in a revealed value executes nothing and reaches nothing. Without `--reveal`
/// the same trace shows no private value, and `--reveal` never goes into an export.
#[test]
fn owner_mode_reveals_private_values_escaped_and_quoted() {
    let (port, hits) = canary();
    let world = World::new(None);
    let payload = format!(
        "PRIVATE-NOTE <script>fetch('http://127.0.0.1:{port}/s')</script><img src=\"http://127.0.0.1:{port}/i\" onerror=\"fetch('http://127.0.0.1:{port}/e')\"> end"
    );
    std::fs::write(world.path("files/hostile.txt"), &payload).unwrap();
    let plan = world.write_plan(
        "plan.py",
        "x = read_file(path=\"hostile.txt\")\nsend_email(to=\"me@example.com\", subject=\"note\", body=x)\n",
    );
    world.run_expect(&plan, &[], 0);
    let trace = world.path("plan.zjson");
    let store = world.path("plan.zvalues");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&store).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "the value store is private to its owner");
    }
    assert!(
        !std::fs::read_to_string(&trace)
            .unwrap()
            .contains("PRIVATE-NOTE")
    );

    // Shared pages stay redacted.
    let plain = serve(&trace);
    let dom = chromium(&["--dump-dom", &format!("{}call/2", plain.url)]);
    assert!(dom.contains("Call #2"), "{dom}");
    assert!(
        !dom.contains("PRIVATE-NOTE"),
        "without --reveal nothing private is shown"
    );
    drop(plain);

    let owner = serve_with(&trace, &["--reveal"]);
    for page in ["call/1", "call/2"] {
        let dom = chromium(&[
            "--virtual-time-budget=2000",
            "--dump-dom",
            &format!("{}{page}", owner.url),
        ]);
        assert!(dom.contains("Owner mode"), "{page}: {dom}");
        assert!(
            dom.contains("PRIVATE-NOTE &lt;script&gt;fetch("),
            "{page}: shown as text: {dom}"
        );
        assert!(!dom.contains("<script"), "{page}: a script element exists");
        assert!(
            !dom.contains("<img"),
            "{page}: an injected image element exists"
        );
        assert!(
            dom.contains("untrusted: written by whoever wrote read_file#1, not by you"),
            "{page}: {dom}"
        );
    }
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "a revealed payload made a request"
    );
    drop(owner);

    // Never in an export, and never without the store.
    let refused = Command::new(bin())
        .args([
            "view".as_ref(),
            trace.as_os_str(),
            "--reveal".as_ref(),
            "--export".as_ref(),
        ])
        .arg(world.path("x.html"))
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(!world.path("x.html").exists());
    std::fs::remove_file(&store).unwrap();
    let missing = Command::new(bin())
        .args(["view".as_ref(), trace.as_os_str(), "--reveal".as_ref()])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("value store"));
}

/// A store edited to put another value under a digest of the trace shows nothing for it.
#[test]
fn owner_mode_shows_only_values_that_match_the_trace() {
    let world = World::new(None);
    let plan = world.write_plan(
        "plan.py",
        "x = read_file(path=\"todo.txt\")\nsend_email(to=\"me@example.com\", subject=\"todo\", body=x)\n",
    );
    assert_eq!(world.run(&plan, &[]).status.code(), Some(0));
    let store = world.path("plan.zvalues");
    let real = std::fs::read_to_string(world.path("files/todo.txt")).unwrap();
    let first_line = real.lines().next().unwrap().to_string();
    let text = std::fs::read_to_string(&store).unwrap();
    let escaped = serde_json::to_string(&real).unwrap();
    assert!(text.contains(&escaped), "the store holds the file's text");
    std::fs::write(&store, text.replace(&escaped, "\"FORGED VALUE\"")).unwrap();
    let owner = serve_with(&world.path("plan.zjson"), &["--reveal"]);
    let dom = chromium(&["--dump-dom", &format!("{}call/1", owner.url)]);
    assert!(dom.contains("Owner mode"), "{dom}");
    assert!(!dom.contains("FORGED VALUE"), "{dom}");
    assert!(!dom.contains(&first_line), "{dom}");
    let summary = chromium(&["--dump-dom", &owner.url]);
    assert!(summary.contains("do not match their digest"), "{summary}");
}

/// A suspended claim opened by its owner: the forwarded subject in clear, quoted as someone else's text,
/// and the readers by name; the shared view counts them instead.
#[test]
fn owner_mode_names_the_readers_of_a_waiting_claim() {
    let (_world, trace) = traced("forward.py", 4);
    let plain = serve(&trace);
    let dom = chromium(&["--dump-dom", &format!("{}call/2", plain.url)]);
    assert!(dom.contains("readers: you and 1 other"), "{dom}");
    assert!(!dom.contains("attacker@evil.test"), "{dom}");
    assert!(!dom.contains("quarterly numbers"), "{dom}");
    drop(plain);
    let owner = serve_with(&trace, &["--reveal"]);
    let dom = chromium(&["--dump-dom", &format!("{}call/2", owner.url)]);
    assert!(dom.contains("readers: you, attacker@evil.test"), "{dom}");
    assert!(dom.contains("quarterly numbers"), "{dom}");
    assert!(
        dom.contains("untrusted: written by whoever wrote read_inbox#1, not by you"),
        "{dom}"
    );
}

/// A forged pre-flight record listing thousands of predicted sites, some hostile: a bounded number of
/// predicted nodes, escaped, and the page still renders.
#[test]
fn a_forged_flood_of_predicted_sources_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flood.zjson");
    let sources: Vec<String> = (0..5000)
        .map(|i| format!("<script>x{i}</script> (line {i}, predicted)"))
        .collect();
    let refs: Vec<&str> = sources.iter().map(String::as_str).collect();
    let mut w =
        TraceWriter::create(&path, Header::new("x = 1\n", "sha256:00".into(), "strict")).unwrap();
    for id in 1..=3 {
        w.append(send_call(id, &refs, &refs, "deny", true)).unwrap();
    }
    w.append(Record::End(End {
        status: "denied".into(),
        exit_code: 3,
        outcome: "deny".into(),
    }))
    .unwrap();
    w.close().unwrap();
    let (code, html) = export(&path);
    assert_eq!(code, 0);
    assert_eq!(
        graph_section(&html)
            .matches("class=\"node predicted\"")
            .count(),
        3 * 32
    );
    assert!(!html.contains("<script>x"));
    assert!(html.contains("&lt;script&gt;x0"));
    // Every edge still goes from a lower id to a higher one, into its own call.
    assert!(shown_edges(&html).iter().all(|(from, to, _)| from < to));
}

/// Decodes a PNG screenshot into (width, height, RGBA bytes).
fn pixels(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    let rgba: Vec<u8> = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf
            .chunks(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        other => panic!("unexpected screenshot colour type {other:?}"),
    };
    (info.width, info.height, rgba)
}

#[test]
fn the_export_looks_like_the_served_pages() {
    let (_world, trace) = traced("triage.py", 0);
    let (code, html) = export(&trace);
    assert_eq!(code, 0);
    // The inline stylesheet is the served one, byte for byte: no HTML entities inside <style> (where a
    // browser does not decode them).
    let style = html
        .split_once("<style>")
        .and_then(|(_, rest)| rest.split_once("</style>"))
        .map(|(css, _)| css)
        .expect("the export has an inline stylesheet");
    assert!(!style.contains('&'), "entities in the stylesheet: {style}");
    assert_eq!(style, zamburak::view::render::CSS);

    // Side by side in Chromium: between the navigation bar (the export's also links its sections) and the
    // end of the summary (the export goes on with the plan), the export is drawn as the served page.
    let server = serve(&trace);
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let served_png = artifacts.join("view-summary-served.png");
    let export_png = artifacts.join("view-summary-export.png");
    for (url, shot) in [
        (server.url.clone(), &served_png),
        (
            format!("file://{}", trace.with_extension("html").display()),
            &export_png,
        ),
    ] {
        let _ = std::fs::remove_file(shot);
        chromium(&[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1000,700",
            "--hide-scrollbars",
            &url,
        ]);
    }
    let (w1, h1, served) = pixels(&served_png);
    let (w2, h2, exported) = pixels(&export_png);
    assert_eq!((w1, h1), (w2, h2));
    let row = w1 as usize * 4;
    let (top, bottom) = (60 * row, 590 * row); // below the navigation bar, above the export's plan
    let differing = served[top..bottom]
        .chunks(4)
        .zip(exported[top..bottom].chunks(4))
        .filter(|(a, b)| a != b)
        .count();
    let total = (bottom - top) / 4;
    assert!(
        differing * 100 < total,
        "{differing} of {total} pixels differ between {} and {}",
        served_png.display(),
        export_png.display()
    );
}

/// A 998-call run reads as its call sites: one row per plan line and tool, failures first, a headline for the
/// most severe decision, and the iterations one click further (#20).
#[test]
fn a_long_run_is_summarised_by_call_site() {
    let world = World::new(None);
    let policy = std::fs::read_to_string(world.path("policy.yaml"))
        .unwrap()
        .replace("max_tool_calls: 200", "max_tool_calls: 2000");
    std::fs::write(world.path("policy.yaml"), policy).unwrap();
    let plan = world.write_plan(
        "long.py",
        "for i in range(990):\n    note = read_file(path=\"todo.txt\")\nemails = read_inbox(limit=20)\nfor e in emails:\n    draft_reply(to=e[\"from\"], subject=\"Re\", body=\"Thanks\")\n",
    );
    world.run_expect(&plan, &[], 0);
    let trace = plan.with_extension("zjson");
    let calls = common::world::calls(&trace, None).len();
    assert!(calls > 990, "{calls} calls");
    let drafts = common::world::calls(&trace, Some("draft_reply")).len();

    let server = serve(&trace);
    let dom = chromium(&["--dump-dom", &server.url]);
    let sites: Vec<&str> = dom.split("<li class=\"site ").skip(1).collect();
    assert_eq!(sites.len(), 3, "one row per call site:\n{dom}");
    // Failures first: the drafted replies, then the allowed sites in plan order.
    assert!(
        sites[0].starts_with("decision-draft has-draft\" data-line=\"5\"")
            && sites[0].contains(&format!(
                "line 5 <code>draft_reply</code> ×{drafts}: {drafts} drafted, rule <code>args.to.require</code>"
            )),
        "{}",
        sites[0]
    );
    assert!(
        sites[1].contains("line 2 <code>read_file</code> ×990: 990 allowed"),
        "{}",
        sites[1]
    );
    assert!(sites[2].contains("line 3 <code>read_inbox</code> ×1: 1 allowed"));
    assert_eq!(
        sites[0].matches("<a href=").count(),
        drafts,
        "the iterations are listed under their site"
    );
    assert!(
        dom.contains(
            "<p class=\"headline decision-draft\">Drafted `draft_reply` at line 5: `to` built from read_inbox#991"
        ),
        "{dom}"
    );
    assert!(dom.contains(&format!("{calls} calls at 3 call sites, failures first")));

    // The plan page: one chip per decision on a line, not a link per iteration.
    let plan_page = chromium(&["--dump-dom", &format!("{}plan", server.url)]);
    let line2 = plan_page
        .split("id=\"line-2\"")
        .nth(1)
        .and_then(|rest| rest.split("</span>\n").next())
        .unwrap_or_default()
        .to_string();
    assert_eq!(line2.matches("class=\"mark").count(), 1, "{line2}");
    assert!(line2.contains("allow ×990</a>"), "{line2}");
    assert!(plan_page.contains(&format!("draft ×{drafts}</a>")));

    // Focus on the last reply: only what it derives from (the inbox read), not the 990 file reads; each
    // edge labelled with what it reaches, and every node and edge titled.
    let last = common::world::calls(&trace, Some("draft_reply"))
        .last()
        .and_then(|c| c["call_id"].as_u64())
        .unwrap();
    let focus_url = format!("{}graph?focus={last}", server.url);
    let focused = chromium(&["--dump-dom", &focus_url]);
    let graph = graph_section(&focused);
    assert!(
        focused.contains(&format!("<h1>Lineage of call #{last}</h1>")),
        "{focused}"
    );
    let nodes = graph.matches("<g class=\"node ").count();
    let edges = graph.matches("<path class=\"edge ").count();
    assert_eq!(nodes, 2, "the reply and the inbox read:\n{graph}");
    assert!(graph.contains(">#991 read_inbox</text>") && !graph.contains("read_file"));
    assert_eq!(edges, 2, "a data and a control edge:\n{graph}");
    assert!(
        graph.contains(">to</text>") && graph.contains(">control</text>"),
        "{graph}"
    );
    assert_eq!(graph.matches("<title>").count(), nodes + edges);
    assert!(graph.contains(&format!(
        "<title>to: #991 read_inbox → #{last} draft_reply</title>"
    )));
    // The run's graph: one node per call site, not 998 nodes.
    let whole = chromium(&["--dump-dom", &format!("{}graph", server.url)]);
    let whole = graph_section(&whole);
    assert_eq!(whole.matches("<g class=\"node ").count(), 3, "{whole}");
    assert!(whole.contains("#1 read_file ×990</text>"), "{whole}");
    assert!(whole.contains("#991 read_inbox</text>"));
    assert!(whole.contains(&format!("draft_reply ×{drafts}</text>")));
    // The same lineage is drawn on the call's page.
    let page = chromium(&["--dump-dom", &format!("{}call/{last}", server.url)]);
    assert!(page.contains("Lineage of this call"), "{page}");

    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let focus_shot = artifacts.join("view-graph-focus.png");
    let _ = std::fs::remove_file(&focus_shot);
    chromium(&[
        &format!("--screenshot={}", focus_shot.display()),
        "--window-size=900,500",
        &focus_url,
    ]);
    assert!(focus_shot.exists(), "a screenshot of the focus graph");
    let shot = artifacts.join("view-summary-sites.png");
    let _ = std::fs::remove_file(&shot);
    chromium(&[
        &format!("--screenshot={}", shot.display()),
        "--window-size=1200,900",
        &server.url,
    ]);
    let (w, h, _) = pixels(&shot);
    assert_eq!((w, h), (1200, 900), "a screenshot of the grouped summary");
}

/// The call page says which argument the rule is about, names the calls its data comes from, and leads to
/// the plan line and the calls around it; an id the trace does not have gets a page that says so (#20).
#[test]
fn the_call_page_points_at_the_failing_argument_and_its_neighbours() {
    let (_world, trace) = traced("triage.py", 0);
    let server = serve(&trace);
    let dom = chromium(&["--dump-dom", &format!("{}call/3", server.url)]);
    let failing: Vec<&str> = dom.split("<tr class=\"failing\"").skip(1).collect();
    assert_eq!(failing.len(), 1, "one argument row marked:\n{dom}");
    assert!(
        failing[0].contains("<td>to <strong>← args.to.require</strong></td>"),
        "{}",
        failing[0]
    );
    assert!(dom.contains("plan#line-20\">line 20</a>"), "{dom}");
    assert!(
        dom.contains("← call #2</a>") && dom.contains("call #4 →</a>"),
        "{dom}"
    );
    assert!(
        dom.contains(">#1 read_inbox</a>"),
        "data sources are named:\n{dom}"
    );

    assert_eq!(get_status(&format!("{}call/999", server.url)), 404);
    let missing = chromium(&["--dump-dom", &format!("{}call/999", server.url)]);
    assert!(
        missing.contains("No call #999 in this trace")
            && missing.contains("This trace has 5 calls, from"),
        "{missing}"
    );
}

/// An export draws the lineage of every call that was not simply allowed, within a bound: a run whose 400
/// denials each derive from all the calls before them would otherwise draw 80,000 nodes.
#[test]
fn an_export_bounds_the_lineages_it_draws() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chain.zjson");
    let mut w =
        TraceWriter::create(&path, Header::new("x = 1\n", "sha256:00".into(), "strict")).unwrap();
    for id in 1..=400u32 {
        let from: Vec<String> = (id > 1)
            .then(|| format!("send#{}", id - 1))
            .into_iter()
            .collect();
        let refs: Vec<&str> = from.iter().map(String::as_str).collect();
        w.append(send_call(id, &refs, &[], "draft", false)).unwrap();
        w.append(Record::Result(CallResult {
            call_id: id,
            tool: "send".into(),
            label: view_label("untrusted", &[], false, &[]),
            digest: "none".into(),
            preview: None,
            scanned: Vec::new(),
        }))
        .unwrap();
    }
    w.close().unwrap();
    let (code, html) = export(&path);
    assert_eq!(code, 5, "exported; intact, but no end record");
    let outside_graph = html.replacen(graph_section(&html), "", 1);
    let drawn = outside_graph.matches("<g class=\"node ").count();
    assert!(drawn > 0 && drawn <= 5_000, "{drawn} lineage nodes drawn");
    assert!(outside_graph.contains("Its lineage is too large to draw in an export"));
}

/// A recipient read from a file inside a list the plan wrote: the page draws the edge from the read to the
/// send and shows each element's label beside the whole list's (the trace once gave the list's own
/// label, so the page showed `to` as trusted and public, with no edge).
#[test]
fn a_list_argument_shows_its_elements_and_its_lineage() {
    let world = World::new(None);
    let plan = world.write_plan("plan.py", LIST_AROUND_A_READ);
    world.run_expect(&plan, &[], 4);
    assert!(world.messages("out/outbox").is_empty());
    let trace = plan.with_extension("zjson");
    let (code, html) = export(&trace);
    assert_eq!(code, 0);
    assert!(
        shown_edges(&html).contains(&(1, 2, "data")),
        "{}",
        graph_section(&html)
    );
    let row = html
        .split("<tr")
        .find(|r| r.contains("<td>to"))
        .expect("a row for `to`");
    assert!(
        row.contains("element 1: <span class=\"label integrity-trusted\""),
        "{row}"
    );
    assert!(
        row.contains("element 2: <span class=\"label integrity-untrusted\""),
        "{row}"
    );
    assert!(
        !row.contains("<td><span class=\"label integrity-trusted\""),
        "{row}"
    );
}

/// Every `<svg class="lineage">` of a page: its node boxes by node id, and its edges `(from, to, d)`.
type Boxes = Vec<(u64, (f64, f64, f64, f64))>;
/// Edges `(from, to, d)`.
type Edges = Vec<(u64, u64, String)>;
fn svgs(html: &str) -> Vec<(Boxes, Edges)> {
    let node = regex::Regex::new(
        r#"<g class="node [^"]*"[^>]* data-node="(\d+)"><title>[^<]*</title><rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)""#,
    )
    .unwrap();
    let edge = regex::Regex::new(
        r#"<path class="edge [a-z]+" data-from="(\d+)" data-to="(\d+)" d="([^"]+)""#,
    )
    .unwrap();
    html.split("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"lineage\"")
        .skip(1)
        .map(|svg| {
            let svg = svg.split("</svg>").next().unwrap();
            let f = |c: &regex::Captures, i: usize| c[i].parse::<f64>().unwrap();
            let nodes = node
                .captures_iter(svg)
                .map(|c| {
                    (
                        c[1].parse().unwrap(),
                        (f(&c, 2), f(&c, 3), f(&c, 4), f(&c, 5)),
                    )
                })
                .collect();
            let edges = edge
                .captures_iter(svg)
                .map(|c| {
                    (
                        c[1].parse().unwrap(),
                        c[2].parse().unwrap(),
                        c[3].to_string(),
                    )
                })
                .collect();
            (nodes, edges)
        })
        .collect()
}

/// The edges of every lineage drawing of `html` that pass through a node that is not one of their ends,
/// sampled along each path (`M`, `L` and cubic `C` segments) against every other node's box. Also checks
/// that each drawing has its nodes and that every edge starts and ends at one.
fn edges_through_other_nodes(html: &str) -> Vec<String> {
    let drawings = svgs(html);
    assert!(!drawings.is_empty(), "no lineage drawing on the page");
    let mut bad = Vec::new();
    for (nodes, edges) in &drawings {
        assert!(!nodes.is_empty(), "a drawing without nodes");
        for (from, to, d) in edges {
            let samples = zamburak::view::layout::samples(d, 40);
            assert!(samples.len() > 1, "edge {from}→{to} has no path: {d}");
            for (id, (x, y, w, h)) in nodes {
                if id == from || id == to {
                    continue;
                }
                if let Some((px, py)) = samples.iter().find(|(px, py)| {
                    *px > x + 0.5 && *px < x + w - 0.5 && *py > y + 0.5 && *py < y + h - 0.5
                }) {
                    bad.push(format!(
                        "{from}→{to} passes through node {id} at ({px:.0},{py:.0})"
                    ));
                }
            }
        }
    }
    bad
}

/// A run of about `calls` calls, from a plan whose calls feed each other across loops: a read of the inbox,
/// a loop of file reads, replies that take both, and a final send (denied) that takes the last note.
fn generated_run(calls: usize) -> (World, PathBuf) {
    let world = World::new(None);
    let policy = std::fs::read_to_string(world.path("policy.yaml"))
        .unwrap()
        .replace("max_tool_calls: 200", "max_tool_calls: 2000");
    std::fs::write(world.path("policy.yaml"), policy).unwrap();
    let plan = world.write_plan(
        &format!("gen{calls}.py"),
        &format!(
            "emails = read_inbox(limit=20)\nnote = \"\"\nfor i in range({}):\n    note = read_file(path=\"todo.txt\")\nfor e in emails:\n    draft_reply(to=e[\"from\"], subject=\"Re\", body=note)\nsend_email(to=\"boss@example.com\", subject=\"notes\", body=note)\n",
            calls.saturating_sub(12)
        ),
    );
    let out = world.run(&plan, &[]);
    let trace = plan.with_extension("zjson");
    assert!(trace.exists(), "{}", String::from_utf8_lossy(&out.stderr));
    (world, trace)
}

/// #39: no edge of any drawing passes through a node that is not one of its ends, on the examples and on
/// 100-, 500- and 1,000-call runs; every edge carries what it reaches.
#[test]
fn no_edge_passes_through_a_node_not_its_own() {
    for (example, code) in [
        ("triage.py", 0),
        ("attack.py", 3),
        ("forward.py", 4),
        ("summary.py", 0),
    ] {
        let (_world, trace) = traced(example, code);
        let (exit, html) = export(&trace);
        assert_eq!(exit, 0, "{example}");
        assert_eq!(
            edges_through_other_nodes(&html),
            Vec::<String>::new(),
            "{example}"
        );
        // Edges carry the argument they reach, on the run's graph too.
        let graph = graph_section(&html);
        assert_eq!(
            graph.matches("<path class=\"edge ").count(),
            graph.matches("<text class=\"edge-label").count(),
            "{example}: every edge labelled"
        );
    }
    for calls in [100, 500, 1000] {
        let (_world, trace) = generated_run(calls);
        let n = common::world::calls(&trace, None).len();
        assert!(n + 15 >= calls && n <= calls + 15, "{n} calls for {calls}");
        let (_, html) = export(&trace);
        assert_eq!(
            edges_through_other_nodes(&html),
            Vec::<String>::new(),
            "{calls} calls"
        );
        assert!(graph_section(&html).contains("class=\"edge-label data\""));
    }
}

/// Takes a screenshot of `url` at `width`×`height` with tests/browser/shot.mjs, and returns what it measured of
/// the page's first lineage drawing.
fn shot(url: &str, png: &Path, width: u32, height: u32) -> Value {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    assert!(
        dir.join("node_modules/playwright-core").is_dir(),
        "playwright-core is not installed: run `cd tests/browser && npm ci` (.ci/run does)"
    );
    let out = Proc::new("node")
        .arg(dir.join("shot.mjs"))
        .arg(url)
        .arg(png)
        .arg(width.to_string())
        .arg(height.to_string())
        .output()
        .expect("node");
    assert!(
        out.status.success(),
        "the browser run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// #39: the graph pages of the examples and of a 1,000-call run in Chromium at 1400 px: every drawing is drawn
/// at the size it asks for (nothing shrunk or cut off), and a drawing wider than its frame scrolls. The
/// screenshots are saved in target/test-artifacts; with `ZAMBURAK_BLESS=1` also in docs/images/ (the ones
/// docs/view.md shows).
#[test]
fn graph_screenshots_show_every_edge_clear_and_wide_graphs_scroll() {
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let bless = std::env::var("ZAMBURAK_BLESS").is_ok_and(|v| v == "1");
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/images");
    let mut runs: Vec<(String, World, PathBuf)> = Vec::new();
    for (example, code) in [
        ("triage.py", 0),
        ("attack.py", 3),
        ("forward.py", 4),
        ("summary.py", 0),
    ] {
        let (world, trace) = traced(example, code);
        runs.push((example.trim_end_matches(".py").to_string(), world, trace));
    }
    let (world, trace) = generated_run(1000);
    runs.push(("run-1000-calls".to_string(), world, trace));
    for (name, _world, trace) in &runs {
        let server = serve(trace);
        let png = artifacts.join(format!("view-graph-{name}.png"));
        let _ = std::fs::remove_file(&png);
        let measured = shot(&format!("{}graph", server.url), &png, 1400, 1000);
        let (w, h, _) = pixels(&png);
        assert_eq!((w, h), (1400, 1000), "{name}");
        let d = &measured["drawing"];
        assert_eq!(
            d["drawn"], d["asked"],
            "{name}: the drawing is shown at its own size: {measured}"
        );
        let frame = &d["frame"];
        assert_eq!(frame["overflow"], "auto", "{name}: {measured}");
        let asked = d["asked"][0].as_f64().unwrap();
        let (visible, scroll) = (
            frame["visible"].as_f64().unwrap(),
            frame["scroll"].as_f64().unwrap(),
        );
        if asked > visible {
            assert!(
                scroll >= asked,
                "{name}: a drawing wider than its frame scrolls: {measured}"
            );
        }
        if bless {
            std::fs::create_dir_all(&docs).unwrap();
            std::fs::copy(&png, docs.join(format!("view-graph-{name}.png"))).unwrap();
        }
    }
}
