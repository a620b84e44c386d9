//! `zamburak view TRACE.zjson [--addr 127.0.0.1:PORT] [--export FILE.html] [--reveal] [--for READER]`: serves
//! or exports the lineage graph `crate::view` builds, whole or for a named reader. `zamburak view --queue [DIR…] [--addr …] [--by NAME]`: serves
//! the review queue (`crate::view::queue`).

use super::output::{errln, outln};
use std::path::{Path, PathBuf};

use crate::exit;
use crate::view::{model, queue, render, server};

/// Runs `zamburak view --queue`. Exit 0 when stopped with Ctrl-C; 2 for a bad address, a directory that is
/// not one, or no name for the decider.
pub fn queue_command(dirs: &[PathBuf], addr: Option<&str>, by: Option<&str>) -> i32 {
    let Some(by) = crate::claim::decider(by) else {
        errln!(
            "error: who decides is recorded in the trace: name yourself with `--by NAME` (no $USER is set and the account has no name)"
        );
        errln!("the queue was not started.");
        return exit::USAGE;
    };
    let addr = match server::loopback_addr(addr) {
        Ok(a) => a,
        Err(e) => {
            errln!("error: {e}");
            return exit::USAGE;
        }
    };
    let dirs = match super::pending::search_dirs(dirs) {
        Ok(d) => d,
        Err(e) => {
            errln!("error: {e}");
            return exit::USAGE;
        }
    };
    let engine = match super::worker_engine() {
        Ok(engine) => engine,
        Err(e) => {
            errln!("error: {e}");
            return exit::USAGE;
        }
    };
    let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    let config = queue::Queue {
        dirs,
        by: by.clone(),
        engine,
    };
    let result = queue::serve(config, addr, &mut |url, waiting| {
        outln!("{url}");
        errln!(
            "serving the review queue of {} on loopback ({waiting} claim{} pending now), deciding as {}; \
             press Ctrl-C to stop",
            shown.join(", "),
            if waiting == 1 { "" } else { "s" },
            crate::text::visible(&by)
        );
    });
    match result {
        Ok(()) => exit::OK,
        Err(e) => {
            errln!("error: {e}");
            exit::USAGE
        }
    }
}

/// How `zamburak view TRACE` shows the trace.
#[derive(Clone, Copy, Debug, Default)]
pub struct Show<'a> {
    /// Where to serve (loopback only).
    pub addr: Option<&'a str>,
    /// Write one HTML file instead of serving.
    pub export: Option<&'a Path>,
    /// Owner mode: the values of `PLAN.zvalues` on the served pages.
    pub reveal: bool,
    /// Only what this reader may read ([`crate::view::reader`]).
    pub for_reader: Option<&'a str>,
}

/// Runs `zamburak view`. Exit 0 on success; 1 when the trace's chain is broken (the export is still
/// written and says where); 5 when it is intact but has no end record (exported, and said on stderr); 2 for
/// a bad address, an unreadable file or one that is not a trace (nothing is written).
///
/// `reveal` is owner mode: the values kept in `PLAN.zvalues` are shown on the served pages. It is refused
/// with `--export`, because an export is a file made to be passed on.
///
/// `for_reader` keeps only what that reader may read (docs/semantics.md, "A shareable trace shares nothing
/// private"): the export to give anyone else. It is made only from an intact trace (exit 2 otherwise,
/// nothing written).
pub fn view_command(trace: &Path, show: Show<'_>) -> i32 {
    let Show {
        addr,
        export,
        reveal,
        for_reader,
    } = show;
    if reveal && export.is_some() {
        errln!(
            "error: --reveal shows your private values and is for your own screen; it cannot be combined with --export (an export is made to be shared)"
        );
        return exit::USAGE;
    }
    let addr = match server::loopback_addr(addr) {
        Ok(a) => a,
        Err(e) => {
            errln!("error: {e}");
            return exit::USAGE;
        }
    };
    let mut view = match for_reader {
        Some(reader) => match crate::view::reader::load_for(trace, reader) {
            Ok(r) => {
                let who = crate::text::visible(reader.trim());
                if r.kept < r.records {
                    errln!(
                        "for {who}: keeps the first {} of the trace's {} records; the rest depends on data {who} may not read and is left out",
                        r.kept,
                        r.records
                    );
                } else {
                    errln!(
                        "for {who}: {who} may read the whole run; all {} records are kept",
                        r.records
                    );
                }
                if r.view.export_for.as_ref().is_some_and(|e| e.plan_withheld) {
                    errln!(
                        "for {who}: the plan's text is left out: it was written by a planner that had read data {who} may not read"
                    );
                }
                if r.incomplete {
                    errln!(
                        "warning: the trace is incomplete: it has no end record (the run was interrupted, or the end of the file was cut off)"
                    );
                }
                r.view
            }
            Err(e) => {
                errln!("error: {e}");
                return exit::USAGE;
            }
        },
        None => match model::load(trace) {
            Ok(v) => {
                if export.is_some() {
                    errln!(
                        "note: this export is yours: it keeps every decision, label and the plan; to give the trace to someone, export it for them with --for READER"
                    );
                }
                v
            }
            Err(e) => {
                errln!("error: {e}");
                return exit::USAGE;
            }
        },
    };
    if reveal {
        let store = crate::trace::values::store_path(trace);
        match crate::trace::values::load(&store) {
            Ok(values) => model::reveal(&mut view, &values),
            Err(e) => {
                errln!(
                    "error: owner mode needs the run's value store: {e} (runs made with --no-values keep none)"
                );
                return exit::USAGE;
            }
        }
        errln!(
            "owner mode: your private values are shown; do not share the pages or their address"
        );
    }
    if let Some(h) = &view.header {
        let hex = h.policy_sha256.trim_start_matches("sha256:");
        let short = hex.get(..12).unwrap_or(hex);
        let path = if h.policy_path.is_empty() {
            "not recorded (format 1 trace)"
        } else {
            h.policy_path.as_str()
        };
        errln!("policy: {path} (sha256 {short})");
    }
    let broken = !view.chain.ok;
    let incomplete = view.chain.incomplete;
    if broken {
        errln!(
            "warning: the trace's chain is broken at seq {}: {}",
            view.chain.broken_seq.unwrap_or(0),
            crate::text::visible(view.chain.broken_why.as_deref().unwrap_or(""))
        );
    } else if incomplete {
        errln!(
            "warning: the trace is incomplete: its {} records check but it has no end record (the run was \
             interrupted, or the end of the file was cut off), so it may not show all that happened",
            view.chain.records
        );
    }
    let pages = match render::Pages::new(view) {
        Ok(p) => p,
        Err(e) => {
            errln!("error: {e}");
            return exit::USAGE;
        }
    };
    if let Some(out) = export {
        let html = match pages.export() {
            Ok(h) => h,
            Err(e) => {
                errln!("error: {e}");
                return exit::USAGE;
            }
        };
        if let Err(e) = std::fs::write(out, html) {
            errln!("error: cannot write {}: {e}", out.display());
            return exit::USAGE;
        }
        errln!("wrote {}", out.display());
        return if broken {
            exit::REJECTED
        } else if incomplete {
            exit::INCOMPLETE
        } else {
            exit::OK
        };
    }
    let result = server::serve(pages, addr, &mut |url| {
        outln!("{url}");
        errln!("serving the trace on loopback; press Ctrl-C to stop");
    });
    match result {
        Ok(()) => exit::OK,
        Err(e) => {
            errln!("error: {e}");
            exit::USAGE
        }
    }
}
