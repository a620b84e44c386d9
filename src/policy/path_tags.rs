//! `returns.tags_when`: tags a tool result carries because of the path it was asked for, e.g. a file read
//! from `secrets/**` is `AUTH_SECRET`. The runtime adds them to every part of the result; lint adds the
//! ones a path it knows can match, or all of them when it does not know the path.
//!
//! Paths are compared after normalisation (`./a//b` is `a/b`). A path that cannot be normalised without
//! knowing the file system (`..`, an absolute path) or an argument that is not a string matches every
//! pattern: more tags, never fewer. Symbolic links are not followed: a link inside the files root that
//! points into `secrets/` is read under the link's own name.

use globset::{GlobBuilder, GlobMatcher};
use serde_json::{Map, Value};

use super::model::TagsWhen;

/// Compiles a `tags_when` glob: `*` and `?` stay within one path segment, `**` spans segments.
pub fn matcher(glob: &str) -> Result<GlobMatcher, String> {
    GlobBuilder::new(glob)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| e.kind().to_string())
}

/// `path` with `.` and empty segments removed, or `None` when it climbs (`..`) or is absolute.
fn normal(path: &str) -> Option<String> {
    if path.starts_with('/') {
        return None;
    }
    let mut parts = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => return None,
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// Whether the rule applies to an argument with this value (`None`: the argument is absent).
fn applies(rule: &TagsWhen, value: Option<&Value>) -> bool {
    match value {
        None => false,
        Some(Value::String(s)) => match normal(s) {
            // A glob the policy check accepted compiles here too; one that does not matches, failing closed.
            Some(p) => matcher(&rule.glob).map_or(true, |m| m.is_match(&p)),
            None => true,
        },
        Some(_) => true,
    }
}

/// The tags of the rules that `hit`, each once, in rule order.
fn tags_where(rules: &[TagsWhen], hit: impl Fn(&TagsWhen) -> bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in rules.iter().filter(|r| hit(r)).flat_map(|r| &r.tags) {
        if !out.contains(t) {
            out.push(t.clone());
        }
    }
    out
}

fn applies_to_text(r: &TagsWhen, text: &str) -> bool {
    applies(r, Some(&Value::String(text.to_string())))
}

/// The tags `rules` add for a call with `args`.
pub fn tags_for_call(rules: &[TagsWhen], args: &Map<String, Value>) -> Vec<String> {
    tags_where(rules, |r| applies(r, args.get(&r.arg)))
}

/// The tags `rules` may add when argument values are known only as sets of possible strings (`None`:
/// unknown, so every rule on that argument may apply). Lint's upper bound.
pub fn tags_may(rules: &[TagsWhen], texts: &dyn Fn(&str) -> Option<Vec<String>>) -> Vec<String> {
    tags_where(rules, |r| match texts(&r.arg) {
        None => true,
        Some(values) => values.iter().any(|v| applies_to_text(r, v)),
    })
}

/// The tags `rules` certainly add: every possible value of the argument is known and matches. Lint's
/// lower bound.
pub fn tags_must(rules: &[TagsWhen], texts: &dyn Fn(&str) -> Option<Vec<String>>) -> Vec<String> {
    tags_where(rules, |r| {
        texts(&r.arg).is_some_and(|values| {
            !values.is_empty() && values.iter().all(|v| applies_to_text(r, v))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule() -> Vec<TagsWhen> {
        vec![TagsWhen {
            arg: "path".into(),
            glob: "secrets/**".into(),
            tags: vec!["AUTH_SECRET".into()],
        }]
    }

    fn tags(path: Value) -> Vec<String> {
        let args: Map<String, Value> = [("path".to_string(), path)].into_iter().collect();
        tags_for_call(&rule(), &args)
    }

    #[test]
    fn every_spelling_of_a_secret_path_matches() {
        for p in [
            "secrets/api_key.txt",
            "./secrets/api_key.txt",
            "secrets//api_key.txt",
            "secrets/./deep/key",
            "secrets/../secrets/api_key.txt",
            "../outside",
            "/etc/passwd",
        ] {
            assert_eq!(tags(json!(p)), ["AUTH_SECRET"], "{p}");
        }
        assert_eq!(tags(json!(["secrets/a"])), ["AUTH_SECRET"], "not a string");
    }

    #[test]
    fn other_paths_do_not() {
        for p in ["notes.md", "secretsx/a", "a/secrets/b", "todo.txt"] {
            assert!(tags(json!(p)).is_empty(), "{p}");
        }
        assert!(tags_for_call(&rule(), &Map::new()).is_empty());
    }

    #[test]
    fn lint_takes_every_rule_on_an_unknown_path() {
        assert_eq!(tags_may(&rule(), &|_| None), ["AUTH_SECRET"]);
        assert!(tags_may(&rule(), &|_| Some(vec!["notes.md".into()])).is_empty());
        assert_eq!(
            tags_may(&rule(), &|_| Some(vec![
                "notes.md".into(),
                "secrets/k".into()
            ])),
            ["AUTH_SECRET"]
        );
        assert!(tags_must(&rule(), &|_| None).is_empty());
        assert!(
            tags_must(&rule(), &|_| Some(vec![
                "notes.md".into(),
                "secrets/k".into()
            ]))
            .is_empty()
        );
        assert_eq!(
            tags_must(&rule(), &|_| Some(vec!["secrets/k".into()])),
            ["AUTH_SECRET"]
        );
    }
}
