//! The decision lines `run` prints as the run goes: every call (`-v`), one line per call site with its
//! repeats counted (the default), or none (`-q`, only the outcome).
//!
//! Grouped, the first call of a call site (plan line, tool, decision, rule) is printed when it is recorded, as
//! with `-v`, so a long run still shows its progress; its repeats are counted, and [`Decisions::flush`]
//! (before a question at the terminal, and at the end of the run) prints `plan.py:4: allow read_file ×95`
//! for each site that repeated since.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use super::output::errln;
use crate::trace::record::Call;

/// How much `run` says about each decision.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Verbosity {
    /// Only the outcome (`-q`).
    Quiet,
    /// One line per call site, repeats counted.
    #[default]
    Grouped,
    /// Every call (`-v`).
    Every,
}

/// A call site's decisions: `(line, tool, decision, rule, before the run)`.
type Site = (u32, String, String, String, bool);

/// The decision lines of one run; shared between the trace's observer and the command.
#[derive(Clone)]
pub struct Decisions {
    inner: Rc<RefCell<Inner>>,
}

struct Inner {
    filename: String,
    verbosity: Verbosity,
    /// Per site: calls seen, and calls already counted in a printed line.
    seen: BTreeMap<Site, (usize, usize)>,
    /// Sites in the order of their first call.
    order: Vec<Site>,
}

impl Decisions {
    pub fn new(filename: String, verbosity: Verbosity) -> Decisions {
        Decisions {
            inner: Rc::new(RefCell::new(Inner {
                filename,
                verbosity,
                seen: BTreeMap::new(),
                order: Vec::new(),
            })),
        }
    }

    /// One recorded decision.
    pub fn record(&self, c: &Call) {
        let mut inner = self.inner.borrow_mut();
        let line = line_of(&inner.filename, c);
        match inner.verbosity {
            Verbosity::Quiet => {}
            Verbosity::Every => errln!("{line}"),
            Verbosity::Grouped => {
                let site = (
                    c.line,
                    c.tool.clone(),
                    c.decision.clone(),
                    c.rule.clone(),
                    c.before_run,
                );
                match inner.seen.get_mut(&site) {
                    Some((n, _)) => *n += 1,
                    None => {
                        errln!("{line}");
                        inner.seen.insert(site.clone(), (1, 1));
                        inner.order.push(site);
                    }
                }
            }
        }
    }

    /// Prints a line for every site that repeated since the last flush: `plan.py:4: allow read_file ×95`.
    pub fn flush(&self) {
        let mut inner = self.inner.borrow_mut();
        let Inner {
            filename,
            seen,
            order,
            ..
        } = &mut *inner;
        for site in order.iter() {
            let Some((n, shown)) = seen.get_mut(site) else {
                continue;
            };
            if *n > *shown {
                let (line, tool, decision, rule, _) = site;
                errln!(
                    "{filename}:{line}: {decision} {tool} ×{n} ({rule}; -v shows every call)",
                    n = *n
                );
                *shown = *n;
            }
        }
    }
}

/// The line of one decision, as `-v` prints every one: `plan.py:4: allow read_file: reason (rule)`.
fn line_of(filename: &str, c: &Call) -> String {
    let before = if c.before_run {
        "denied before the run: "
    } else {
        ""
    };
    format!(
        "{filename}:{}: {} {}: {before}{} ({})",
        c.line,
        c.decision,
        c.tool,
        crate::text::visible(&c.reason),
        c.rule
    )
}
