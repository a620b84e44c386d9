//! What `policy check` warns about: rules that load and hold, but do not say what they seem to.

use crate::policy::Policy;
use crate::policy::model::ForbidTags;
use crate::policy::scan::INJECTION_TAG;

/// One warning: the tool, the argument, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub tool: String,
    pub arg: String,
    pub why: String,
}

/// Every warning for `policy`.
///
/// An argument that forbids the injection scanner's tag and requires nothing treats "no scanner flagged
/// it" as "nobody chose it": a scanner is a guess about text (a missing tag is not integrity), so data that
/// reads innocently still chooses the argument (docs/semantics.md, "A `forbid_tags` never replaces the
/// readers check", and docs/policy.md, "Scanners").
pub fn warnings(policy: &Policy) -> Vec<Warning> {
    let mut out = Vec::new();
    for (tool, spec) in policy.tools() {
        if spec.effect == crate::policy::Effect::Pure {
            continue; // no checks run on a pure tool
        }
        for (arg, a) in spec.args.iter() {
            let forbids = match a.forbid_tags.as_ref().map(ForbidTags::tags) {
                Some(ForbidTags::List(tags)) => tags.iter().any(|t| t == INJECTION_TAG),
                _ => false,
            };
            if forbids && a.require.is_none() {
                out.push(Warning {
                    tool: tool.to_string(),
                    arg: arg.to_string(),
                    why: format!(
                        "forbids `{INJECTION_TAG}` but requires nothing: a scanner's tag is a guess about \
                         text, not integrity, so data no scanner flags still chooses it (add `require: \
                         trusted` to decide who may choose it)"
                    ),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::panic,
        reason = "a test fails by panicking, with a message saying what went wrong"
    )]

    use super::*;

    fn load(text: &str) -> Policy {
        Policy::for_test(text)
    }

    #[test]
    fn a_scanner_tag_without_a_require_is_warned_about() {
        let p = load(
            "version: 1\ntags: [SUSPECT_INJECTION]\ntools:\n  post:\n    effect: send\n    args:\n      text: { forbid_tags: [SUSPECT_INJECTION], public: true }\n",
        );
        let w = warnings(&p);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!((w[0].tool.as_str(), w[0].arg.as_str()), ("post", "text"));
        let p = load(
            "version: 1\ntags: [SUSPECT_INJECTION]\ntools:\n  post:\n    effect: send\n    args:\n      text: { forbid_tags: [SUSPECT_INJECTION], require: trusted, public: true }\n",
        );
        assert!(warnings(&p).is_empty());
    }
}
