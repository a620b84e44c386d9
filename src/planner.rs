//! The planner context label (docs/semantics.md, "The planner context label"): what a planner model has
//! been given to read in one session, as a label kept outside any run, and the label a run gives its
//! literals from it.
//!
//! A plan's literals are trusted because the planner wrote them before it saw any tool data. Once a
//! server has returned values to the planner, that no longer holds: the next plan may copy what it read.
//! So the session keeps the join of every label it returned ([`ContextLabel::join`]), and each later run
//! labels its literals with it ([`ContextLabel::label_in`]) instead of trusted.
//!
//! The context outlives the runs that read it, so it names things (tags, principals, `run-1/read_inbox#1`)
//! instead of a run's indices. In a run it becomes one source, the call [`CONTEXT_CALL`], which no tool
//! call has: reasons, claims and traces name it `planner-context#0`.
//!
//! ```
//! use zamburak::label::LabelView;
//! use zamburak::planner::ContextLabel;
//! let mail = LabelView { integrity: "untrusted".into(), verified: vec![], tags: vec!["PRIVATE".into()],
//!     readers: Some(vec!["llm:planner".into()]), sources: vec!["read_inbox#1".into()] };
//! let context = ContextLabel::trusted().join(&ContextLabel::of_view(&mail, "run-1"));
//! assert!(!context.is_trusted());
//! assert_eq!(context.sources.iter().next().map(String::as_str), Some("run-1/read_inbox#1"));
//! ```

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::label::{Integrity, KindSet, Label, LabelSpace, LabelView, Readers, TagSet};

/// The call id a run's values get as their source from the planner context. Tool calls are numbered
/// from 1 (in the runtime and in lint), so 0 is never a tool call.
pub const CONTEXT_CALL: u32 = 0;

/// The name the planner context goes by as a source (`planner-context#0`). Not a Python identifier, so
/// no tool has it.
pub const CONTEXT_SOURCE: &str = "planner-context";

/// The integrity part of a [`ContextLabel`]: the worst of what the planner read.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ContextIntegrity {
    #[default]
    Trusted,
    Untrusted,
    /// A label that could not be read: every literal then fails every sink (fail closed).
    Unknown,
}

/// What a planner has been given to read in a session, by name. The default is a planner that has read
/// nothing but trusted, public, untagged text: its literals are plain literals.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextLabel {
    pub integrity: ContextIntegrity,
    /// The confidentiality tags of what it read: its plans may copy that data into a literal.
    #[serde(default)]
    pub tags: BTreeSet<String>,
    /// Who may read what it read, besides the policy's user (who reads everything); `None`: public.
    #[serde(default)]
    pub readers: Option<BTreeSet<String>>,
    /// The calls whose values it read, each with its run (`run-1/read_inbox#1`).
    #[serde(default)]
    pub sources: BTreeSet<String>,
}

impl ContextLabel {
    /// The context of a planner that has read nothing yet: a new session starts here.
    pub fn trusted() -> ContextLabel {
        ContextLabel::default()
    }

    /// Whether this context leaves literals exactly as they are without one: trusted, untagged, public,
    /// no sources.
    pub fn is_trusted(&self) -> bool {
        *self == ContextLabel::trusted()
    }

    /// Whether a literal with this context may be written down in clear (docs/semantics.md, "Redaction"):
    /// trusted, untagged, public. Its sources alone say only where it came from.
    pub fn is_clean(&self) -> bool {
        self.integrity == ContextIntegrity::Trusted
            && self.tags.is_empty()
            && self.readers.is_none()
    }

    /// The planner has read both: the worse integrity, every tag, the readers both allow, every source.
    /// Commutative, associative, idempotent, with [`ContextLabel::trusted`] as its identity.
    pub fn join(&self, other: &ContextLabel) -> ContextLabel {
        ContextLabel {
            integrity: self.integrity.max(other.integrity),
            tags: self.tags.union(&other.tags).cloned().collect(),
            readers: match (&self.readers, &other.readers) {
                (None, r) | (r, None) => r.clone(),
                (Some(a), Some(b)) => Some(a.intersection(b).cloned().collect()),
            },
            sources: self.sources.union(&other.sources).cloned().collect(),
        }
    }

    /// The context of having read a value of run `run` with label `view`. Its sources are qualified by
    /// the run; the run's own `planner-context#0` is dropped (the session's context already holds it).
    /// An integrity other than `trusted` and `untrusted` is unknown (fail closed).
    pub fn of_view(view: &LabelView, run: &str) -> ContextLabel {
        let context_source = format!("{CONTEXT_SOURCE}#{CONTEXT_CALL}");
        ContextLabel {
            integrity: match view.integrity.as_str() {
                "trusted" => ContextIntegrity::Trusted,
                "untrusted" => ContextIntegrity::Untrusted,
                _ => ContextIntegrity::Unknown,
            },
            tags: view.tags.iter().cloned().collect(),
            readers: view
                .readers
                .as_ref()
                .map(|r| r.iter().map(|p| p.trim().to_ascii_lowercase()).collect()),
            sources: view
                .sources
                .iter()
                .filter(|s| **s != context_source)
                .map(|s| format!("{run}/{s}"))
                .collect(),
        }
    }

    /// The label of a literal in a run whose label space is `space`: [`Label::literal`] for a trusted
    /// context; otherwise its integrity, tags and readers, no verified kind, and the source
    /// [`CONTEXT_CALL`] (recorded in `space` as `planner-context`). A tag the space does not know makes the
    /// label unknown; a reader past the principal budget is dropped (never a reader), as for any label.
    pub fn label_in(&self, space: &mut LabelSpace) -> Label {
        if self.is_trusted() {
            return Label::literal();
        }
        space.record_call(CONTEXT_CALL, CONTEXT_SOURCE);
        let mut tags = 0u16;
        let mut unknown = self.integrity == ContextIntegrity::Unknown;
        for t in &self.tags {
            match space.tag_index(t) {
                Some(i) => tags |= 1 << i,
                None => unknown = true,
            }
        }
        let readers = match &self.readers {
            None => Readers::Public,
            Some(names) => Readers::Only(names.iter().filter_map(|n| space.principal(n)).collect()),
        };
        Label {
            integrity: if self.integrity == ContextIntegrity::Trusted {
                Integrity::Trusted
            } else {
                Integrity::Untrusted
            },
            verified: KindSet::NONE,
            tags: TagSet(tags),
            readers,
            sources: BTreeSet::from([CONTEXT_CALL]),
            unknown,
        }
    }

    /// The packed label of a literal (what the lowered program's `_LIT` holds), from [`Self::label_in`].
    /// It stays within 63 bits: its one source is call 0.
    pub fn literal_bits(&self, space: &mut LabelSpace) -> i64 {
        let label = self.label_in(space);
        space.encode(&label).bits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(integrity: ContextIntegrity, tags: &[&str], readers: Option<&[&str]>) -> ContextLabel {
        ContextLabel {
            integrity,
            tags: tags.iter().map(|t| t.to_string()).collect(),
            readers: readers.map(|r| r.iter().map(|p| p.to_string()).collect()),
            sources: BTreeSet::new(),
        }
    }

    fn view(
        integrity: &str,
        tags: &[&str],
        readers: Option<&[&str]>,
        sources: &[&str],
    ) -> LabelView {
        LabelView {
            integrity: integrity.into(),
            verified: vec![],
            tags: tags.iter().map(|t| t.to_string()).collect(),
            readers: readers.map(|r| r.iter().map(|p| p.to_string()).collect()),
            sources: sources.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn the_join_is_the_worst_of_both_and_trusted_is_its_identity() {
        use ContextIntegrity::*;
        let t = ContextLabel::trusted();
        let a = ContextLabel {
            sources: BTreeSet::from(["run-1/read_inbox#1".to_string()]),
            ..ctx(
                Untrusted,
                &["PRIVATE"],
                Some(&["llm:planner", "bob@x.test"]),
            )
        };
        let b = ContextLabel {
            sources: BTreeSet::from(["run-2/read_file#3".to_string()]),
            ..ctx(Trusted, &["PII"], Some(&["llm:planner", "eve@x.test"]))
        };
        let c = ctx(Unknown, &[], None);
        let ab = a.join(&b);
        assert_eq!(ab.integrity, Untrusted);
        assert_eq!(ab.tags, BTreeSet::from(["PII".into(), "PRIVATE".into()]));
        assert_eq!(ab.readers, Some(BTreeSet::from(["llm:planner".into()])));
        assert_eq!(ab.sources.len(), 2);
        // Public is the readers' identity; unknown absorbs integrity.
        assert_eq!(a.join(&c).readers, a.readers);
        assert_eq!(a.join(&c).integrity, Unknown);
        for x in [&t, &a, &b, &c, &ab] {
            assert_eq!(&t.join(x), x, "identity");
            assert_eq!(&x.join(x), x, "idempotent");
            for y in [&t, &a, &b, &c] {
                assert_eq!(x.join(y), y.join(x), "commutative");
                for z in [&a, &b, &c] {
                    assert_eq!(x.join(y).join(z), x.join(&y.join(z)), "associative");
                }
            }
        }
        assert!(t.is_trusted() && !a.is_trusted());
        assert!(t.is_clean() && !a.is_clean() && !b.is_clean() && !c.is_clean());
        // A trusted, public, untagged value with a source is not nothing: the context keeps its lineage.
        let lineage = ContextLabel::of_view(&view("trusted", &[], None, &["lookup#2"]), "run-4");
        assert!(!t.join(&lineage).is_trusted());
        assert!(t.join(&lineage).is_clean());
    }

    #[test]
    fn a_view_becomes_a_context_with_its_run_and_without_the_context_source() {
        let v = view(
            "untrusted",
            &["PRIVATE"],
            Some(&["LLM:Planner"]),
            &["read_inbox#1", "planner-context#0"],
        );
        let c = ContextLabel::of_view(&v, "run-3");
        assert_eq!(c.integrity, ContextIntegrity::Untrusted);
        assert_eq!(c.readers, Some(BTreeSet::from(["llm:planner".into()])));
        assert_eq!(c.sources, BTreeSet::from(["run-3/read_inbox#1".into()]));
        for odd in ["unknown", "", "Trusted"] {
            let c = ContextLabel::of_view(&view(odd, &[], None, &[]), "run-1");
            assert_eq!(c.integrity, ContextIntegrity::Unknown, "{odd:?}");
        }
    }

    #[test]
    fn a_literal_carries_the_context_in_a_run() {
        let mut space = LabelSpace::new(&["Recipient"], &["PRIVATE", "PII"]).unwrap();
        assert_eq!(
            ContextLabel::trusted().label_in(&mut space),
            Label::literal()
        );
        assert_eq!(
            ContextLabel::trusted().literal_bits(&mut space),
            crate::label::LITERAL
        );
        let c = ctx(
            ContextIntegrity::Untrusted,
            &["PII"],
            Some(&["llm:planner"]),
        );
        let label = c.label_in(&mut space);
        assert!(label.is_untrusted() && !label.unknown);
        assert_eq!(label.verified, KindSet::NONE);
        assert_eq!(label.tags, TagSet(0b10));
        let planner = space.find_principal("llm:planner").unwrap();
        assert_eq!(label.readers, Readers::Only(BTreeSet::from([planner])));
        let shown = space.describe(&label);
        assert_eq!(shown.sources, vec!["planner-context#0".to_string()]);
        // Packed and back: the same label, and every kind unverified (so `_LIT | _UV` is `_LIT`).
        let bits = c.literal_bits(&mut space);
        assert_eq!(
            bits & crate::label::UNVERIFIED_MASK,
            crate::label::UNVERIFIED_MASK
        );
        assert_eq!(space.decode(&crate::label::Packed::from_bits(bits)), label);
        // A tag the policy does not declare: unknown, refused at every sink.
        let odd = ctx(ContextIntegrity::Trusted, &["NOPE"], None);
        assert!(odd.label_in(&mut space).unknown);
    }
}
