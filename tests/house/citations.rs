//! Every citation of a doc page resolves. Code, tests and docs cite a page by its path and a heading,
//! `docs/semantics.md, "Decisions"` (in docs/ also `[policy.md](policy.md), "Arguments that leave"`); several
//! headings may follow, joined by `,` or `and`. A citation fails when the page does not exist or has no such
//! heading. A section number (`§5`) resolves only against a heading numbered so (`## 5. …`), which the pages
//! do not have, and a `§` with no page before it cites nothing (RFCs excepted).
//!
//! Scans the text files of src/, tests/ and docs/, README.md and CONTRIBUTING.md. A citation may run over several comment lines: the
//! comment markers are dropped and the lines joined before it is read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use regex::Regex;

/// Each page of docs/ (its path from the repository root) with its headings, outside fenced code.
type Pages = BTreeMap<String, Vec<String>>;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn pages() -> Pages {
    let mut out = Pages::new();
    for f in files(&root().join("docs")) {
        if f.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        out.insert(relative(&f), headings(&text));
    }
    out
}

fn headings(markdown: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push(line.trim_start_matches('#').trim().to_string());
        } else if !fenced
            // A paragraph that opens with its title in bold (`**Exporting.** ...`) is a section too.
            && let Some(rest) = line.strip_prefix("**")
            && let Some((title, _)) = rest.split_once(".**")
        {
            out.push(title.to_string());
        }
    }
    out
}

fn relative(f: &Path) -> String {
    f.strip_prefix(root())
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/")
}

/// The text files under `dir`, skipping installed packages.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                if p.file_name()
                    .is_some_and(|n| n != "node_modules" && n != ".venv")
                {
                    todo.push(p);
                }
            } else if p.extension().is_some_and(|x| {
                ["rs", "py", "md", "yaml", "yml", "json", "toml"]
                    .contains(&x.to_str().unwrap_or(""))
            }) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The text with each line's comment marker dropped and the lines joined by a space, and the offset in
/// it where each line starts (to report line numbers).
fn joined(text: &str) -> (String, Vec<usize>) {
    let mut out = String::new();
    let mut starts = Vec::new();
    for line in text.lines() {
        starts.push(out.len());
        let t = line.trim_start();
        let t = ["//!", "///", "//", "#"]
            .iter()
            .find_map(|m| t.strip_prefix(m))
            .unwrap_or(t);
        out.push_str(t.trim());
        out.push(' ');
    }
    (out, starts)
}

/// Whether a cited name names `heading`: the whole heading, or the heading without its parenthesis
/// (`"Web"` names `## Web (builtins.web: …)`).
fn names(heading: &str, name: &str) -> bool {
    heading == name
        || heading
            .strip_prefix(name)
            .is_some_and(|rest| rest.starts_with(" ("))
}

/// The problems with the citations in one file's text: `(line, what is wrong)`. `in_docs`: the file is a
/// page of docs/, where a link `[x.md](x.md)` names the page beside it.
fn problems(text: &str, pages: &Pages, in_docs: bool) -> Vec<(usize, String)> {
    let cite = Regex::new(
        r#"(?:\bdocs/([A-Za-z0-9_./-]+\.md)|\]\(([A-Za-z0-9_-]+\.md)\))((?:,\s*"[^"]*"|(?:,|\s+and)?\s*"[^"]*"|,?\s*§\s*[0-9][0-9.]*)*)"#,
    )
    .unwrap();
    let part = Regex::new(r#""([^"]*)"|§\s*([0-9][0-9.]*[0-9]|[0-9])"#).unwrap();
    let (text, starts) = joined(text);
    let line_of = |at: usize| starts.partition_point(|&s| s <= at);
    let mut out = Vec::new();
    let mut cited = Vec::new();
    for c in cite.captures_iter(&text) {
        let whole = c.get(0).unwrap();
        cited.push(whole.range());
        let page = match (c.get(1), c.get(2)) {
            (Some(p), _) => format!("docs/{}", p.as_str()),
            (None, Some(p)) if in_docs => format!("docs/{}", p.as_str()),
            (None, Some(_)) => continue,
            (None, None) => continue,
        };
        let Some(heads) = pages.get(&page) else {
            out.push((line_of(whole.start()), format!("{page} does not exist")));
            continue;
        };
        let tail = c.get(3).unwrap().as_str();
        // The first quoted part must follow a comma: `docs/x.md"` is a path in code, not a citation.
        let tail_start = tail.trim_start();
        if tail_start.starts_with('"') || tail_start.starts_with("and") {
            continue;
        }
        for p in part.captures_iter(tail) {
            if let Some(name) = p.get(1) {
                if !heads.iter().any(|h| names(h, name.as_str())) {
                    out.push((
                        line_of(whole.start()),
                        format!("{page} has no heading \"{}\"", name.as_str()),
                    ));
                }
            } else if let Some(n) = p.get(2) {
                let numbered = heads.iter().any(|h| {
                    h.strip_prefix(n.as_str())
                        .is_some_and(|r| r.starts_with(". ") || r.starts_with(' '))
                });
                if !numbered {
                    out.push((
                        line_of(whole.start()),
                        format!(
                            "{page} has no section §{}: cite its heading by name",
                            n.as_str()
                        ),
                    ));
                }
            }
        }
    }
    for (at, _) in text.match_indices('§') {
        if cited.iter().any(|r| r.contains(&at)) {
            continue;
        }
        let before = &text[text[..at]
            .char_indices()
            .rev()
            .nth(11)
            .map_or(0, |(i, _)| i)..at];
        if !before.contains("RFC") {
            out.push((
                line_of(at),
                "a section number with no page before it".to_string(),
            ));
        }
    }
    out
}

#[test]
fn every_doc_citation_names_a_page_and_a_heading_it_has() {
    let pages = pages();
    assert!(
        pages["docs/semantics.md"].contains(&"Decisions".to_string()),
        "the headings of docs/ were not read"
    );
    let mut all = Vec::new();
    let mut seen = 0;
    let mut sources = vec![root().join("README.md"), root().join("CONTRIBUTING.md")];
    for dir in ["src", "tests", "docs"] {
        sources.extend(files(&root().join(dir)));
    }
    for f in sources {
        let name = relative(&f);
        // Its own samples below are wrong on purpose.
        if name == "tests/house/citations.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        seen += text.matches("docs/").count();
        for (line, what) in problems(&text, &pages, name.starts_with("docs/")) {
            all.push(format!("{name}:{line}: {what}"));
        }
    }
    assert!(
        seen > 100,
        "the sources were not read ({seen} mentions of docs/)"
    );
    assert!(all.is_empty(), "{}", all.join("\n"));
}

#[test]
fn the_reader_finds_broken_and_good_citations() {
    let pages = Pages::from([(
        "docs/a.md".to_string(),
        vec![
            "Labels".to_string(),
            "What is protected".to_string(),
            "Web (`builtins.web`: `allow`)".to_string(),
        ],
    )]);
    let found = |text: &str| -> Vec<String> {
        problems(text, &pages, true)
            .into_iter()
            .map(|(l, w)| format!("{l}: {w}"))
            .collect()
    };
    assert!(found("// see docs/a.md, \"Labels\" and \"What is\n// protected\".").is_empty());
    assert!(found("read(\"docs/a.md\"), \"Labels\"").is_empty());
    assert!(found("[a.md](a.md), \"Labels\"").is_empty());
    assert!(found("(docs/a.md, \"Web\")").is_empty());
    assert_eq!(
        found("(docs/a.md, \"We\")"),
        ["1: docs/a.md has no heading \"We\""]
    );
    assert_eq!(
        found("x\n// (docs/a.md, \"Label\")"),
        ["2: docs/a.md has no heading \"Label\""]
    );
    assert_eq!(
        found("(docs/b.md, \"Labels\")"),
        ["1: docs/b.md does not exist"]
    );
    assert_eq!(
        found("/// docs/a.md §5, and \"Labels\""),
        ["1: docs/a.md has no section §5: cite its heading by name"]
    );
    assert_eq!(
        found("// the rest (§2.1)"),
        ["1: a section number with no page before it"]
    );
    assert!(found("// RFC 3986 §6.2.2").is_empty());
    let numbered = Pages::from([("docs/a.md".to_string(), vec!["5. Decisions".to_string()])]);
    assert!(problems("docs/a.md §5", &numbered, false).is_empty());
    // Outside docs/ a bare page name is a file beside the text, not a page of docs/.
    assert!(problems("[b.md](b.md), \"Labels\"", &pages, false).is_empty());
}
