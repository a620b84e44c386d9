//! The diagnostic codes (`src/plan/code.rs`) and their documentation agree: every code has its section and
//! its row in docs/diagnostics.md's table (generated from the enum), and the docs name no code the enum
//! lacks. `ZAMBURAK_BLESS=1 cargo test --test house diagnostic_codes` regenerates the table.

use std::path::Path;

use regex::Regex;
use zamburak::plan::Code;

const BEGIN: &str = "<!-- begin codes -->\n";
const END: &str = "<!-- end codes -->\n";

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The table docs/diagnostics.md holds between its markers: one row per code, linking to its section.
fn table() -> String {
    let mut out =
        String::from("| code | name | severity | what | what to do |\n|---|---|---|---|---|\n");
    for code in Code::ALL {
        let page = match code.page() {
            "docs/diagnostics.md" => "",
            other => other.trim_start_matches("docs/"),
        };
        out.push_str(&format!(
            "| [`{}`]({page}#{}) | `{}` | {} | {} | {} |\n",
            code.as_str(),
            code.anchor(),
            code.name(),
            code.severity().as_str(),
            code.summary(),
            code.help(),
        ));
    }
    out
}

#[test]
fn the_table_of_codes_in_docs_diagnostics_md_is_the_enum() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/diagnostics.md");
    let doc = read("docs/diagnostics.md");
    let (head, rest) = doc
        .split_once(BEGIN)
        .expect("docs/diagnostics.md has the `<!-- begin codes -->` marker");
    let (committed, tail) = rest
        .split_once(END)
        .expect("docs/diagnostics.md has the `<!-- end codes -->` marker");
    let fresh = table();
    if std::env::var_os("ZAMBURAK_BLESS").is_some() && committed != fresh {
        std::fs::write(&path, format!("{head}{BEGIN}{fresh}{END}{tail}")).unwrap();
        return;
    }
    assert!(
        committed == fresh,
        "docs/diagnostics.md's table of codes is stale; regenerate it with \
         ZAMBURAK_BLESS=1 cargo test --test house diagnostic_codes\n--- committed\n{committed}--- from the enum\n{fresh}"
    );
}

/// The headings of a markdown page, without their `#`s.
fn headings(doc: &str) -> Vec<&str> {
    doc.lines()
        .filter_map(|l| l.strip_prefix("### ").or_else(|| l.strip_prefix("## ")))
        .map(str::trim)
        .collect()
}

#[test]
fn every_code_has_its_section() {
    let mut missing = Vec::new();
    for code in Code::ALL {
        let doc = read(code.page());
        if !headings(&doc).contains(&code.heading().as_str()) {
            missing.push(format!(
                "{code}: no heading `{}` in {}",
                code.heading(),
                code.page()
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_docs_name_no_code_the_enum_lacks() {
    let word = Regex::new(r"\bZ[0-9]{3}\b").unwrap();
    let mut pages = vec!["README.md".to_string()];
    for e in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        if name.ends_with(".md") {
            pages.push(format!("docs/{name}"));
        }
    }
    let mut unknown = Vec::new();
    for page in &pages {
        let doc = read(page);
        for m in word.find_iter(&doc) {
            if m.as_str().parse::<Code>().is_err() {
                unknown.push(format!("{page}: {}", m.as_str()));
            }
        }
        // A section headed by a code is that code's section (no stale section of a removed or moved code).
        for h in headings(&doc) {
            let Some(first) = word.find(h).filter(|m| m.start() == 0) else {
                continue;
            };
            let owner = first.as_str().parse::<Code>().ok();
            let documented = owner.is_some_and(|c| c.heading() == h && c.page() == page);
            if !documented {
                unknown.push(format!("{page}: section `{h}` is no code's section"));
            }
        }
    }
    assert!(unknown.is_empty(), "{}", unknown.join("\n"));
}

/// The test above reads real text: a planted code would be found.
#[test]
fn the_code_pattern_finds_codes() {
    let word = Regex::new(r"\bZ[0-9]{3}\b").unwrap();
    let found: Vec<&str> = word
        .find_iter("`Z201` and Z090–Z098, not Z2xx or XZ1234")
        .map(|m| m.as_str())
        .collect();
    assert_eq!(found, ["Z201", "Z090", "Z098"]);
}

/// A planner model reads the help and nothing else: no help sends it to a page it cannot open. Every code's
/// general help, and every string literal in the code that builds diagnostics, is checked.
#[test]
fn every_help_stands_alone() {
    for code in Code::ALL {
        assert!(
            !code.spec().help.contains("docs/"),
            "{}: {}",
            code.as_str(),
            code.spec().help
        );
    }
    let literal = Regex::new(r#""[^"]*docs/[^"]*""#).unwrap();
    let mut found = Vec::new();
    for dir in ["src/plan", "src/analysis", "src/lower"] {
        let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                for (i, line) in text.lines().enumerate() {
                    let code = line.trim_start();
                    // Comments and doc comments may cite the docs; the page names in code.rs are data.
                    if code.starts_with("//") || path.ends_with("code.rs") {
                        continue;
                    }
                    // A literal continued over lines (`\` at the end) is checked line by line.
                    if literal.is_match(code) || (code.contains("docs/") && code.ends_with('\\')) {
                        found.push(format!("{}:{}: {}", path.display(), i + 1, code));
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "helps that point at docs:\n{}",
        found.join("\n")
    );
}
