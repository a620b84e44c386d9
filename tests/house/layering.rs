//! The module structure: imports go down the layers CONTRIBUTING.md lists and never in a circle, between
//! top-level modules or between the files of one folder. Read from the source text (`crate::`, `super::`
//! paths), outside `#[cfg(test)]` modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Bottom first; a module may import only from modules at its own rank or below (same rank: no circle).
const LAYERS: &[&[&str]] = &[
    &[
        "exit", "label", "digest", "known", "mode", "text", "capped", "planner",
    ],
    &["value", "plan"],
    &["lower", "policy"],
    &["tools", "trace", "mcp"],
    &["analysis", "stubs"],
    &["runtime"],
    &["claim"],
    &["view", "scenario", "serve"],
    &["compile"],
    &["cli"],
];

fn rank(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| l.contains(&module))
        .unwrap_or_else(|| panic!("module `{module}` is not in LAYERS (tests/house/layering.rs)"))
}

/// Module path of each source file (`src/trace/verify.rs` is `["trace", "verify"]`) and its text without
/// test modules.
fn sources() -> BTreeMap<Vec<String>, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut out = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().to_string())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        if parts == ["lib"] || parts == ["main"] {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap().to_string();
        out.insert(parts, code);
    }
    out
}

/// The modules a file refers to by a `crate::` or `super::` path, resolved to the longest known module.
fn references(me: &[String], code: &str, known: &BTreeSet<Vec<String>>) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    for (i, _) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        let rest = &code[i..];
        let path: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let mut parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
        let mut base: Vec<String> = Vec::new();
        if parts.first() == Some(&"crate") {
            parts.remove(0);
        } else {
            base = me.to_vec();
            while parts.first() == Some(&"super") {
                parts.remove(0);
                base.pop();
            }
        }
        // `use super::{a, b}` names several modules.
        let mut candidates = vec![parts.clone()];
        if let Some(brace) = rest.get(path.len()..).filter(|r| r.starts_with('{')) {
            let inner = &brace[1..brace.find('}').unwrap_or(1)];
            for name in inner.split(',') {
                let name = name.trim().split([' ', ':']).next().unwrap_or("");
                let mut p = parts.clone();
                p.push(name);
                candidates.push(p);
            }
        }
        for parts in candidates {
            let mut best = None;
            for n in 0..=parts.len() {
                let mut cand = base.clone();
                cand.extend(parts[..n].iter().map(|s| s.to_string()));
                if known.contains(&cand) {
                    best = Some(cand);
                }
            }
            if let Some(b) = best
                && b.as_slice() != me
                && !me.starts_with(&b)
            {
                out.insert(b);
            }
        }
    }
    out
}

#[test]
fn imports_go_down_the_layers_and_never_in_a_circle() {
    let src = sources();
    let known: BTreeSet<Vec<String>> = src.keys().cloned().collect();
    let mut problems = Vec::new();
    // Edges between siblings (the two children of the deepest common parent), for the circle check.
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (me, code) in &src {
        for to in references(me, code, &known) {
            if me[0] != to[0] && rank(&to[0]) > rank(&me[0]) {
                problems.push(format!(
                    "{} imports {} from a higher layer",
                    me.join("::"),
                    to.join("::")
                ));
            }
            let common = me.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common < me.len() && common < to.len() {
                edges
                    .entry(me[..=common].to_vec())
                    .or_default()
                    .insert(to[..=common].to_vec());
            }
        }
    }
    // A circle: a node that reaches itself.
    for start in edges.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&Vec<String>> = edges[start].iter().collect();
        while let Some(n) = stack.pop() {
            if n == start {
                problems.push(format!("{} is part of an import circle", start.join("::")));
                break;
            }
            if seen.insert(n.clone()) {
                stack.extend(edges.get(n).into_iter().flatten());
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(edges.len() > 20, "the import graph was not read");
}
