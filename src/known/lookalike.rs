//! Whether a value an approval claim shows "looks like" a value the person remembered before, without being
//! equal to it: the attacker's IBAN one digit off the landlord's, `pаypal.com` with a Cyrillic `а`,
//! `bob@evil.test` where the person knows `bob@example.com`.
//!
//! This is advisory (docs/semantics.md, "Remembered values"): "looks like" never widens equality. A
//! look-alike is never treated as the remembered value; it is only pointed out, with the difference marked,
//! so the person notices the near miss instead of reading past it. [`look_alikes`] never returns a known
//! value equal to the one shown, and nothing here decides anything.
//!
//! Why a value looks like a known one ([`Likeness`]), strongest first; each known value is reported once,
//! for the first of these that holds:
//!
//! 1. [`Likeness::Confusable`]: both have the same UTS #39 skeleton ([`unicode_security::skeleton`]:
//!    NFD, default-ignorable code points dropped, each code point replaced by its confusable prototype) but
//!    are different code points. This also covers values that differ only in normalization (`é` as one
//!    code point or as `e` and a combining accent) or in invisible code points (a zero-width space).
//! 2. [`Likeness::MixedScripts`]: the value is not single-script (UTS #39: its resolved script set is
//!    empty, [`unicode_security::MixedScript`]) while the known value is, and the two are a near miss.
//! 3. [`Likeness::NearMiss`]: the two are a near miss (below).
//! 4. [`Likeness::SameLocalPart`]: both are bare addresses (one `@`, no white space, something on either
//!    side), their local parts fold alike and their domains do not.
//!
//! **The near-miss rule.** Both values are folded: white space dropped (so `GB29 NWBK 6016 …` and
//! `GB29NWBK6016…` compare alike), lowercased, then replaced by their skeleton (so a homoglyph costs
//! nothing). Let `n` be the length, in code points, of the shorter folded value and `d` the
//! Damerau–Levenshtein distance of the folded values ([`strsim::damerau_levenshtein`]: insertions,
//! deletions, substitutions and transpositions of adjacent code points each cost one). They are a near
//! miss if `d == 0` (they differ only in spacing or case), or if `n >= 8` and `d <= 2`, or if
//! `5 <= n < 8` and `d <= 1`. Values folding to fewer than 5 code points are near misses only at `d == 0`:
//! one edit in `bob` (`rob`) is a different word, not a look-alike. Lengths more than the allowed edits
//! apart are never computed (they cannot be within it).
//!
//! **Bounds.** The edit distance is quadratic (time; strsim's is linear in memory). A value or known value
//! longer than [`MAX_EDIT_CHARS`] code points is compared only by skeleton equality (linear): it can only
//! be [`Likeness::Confusable`]. [`mark_difference`] likewise diffs such values only by their common prefix
//! and suffix, marking the middle as one run.
//!
//! Empty values, and values of only white space or invisible code points, look like nothing and nothing
//! looks like them.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;
use similar::{Algorithm, DiffTag, capture_diff_slices};
use unicode_security::{MixedScript, skeleton};

use crate::text::is_invisible;

/// Longest value, in code points, compared by edit distance (and diffed code point by code point); longer
/// ones are compared only by skeleton equality (see the module documentation).
pub const MAX_EDIT_CHARS: usize = 2_000;

/// Fewest code points (of the shorter folded value) for which one edit is still a near miss.
const SHORTEST_NEAR_MISS: usize = 5;

/// Fewest code points (of the shorter folded value) for which two edits are still a near miss.
const SHORTEST_TWO_EDITS: usize = 8;

/// Why a value looks like a known one.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Likeness {
    /// The same skeleton (UTS #39 confusables) but different code points: a homoglyph.
    Confusable,
    /// Letters from more than one script where the known value has one (e.g. Latin + Cyrillic), in a value
    /// that is a near miss of the known one.
    MixedScripts,
    /// A small edit distance between values of similar length: see the module documentation for the rule
    /// (Damerau–Levenshtein of the folded values ≤ 2, ≤ 1 below 8 code points, none below 5).
    NearMiss,
    /// An address with the same local part at another domain.
    SameLocalPart,
}

impl Likeness {
    /// Strongest first: the order [`look_alikes`] sorts by.
    fn rank(&self) -> u8 {
        match self {
            Likeness::Confusable => 0,
            Likeness::MixedScripts => 1,
            Likeness::NearMiss => 2,
            Likeness::SameLocalPart => 3,
        }
    }
}

/// One look-alike: the known value it resembles, why, and the difference marked.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LookAlike {
    pub known: String,
    pub why: Likeness,
    pub marked: String,
}

/// The known values `value` looks like (never one equal to it), best first, at most `max` of them.
///
/// Best first: by [`Likeness`] (confusable, mixed scripts, near miss, same local part), then by the edit
/// distance of the folded values, then in the order `known` gave them. A known value given twice is
/// reported once.
///
/// ```
/// use zamburak::known::lookalike::{Likeness, look_alikes};
/// let found = look_alikes("p\u{430}ypal.com", ["paypal.com", "example.com"], 5);
/// assert_eq!(found.len(), 1);
/// assert_eq!(found[0].why, Likeness::Confusable);
/// assert!(look_alikes("paypal.com", ["paypal.com"], 5).is_empty());
/// ```
pub fn look_alikes<'k>(
    value: &str,
    known: impl IntoIterator<Item = &'k str>,
    max: usize,
) -> Vec<LookAlike> {
    if max == 0 || blank(value) {
        return Vec::new();
    }
    let shown = Shown::new(value);
    let mut seen = HashSet::new();
    let mut found = Vec::new();
    for (index, k) in known.into_iter().enumerate() {
        if k == value || !seen.insert(k) {
            continue;
        }
        if let Some((why, distance)) = shown.likeness(k) {
            found.push((why, distance, index, k));
        }
    }
    found.sort_by_key(|(why, distance, index, _)| (why.rank(), *distance, *index));
    found.truncate(max);
    found
        .into_iter()
        .map(|(why, _, _, k)| LookAlike {
            known: k.to_string(),
            why,
            marked: mark_difference(value, k),
        })
        .collect()
}

/// The shown value, folded once for every known value it is compared with.
struct Shown {
    skeleton: String,
    /// The folded value and its length in code points; `None` if the value is too long for edit distance.
    folded: Option<(String, usize)>,
    single_script: bool,
    /// The folded local part and domain, if the value is a bare address (and not too long).
    address: Option<(String, String)>,
}

impl Shown {
    fn new(value: &str) -> Shown {
        let short = value.chars().count() <= MAX_EDIT_CHARS;
        let folded = short.then(|| {
            let f = fold(value);
            let len = f.chars().count();
            (f, len)
        });
        Shown {
            skeleton: skeleton(value).collect(),
            folded,
            single_script: value.is_single_script(),
            address: if short { address(value) } else { None },
        }
    }

    /// Why `known` (not equal to the value) looks like the value, and the folded edit distance (0 where
    /// none was computed), or `None`.
    fn likeness(&self, known: &str) -> Option<(Likeness, usize)> {
        if blank(known) {
            return None;
        }
        if skeleton(known).eq(self.skeleton.chars()) {
            return Some((Likeness::Confusable, 0));
        }
        let (folded, folded_len) = self.folded.as_ref()?;
        if known.chars().count() > MAX_EDIT_CHARS {
            return None;
        }
        if let Some(distance) = near_miss(folded, *folded_len, &fold(known)) {
            let why = if !self.single_script && known.is_single_script() {
                Likeness::MixedScripts
            } else {
                Likeness::NearMiss
            };
            return Some((why, distance));
        }
        match (&self.address, address(known)) {
            (Some((local, domain)), Some((known_local, known_domain)))
                if *local == known_local && *domain != known_domain =>
            {
                Some((Likeness::SameLocalPart, 0))
            }
            _ => None,
        }
    }
}

/// Whether `s` is empty, or only white space and code points the skeleton drops (default-ignorable).
fn blank(s: &str) -> bool {
    skeleton(s).all(char::is_whitespace)
}

/// The form near misses are measured on: white space dropped, lowercased, then its UTS #39 skeleton.
fn fold(s: &str) -> String {
    let lower: String = s
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    skeleton(&lower).collect()
}

/// The folded local part and domain of a bare address: exactly one `@`, no white space, neither side empty.
fn address(s: &str) -> Option<(String, String)> {
    if s.chars().any(char::is_whitespace) {
        return None;
    }
    let (local, domain) = s.split_once('@')?;
    if local.is_empty() || domain.is_empty() || domain.contains('@') {
        return None;
    }
    Some((fold(local), fold(domain)))
}

/// Most edits for which two folded values, the shorter `shorter` code points long, are a near miss.
fn allowed_edits(shorter: usize) -> usize {
    if shorter >= SHORTEST_TWO_EDITS {
        2
    } else if shorter >= SHORTEST_NEAR_MISS {
        1
    } else {
        0
    }
}

/// The edit distance of two folded values if they are a near miss (the module documentation's rule).
fn near_miss(a: &str, a_len: usize, b: &str) -> Option<usize> {
    let b_len = b.chars().count();
    if a_len == 0 || b_len == 0 {
        return None;
    }
    if a == b {
        return Some(0);
    }
    let allowed = allowed_edits(a_len.min(b_len));
    // The distance is at least the difference in length: skip the quadratic work when that is too much.
    if allowed == 0 || a_len.abs_diff(b_len) > allowed {
        return None;
    }
    let distance = strsim::damerau_levenshtein(a, b);
    (distance <= allowed).then_some(distance)
}

/// The difference between `value` and `known` marked for a terminal/HTML-safe plain text: e.g. `DE89 3704
/// 0044 0532 0130 0[1→7]` or `p[а U+0430 CYRILLIC SMALL LETTER A→a U+0061]ypal.com`.
///
/// * Each differing run is written `[value's→known's]` (either side may be empty: `[→x]`, `[x→]`). Two runs
///   one equal code point apart are written as one run holding it, so a transposition reads `pa[yp→py]al`.
/// * A run whose code points are all printable ASCII other than `[` and `]` is written as it is. Otherwise
///   every code point of the run, on both sides, is written `U+XXXX` (`, ` between them), preceded by the
///   character itself where a person can see it (not white space, not [`is_invisible`], not a combining
///   mark, not `[`, `]`, `→` or `,`) and followed by its Unicode name for non-ASCII ones (from
///   `unicode_names2`, where it has one).
/// * Between runs, the code points [`is_invisible`] escapes, and `[`, `]` and `→`, are written `\u{..}` as
///   [`crate::text::visible`] writes them; so a value marked against itself holds no bracket, and nothing
///   in either value can forge a run.
///
/// The text is plain: HTML needs it escaped like any other text (`<` and `&` stay as they are). Values
/// longer than [`MAX_EDIT_CHARS`] code points are diffed by their common prefix and suffix only, the
/// middle marked as one run.
///
/// ```
/// use zamburak::known::lookalike::mark_difference;
/// assert_eq!(mark_difference("DE89 3704 0044 0532 0130 01", "DE89 3704 0044 0532 0130 07"),
///            "DE89 3704 0044 0532 0130 0[1→7]");
/// assert_eq!(mark_difference("p\u{430}ypal.com", "paypal.com"),
///            "p[\u{430} U+0430 CYRILLIC SMALL LETTER A→a U+0061]ypal.com");
/// ```
pub fn mark_difference(value: &str, known: &str) -> String {
    let old: Vec<char> = value.chars().collect();
    let new: Vec<char> = known.chars().collect();
    let mut out = String::with_capacity(value.len() + known.len());
    for piece in merged(pieces(&old, &new)) {
        match piece {
            Piece::Same(same) => write_same(&mut out, &same),
            Piece::Run(was, is) => write_run(&mut out, &was, &is),
        }
    }
    out
}

/// A stretch of a marked difference: code points both have, or a differing run (the value's, the known's).
#[derive(Debug)]
enum Piece {
    Same(Vec<char>),
    Run(Vec<char>, Vec<char>),
}

/// The pieces of the difference between `old` (the value) and `new` (the known value), in order; runs are
/// never adjacent and never both empty.
fn pieces(old: &[char], new: &[char]) -> Vec<Piece> {
    let mut out = Vec::new();
    if old.len() > MAX_EDIT_CHARS || new.len() > MAX_EDIT_CHARS {
        // Linear: the common prefix, the common suffix of what is left, and the middle as one run.
        let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
        let (old_rest, new_rest) = (
            old.get(prefix..).unwrap_or(&[]),
            new.get(prefix..).unwrap_or(&[]),
        );
        let suffix = old_rest
            .iter()
            .rev()
            .zip(new_rest.iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let old_mid = old_rest.get(..old_rest.len() - suffix).unwrap_or(&[]);
        let new_mid = new_rest.get(..new_rest.len() - suffix).unwrap_or(&[]);
        push_same(&mut out, old.get(..prefix).unwrap_or(&[]));
        push_run(&mut out, old_mid, new_mid);
        push_same(&mut out, old_rest.get(old_mid.len()..).unwrap_or(&[]));
        return out;
    }
    for op in capture_diff_slices(Algorithm::Myers, old, new) {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        // The ranges index `old` and `new`, the slices the diff was made of; `get` keeps that unchecked.
        let was = old.get(old_range).unwrap_or(&[]);
        if tag == DiffTag::Equal {
            push_same(&mut out, was);
        } else {
            push_run(&mut out, was, new.get(new_range).unwrap_or(&[]));
        }
    }
    out
}

fn push_same(out: &mut Vec<Piece>, same: &[char]) {
    if same.is_empty() {
        return;
    }
    match out.last_mut() {
        Some(Piece::Same(before)) => before.extend_from_slice(same),
        _ => out.push(Piece::Same(same.to_vec())),
    }
}

fn push_run(out: &mut Vec<Piece>, was: &[char], is: &[char]) {
    if was.is_empty() && is.is_empty() {
        return;
    }
    match out.last_mut() {
        Some(Piece::Run(was_before, is_before)) => {
            was_before.extend_from_slice(was);
            is_before.extend_from_slice(is);
        }
        _ => out.push(Piece::Run(was.to_vec(), is.to_vec())),
    }
}

/// `pieces` with every single equal code point between two runs taken into one run.
fn merged(pieces: Vec<Piece>) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::with_capacity(pieces.len());
    let mut pieces = pieces.into_iter().peekable();
    while let Some(piece) = pieces.next() {
        match piece {
            Piece::Same(same)
                if same.len() == 1
                    && matches!(out.last(), Some(Piece::Run(..)))
                    && matches!(pieces.peek(), Some(Piece::Run(..))) =>
            {
                push_run(&mut out, &same, &same);
            }
            Piece::Same(same) => push_same(&mut out, &same),
            Piece::Run(was, is) => push_run(&mut out, &was, &is),
        }
    }
    out
}

/// Code points both values have: as they are, but for the ones a person cannot see and the run markers.
fn write_same(out: &mut String, same: &[char]) {
    for &c in same {
        if matches!(c, '[' | ']' | '→') || is_invisible(c) {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
}

/// One differing run, `[was→is]`, spelled out code point by code point unless it is all plain ASCII.
fn write_run(out: &mut String, was: &[char], is: &[char]) {
    let plain = |c: &char| (*c == ' ' || c.is_ascii_graphic()) && !matches!(c, '[' | ']');
    let spelled = !was.iter().chain(is).all(plain);
    out.push('[');
    write_side(out, was, spelled);
    out.push('→');
    write_side(out, is, spelled);
    out.push(']');
}

fn write_side(out: &mut String, side: &[char], spelled: bool) {
    if !spelled {
        out.extend(side);
        return;
    }
    for (i, &c) in side.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        if shown_as_is(c) {
            out.push(c);
            out.push(' ');
        }
        out.push_str(&format!("U+{:04X}", c as u32));
        if !c.is_ascii()
            && let Some(name) = unicode_names2::name(c)
        {
            out.push_str(&format!(" {name}"));
        }
    }
}

/// Whether a spelled-out code point is also shown as itself: a person can see it, it does not combine with
/// the text before it, and it is none of the marking's own characters.
fn shown_as_is(c: char) -> bool {
    !c.is_whitespace() && !matches!(c, '[' | ']' | '→' | ',') && !is_invisible(c) && !is_mark(c)
}

/// Whether `c` is a combining mark (General_Category M), through `regex`'s Unicode tables as in
/// [`crate::text`]; without them (a build lacking the tables) every non-ASCII code point counts as one, so
/// it is spelled out only (fail closed).
fn is_mark(c: char) -> bool {
    static MARK: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\p{M}$").ok());
    if c.is_ascii() {
        return false;
    }
    let mut buf = [0u8; 4];
    match MARK.as_ref() {
        Some(re) => re.is_match(c.encode_utf8(&mut buf)),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The one look-alike `value` has among `known`, with why.
    fn only(value: &str, known: &[&str]) -> LookAlike {
        let found = look_alikes(value, known.iter().copied(), 10);
        assert_eq!(found.len(), 1, "{value:?} against {known:?}: {found:#?}");
        found.into_iter().next().unwrap()
    }

    fn why(value: &str, known: &str) -> Option<Likeness> {
        look_alikes(value, [known], 10)
            .into_iter()
            .next()
            .map(|found| found.why)
    }

    #[test]
    fn cyrillic_a_in_a_domain_is_confusable() {
        let found = only("p\u{430}ypal.com", &["paypal.com"]);
        assert_eq!(found.why, Likeness::Confusable);
        assert_eq!(found.known, "paypal.com");
        assert_eq!(
            found.marked,
            "p[\u{430} U+0430 CYRILLIC SMALL LETTER A→a U+0061]ypal.com"
        );
    }

    #[test]
    fn cyrillic_a_in_an_address_is_confusable() {
        let found = only(
            "bob@ex\u{430}mple.com",
            &["bob@example.com", "alice@example.com"],
        );
        assert_eq!(found.why, Likeness::Confusable);
        assert_eq!(found.known, "bob@example.com");
        assert_eq!(
            found.marked,
            "bob@ex[\u{430} U+0430 CYRILLIC SMALL LETTER A→a U+0061]mple.com"
        );
    }

    #[test]
    fn a_digit_one_for_a_letter_l_is_confusable() {
        assert_eq!(
            why("https://paypa1.com/login", "https://paypal.com/login"),
            Some(Likeness::Confusable)
        );
    }

    #[test]
    fn an_invisible_code_point_is_confusable_and_spelled_out() {
        let found = only("pay\u{200b}pal.com", &["paypal.com"]);
        assert_eq!(found.why, Likeness::Confusable);
        assert_eq!(found.marked, "pay[U+200B ZERO WIDTH SPACE→]pal.com");
    }

    #[test]
    fn mixed_scripts_near_a_single_script_value() {
        // Not the same skeleton (a letter is missing too), but Latin and Cyrillic where the known is Latin.
        assert_eq!(
            why("p\u{430}ypal.co", "paypal.com"),
            Some(Likeness::MixedScripts)
        );
        // The same miss without the Cyrillic letter is a plain near miss.
        assert_eq!(why("paypal.co", "paypal.com"), Some(Likeness::NearMiss));
    }

    #[test]
    fn one_digit_changed_in_an_iban() {
        let found = only("GB29NWBK60161331926819", &["GB29NWBK60161331926818"]);
        assert_eq!(found.why, Likeness::NearMiss);
        assert_eq!(found.marked, "GB29NWBK6016133192681[9→8]");
    }

    #[test]
    fn one_digit_changed_in_an_iban_with_spaces() {
        let found = only(
            "GB29 NWBK 6016 1331 9268 19",
            &["GB29 NWBK 6016 1331 9268 18"],
        );
        assert_eq!(found.why, Likeness::NearMiss);
        assert_eq!(found.marked, "GB29 NWBK 6016 1331 9268 1[9→8]");
        // Spaced against unspaced: the spaces cost nothing, the digit does.
        let found = only("GB29 NWBK 6016 1331 9268 19", &["GB29NWBK60161331926818"]);
        assert_eq!(found.why, Likeness::NearMiss);
        assert_eq!(found.marked, "GB29[ →]NWBK[ →]6016[ →]1331[ →]9268[ 19→18]");
        // The same IBAN spaced differently is not equal, so it is pointed out too.
        assert_eq!(
            why("GB29 NWBK 6016 1331 9268 18", "GB29NWBK60161331926818"),
            Some(Likeness::NearMiss)
        );
    }

    #[test]
    fn mark_difference_of_the_example_iban() {
        assert_eq!(
            mark_difference("DE89 3704 0044 0532 0130 01", "DE89 3704 0044 0532 0130 07"),
            "DE89 3704 0044 0532 0130 0[1→7]"
        );
    }

    #[test]
    fn a_transposition() {
        let found = only("papyal.com", &["paypal.com"]);
        assert_eq!(found.why, Likeness::NearMiss);
        assert_eq!(found.marked, "pa[py→yp]al.com");
        assert_eq!(
            why("GB29NWBK60161331926881", "GB29NWBK60161331926818"),
            Some(Likeness::NearMiss)
        );
    }

    #[test]
    fn same_local_part_at_another_domain() {
        for (value, known) in [
            ("landlord@rent-example.test", "landlord@rent.example"),
            ("landlord@rent.example", "landlord@rent-example.test"),
            ("bob@evil.test", "bob@example.com"),
            ("Bob@evil.test", "bob@example.com"),
        ] {
            assert_eq!(
                why(value, known),
                Some(Likeness::SameLocalPart),
                "{value} against {known}"
            );
        }
        // Not addresses: no local part, two `@`, or white space.
        assert_eq!(why("@evil.test", "@example.com"), None);
        assert_eq!(why("bob@x@evil.test", "bob@example.com"), None);
        assert_eq!(why("bob@evil test", "bob@example.com"), None);
    }

    #[test]
    fn a_whole_url_one_char_off() {
        let known = "https://rent.example/pay?to=landlord&ref=2024-06";
        for value in [
            "https://rent.example/pay?to=landlort&ref=2024-06",
            "https://rent.example/pay?to=landlord&ref=2024-07",
            "http://rent.example/pay?to=landlord&ref=2024-06",
            "https://rent.examples/pay?to=landlord&ref=2024-06",
        ] {
            assert_eq!(why(value, known), Some(Likeness::NearMiss), "{value}");
        }
        assert_eq!(
            mark_difference(
                "https://rent.example/pay?to=landlort",
                "https://rent.example/pay?to=landlord"
            ),
            "https://rent.example/pay?to=landlor[t→d]"
        );
    }

    #[test]
    fn equal_values_are_never_returned() {
        assert!(look_alikes("paypal.com", ["paypal.com"], 10).is_empty());
        assert!(look_alikes("paypal.com", ["paypal.com", "paypal.com"], 10).is_empty());
        // An equal known value is skipped, a look-alike one next to it still shown.
        let found = look_alikes("paypal.com", ["paypal.com", "paypa1.com"], 10);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].known, "paypa1.com");
    }

    #[test]
    fn clearly_different_values_are_not_flagged() {
        for (value, known) in [
            ("alice@example.com", "bob@example.org"),
            ("GB33BUKB20201555555555", "DE89370400440532013000"),
            ("paypal.com", "example.org"),
            ("https://rent.example/pay", "https://bank.example/login"),
        ] {
            assert_eq!(why(value, known), None, "{value} against {known}");
            assert_eq!(why(known, value), None, "{known} against {value}");
        }
    }

    #[test]
    fn empty_and_blank_values_are_not_flagged() {
        assert!(look_alikes("", [""], 10).is_empty());
        assert!(look_alikes("", ["a", " "], 10).is_empty());
        assert!(look_alikes("paypal.com", [""], 10).is_empty());
        assert!(look_alikes(" ", ["  ", "\u{200b}"], 10).is_empty());
        assert!(look_alikes("\u{200b}", ["", " "], 10).is_empty());
        assert_eq!(mark_difference("", ""), "");
    }

    #[test]
    fn short_values_need_closer_matches() {
        // Under five code points: one edit is another word.
        assert_eq!(why("bob", "rob"), None);
        assert_eq!(why("1234", "1243"), None);
        // Only case differs: still pointed out, whatever the length.
        assert_eq!(why("Bob", "bob"), Some(Likeness::NearMiss));
        // Five to seven: one edit, not two.
        assert_eq!(why("12345", "12346"), Some(Likeness::NearMiss));
        assert_eq!(why("1234567", "1234576"), Some(Likeness::NearMiss));
        assert_eq!(why("1234567", "1234500"), None);
        // Eight and more: two edits, not three.
        assert_eq!(why("12345678", "12345600"), Some(Likeness::NearMiss));
        assert_eq!(why("12345678", "12345000"), None);
        // Lengths further apart than the allowed edits.
        assert_eq!(why("paypal.com", "paypal.com.evil"), None);
    }

    #[test]
    fn best_first_and_at_most_max() {
        let known = [
            "bob@paypal.com",
            "paypal.co",
            "paypal.com",
            "paypal.com",
            "paypal.org",
        ];
        let found = look_alikes("p\u{430}ypal.com", known, 10);
        let got: Vec<(&str, Likeness)> = found
            .iter()
            .map(|f| (f.known.as_str(), f.why.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("paypal.com", Likeness::Confusable),
                ("paypal.co", Likeness::MixedScripts),
                ("paypal.org", Likeness::MixedScripts),
            ]
        );
        let first = look_alikes("p\u{430}ypal.com", known, 1);
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].known, "paypal.com");
        assert!(look_alikes("p\u{430}ypal.com", known, 0).is_empty());
        // Among near misses, the closer first.
        let found = look_alikes(
            "GB29NWBK60161331926819",
            ["GB29NWBK60161331926800", "GB29NWBK60161331926818"],
            10,
        );
        assert_eq!(found[0].known, "GB29NWBK60161331926818");
        assert_eq!(found[1].known, "GB29NWBK60161331926800");
    }

    #[test]
    fn long_values_are_compared_by_skeleton_only() {
        let long = "a".repeat(MAX_EDIT_CHARS);
        let (value, known) = (format!("{long}b"), format!("{long}c"));
        assert_eq!(why(&value, &known), None);
        assert_eq!(mark_difference(&value, &known), format!("{long}[b→c]"));
        let (value, known) = (format!("{long}\u{430}x"), format!("{long}ax"));
        assert_eq!(why(&value, &known), Some(Likeness::Confusable));
        assert_eq!(
            mark_difference(&value, &known),
            format!("{long}[\u{430} U+0430 CYRILLIC SMALL LETTER A→a U+0061]x")
        );
        // Just under the bound, edit distance still applies.
        let short = "a".repeat(MAX_EDIT_CHARS - 1);
        assert_eq!(
            why(&format!("{short}b"), &format!("{short}c")),
            Some(Likeness::NearMiss)
        );
    }

    #[test]
    fn marking_escapes_what_could_forge_or_hide_a_run() {
        // Brackets and arrows of the values themselves are escaped between runs and spelled out in runs.
        assert_eq!(
            mark_difference("a[b]→c", "a[b]→c"),
            "a\\u{005b}b\\u{005d}\\u{2192}c"
        );
        assert_eq!(
            mark_difference("x[12]", "x(12)"),
            "x[U+005B→( U+0028]12[U+005D→) U+0029]"
        );
        // One equal code point between two runs is taken into one run.
        assert_eq!(
            mark_difference("x[1]", "x(1)"),
            "x[U+005B, 1 U+0031, U+005D→( U+0028, 1 U+0031, ) U+0029]"
        );
        // A bidi override both share is escaped; one only the value has is spelled out.
        assert_eq!(
            mark_difference("\u{202e}abc", "\u{202e}abd"),
            "\\u{202e}ab[c→d]"
        );
        assert_eq!(
            mark_difference("ab\u{202e}c", "abc"),
            "ab[U+202E RIGHT-TO-LEFT OVERRIDE→]c"
        );
        // A combining mark is not shown as itself (it would sit on the bracket).
        assert_eq!(
            mark_difference("e\u{301}x", "ex"),
            "e[U+0301 COMBINING ACUTE ACCENT→]x"
        );
        // Runs on one side only.
        assert_eq!(mark_difference("paypal.com", "paypal.co"), "paypal.co[m→]");
        assert_eq!(mark_difference("paypal.co", "paypal.com"), "paypal.co[→m]");
        // Several code points in one run.
        assert_eq!(
            mark_difference("\u{440}\u{430}y", "pay"),
            "[\u{440} U+0440 CYRILLIC SMALL LETTER ER, \u{430} U+0430 CYRILLIC SMALL LETTER A→p U+0070, a U+0061]y"
        );
    }

    #[test]
    fn likeness_serializes_in_snake_case() {
        let found = only("bob@evil.test", &["bob@example.com"]);
        let json = serde_json::to_value(&found).unwrap();
        assert_eq!(json["known"], "bob@example.com");
        assert_eq!(json["why"], "same_local_part");
        assert_eq!(json["marked"], found.marked.as_str());
        assert_eq!(json.as_object().map(|o| o.len()), Some(3));
        assert_eq!(
            serde_json::to_value(Likeness::MixedScripts).unwrap(),
            "mixed_scripts"
        );
        assert_eq!(
            serde_json::to_value(Likeness::NearMiss).unwrap(),
            "near_miss"
        );
        assert_eq!(
            serde_json::to_value(Likeness::Confusable).unwrap(),
            "confusable"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// A value never looks like itself, and marked against itself has no run.
        #[test]
        fn a_value_is_not_its_own_look_alike(value in "[ -~]{0,60}") {
            prop_assert!(look_alikes(&value, [value.as_str()], 10).is_empty());
            let marked = mark_difference(&value, &value);
            prop_assert!(!marked.contains('[') && !marked.contains(']'), "{marked}");
        }

        /// Any two values: no equal one returned, a run exactly when they differ, nothing invisible in
        /// the mark.
        #[test]
        fn any_two_values(value in "\\PC{0,24}|[ -~\u{300}-\u{36f}\u{400}-\u{4ff}\u{200b}-\u{202e}]{0,24}",
                          known in "\\PC{0,24}|[ -~\u{300}-\u{36f}\u{400}-\u{4ff}\u{200b}-\u{202e}]{0,24}") {
            for found in look_alikes(&value, [known.as_str(), value.as_str()], 10) {
                prop_assert_ne!(&found.known, &value);
            }
            let marked = mark_difference(&value, &known);
            prop_assert_eq!(marked.contains('['), value != known, "{}", marked);
            prop_assert!(!marked.chars().any(is_invisible), "{marked:?}");
        }

        /// One code point changed in a value of eight or more letters and digits is always pointed out.
        #[test]
        fn one_change_is_found(value in "[a-z0-9]{8,40}", at in any::<prop::sample::Index>(),
                               to in "[a-z0-9]") {
            let mut chars: Vec<char> = value.chars().collect();
            let i = at.index(chars.len());
            chars[i] = to.chars().next().unwrap();
            let changed: String = chars.into_iter().collect();
            prop_assume!(changed != value);
            prop_assert!(!look_alikes(&changed, [value.as_str()], 10).is_empty());
        }
    }
}
