//! The heap: one summary per allocation site (a container literal, a comprehension, a tool result, a
//! builtin's result), updated weakly so every alias sees a write, and reading from it — the labels the
//! prelude's `_gi` (an element), `_cl` (a condition) and `_unpack` give at run time. The compiler has no
//! such file: at run time the containers are real, and `src/lower/prelude.py` labels them.

use std::collections::BTreeSet;

use super::Interp;
use crate::analysis::domain::{AVal, HeapObj, Shape, meet, must_bottom};
use crate::label::Label;

impl<'a> Interp<'a> {
    // ---- heap -----------------------------------------------------------------------------------------

    /// Changes one heap object, noting whether it changed.
    pub(super) fn update(&mut self, s: usize, f: impl FnOnce(&mut HeapObj)) {
        let Some(h) = self.heap.get_mut(s) else {
            return;
        };
        let before = h.clone();
        f(h);
        if *h != before {
            self.heap_version += 1;
        }
    }

    pub(super) fn alloc(&mut self, at: usize, tag: u8, obj: HeapObj) -> usize {
        match self.site_of.get(&(at, tag)) {
            Some(&s) => {
                self.update(s, |h| h.absorb(&obj));
                s
            }
            None => {
                self.heap_version += 1;
                self.heap.push(obj);
                let s = self.heap.len() - 1;
                self.site_of.insert((at, tag), s);
                s
            }
        }
    }

    /// Every site reachable from `sites`.
    pub(super) fn reach(&self, sites: &BTreeSet<usize>) -> BTreeSet<usize> {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<usize> = sites.iter().copied().collect();
        while let Some(s) = todo.pop() {
            if s < self.heap.len() && seen.insert(s) {
                todo.extend(self.heap[s].kids.iter().copied());
            }
        }
        seen
    }

    /// Upper bound of everything a value holds: its own label, structures and elements, all the way down.
    pub(super) fn deep_may(&self, v: &AVal) -> Label {
        let mut l = v.may.clone();
        for s in self.reach(&v.sites) {
            l = l
                .join(&self.heap[s].struct_may)
                .join(&self.heap[s].elem_may);
        }
        l
    }

    pub(super) fn struct_may(&self, v: &AVal) -> Label {
        v.sites
            .iter()
            .fold(v.may.clone(), |l, &s| l.join(&self.heap[s].struct_may))
    }

    /// Lower bound of the label the runtime reads for `v` as a condition, claim or structure.
    pub(super) fn claim_must(&self, v: &AVal) -> Label {
        match v.shape {
            Shape::Container if !v.sites.is_empty() => {
                let mut it = v.sites.iter().map(|&s| &self.heap[s].struct_must);
                let first = it.next().cloned().unwrap_or_else(must_bottom);
                let structure = it.fold(first, |acc, l| meet(&acc, l));
                v.must.join(&structure)
            }
            _ => v.must.clone(),
        }
    }

    fn elem_must(&self, v: &AVal) -> Option<Label> {
        let mut out: Option<Label> = None;
        for &s in &v.sites {
            let e = self.heap[s].elem_must.clone()?;
            out = Some(match out {
                Some(o) => meet(&o, &e),
                None => e,
            });
        }
        out
    }

    /// Raises the structure of every container `v` may be (a mutation).
    pub(super) fn mutate(&mut self, v: &AVal, extra_may: &Label) {
        let mut l = extra_may.clone();
        if self.strict {
            l = l.join(&self.pc_may);
        }
        for &s in &v.sites {
            self.update(s, |h| h.struct_may = h.struct_may.join(&l));
        }
    }

    pub(super) fn add_elem(&mut self, v: &AVal, e: &AVal) {
        let e = if self.strict {
            e.raised(&self.pc_may, &self.pc_must)
        } else {
            e.clone()
        };
        for &s in &v.sites {
            self.update(s, |h| h.add_elem(&e));
        }
    }

    /// A fresh container value allocated at `at`.
    pub(super) fn container(
        &mut self,
        at: usize,
        tag: u8,
        mut obj: HeapObj,
        elems: &[AVal],
    ) -> AVal {
        if self.strict {
            obj.struct_may = obj.struct_may.join(&self.pc_may);
            obj.struct_must = obj.struct_must.join(&self.pc_must);
        }
        for e in elems {
            let e = if self.strict {
                e.raised(&self.pc_may, &self.pc_must)
            } else {
                e.clone()
            };
            obj.add_elem(&e);
        }
        let s = self.alloc(at, tag, obj);
        AVal {
            sites: BTreeSet::from([s]),
            shape: Shape::Container,
            ..self.lit_val()
        }
    }

    /// A container whose structure and elements are all bounded by `may` (a builtin's result).
    pub(super) fn opaque_container(
        &mut self,
        at: usize,
        tag: u8,
        may: Label,
        kids: BTreeSet<usize>,
    ) -> AVal {
        let mut obj = HeapObj::empty(may.clone(), must_bottom());
        obj.elem_may = may;
        obj.elem_must = Some(must_bottom());
        obj.kids = kids;
        obj.texts = None;
        let s = self.alloc(at, tag, obj);
        AVal {
            sites: BTreeSet::from([s]),
            shape: Shape::Mixed,
            ..self.lit_val()
        }
    }

    /// Reading one element of `c` with index/key `i`.
    pub(super) fn element(&self, c: &AVal, i: Option<&AVal>) -> AVal {
        let lit = self.lit_val();
        let i = i.unwrap_or(&lit);
        let choice_may = self.struct_may(c).join(&self.deep_may(i));
        // `_gi`: an element joins the influence of the choice; a character of a string is computed.
        let mut may = match c.shape {
            Shape::Container => choice_may.influence(),
            _ => choice_may.computed(),
        };
        let mut kids = BTreeSet::new();
        let mut funcs = BTreeSet::new();
        let mut texts: Option<BTreeSet<String>> = Some(BTreeSet::new());
        for &s in &c.sites {
            let h = &self.heap[s];
            may = may.join(&h.elem_may);
            kids.extend(h.kids.iter().copied());
            funcs.extend(h.funcs.iter().copied());
            texts = match (texts, &h.texts) {
                (Some(a), Some(b)) => Some(a.union(b).cloned().collect()),
                _ => None,
            };
        }
        let choice_must = self.claim_must(c).join(&i.must);
        let must = match c.shape {
            Shape::Scalar => choice_must.computed(),
            Shape::Container => match self.elem_must(c) {
                Some(e) => e.join(&choice_must.influence()),
                None => choice_must.influence(),
            },
            Shape::Mixed => c.must.join(&i.must).influence(),
        };
        AVal {
            may,
            must,
            sites: kids,
            funcs,
            shape: if c.shape == Shape::Scalar {
                Shape::Scalar
            } else {
                Shape::Mixed
            },
            texts: if c.sites.is_empty() { None } else { texts },
        }
    }

    /// The label a value contributes as a condition (`_cl`), influenced.
    pub(super) fn cond(&self, v: &AVal) -> (Label, Label) {
        (
            self.struct_may(v).influence(),
            self.claim_must(v).influence(),
        )
    }
}
