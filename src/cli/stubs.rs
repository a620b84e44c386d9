//! `zamburak stubs [--policy FILE] [--format pyi|markdown|json]`: prints what a planner is given for the
//! policy (`crate::stubs`) on stdout.
//!
//! The policy is found as `lint` finds one for a plan in the current directory: `--policy`, else the
//! nearest `zamburak.yaml` from here up, else the built-in default; it is named on stderr. A policy with MCP
//! tools needs its lock (the tools' schemas come from it; no server is started). Exit codes: 0 printed,
//! 2 the policy or its lock cannot be used.

use std::path::Path;

use super::output::{errln, out, outln};
use crate::exit;
use crate::policy::discover;
use crate::stubs::{catalogue, json, markdown, pyi};

/// How `stubs` prints the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Pyi,
    Markdown,
    Json,
}

fn usage(format: Format, message: &str) -> i32 {
    errln!("error: {message}");
    if format == Format::Json {
        outln!("{}", serde_json::json!({ "error": message }));
    }
    exit::USAGE
}

/// Runs `zamburak stubs` and returns its exit code.
pub fn stubs_command(policy: Option<&Path>, format: Format) -> i32 {
    // A plan in the current directory: discovery starts here.
    let chosen = match discover::choose(policy, Path::new("plan.py")) {
        Ok(c) => c,
        Err(e) => return usage(format, &e.to_string()),
    };
    errln!("{}", chosen.announce());
    for w in &chosen.warnings {
        errln!("warning: {w}");
    }
    let lock = match crate::mcp::lock::check_offline(&chosen.policy, chosen.origin.path()) {
        Ok(lock) => lock,
        Err(e) => return usage(format, &e.to_string()),
    };
    let c = catalogue(&chosen.policy, lock.as_ref().map(|(l, _)| l));
    match format {
        Format::Pyi => out!("{}", pyi::render(&c)),
        Format::Markdown => out!("{}", markdown::render(&c, &chosen.policy)),
        Format::Json => match serde_json::to_string_pretty(&json::render(&c, &chosen.policy)) {
            Ok(text) => outln!("{text}"),
            Err(e) => return usage(format, &format!("cannot print the stubs as JSON: {e}")),
        },
    }
    exit::OK
}
