//! The `secrets` scanner: gitleaks' default rule set (`gitleaks.toml`, vendored unchanged from gitleaks
//! commit b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b, MIT licence, see `GITLEAKS-LICENSE`) run over text.
//!
//! Why gitleaks' data and not a crate: no maintained Rust library crate that builds on Rust 1.95 offers a
//! rule set as a library (keyspoor needs 1.96; keyhog-scanner pulls a GPU and Hyperscan stack; the others
//! are command-line tools). The rule file is the maintained part; this module only interprets the subset of
//! its format the default file uses: `regex`, `secretGroup`, `entropy`, `keywords`, the global allowlist's
//! `regexes` and `stopwords`, and each rule's `allowlists` (`regexes` aimed at the secret, the match or the
//! line, `stopwords`, `condition`). `path`/`paths`/`commits` criteria never hold here (a tool result has no
//! path), which makes an allowlist that needs one never apply: more findings, never fewer. Rules limited to
//! a file type by `path` (Terraform's `password = "..."`, a few others) are left out: without the file
//! type they flag ordinary text.
//!
//! Patterns are Go RE2 syntax; they are compiled with the `regex` crate (linear time, like RE2) on bytes with
//! Unicode off, so `\w`, `\d` and `\b` are ASCII as in Go. Each rule is compiled when a text first has one
//! of its keywords; a pattern that does not compile is skipped ([`Rules::skipped`]), and a test pins that
//! every one of the vendored file compiles.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;

/// The vendored gitleaks default configuration.
const GITLEAKS_TOML: &str = include_str!("gitleaks.toml");

/// The compiled size limit of one pattern; gitleaks' largest (the generic rule's allowlist) fits.
const REGEX_SIZE_LIMIT: usize = 32 << 20;

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    allowlist: Option<AllowSpec>,
    #[serde(default)]
    rules: Vec<RuleSpec>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RuleSpec {
    id: String,
    #[serde(default)]
    regex: Option<String>,
    #[serde(default)]
    secret_group: Option<usize>,
    #[serde(default)]
    entropy: Option<f64>,
    #[serde(default)]
    keywords: Vec<String>,
    /// Limits the rule to files whose name matches; a tool result has no file name.
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    allowlists: Vec<AllowSpec>,
}

#[derive(Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AllowSpec {
    #[serde(default)]
    condition: Option<String>,
    #[serde(default)]
    regex_target: Option<String>,
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    commits: Vec<String>,
}

/// What an allowlist's regexes are matched against.
#[derive(Clone, Copy)]
enum Target {
    Secret,
    Match,
    Line,
}

struct Allow {
    /// `AND`: every criterion given must hold; otherwise any one.
    all: bool,
    target: Target,
    regexes: Vec<Regex>,
    stopwords: Vec<String>,
    /// The allowlist names paths or commits, which never match a tool result.
    has_path_criteria: bool,
}

struct Rule {
    id: String,
    pattern: String,
    allow_specs: Vec<AllowSpec>,
    /// The pattern and allowlists, compiled the first time a text has one of the rule's keywords: most
    /// texts wake a handful of the 200-odd rules, so a run does not pay for compiling all of them.
    /// `None`: the pattern does not compile (the rule is skipped).
    compiled: OnceLock<Option<(Regex, Vec<Allow>)>>,
    secret_group: Option<usize>,
    entropy: Option<f64>,
}

impl Rule {
    fn compiled(&self) -> Option<&(Regex, Vec<Allow>)> {
        self.compiled
            .get_or_init(|| {
                let regex = compile(&self.pattern)?;
                Some((
                    regex,
                    self.allow_specs.iter().filter_map(Allow::compile).collect(),
                ))
            })
            .as_ref()
    }
}

/// The compiled rule set.
pub struct Rules {
    rules: Vec<Rule>,
    /// Rules without keywords run on every text.
    always: Vec<usize>,
    /// Keyword automaton over lowercased text; pattern `i` belongs to rule `keyword_rule[i]`.
    keywords: Option<AhoCorasick>,
    keyword_rule: Vec<usize>,
    global: Option<Allow>,
}

fn compile(pattern: &str) -> Option<Regex> {
    RegexBuilder::new(pattern)
        .unicode(false)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .ok()
}

impl Allow {
    /// `None` when one of its regexes does not compile: the allowlist is dropped (more findings).
    fn compile(spec: &AllowSpec) -> Option<Allow> {
        let regexes = spec
            .regexes
            .iter()
            .map(|r| compile(r))
            .collect::<Option<Vec<_>>>()?;
        Some(Allow {
            all: spec.condition.as_deref() == Some("AND"),
            target: match spec.regex_target.as_deref() {
                Some("match") => Target::Match,
                Some("line") => Target::Line,
                _ => Target::Secret,
            },
            regexes,
            stopwords: spec.stopwords.iter().map(|s| s.to_lowercase()).collect(),
            has_path_criteria: !spec.paths.is_empty() || !spec.commits.is_empty(),
        })
    }

    /// Whether this allowlist excuses a finding.
    fn excuses(&self, secret: &[u8], whole: &[u8], line: &[u8]) -> bool {
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => whole,
            Target::Line => line,
        };
        let by_regex =
            (!self.regexes.is_empty()).then(|| self.regexes.iter().any(|r| r.is_match(target)));
        let by_stopword = (!self.stopwords.is_empty()).then(|| {
            let lower = secret.to_ascii_lowercase();
            self.stopwords
                .iter()
                .any(|w| contains(&lower, w.as_bytes()))
        });
        let by_path = self.has_path_criteria.then_some(false);
        let given = [by_regex, by_stopword, by_path];
        let mut held = given.iter().flatten();
        if self.all {
            given.iter().any(Option::is_some) && held.all(|h| *h)
        } else {
            held.any(|h| *h)
        }
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}

/// Shannon entropy in bits per byte, as gitleaks computes it.
pub fn shannon(data: &[u8]) -> f64 {
    if data.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for b in data {
        counts[usize::from(*b)] += 1;
    }
    let n = data.len() as f64;
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = f64::from(*c) / n;
            -p * p.log2()
        })
        .sum()
}

impl Rules {
    /// Reads the vendored rule set and builds the keyword automaton; the patterns are compiled on first use.
    /// An unreadable file is an error, which [`rules`]'s callers treat as a finding on every text (fail
    /// closed).
    fn load() -> Result<Rules, String> {
        let file: File = toml::from_str(GITLEAKS_TOML).map_err(|e| e.to_string())?;
        let mut rules = Vec::new();
        let mut patterns = Vec::new();
        let mut keyword_rule = Vec::new();
        let mut always = Vec::new();
        let mut specs = file.rules;
        // The catch-all rules go last, so a finding names the most specific rule that matched.
        specs.sort_by_key(|r| r.id.starts_with("generic"));
        for spec in specs {
            // Path-only rules (file names such as `*.p12`) have nothing to match in a tool result, and a
            // rule limited to some file types (`*.tf`) is tuned for their syntax only: both are left out.
            let Some(pattern) = &spec.regex else { continue };
            if spec.path.is_some() {
                continue;
            }
            let index = rules.len();
            if spec.keywords.is_empty() {
                always.push(index);
            }
            for k in &spec.keywords {
                patterns.push(k.to_lowercase());
                keyword_rule.push(index);
            }
            rules.push(Rule {
                id: spec.id,
                pattern: pattern.clone(),
                allow_specs: spec.allowlists.clone(),
                compiled: OnceLock::new(),
                secret_group: spec.secret_group,
                entropy: spec.entropy,
            });
        }
        let keywords = AhoCorasickBuilder::new()
            .match_kind(MatchKind::Standard)
            .build(&patterns)
            .map_err(|e| e.to_string())?;
        Ok(Rules {
            rules,
            always,
            keywords: Some(keywords),
            keyword_rule,
            global: file.allowlist.as_ref().and_then(Allow::compile),
        })
    }

    /// The rules whose pattern the `regex` crate refuses, by id (compiles every rule).
    pub fn skipped(&self) -> Vec<&str> {
        self.rules
            .iter()
            .filter(|r| r.compiled().is_none())
            .map(|r| r.id.as_str())
            .collect()
    }

    /// How many rules are in use.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether no rule is in use.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The id of the first rule that finds a secret in `text`, if any.
    pub fn find(&self, text: &[u8]) -> Option<&str> {
        let lower = text.to_ascii_lowercase();
        let mut wanted = vec![false; self.rules.len()];
        for i in &self.always {
            wanted[*i] = true;
        }
        if let Some(ac) = &self.keywords {
            for m in ac.find_overlapping_iter(&lower) {
                if let Some(rule) = self.keyword_rule.get(m.pattern().as_usize()) {
                    wanted[*rule] = true;
                }
            }
        }
        self.rules
            .iter()
            .zip(wanted)
            .filter(|(_, w)| *w)
            .find(|(rule, _)| self.rule_finds(rule, text))
            .map(|(rule, _)| rule.id.as_str())
    }

    fn rule_finds(&self, rule: &Rule, text: &[u8]) -> bool {
        let Some((regex, allows)) = rule.compiled() else {
            return false;
        };
        let mut locs = regex.capture_locations();
        let mut at = 0;
        while at <= text.len() {
            let Some(whole) = regex.captures_read_at(&mut locs, text, at) else {
                return false;
            };
            // An empty match moves on by one byte so the loop always ends.
            at = if whole.end() > whole.start() {
                whole.end()
            } else {
                whole.end() + 1
            };
            // gitleaks: the declared group, else the first group that took part, else the whole match.
            let group = match rule.secret_group {
                Some(g) => locs.get(g),
                None => (1..locs.len()).find_map(|g| locs.get(g).filter(|(s, e)| e > s)),
            };
            let (s, e) = group.unwrap_or((whole.start(), whole.end()));
            let secret = &text[s..e];
            if rule.entropy.is_some_and(|min| shannon(secret) < min) {
                continue;
            }
            let line_start = text[..whole.start()]
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |p| p + 1);
            let line_end = text[whole.end()..]
                .iter()
                .position(|b| *b == b'\n')
                .map_or(text.len(), |p| whole.end() + p);
            let line = &text[line_start..line_end];
            let m = whole.as_bytes();
            if self
                .global
                .as_ref()
                .is_some_and(|g| g.excuses(secret, m, line))
                || allows.iter().any(|a| a.excuses(secret, m, line))
            {
                continue;
            }
            return true;
        }
        false
    }
}

/// The rule set, compiled once per process. `Err` when the vendored file cannot be read, which a test
/// rules out; callers fail closed on it.
pub fn rules() -> Result<&'static Rules, &'static str> {
    static RULES: OnceLock<Result<Rules, String>> = OnceLock::new();
    RULES
        .get_or_init(Rules::load)
        .as_ref()
        .map_err(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(text: &str) -> Option<&'static str> {
        rules().unwrap().find(text.as_bytes())
    }

    #[test]
    fn the_vendored_rules_compile() {
        let r = rules().unwrap();
        assert!(r.len() >= 200, "{} rules", r.len());
        assert!(r.skipped().is_empty(), "skipped: {:?}", r.skipped());
    }

    #[test]
    fn well_known_formats_are_found() {
        let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi3Z1AAIZD9Xnw4d8Kg1ZrKgXm9\nq2xk8Zp0QW1ZC2d2cVh1aW5nIGEgdGVzdCBrZXkgZm9yIHNjYW5uZXJz\n-----END RSA PRIVATE KEY-----\n";
        assert_eq!(find(key), Some("private-key"));
        // The GitHub token of detect-secrets' own test (tests/plugins/github_token_test.py).
        assert_eq!(
            find("token: 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"),
            Some("github-pat")
        );
        assert!(find("aws_access_key_id = AKIAZ3MSJV4WWMPKSDQE").is_some());
        assert!(find("xoxb-263594206564-2343594206574-FGqddMF8t08v8N7Oq4i57vs1").is_some());
        assert!(
            find("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c").is_some()
        );
        assert!(find("db_password = \"x8Kq2mZ7vTp9LwRb4NcY\"").is_some());
    }

    #[test]
    fn ordinary_prose_and_placeholders_are_not() {
        for text in [
            "Hi Bob, the meeting moved to 3pm. The key point is the budget.",
            "aws_access_key: AKIAIOSFODNN7EXAMPLE",
            "password = \"password\"",
            "",
        ] {
            assert_eq!(find(text), None, "{text}");
        }
    }

    #[test]
    fn entropy_is_bits_per_byte() {
        assert_eq!(shannon(b""), 0.0);
        assert_eq!(shannon(b"aaaa"), 0.0);
        assert!((shannon(b"ab") - 1.0).abs() < 1e-9);
    }
}
