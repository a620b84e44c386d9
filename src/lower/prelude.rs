//! The prelude definitions a standalone lowered program needs, and only those (`Lowered::code`). A run does
//! not compile them: it loads the whole prelude from the session `build.rs` compiled. The prelude's top-level
//! `def`s form a call graph (names starting with `_`); a program gets the definitions reachable from the
//! names its own code uses. A definition left out by mistake can only make a call fail: an undefined name
//! reaching the host is denied (fail closed).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use super::PRELUDE;

/// The prelude as the session `build.rs` compiles holds it, less the dispatch tables: `prelude.py` and the
/// generated fast paths (`generated.rs`).
fn text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let methods = crate::plan::catalogue::METHODS
            .iter()
            .filter_map(|m| m.str_fast.map(|list| (m.name, list)));
        format!("{PRELUDE}{}", super::generated::helpers(methods))
    })
}

/// The prelude split into its header (imports and constants, always kept) and its definitions.
struct Split {
    header: String,
    /// Definitions in source order: name, text, and the `_` names the text mentions.
    defs: Vec<(String, String, BTreeSet<String>)>,
    index: BTreeMap<String, usize>,
}

/// The `_`-prefixed identifiers in a text (over-approximates: strings and comments count too, which only
/// keeps more than needed).
pub fn underscore_names(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let starts = c == b'_'
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
        if starts {
            let mut j = i;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                j += 1;
            }
            out.insert(text[i..j].to_string());
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

fn split() -> &'static Split {
    static SPLIT: OnceLock<Split> = OnceLock::new();
    SPLIT.get_or_init(|| {
        let mut header = String::new();
        let mut defs: Vec<(String, String, BTreeSet<String>)> = Vec::new();
        for line in text().lines() {
            if let Some(rest) = line.strip_prefix("def ") {
                let name = rest.split('(').next().unwrap_or("").trim().to_string();
                defs.push((name, String::new(), BTreeSet::new()));
            }
            let is_top_level = !line.starts_with(' ') && !line.is_empty();
            match defs.last_mut() {
                // A top-level line that is not a `def` and not a comment ends the current definition.
                Some(d)
                    if !(is_top_level && !line.starts_with("def ") && !line.starts_with('#')) =>
                {
                    d.1.push_str(line);
                    d.1.push('\n');
                }
                _ => {
                    header.push_str(line);
                    header.push('\n');
                }
            }
        }
        for d in &mut defs {
            d.2 = underscore_names(&d.1);
        }
        let index = defs
            .iter()
            .enumerate()
            .map(|(i, d)| (d.0.clone(), i))
            .collect();
        Split {
            header,
            defs,
            index,
        }
    })
}

/// The prelude text for a program whose own code mentions `used`.
pub fn for_names(used: &BTreeSet<String>) -> String {
    let s = split();
    let mut keep = vec![false; s.defs.len()];
    let mut work: Vec<String> = used.iter().cloned().collect();
    work.extend(underscore_names(&s.header));
    while let Some(name) = work.pop() {
        if let Some(&i) = s.index.get(&name)
            && !keep[i]
        {
            keep[i] = true;
            work.extend(s.defs[i].2.iter().cloned());
        }
    }
    let mut out = s.header.clone();
    for (d, k) in s.defs.iter().zip(keep) {
        if k {
            out.push_str(&d.1);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prelude_definition_is_found() {
        let defs = text().lines().filter(|l| l.starts_with("def ")).count();
        assert_eq!(split().defs.len(), defs);
        // Asking for everything gives back every definition.
        let all: BTreeSet<String> = split().index.keys().cloned().collect();
        let text = for_names(&all);
        assert_eq!(text.lines().filter(|l| l.starts_with("def ")).count(), defs);
    }

    #[test]
    fn dependencies_are_followed() {
        let text = for_names(&BTreeSet::from(["_bi_sorted".to_string()]));
        for needed in [
            "def _bi_sorted",
            "def _keyed",
            "def _elems",
            "def _call",
            "def _struct(",
            "def _inf",
        ] {
            assert!(text.contains(needed), "{needed}");
        }
        assert!(
            !text.contains("def _json_dumps"),
            "unused helpers are left out"
        );
    }
}
