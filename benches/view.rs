//! `zamburak view` on a synthetic 2,000-call trace, each bench from the file: the summary, the graph page,
//! the lineage of the last call (`graph?focus=2000`) and the export. Targets: summary and focus graph under
//! 1 s, graph page under 1 s, export under 2 s. Every call is on its own line and derives from the one
//! before it, so grouping by call site saves nothing and the focus holds all 2,000 calls: the worst case.
//! Run with `cargo bench --bench view`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark's setup that fails should stop it with a message saying what went wrong"
)]

use std::path::PathBuf;
use std::sync::OnceLock;

use zamburak::label::LabelView;
use zamburak::trace::TraceWriter;
use zamburak::trace::record::{ArgRecord, Call, CallResult, End, Header, Record};
use zamburak::view::{model, render};

fn main() {
    divan::main();
}

fn label(integrity: &str, sources: Vec<String>) -> LabelView {
    LabelView {
        integrity: integrity.into(),
        verified: vec![],
        tags: if integrity == "untrusted" {
            vec!["PRIVATE".into()]
        } else {
            vec![]
        },
        readers: None,
        sources,
    }
}

/// 2,000 calls; each reads from up to three earlier calls, every seventh under an untrusted condition.
fn trace() -> &'static PathBuf {
    static PATH: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &PATH
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let path = dir.path().join("big.zjson");
            let plan: String = (1..=2000)
                .map(|i| format!("r{i} = tool(x=r{})\n", i / 2))
                .collect();
            let mut w =
                TraceWriter::create(&path, Header::new(&plan, "sha256:00".into(), "strict"))
                    .expect("writable temp dir");
            for i in 1..=2000u32 {
                let from: Vec<String> = [i / 2, i / 3, i.saturating_sub(1)]
                    .iter()
                    .filter(|s| **s > 0)
                    .map(|s| format!("tool#{s}"))
                    .collect();
                let pc = if i % 7 == 0 {
                    vec![format!("tool#{}", i / 7)]
                } else {
                    vec![]
                };
                w.append(Record::Call(Call {
                    call_id: i,
                    line: i,
                    tool: "tool".into(),
                    args: vec![ArgRecord {
                        name: "x".into(),
                        elements: None,
                        label: label(
                            if from.is_empty() {
                                "trusted"
                            } else {
                                "untrusted"
                            },
                            from,
                        ),
                        digest: "sha256:00".into(),
                        preview: None,
                    }],
                    pc: label("trusted", pc),
                    decision: if i % 50 == 0 {
                        "deny".into()
                    } else {
                        "allow".into()
                    },
                    rule: "allow".into(),
                    reason: "every requirement holds".into(),
                    before_run: false,
                    tool_sha256: None,
                    on_approval: None,
                    remembered: Vec::new(),
                }))
                .expect("append");
                w.append(Record::Result(CallResult {
                    call_id: i,
                    tool: "tool".into(),
                    label: label("untrusted", vec![format!("tool#{i}")]),
                    digest: "sha256:00".into(),
                    preview: None,
                    scanned: Vec::new(),
                }))
                .expect("append");
            }
            w.append(Record::End(End {
                status: "completed".into(),
                exit_code: 0,
                outcome: "allow".into(),
            }))
            .expect("append");
            w.close().expect("close");
            (dir, path)
        })
        .1
}

#[divan::bench]
fn graph_page_2000_calls() -> usize {
    let view = model::load(trace()).expect("readable");
    let pages = render::Pages::new(view).expect("templates");
    pages
        .page(&render::Page::Graph(None), "/t/")
        .expect("page")
        .expect("rendered")
        .len()
}

/// The summary a person opens first (headline, call sites), from the file: load, group, render.
#[divan::bench]
fn summary_page_2000_calls() -> usize {
    let view = model::load(trace()).expect("readable");
    let pages = render::Pages::new(view).expect("templates");
    pages
        .page(&render::Page::Summary, "/t/")
        .expect("page")
        .expect("rendered")
        .len()
}

/// The lineage of the last call alone (`graph?focus=2000`), from the file.
#[divan::bench]
fn focus_graph_2000_calls() -> usize {
    let view = model::load(trace()).expect("readable");
    let pages = render::Pages::new(view).expect("templates");
    pages
        .page(&render::Page::Graph(Some(2000)), "/t/")
        .expect("page")
        .expect("rendered")
        .len()
}

#[divan::bench]
fn export_2000_calls() -> usize {
    let view = model::load(trace()).expect("readable");
    let pages = render::Pages::new(view).expect("templates");
    pages.export().expect("rendered").len()
}
