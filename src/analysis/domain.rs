//! The abstract values of the lint: every value carries two labels.
//!
//! * `may` over-approximates the label the runtime computes, on every path (the worst case). If the policy
//!   allows the call with the `may` labels, it allows it at run time.
//! * `must` under-approximates it on every path that reaches the point (what certainly holds). If the policy
//!   denies the call with the `must` labels, it denies it whenever the call is reached.
//!
//! Both are ordinary [`Label`]s, combined with the same operations the runtime uses (join, influence,
//! computed, mint): those are monotone, so applying them to bounds gives bounds. Only the merge of two paths
//! differs: `may` joins, `must` takes [`meet`].
//!
//! ```
//! use zamburak::analysis::domain::{meet, must_bottom};
//! use zamburak::label::Label;
//! let lit = Label::literal();
//! let bad = Label::unknown();
//! // What certainly holds on two paths is what holds on the better one.
//! assert_eq!(meet(&lit, &bad).integrity, lit.integrity);
//! assert_eq!(meet(&must_bottom(), &bad), must_bottom());
//! ```

use std::collections::BTreeSet;

use crate::label::{Integrity, KindSet, Label, Readers, TagSet};

/// The least `must` label: certainly nothing bad. Verified kinds are *all* kinds, because a `must` label may
/// only claim the absence of a kind the runtime value certainly lacks.
pub fn must_bottom() -> Label {
    Label {
        verified: KindSet::ALL,
        ..Label::literal()
    }
}

/// The neutral control context (and the identity of the join): trusted, every kind, nothing else. The
/// runtime's `pc` starts here, and the influence of a trusted choice is this.
pub fn neutral() -> Label {
    must_bottom()
}

/// The greatest `may` label: untrusted, no kinds, every tag, readable by the user only, unknown. Every sink
/// check fails on it.
pub fn may_top() -> Label {
    Label {
        integrity: Integrity::Untrusted,
        verified: KindSet::NONE,
        tags: TagSet(u16::MAX),
        readers: Readers::Only(BTreeSet::new()),
        sources: BTreeSet::new(),
        unknown: true,
    }
}

/// What certainly holds on both of two paths: the better of each component.
pub fn meet(a: &Label, b: &Label) -> Label {
    Label {
        integrity: a.integrity.min(b.integrity),
        verified: KindSet(a.verified.0 | b.verified.0),
        tags: TagSet(a.tags.0 & b.tags.0),
        readers: match (&a.readers, &b.readers) {
            (Readers::Only(x), Readers::Only(y)) => Readers::Only(x.union(y).copied().collect()),
            _ => Readers::Public,
        },
        sources: a.sources.intersection(&b.sources).copied().collect(),
        unknown: a.unknown && b.unknown,
    }
}

/// Whether a value is a container: the runtime's claim label for a container is its structure label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Scalar,
    Container,
    /// Either, depending on the path.
    Mixed,
}

impl Shape {
    fn merge(self, other: Shape) -> Shape {
        if self == other { self } else { Shape::Mixed }
    }
}

/// An abstract value.
#[derive(Clone, Debug, PartialEq)]
pub struct AVal {
    /// Upper bound of the value's own (reference) label.
    pub may: Label,
    /// Lower bound of the value's own (reference) label.
    pub must: Label,
    /// Allocation sites this value may be, when it is a container.
    pub sites: BTreeSet<usize>,
    /// Plan functions and lambdas this value may be.
    pub funcs: BTreeSet<usize>,
    pub shape: Shape,
    /// Every string this value can be, when statically known (recipient checks need them).
    pub texts: Option<BTreeSet<String>>,
}

impl AVal {
    /// A plan literal (not a string).
    pub fn literal() -> AVal {
        AVal {
            may: Label::literal(),
            must: must_bottom(),
            sites: BTreeSet::new(),
            funcs: BTreeSet::new(),
            shape: Shape::Scalar,
            texts: None,
        }
    }

    /// A scalar with these bounds.
    pub fn scalar(may: Label, must: Label) -> AVal {
        AVal {
            may,
            must,
            ..AVal::literal()
        }
    }

    /// Nothing is known: every check may fail, nothing certainly does.
    pub fn top() -> AVal {
        AVal {
            may: may_top(),
            must: must_bottom(),
            shape: Shape::Mixed,
            ..AVal::literal()
        }
    }

    /// The value on either of two paths.
    pub fn merge(&self, other: &AVal) -> AVal {
        AVal {
            may: self.may.join(&other.may),
            must: meet(&self.must, &other.must),
            sites: self.sites.union(&other.sites).copied().collect(),
            funcs: self.funcs.union(&other.funcs).copied().collect(),
            shape: self.shape.merge(other.shape),
            texts: match (&self.texts, &other.texts) {
                (Some(a), Some(b)) => Some(a.union(b).cloned().collect()),
                _ => None,
            },
        }
    }

    /// The same value with `l` joined into both bounds (`l` is a may/must pair).
    pub fn raised(&self, may: &Label, must: &Label) -> AVal {
        AVal {
            may: self.may.join(may),
            must: self.must.join(must),
            ..self.clone()
        }
    }
}

/// One allocation site: a summary of every container created there.
#[derive(Clone, Debug, PartialEq)]
pub struct HeapObj {
    /// Upper bound of the structure label.
    pub struct_may: Label,
    /// Lower bound of the structure label.
    pub struct_must: Label,
    /// Upper bound of every element's own label (keys of dicts included).
    pub elem_may: Label,
    /// Lower bound of every element's label; `None` while no element is known.
    pub elem_must: Option<Label>,
    /// Sites of containers that may be elements.
    pub kids: BTreeSet<usize>,
    /// Plan functions that may be elements.
    pub funcs: BTreeSet<usize>,
    /// Every string element, when statically known.
    pub texts: Option<BTreeSet<String>>,
}

impl HeapObj {
    pub fn empty(struct_may: Label, struct_must: Label) -> HeapObj {
        HeapObj {
            struct_may,
            struct_must,
            elem_may: Label::literal(),
            elem_must: None,
            kids: BTreeSet::new(),
            funcs: BTreeSet::new(),
            texts: Some(BTreeSet::new()),
        }
    }

    /// Folds another object created at the same site into this summary.
    pub fn absorb(&mut self, other: &HeapObj) {
        self.struct_may = self.struct_may.join(&other.struct_may);
        self.struct_must = meet(&self.struct_must, &other.struct_must);
        self.elem_may = self.elem_may.join(&other.elem_may);
        self.elem_must = match (&self.elem_must, &other.elem_must) {
            (Some(a), Some(b)) => Some(meet(a, b)),
            (Some(a), None) | (None, Some(a)) => Some(a.clone()),
            (None, None) => None,
        };
        self.kids.extend(other.kids.iter().copied());
        self.funcs.extend(other.funcs.iter().copied());
        self.texts = match (&self.texts, &other.texts) {
            (Some(a), Some(b)) => Some(a.union(b).cloned().collect()),
            _ => None,
        };
    }

    /// Adds an element with these bounds.
    pub fn add_elem(&mut self, v: &AVal) {
        self.elem_may = self.elem_may.join(&v.may);
        self.elem_must = Some(match &self.elem_must {
            Some(m) => meet(m, &v.must),
            None => v.must.clone(),
        });
        self.kids.extend(v.sites.iter().copied());
        self.funcs.extend(v.funcs.iter().copied());
        self.texts = match (&self.texts, &v.texts) {
            (Some(a), Some(b)) if v.shape == Shape::Scalar => Some(a.union(b).cloned().collect()),
            _ => None,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn label() -> impl Strategy<Value = Label> {
        (
            any::<bool>(),
            any::<u8>(),
            any::<u16>(),
            proptest::option::of(proptest::collection::btree_set(0u16..6, 0..4)),
            proptest::collection::btree_set(0u32..6, 0..4),
            any::<bool>(),
        )
            .prop_map(|(u, k, t, r, s, unk)| Label {
                integrity: if u {
                    Integrity::Untrusted
                } else {
                    Integrity::Trusted
                },
                verified: KindSet(k),
                tags: TagSet(t),
                readers: r.map_or(Readers::Public, Readers::Only),
                sources: s,
                unknown: unk,
            })
    }

    /// `a` is at least as bad as `b` for every sink check (kinds: fewer is worse).
    fn worse_or_equal(a: &Label, b: &Label) -> bool {
        a.flows_above(b) && a.verified.0 & !b.verified.0 == 0
    }

    proptest! {
        #[test]
        fn meet_is_below_both_and_join_above(a in label(), b in label()) {
            let m = meet(&a, &b);
            prop_assert!(worse_or_equal(&a, &m));
            prop_assert!(worse_or_equal(&b, &m));
            let j = a.join(&b);
            prop_assert!(worse_or_equal(&j, &a));
            prop_assert!(worse_or_equal(&j, &b));
        }

        #[test]
        fn bounds_are_extreme(a in label()) {
            prop_assert!(worse_or_equal(&a, &must_bottom()));
            prop_assert!(worse_or_equal(&may_top().join(&a), &a));
            prop_assert_eq!(meet(&must_bottom(), &a), must_bottom());
        }
    }
}
