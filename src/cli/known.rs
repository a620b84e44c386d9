//! `zamburak known`: the values the person remembered when approving (docs/approvals.md, "Remembered
//! values"), listed or forgotten. With `approve --remember` and the review queue's ticks, the only writer of
//! the store (docs/semantics.md, "Remembered values").

use super::KnownAction;
use super::output::{errln, outln};
use crate::exit;
use crate::known::store::{self, Store};
use crate::text::visible;

/// Lists the store (`action: None`) or forgets from it.
pub fn command(action: Option<KnownAction>, json: bool) -> i32 {
    let path = match store::default_path() {
        Ok(p) => p,
        Err(e) => {
            errln!("error: {e}");
            return exit::USAGE;
        }
    };
    match action {
        None => list(&path, json),
        Some(KnownAction::Forget { all: true, .. }) => {
            // A store that does not check is removed whole: nothing in it can be trusted to forget from.
            let n = Store::open(&path).map(|s| s.entries().len()).ok();
            match store::remove(&path) {
                Ok(()) => {
                    match n {
                        Some(n) => errln!("forgot {n} remembered value(s) in {}", path.display()),
                        None => errln!("removed {} (it did not check)", path.display()),
                    }
                    exit::OK
                }
                Err(e) => {
                    errln!("error: {e}");
                    exit::USAGE
                }
            }
        }
        Some(KnownAction::Forget { value, .. }) => {
            let value = value.unwrap_or_default();
            let mut s = match Store::open(&path) {
                Ok(s) => s,
                Err(e) => {
                    errln!("error: {e}");
                    return exit::USAGE;
                }
            };
            let n = s.forget(&value);
            if n == 0 {
                errln!(
                    "error: {} is not remembered (`zamburak known` lists what is)",
                    serde_json::Value::String(visible(&value))
                );
                return exit::USAGE;
            }
            if let Err(e) = s.save() {
                errln!("error: {e}");
                return exit::USAGE;
            }
            errln!(
                "forgot {}: {n} entr{} removed",
                serde_json::Value::String(visible(&value)),
                if n == 1 { "y" } else { "ies" }
            );
            exit::OK
        }
    }
}

fn list(path: &std::path::Path, json: bool) -> i32 {
    let s = match Store::open(path) {
        Ok(s) => s,
        Err(e) => {
            errln!("error: {e}");
            return exit::USAGE;
        }
    };
    let now = jiff::Timestamp::now();
    if json {
        let entries: Vec<serde_json::Value> = s
            .entries()
            .iter()
            .map(|e| {
                let mut v = serde_json::to_value(e).unwrap_or_default();
                v["expired"] = e.expired(now).into();
                v
            })
            .collect();
        outln!(
            "{}",
            serde_json::json!({ "store": path.display().to_string(), "digest": s.digest(), "entries": entries })
        );
        return exit::OK;
    }
    if s.entries().is_empty() {
        errln!("nothing is remembered ({})", path.display());
        return exit::OK;
    }
    for e in s.entries() {
        let expired = if e.expired(now) { " (EXPIRED)" } else { "" };
        outln!(
            "{}  {}.{} as {}  by {} on {}, until {}{expired}, from claim {}  [{}]",
            serde_json::Value::String(visible(&e.value)),
            visible(&e.tool),
            visible(&e.arg),
            visible(&e.role),
            visible(&e.by),
            visible(e.day()),
            visible(e.expires.get(..10).unwrap_or(&e.expires)),
            visible(&e.claim),
            visible(&e.scope)
        );
    }
    errln!(
        "{} remembered value(s) in {}",
        s.entries().len(),
        path.display()
    );
    exit::OK
}
