//! The label lattice of docs/semantics.md, "Labels", in two forms that agree with each other.
//!
//! * [`Label`] is the exact, host-side form: sets of tags, principals and sources. The lint and the decision
//!   procedure work on it, and reasons are written from it.
//! * [`Packed`] is what travels inside Monty next to every value: one Python `int` whose join is cheap. The
//!   [`LabelSpace`] of a run maps between the two. Sources are exact for any number of calls; past the
//!   principal budget the mapping over-approximates in the fail-closed direction (fewer readers), never the
//!   other way.
//!
//! ```
//! use zamburak::label::{Label, LabelSpace};
//! let mut space = LabelSpace::new(&["Recipient"], &["PRIVATE"]).unwrap();
//! space.record_call(7, "get_email");
//! let from_mail = space.tool_result(7, true, &["PRIVATE"], None).unwrap();
//! let lit = Label::literal();
//! let joined = lit.join(&from_mail);
//! assert!(joined.is_untrusted());
//! assert_eq!(space.decode(&space.encode(&joined)), joined);
//! ```
//!
//! # Packed layout (bit 0 is the least significant)
//!
//! | bits | meaning | join |
//! |---|---|---|
//! | 0 | untrusted | OR |
//! | 1 | unknown (fails every sink) | OR |
//! | 2..=9 | *not* verified for kind 0..7 (inverted, so OR is the intersection of verified sets) | OR |
//! | 10..=25 | tag 0..15 present | OR |
//! | 26 | readers are *not* public (inverted) | OR |
//! | 27..=42 | principal 0..15 may *not* read (inverted, so OR intersects the readers) | OR |
//! | 43 + k | derives from call `k` (one bit per call, exact) | OR |
//!
//! Every field that shrinks under a join is stored inverted, so the join is a single `a | b` and `0` is its
//! identity (the neutral `pc`): in Monty a join is then one operation, not five. The labels of a run with
//! calls 0..=19 fit in 63 bits and stay small `int`s in Monty; a value that derives from call 20 or later
//! is a big `int` there (Python ints have no width), which costs more per operation only for such values.
//! On the host, [`Packed`] keeps bits 0..=62 in an `i64` and the sources from call 20 on in `wide`. A public label clears all "not a reader" bits, so a principal interned later is a reader of every
//! public value and of no restricted one: restricted labels made before the principal existed have its
//! "not a reader" bit set.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

/// Most verified kinds a policy may declare.
pub const MAX_KINDS: usize = 8;
/// The kind that marks an address as recorded in an address field of a result: never a policy's (a kind a
/// policy names is one word), never minted by a verifier, never shown.
pub const OWN_ADDRESS: &str = "own address";
/// Most confidentiality tags a policy may declare.
pub const MAX_TAGS: usize = 16;
/// Most distinct principals tracked exactly as readers in one run; later ones are never readers.
pub const MAX_PRINCIPALS: usize = 16;
/// How many principals dropped past [`MAX_PRINCIPALS`] a label space remembers by name.
pub const MAX_DROPPED_KEPT: usize = 64;
/// Number of source bits; call ids are folded modulo this.
/// Calls whose source bit lives in the packed `i64` (ids 0..=19, bits 43..=62); later calls go to
/// [`Packed`]'s wide words.
pub const NARROW_CALLS: u32 = 20;
/// Most source words a packed label may carry (64 calls each): a label naming a call past
/// `NARROW_CALLS + 64 * MAX_WIDE_WORDS` is malformed. Far above any `limits.max_tool_calls`.
pub const MAX_WIDE_WORDS: usize = 1 << 14;
/// Most calls a run may make with exact lineage: the ids below `NARROW_CALLS + 64 * MAX_WIDE_WORDS`, with
/// room to spare. A policy's `limits.max_tool_calls` may not exceed it.
pub const MAX_SOURCE_CALLS: u32 = 1_000_000;
const _: () = assert!((MAX_SOURCE_CALLS as usize) < NARROW_CALLS as usize + 64 * MAX_WIDE_WORDS);

pub const UNTRUSTED_BIT: i64 = 1;
pub const UNKNOWN_BIT: i64 = 1 << 1;
const KIND_SHIFT: u32 = 2;
const TAG_SHIFT: u32 = 10;
const PUBLIC_SHIFT: u32 = 26;
const PRINCIPAL_SHIFT: u32 = 27;
const SOURCE_SHIFT: u32 = 43;

/// All "not verified" bits: OR-ing them in removes every verified kind.
pub const UNVERIFIED_MASK: i64 = 0xFF << KIND_SHIFT;
pub const TAGS_MASK: i64 = 0xFFFF << TAG_SHIFT;
/// Set when the readers are *not* public.
pub const PUBLIC_BIT: i64 = 1 << PUBLIC_SHIFT;
pub const PRINCIPALS_MASK: i64 = 0xFFFF << PRINCIPAL_SHIFT;
/// The readers bits ("not public", "principal k may not read"); all clear means public.
pub const READERS_MASK: i64 = PUBLIC_BIT | PRINCIPALS_MASK;
pub const SOURCES_MASK: i64 = ((1i64 << NARROW_CALLS) - 1) << SOURCE_SHIFT;

/// The packed label of a plan literal: trusted, no kinds, no tags, public, no sources.
pub const LITERAL: i64 = UNVERIFIED_MASK;

/// Integrity of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Integrity {
    Trusted,
    Untrusted,
}

/// Who may read a value. `Public` is the top of the readers order; joins intersect.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Readers {
    Public,
    /// Only these principals (indices into the run's [`LabelSpace`]); the policy's user always reads.
    Only(BTreeSet<u16>),
}

impl Readers {
    fn meet(&self, other: &Readers) -> Readers {
        match (self, other) {
            (Readers::Public, r) | (r, Readers::Public) => r.clone(),
            (Readers::Only(a), Readers::Only(b)) => {
                Readers::Only(a.intersection(b).copied().collect())
            }
        }
    }
}

/// A set of verified kinds, as a bitmask over the policy's kind indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct KindSet(pub u8);

impl KindSet {
    pub const NONE: KindSet = KindSet(0);
    /// The neutral element of intersection: used for the influence of a trusted choice.
    pub const ALL: KindSet = KindSet(u8::MAX);
    pub fn contains(self, kind: u8) -> bool {
        kind < 8 && self.0 & (1 << kind) != 0
    }
    pub fn iter(self) -> impl Iterator<Item = u8> {
        (0..8u8).filter(move |k| self.0 & (1 << k) != 0)
    }
}

/// A set of tags, as a bitmask over the policy's tag indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct TagSet(pub u16);

impl TagSet {
    pub fn contains(self, tag: u8) -> bool {
        tag < 16 && self.0 & (1 << tag) != 0
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn iter(self) -> impl Iterator<Item = u8> {
        (0..16u8).filter(move |t| self.0 & (1 << t) != 0)
    }
}

/// The exact label of a value (docs/semantics.md, "Labels").
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Label {
    pub integrity: Integrity,
    pub verified: KindSet,
    pub tags: TagSet,
    pub readers: Readers,
    /// Tool-call ids this value may derive from.
    pub sources: BTreeSet<u32>,
    /// The label could not be computed; fails every sink check.
    pub unknown: bool,
}

impl Label {
    /// A plan literal: trusted, no kinds, no tags, public, no sources.
    pub fn literal() -> Label {
        Label {
            integrity: Integrity::Trusted,
            verified: KindSet::NONE,
            tags: TagSet::default(),
            readers: Readers::Public,
            sources: BTreeSet::new(),
            unknown: false,
        }
    }

    /// A label that could not be computed. Absorbs every join; denied at every sink.
    pub fn unknown() -> Label {
        Label {
            unknown: true,
            integrity: Integrity::Untrusted,
            ..Label::literal()
        }
    }

    pub fn is_untrusted(&self) -> bool {
        self.integrity == Integrity::Untrusted
    }

    /// Whether anything may depend on this value without the plan deciding it or a secret reaching it:
    /// trusted, no tag, public, computable.
    pub fn is_clean(&self) -> bool {
        !self.unknown
            && self.integrity == Integrity::Trusted
            && self.tags.0 == 0
            && self.readers == Readers::Public
    }

    /// Join of two value labels (both inputs flow into the result).
    ///
    /// Verified kinds intersect here. Computations must then call [`Label::computed`]; choices
    /// (structure, index, condition, `pc`) go through [`Label::influence`] first.
    pub fn join(&self, other: &Label) -> Label {
        Label {
            integrity: self.integrity.max(other.integrity),
            verified: KindSet(self.verified.0 & other.verified.0),
            tags: TagSet(self.tags.0 | other.tags.0),
            readers: self.readers.meet(&other.readers),
            sources: self.sources.union(&other.sources).copied().collect(),
            unknown: self.unknown || other.unknown,
        }
    }

    /// The result of a computation on this (joined) label: no verified kinds survive (docs/semantics.md,
    /// "Verified kinds belong to one exact value").
    pub fn computed(&self) -> Label {
        Label {
            verified: KindSet::NONE,
            ..self.clone()
        }
    }

    /// The label as it influences a choice (an index, a key, a container's structure, a condition, `pc`).
    ///
    /// A trusted choice keeps the chosen value's kinds (neutral); an untrusted one removes them all, even
    /// kinds it carries itself, because `pc` never carries verified kinds (the fail-closed choice of
    /// docs/semantics.md, "Verified kinds belong to one exact value").
    pub fn influence(&self) -> Label {
        Label {
            verified: if self.is_untrusted() {
                KindSet::NONE
            } else {
                KindSet::ALL
            },
            ..self.clone()
        }
    }

    /// What a host verifier returns: the same label with `kind` added. The only way to add a kind.
    pub fn mint(&self, kind: u8) -> Label {
        Label {
            verified: KindSet(self.verified.0 | (1 << (kind & 7))),
            ..self.clone()
        }
    }

    /// `self` is at most as trusted and at least as secret as `other`'s view would allow:
    /// `other ⊑ self` in the information order (kinds ignored: they are not an information order).
    pub fn flows_above(&self, other: &Label) -> bool {
        let integrity = self.integrity >= other.integrity;
        let tags = self.tags.0 & other.tags.0 == other.tags.0;
        let readers = match (&self.readers, &other.readers) {
            (_, Readers::Public) => true,
            (Readers::Public, Readers::Only(_)) => false,
            (Readers::Only(a), Readers::Only(b)) => a.is_subset(b),
        };
        let sources = other.sources.is_subset(&self.sources);
        integrity && tags && readers && sources && (self.unknown || !other.unknown)
    }
}

/// The party a principal's name stands for (docs/semantics.md, "Recipients are a role"): for an address,
/// the mailbox the transport delivers to, with case and a `+sub-address` folded (`Leak+x@Example.com` is
/// `leak@example.com`); any other name (`llm:planner`, an IBAN), trimmed and lowercased.
///
/// ```
/// use zamburak::label::party;
/// assert_eq!(party(" Leak+abc@Example.COM "), "leak@example.com");
/// assert_eq!(party("llm:Planner"), "llm:planner");
/// ```
pub fn party(name: &str) -> String {
    let key = name.trim().to_ascii_lowercase();
    match key.rsplit_once('@') {
        Some((local, domain)) if !local.is_empty() && !domain.is_empty() => {
            let mailbox = local.split_once('+').map_or(local, |(m, _)| m);
            format!("{mailbox}@{domain}")
        }
        _ => key,
    }
}

/// Whether a recipient's text is not one bare address though it looks like one: a display name, several
/// addresses, a group or a comment (`Bob <b@x>`, `a@x, b@y`). Such a text is delivered by rules the policy
/// cannot read, so it names no one the decision can check.
///
/// ```
/// use zamburak::label::is_malformed_address;
/// assert!(!is_malformed_address("bob+x@example.com"));
/// assert!(is_malformed_address("Bob <bob@example.com>"));
/// assert!(is_malformed_address("a@x.test, b@y.test"));
/// assert!(!is_malformed_address("DE89370400440532013000"));
/// ```
pub fn is_malformed_address(text: &str) -> bool {
    let t = text.trim();
    let looks_like_address = t.contains('@');
    if !looks_like_address {
        return t.contains([',', ';', '\n', '\r']);
    }
    let (local, domain) = match t.rsplit_once('@') {
        Some(parts) => parts,
        None => return true,
    };
    local.is_empty()
        || domain.is_empty()
        || local.contains('@')
        || !domain.contains('.') && domain != "localhost"
        || t.chars()
            .any(|c| c.is_whitespace() || c.is_control() || "<>,;:\"()[]\\".contains(c))
}

/// The packed, in-sandbox form of a label. See the module docs for the layout.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Packed {
    /// Bits 0..=62 of the layout (never negative when well formed).
    bits: i64,
    /// Sources from call [`NARROW_CALLS`] on: bit `j` of word `w` is call `NARROW_CALLS + 64 w + j` (bit
    /// `63 + 64 w + j` of the Python int). Never ends in a zero word, so equal labels are equal values.
    wide: Vec<u64>,
}

impl fmt::Debug for Packed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.wide.is_empty() {
            write!(f, "Packed({:#x})", self.bits)
        } else {
            write!(f, "Packed({:#x}, wide {:x?})", self.bits, self.wide)
        }
    }
}

impl Packed {
    pub const LITERAL: Packed = Packed::from_bits(LITERAL);
    pub const UNKNOWN: Packed = Packed::from_bits(LITERAL | UNKNOWN_BIT | UNTRUSTED_BIT);

    /// A label with no source from call [`NARROW_CALLS`] on.
    pub const fn from_bits(bits: i64) -> Packed {
        Packed {
            bits,
            wide: Vec::new(),
        }
    }

    /// A label from its two parts; trailing zero words are dropped.
    pub fn from_parts(bits: i64, mut wide: Vec<u64>) -> Packed {
        while wide.last() == Some(&0) {
            wide.pop();
        }
        Packed { bits, wide }
    }

    /// Bits 0..=62 of the layout.
    pub fn bits(&self) -> i64 {
        self.bits
    }

    /// The source words for calls from [`NARROW_CALLS`] on.
    pub fn wide(&self) -> &[u64] {
        &self.wide
    }

    /// The join: OR (the fields that intersect are stored inverted). Mirrors [`Label::join`].
    pub fn join(&self, other: &Packed) -> Packed {
        let (long, short) = if self.wide.len() >= other.wide.len() {
            (&self.wide, &other.wide)
        } else {
            (&other.wide, &self.wide)
        };
        let mut wide = long.clone();
        for (w, o) in wide.iter_mut().zip(short) {
            *w |= o;
        }
        Packed {
            bits: self.bits | other.bits,
            wide,
        }
    }
    /// Mirrors [`Label::computed`].
    pub fn computed(&self) -> Packed {
        Packed {
            bits: self.bits | UNVERIFIED_MASK,
            wide: self.wide.clone(),
        }
    }
    /// Mirrors [`Label::influence`].
    pub fn influence(&self) -> Packed {
        let bits = if self.bits & UNTRUSTED_BIT != 0 {
            self.bits | UNVERIFIED_MASK
        } else {
            self.bits & !UNVERIFIED_MASK
        };
        Packed {
            bits,
            wide: self.wide.clone(),
        }
    }
    /// Mirrors [`Label::mint`].
    pub fn mint(&self, kind: u8) -> Packed {
        Packed {
            bits: self.bits & !(1i64 << (KIND_SHIFT + u32::from(kind & 7))),
            wide: self.wide.clone(),
        }
    }
    pub fn is_unknown(&self) -> bool {
        self.bits & UNKNOWN_BIT != 0
    }
    /// A value that did not come from the packing functions (negative, or more source words than any run
    /// can have) is unknown.
    pub fn is_well_formed(&self) -> bool {
        self.bits >= 0 && self.wide.len() <= MAX_WIDE_WORDS && self.wide.last() != Some(&0)
    }

    /// The call ids whose source bit is set, ascending.
    pub fn source_ids(&self) -> impl Iterator<Item = u32> + '_ {
        let narrow = (0..NARROW_CALLS).filter(|k| self.bits & (1i64 << (SOURCE_SHIFT + k)) != 0);
        let wide = self.wide.iter().enumerate().flat_map(|(w, word)| {
            (0..64u32)
                .filter(move |j| word & (1u64 << j) != 0)
                .map(move |j| NARROW_CALLS + 64 * w as u32 + j)
        });
        narrow.chain(wide)
    }
}

/// Errors building a [`LabelSpace`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SpaceError {
    #[error("too many verified kinds: {0} declared, at most {MAX_KINDS} are supported")]
    TooManyKinds(usize),
    #[error("too many tags: {0} declared, at most {MAX_TAGS} are supported")]
    TooManyTags(usize),
    #[error("unknown tag `{0}`")]
    UnknownTag(String),
}

/// The names behind a run's labels: the policy's kinds and tags, the principals met so far, and the calls made.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LabelSpace {
    kinds: Vec<String>,
    tags: Vec<String>,
    principals: Vec<String>,
    principal_index: BTreeMap<String, u16>,
    /// Every call id issued so far, with the tool name (for decoding folded sources and for reasons).
    calls: BTreeMap<u32, String>,
    /// The policy's user (lowercased), who reads everything: never listed among a label's readers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    user: Option<String>,
    /// Tags a content scanner added to a call's result, with the scanner's name, so that a refusal caused by
    /// one can name it (docs/policy.md, "Scanners").
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    scanned: BTreeMap<u32, Vec<(String, String)>>,
    /// Principals a result named after the budget was spent: never readers of anything restricted. Kept so
    /// that a refusal they cause can say so, and the person can see whom (docs/semantics.md, "Budgets").
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    dropped: BTreeSet<String>,
}

impl LabelSpace {
    pub fn new(kinds: &[&str], tags: &[&str]) -> Result<LabelSpace, SpaceError> {
        if kinds.len() > MAX_KINDS {
            return Err(SpaceError::TooManyKinds(kinds.len()));
        }
        if tags.len() > MAX_TAGS {
            return Err(SpaceError::TooManyTags(tags.len()));
        }
        let mut kinds: Vec<String> = kinds.iter().map(|s| s.to_string()).collect();
        // The mark of an address as recorded (docs/semantics.md, "A party may read its own address, as recorded"), kept
        // like a verified kind, where a bit is free: without one no value is marked, which only refuses more.
        if kinds.len() < MAX_KINDS && !kinds.iter().any(|k| k == OWN_ADDRESS) {
            kinds.push(OWN_ADDRESS.to_string());
        }
        Ok(LabelSpace {
            kinds,
            tags: tags.iter().map(|s| s.to_string()).collect(),
            ..LabelSpace::default()
        })
    }

    /// Names the policy's user, so that [`LabelSpace::describe`] does not count them among the readers.
    pub fn set_user(&mut self, user: &str) {
        self.user = Some(party(user));
    }

    /// The index of the own-address mark, when the space has room for it.
    pub fn own_address(&self) -> Option<u8> {
        self.kind_index(OWN_ADDRESS)
    }
    pub fn kind_index(&self, name: &str) -> Option<u8> {
        self.kinds.iter().position(|k| k == name).map(|i| i as u8)
    }
    pub fn kind_name(&self, idx: u8) -> Option<&str> {
        self.kinds.get(usize::from(idx)).map(String::as_str)
    }
    pub fn tag_index(&self, name: &str) -> Option<u8> {
        self.tags.iter().position(|t| t == name).map(|i| i as u8)
    }
    pub fn tag_name(&self, idx: u8) -> Option<&str> {
        self.tags.get(usize::from(idx)).map(String::as_str)
    }
    pub fn principal_name(&self, idx: u16) -> Option<&str> {
        self.principals.get(usize::from(idx)).map(String::as_str)
    }
    pub fn call_tool(&self, id: u32) -> Option<&str> {
        self.calls.get(&id).map(String::as_str)
    }

    /// The index of a principal, interning it if the budget allows. `None` past the budget: such a
    /// principal is never a reader of a restricted value (fail closed).
    pub fn principal(&mut self, name: &str) -> Option<u16> {
        let key = party(name);
        if let Some(i) = self.principal_index.get(&key) {
            return Some(*i);
        }
        if self.principals.len() >= MAX_PRINCIPALS {
            // Bounded too: a flood of addresses is reported by count past this many.
            if self.dropped.len() < MAX_DROPPED_KEPT {
                self.dropped.insert(key);
            }
            return None;
        }
        let i = self.principals.len() as u16;
        self.principals.push(key.clone());
        self.principal_index.insert(key, i);
        Some(i)
    }

    /// Principals dropped past the budget (at most [`MAX_DROPPED_KEPT`] of them are kept).
    pub fn dropped(&self) -> &BTreeSet<String> {
        &self.dropped
    }

    /// Looks a principal up without interning it.
    pub fn find_principal(&self, name: &str) -> Option<u16> {
        self.principal_index.get(&party(name)).copied()
    }

    /// Records that call `id` of `tool` happened, so folded sources can be decoded.
    pub fn record_call(&mut self, id: u32, tool: &str) {
        self.calls.insert(id, tool.to_string());
    }

    /// Records that `scanner` added `tag` to the result of call `id`.
    pub fn record_scan(&mut self, id: u32, tag: &str, scanner: &str) {
        self.scanned
            .entry(id)
            .or_default()
            .push((tag.to_string(), scanner.to_string()));
    }

    /// The scanners that added `tag` to the results `label` derives from, as `(scanner, tool)` pairs.
    pub fn scanners_of(&self, label: &Label, tag: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for id in &label.sources {
            for (t, scanner) in self.scanned.get(id).into_iter().flatten() {
                let pair = (
                    scanner.clone(),
                    self.call_tool(*id).unwrap_or("call").to_string(),
                );
                if t == tag && !out.contains(&pair) {
                    out.push(pair);
                }
            }
        }
        out
    }

    /// The label of a tool result before argument labels are joined in: integrity, tags, readers (a list of
    /// principal names, `None` for public) and the call's own source.
    pub fn tool_result(
        &mut self,
        call_id: u32,
        untrusted: bool,
        tags: &[&str],
        readers: Option<&[&str]>,
    ) -> Result<Label, SpaceError> {
        let mut tagset = 0u16;
        for t in tags {
            let i = self
                .tag_index(t)
                .ok_or_else(|| SpaceError::UnknownTag(t.to_string()))?;
            tagset |= 1 << i;
        }
        let readers = match readers {
            None => Readers::Public,
            Some(names) => Readers::Only(names.iter().filter_map(|n| self.principal(n)).collect()),
        };
        Ok(Label {
            integrity: if untrusted {
                Integrity::Untrusted
            } else {
                Integrity::Trusted
            },
            verified: KindSet::NONE,
            tags: TagSet(tagset),
            readers,
            sources: BTreeSet::from([call_id]),
            unknown: false,
        })
    }

    /// Packs a label. Exact within the principal budget; sources are exact up to
    /// `NARROW_CALLS + 64 * MAX_WIDE_WORDS` calls (a later id is dropped, which no run reaches: the
    /// policy's `max_tool_calls` is far below).
    pub fn encode(&self, label: &Label) -> Packed {
        let mut bits = 0i64;
        if label.is_untrusted() {
            bits |= UNTRUSTED_BIT;
        }
        if label.unknown {
            bits |= UNKNOWN_BIT | UNTRUSTED_BIT;
        }
        bits |= i64::from(!label.verified.0) << KIND_SHIFT;
        bits |= i64::from(label.tags.0) << TAG_SHIFT;
        bits |= match &label.readers {
            Readers::Public => 0,
            // Inverted: "not public", and "may not read" for every principal slot outside the set.
            Readers::Only(set) => set
                .iter()
                .filter(|p| usize::from(**p) < MAX_PRINCIPALS)
                .fold(READERS_MASK, |acc, p| {
                    acc & !(1i64 << (PRINCIPAL_SHIFT + u32::from(*p)))
                }),
        };
        let mut wide: Vec<u64> = Vec::new();
        for s in &label.sources {
            if *s < NARROW_CALLS {
                bits |= 1i64 << (SOURCE_SHIFT + s);
            } else {
                let j = (s - NARROW_CALLS) as usize;
                let (w, b) = (j / 64, j % 64);
                if w >= MAX_WIDE_WORDS {
                    continue;
                }
                if wide.len() <= w {
                    wide.resize(w + 1, 0);
                }
                wide[w] |= 1u64 << b;
            }
        }
        Packed::from_parts(bits, wide)
    }

    /// Unpacks a label. A malformed packed value decodes as unknown. Sources decode exactly: the recorded
    /// calls whose bit is set.
    pub fn decode(&self, packed: &Packed) -> Label {
        if !packed.is_well_formed() {
            return Label::unknown();
        }
        let bits = packed.bits;
        let readers = if bits & PUBLIC_BIT == 0 {
            Readers::Public
        } else {
            Readers::Only(
                (0..MAX_PRINCIPALS as u16)
                    .filter(|p| bits & (1i64 << (PRINCIPAL_SHIFT + u32::from(*p))) == 0)
                    .filter(|p| usize::from(*p) < self.principals.len())
                    .collect(),
            )
        };
        let sources = packed
            .source_ids()
            .filter(|id| self.calls.contains_key(id))
            .collect();
        Label {
            integrity: if bits & UNTRUSTED_BIT != 0 {
                Integrity::Untrusted
            } else {
                Integrity::Trusted
            },
            verified: KindSet(!((bits & UNVERIFIED_MASK) >> KIND_SHIFT) as u8),
            tags: TagSet(((bits & TAGS_MASK) >> TAG_SHIFT) as u16),
            readers,
            sources,
            unknown: bits & UNKNOWN_BIT != 0,
        }
    }

    /// A readable form of a label for reasons, diagnostics and the trace: never contains values.
    pub fn describe(&self, label: &Label) -> LabelView {
        LabelView {
            integrity: if label.unknown {
                "unknown".into()
            } else if label.is_untrusted() {
                "untrusted".into()
            } else {
                "trusted".into()
            },
            verified: label
                .verified
                .iter()
                .filter_map(|k| self.kind_name(k))
                .filter(|k| *k != OWN_ADDRESS)
                .map(str::to_string)
                .collect(),
            tags: label
                .tags
                .iter()
                .map(|t| {
                    self.tag_name(t)
                        .map_or_else(|| format!("tag#{t}"), str::to_string)
                })
                .collect(),
            // The user reads everything, so "readers" lists the others (the Display says "besides the user").
            readers: match &label.readers {
                Readers::Public => None,
                Readers::Only(set) => Some(
                    set.iter()
                        .map(|p| {
                            self.principal_name(*p)
                                .map_or_else(|| format!("principal#{p}"), str::to_string)
                        })
                        .filter(|name| self.user.as_deref() != Some(name.as_str()))
                        .collect(),
                ),
            },
            sources: label
                .sources
                .iter()
                .map(|id| format!("{}#{id}", self.call_tool(*id).unwrap_or("call")))
                .collect(),
        }
    }
}

/// A label with names instead of indices, as shown to people and written to traces.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelView {
    /// `trusted`, `untrusted` or `unknown`.
    pub integrity: String,
    pub verified: Vec<String>,
    pub tags: Vec<String>,
    /// `None` means public.
    pub readers: Option<Vec<String>>,
    /// `tool#call_id` for each source.
    pub sources: Vec<String>,
}

impl fmt::Display for LabelView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.integrity)?;
        if !self.verified.is_empty() {
            write!(f, ", verified {}", self.verified.join("+"))?;
        }
        if !self.tags.is_empty() {
            write!(f, ", tags {}", self.tags.join("+"))?;
        }
        match &self.readers {
            None => write!(f, ", public")?,
            Some(r) if r.is_empty() => write!(f, ", readers: the user only")?,
            // Reader addresses can come from attacker-written fields (a mail's From): a reason shown to the
            // planner names how many there are, never who (docs/semantics.md, "Further choices").
            Some(r) if r.len() == 1 => write!(f, ", readers: 1 person besides the user")?,
            Some(r) => write!(f, ", readers: {} people besides the user", r.len())?,
        }
        if !self.sources.is_empty() {
            // A loop's calls as one range (`read_file#2–#96 (95 calls)`): a reason or a claim names the calls a
            // value derives from without listing a hundred ids; the label's `sources` keep them all.
            write!(
                f,
                ", from {}",
                compress_sources(&self.sources, &|_| None).join(" ")
            )?;
        }
        Ok(())
    }
}

/// Fewest calls of one call site shown as a range rather than one by one.
pub const SOURCE_RUN: usize = 3;

/// A label's sources as a person reads them: the calls of one call site (one tool, and one plan line when
/// `line_of` knows the call's line) as one entry `read_file#2–#96 (95 calls, line 6)` once there are at
/// least [`SOURCE_RUN`] of them, the others as they are; in the order of each site's first call. The count
/// says how many calls the range holds (a loop's calls can interleave with others'); the trace keeps the
/// exact list.
///
/// ```
/// use zamburak::label::compress_sources;
/// let mut sources: Vec<String> = (2..=96).map(|i| format!("read_file#{i}")).collect();
/// sources.insert(0, "read_inbox#1".into());
/// let line = |id: u32| Some(if id == 1 { 3 } else { 6 });
/// assert_eq!(compress_sources(&sources, &line), ["read_inbox#1", "read_file#2–#96 (95 calls, line 6)"]);
/// assert_eq!(compress_sources(&sources[..3], &|_| None), ["read_inbox#1", "read_file#2", "read_file#3"]);
/// ```
pub fn compress_sources(sources: &[String], line_of: &dyn Fn(u32) -> Option<u32>) -> Vec<String> {
    // Per site (tool and line), in order of first appearance: its calls.
    type Site<'a> = ((String, Option<u32>), Vec<(u32, &'a String)>);
    let mut sites: Vec<Site<'_>> = Vec::new();
    let mut others: Vec<(usize, &String)> = Vec::new();
    for (at, s) in sources.iter().enumerate() {
        let Some((tool, id)) = s
            .rsplit_once('#')
            .and_then(|(t, i)| Some((t, i.parse::<u32>().ok()?)))
        else {
            others.push((at, s));
            continue;
        };
        let key = (tool.to_string(), line_of(id));
        match sites.iter_mut().find(|(k, _)| *k == key) {
            Some((_, calls)) => calls.push((id, s)),
            None => sites.push((key, vec![(id, s)])),
        }
    }
    // (position of the first source, entries)
    let mut out: Vec<(usize, Vec<String>)> = Vec::new();
    for ((tool, line), mut calls) in sites {
        let first = sources
            .iter()
            .position(|s| calls.first().is_some_and(|(_, c)| *c == s))
            .unwrap_or(0);
        if calls.len() < SOURCE_RUN {
            out.push((first, calls.iter().map(|(_, s)| (*s).clone()).collect()));
            continue;
        }
        calls.sort_unstable_by_key(|(id, _)| *id);
        let (lo, hi) = (calls[0].0, calls[calls.len() - 1].0);
        let line = line.map(|l| format!(", line {l}")).unwrap_or_default();
        out.push((
            first,
            vec![format!("{tool}#{lo}–#{hi} ({} calls{line})", calls.len())],
        ));
    }
    out.extend(others.into_iter().map(|(at, s)| (at, vec![s.clone()])));
    out.sort_by_key(|(at, _)| *at);
    out.into_iter().flat_map(|(_, e)| e).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const KINDS: u8 = 3;
    const TAGS: u8 = 4;
    const PRINCIPALS: u16 = 5;
    const CALLS: u32 = 40;

    fn space() -> LabelSpace {
        let mut s = LabelSpace::new(&["A", "B", "C"], &["T0", "T1", "T2", "T3"]).unwrap();
        for p in 0..PRINCIPALS {
            s.principal(&format!("p{p}@x.test"));
        }
        for c in 0..CALLS {
            s.record_call(c, "tool");
        }
        s
    }

    prop_compose! {
        fn label()(untrusted in any::<bool>(), unknown in prop::bool::weighted(0.1),
                   kinds in 0u8..(1 << KINDS), tags in 0u16..(1 << TAGS),
                   public in any::<bool>(), readers in prop::collection::btree_set(0..PRINCIPALS, 0..4),
                   sources in prop::collection::btree_set(0..CALLS, 0..4)) -> Label {
            Label {
                integrity: if untrusted || unknown { Integrity::Untrusted } else { Integrity::Trusted },
                verified: KindSet(kinds), tags: TagSet(tags),
                readers: if public { Readers::Public } else { Readers::Only(readers) },
                sources, unknown,
            }
        }
    }

    prop_compose! {
        fn packed()(bits in 0..i64::MAX, wide in prop::collection::vec(any::<u64>(), 0..4)) -> Packed {
            Packed::from_parts(bits, wide)
        }
    }

    proptest! {
        #[test]
        fn join_is_commutative(a in label(), b in label()) {
            prop_assert_eq!(a.join(&b), b.join(&a));
        }
        #[test]
        fn join_is_associative(a in label(), b in label(), c in label()) {
            prop_assert_eq!(a.join(&b).join(&c), a.join(&b.join(&c)));
        }
        #[test]
        fn join_is_idempotent(a in label()) {
            prop_assert_eq!(a.join(&a), a);
        }
        #[test]
        fn join_is_monotone(a in label(), b in label()) {
            let j = a.join(&b);
            // Never more trusted, never less secret, never fewer sources than either input.
            prop_assert!(j.flows_above(&a) && j.flows_above(&b));
        }
        #[test]
        fn only_mint_adds_kinds(a in label(), b in label(), k in 0u8..KINDS) {
            let inputs = KindSet(a.verified.0 | b.verified.0);
            for out in [a.join(&b), a.computed(), a.join(&b.influence()), a.influence().join(&b.influence()).join(&a)] {
                prop_assert_eq!(out.verified.0 & !inputs.0, 0, "{:?}", out);
            }
            prop_assert!(a.mint(k).verified.contains(k));
        }
        #[test]
        fn computation_drops_every_kind(a in label(), b in label()) {
            prop_assert_eq!(a.join(&b).computed().verified, KindSet::NONE);
        }
        #[test]
        fn untrusted_choice_drops_kinds_trusted_keeps_them(v in label(), c in label()) {
            let r = v.join(&c.influence());
            if c.is_untrusted() { prop_assert_eq!(r.verified, KindSet::NONE); }
            else { prop_assert_eq!(r.verified, v.verified); }
        }
        #[test]
        fn unknown_absorbs(a in label(), b in label()) {
            prop_assert!(a.join(&Label::unknown()).unknown);
            prop_assert!(Label::unknown().join(&b).computed().influence().unknown);
        }
        #[test]
        fn literal_is_the_bottom_for_information(a in label()) {
            let j = Label::literal().join(&a);
            prop_assert_eq!(j.integrity, a.integrity);
            prop_assert_eq!(j.tags, a.tags);
            prop_assert_eq!(j.readers, a.readers);
        }

        #[test]
        fn packing_roundtrips(a in label()) {
            let s = space();
            // Exact, sources included (CALLS reaches past NARROW_CALLS, into the wide words).
            prop_assert_eq!(s.decode(&s.encode(&a)), a);
        }
        #[test]
        fn packing_is_a_homomorphism(a in label(), b in label()) {
            let s = space();
            prop_assert_eq!(s.decode(&s.encode(&a).join(&s.encode(&b))), s.decode(&s.encode(&a.join(&b))));
            prop_assert_eq!(s.decode(&s.encode(&a).computed()), s.decode(&s.encode(&a.computed())));
            prop_assert_eq!(s.decode(&s.encode(&a).influence()), s.decode(&s.encode(&a.influence())));
            prop_assert_eq!(s.decode(&s.encode(&a).mint(1)), s.decode(&s.encode(&a.mint(1))));
        }
        #[test]
        fn packed_join_laws(a in packed(), b in packed(), c in packed()) {
            prop_assert_eq!(a.join(&b), b.join(&a));
            prop_assert_eq!(a.join(&b).join(&c), a.join(&b.join(&c)));
            prop_assert_eq!(a.join(&a), a.clone());
            prop_assert!(a.join(&b).is_well_formed());
        }
        #[test]
        fn malformed_packed_decodes_unknown(bits in i64::MIN..0) {
            prop_assert!(space().decode(&Packed::from_bits(bits)).unknown);
        }
    }

    #[test]
    fn literal_packs_to_the_constant() {
        assert_eq!(space().encode(&Label::literal()), Packed::LITERAL);
        assert_eq!(space().decode(&Packed::LITERAL), Label::literal());
        assert!(space().decode(&Packed::UNKNOWN).unknown);
    }

    #[test]
    fn principals_past_the_budget_are_never_readers() {
        let mut s = LabelSpace::new(&[], &[]).unwrap();
        for i in 0..MAX_PRINCIPALS {
            assert!(s.principal(&format!("p{i}@x.test")).is_some());
        }
        assert_eq!(s.principal("late@x.test"), None);
        let l = s.tool_result(1, true, &[], Some(&["late@x.test"])).unwrap();
        assert_eq!(l.readers, Readers::Only(BTreeSet::new()));
    }

    #[test]
    fn a_principal_interned_later_does_not_read_older_restricted_values() {
        let mut s = LabelSpace::new(&[], &[]).unwrap();
        let old = s.encode(&s.clone().tool_result(1, true, &[], Some(&[])).unwrap());
        let p = s.principal("new@x.test").unwrap();
        assert_eq!(s.decode(&old).readers, Readers::Only(BTreeSet::new()));
        // ...while a public value is readable by it.
        assert_eq!(s.decode(&Packed::LITERAL).readers, Readers::Public);
        let _ = p;
    }

    #[test]
    fn sources_are_exact_for_any_number_of_calls() {
        let mut s = LabelSpace::new(&[], &[]).unwrap();
        for id in 1..=600 {
            s.record_call(id, "t");
        }
        // Calls that would have folded onto each other modulo 19 stay apart, in and past the i64.
        for ids in [
            vec![1],
            vec![20],
            vec![21],
            vec![1, 20, 39, 58, 77],
            vec![19, 83, 84, 147, 600],
        ] {
            let l = Label {
                sources: ids.iter().copied().collect(),
                ..Label::literal()
            };
            let p = s.encode(&l);
            assert_eq!(p.wide().is_empty(), ids.iter().all(|i| *i < NARROW_CALLS));
            assert_eq!(s.decode(&p).sources, l.sources, "{ids:?}");
        }
        // A join keeps both sides' wide words.
        let a = s.encode(&Label {
            sources: BTreeSet::from([3, 500]),
            ..Label::literal()
        });
        let b = s.encode(&Label {
            sources: BTreeSet::from([21]),
            ..Label::literal()
        });
        assert_eq!(s.decode(&a.join(&b)).sources, BTreeSet::from([3, 21, 500]));
    }
}
