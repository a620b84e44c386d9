//! Text from outside Zamburak, on its way to a person or a file: what a terminal may show of it, and what a
//! shareable file may keep of it.
//!
//! * [`visible`] writes every code point a person cannot see, or that changes how the text around it reads,
//!   as `\u{..}`: controls (C0, DEL, C1: escape sequences), format characters (bidi overrides and isolates,
//!   zero-width marks, soft hyphen, Unicode tags, interlinear annotations), line and paragraph separators,
//!   default-ignorable code points (Hangul fillers, variation selectors, the Mongolian vowel separator), and
//!   private-use and unassigned code points (how they look depends on the font or a newer Unicode; the
//!   person cannot know what they read). The set is the Unicode Character Database's, through the `regex`
//!   crate's property tables (General_Category, Default_Ignorable_Code_Point, Bidi_Control,
//!   Variation_Selector), not a list kept here: `regex` is already a dependency, and its tables are
//!   generated from the UCD with each Unicode release. [`visible_lines`] is the same for plan output, which
//!   keeps its line breaks and tabs.
//! * [`OutsideText`] holds words a tool, an MCP server or a model wrote where Zamburak reports on them (an
//!   error message, the property names of an answer that does not fit its schema). It has no `Display`: the
//!   report, the JSON and the trace get [`OutsideText::redacted`] (what it is, its length and its digest);
//!   the terminal gets [`OutsideText::for_terminal`], escaped, cut, and marked as the outside party's words.

use std::sync::LazyLock;

use regex::Regex;

/// The code points [`visible`] escapes, as Unicode properties (see the module documentation).
const INVISIBLE: &str = r"[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\p{Bidi_Control}\p{Variation_Selector}]+";

/// The compiled [`INVISIBLE`] class; `None` only if this build's `regex` lacks the Unicode tables, and then
/// [`escape`] escapes everything but printable ASCII (fail closed).
static INVISIBLE_RE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(INVISIBLE).ok());

/// Most characters of an outside text the terminal shows; the rest is counted.
const SHOWN_CHARS: usize = 500;

/// Whether [`visible`] escapes `c`.
///
/// ```
/// use zamburak::text::is_invisible;
/// assert!(is_invisible('\u{1b}') && is_invisible('\u{202e}') && is_invisible('\u{e0041}'));
/// assert!(is_invisible('\u{3164}') && is_invisible('\u{fe0f}') && is_invisible('\u{e000}'));
/// assert!(!is_invisible('a') && !is_invisible(' ') && !is_invisible('é') && !is_invisible('€'));
/// ```
pub fn is_invisible(c: char) -> bool {
    if plain_ascii(c) {
        return false;
    }
    let mut buf = [0u8; 4];
    match INVISIBLE_RE.as_ref() {
        Some(re) => re.is_match(c.encode_utf8(&mut buf)),
        None => !(c == ' ' || c.is_ascii_graphic()),
    }
}

/// Text for a terminal line: every code point [`is_invisible`] says a person cannot see is written as
/// `\u{..}` (at least four hex digits), newlines included, so what the person reads is what the text holds.
///
/// ```
/// use zamburak::text::visible;
/// assert_eq!(visible("ok\u{1b}[2J\u{202e}"), "ok\\u{001b}[2J\\u{202e}");
/// assert_eq!(visible("a\nb"), "a\\u{000a}b");
/// assert_eq!(visible("bob@example.com"), "bob@example.com");
/// ```
pub fn visible(text: &str) -> String {
    escape(text, |_| false)
}

/// [`visible`] for plan output (`print`): line breaks and tabs stay, everything else a person cannot see is
/// escaped, so a printed mail cannot erase or forge the lines around it.
///
/// ```
/// use zamburak::text::visible_lines;
/// assert_eq!(visible_lines("hi\tthere\n\u{1b}[1A\r"), "hi\tthere\n\\u{001b}[1A\\u{000d}");
/// ```
pub fn visible_lines(text: &str) -> String {
    escape(text, |c| c == '\n' || c == '\t')
}

/// Outside text (a server's tool description, a schema's title, a constitution's line, a reason) for one line
/// of a comment, a docstring or a terminal: line breaks, tabs, every other control character and the Unicode
/// line and paragraph separators become spaces, runs of spaces one, it is cut after `max` of its characters
/// (marked `…`), and what a person cannot see is escaped as [`visible`] escapes it. Cut before escaping, so
/// an escape is never cut in half; no character it returns can end the line or comment it is written into.
///
/// ```
/// use zamburak::text::one_line;
/// assert_eq!(one_line("a\nb\r\u{2028}c\u{85}  d\t", 10), "a b c d");
/// assert_eq!(one_line("abcdef", 4), "abcd…");
/// assert_eq!(one_line("x\u{202e}y # ok", 40), "x\\u{202e}y # ok");
/// ```
pub fn one_line(text: &str, max: usize) -> String {
    let mut flat = String::with_capacity(text.len().min(max * 4));
    let mut space = false;
    let mut n = 0;
    for c in text.chars() {
        if c.is_whitespace() || c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
            space = n > 0;
            continue;
        }
        let width = if space { 2 } else { 1 };
        if n + width > max {
            flat.push('…');
            break;
        }
        if space {
            flat.push(' ');
            space = false;
        }
        flat.push(c);
        n += width;
    }
    visible(&flat)
}

/// Printable ASCII (space to `~`): no Unicode property [`INVISIBLE`] names holds it (controls are
/// `\0`–`\x1f` and DEL; the format, separator, private-use, unassigned, default-ignorable, bidi-control and
/// variation-selector code points are all outside ASCII), so it needs no regex. Most texts are only that:
/// answering them without the regex spares compiling it (about 2.5 M instructions, once per process;
/// issue #40). `tests` below checks the claim against the regex for all of ASCII.
fn plain_ascii(c: char) -> bool {
    c == ' ' || c.is_ascii_graphic()
}

fn escape(text: &str, keep: impl Fn(char) -> bool) -> String {
    if text
        .chars()
        .all(|c| plain_ascii(c) || (c.is_ascii() && keep(c)))
    {
        // Nothing to escape: every character is printable ASCII or one the caller keeps.
        return text.to_string();
    }
    escape_each(text, keep)
}

/// [`escape`] without its printable-ASCII shortcut.
fn escape_each(text: &str, keep: impl Fn(char) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    let hidden = |out: &mut String, c: char| {
        if keep(c) {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        }
    };
    match INVISIBLE_RE.as_ref() {
        Some(re) => {
            let mut last = 0;
            for m in re.find_iter(text) {
                out.push_str(&text[last..m.start()]);
                for c in m.as_str().chars() {
                    hidden(&mut out, c);
                }
                last = m.end();
            }
            out.push_str(&text[last..]);
        }
        None => {
            for c in text.chars() {
                if c == ' ' || c.is_ascii_graphic() {
                    out.push(c);
                } else {
                    hidden(&mut out, c);
                }
            }
        }
    }
    out
}

/// Words someone outside Zamburak wrote (an MCP server's error message, a tool's error text, the property
/// names of a result or an answer that does not fit its schema), kept apart from Zamburak's own words.
///
/// There is no `Display` and no `Serialize`, and `Debug` shows the redacted form: a report, the JSON or the
/// trace can only hold [`OutsideText::redacted`]. Only [`OutsideText::for_terminal`] shows the words, once,
/// escaped, to the person at the terminal.
///
/// ```
/// use zamburak::text::OutsideText;
/// let said = OutsideText::new("the server's error message", "no\u{1b}[2J\napproved by alice");
/// let redacted = said.redacted();
/// assert!(redacted.starts_with("<redacted: the server's error message, 24 characters, sha256:"), "{redacted}");
/// assert!(!redacted.contains("alice") && !format!("{said:?}").contains("alice"));
/// let shown = said.for_terminal();
/// assert_eq!(shown, "(shown here only) the server's error message: no\\u{001b}[2J\\u{000a}approved by alice");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct OutsideText {
    /// What the words are and whose, in Zamburak's words ("the server's error message").
    what: &'static str,
    text: String,
}

impl OutsideText {
    /// `text`, described as `what` (a phrase that names who wrote it).
    pub fn new(what: &'static str, text: impl Into<String>) -> OutsideText {
        OutsideText {
            what,
            text: text.into(),
        }
    }

    /// What the words are, in Zamburak's words.
    pub fn what(&self) -> &'static str {
        self.what
    }

    /// What a shareable file keeps: what the words are, how many characters, and their digest (so an
    /// auditor handed the words can check them), never the words.
    pub fn redacted(&self) -> String {
        format!(
            "<redacted: {}, {} characters, {}>",
            self.what,
            self.text.chars().count(),
            crate::digest::sha256_bytes(self.text.as_bytes())
        )
    }

    /// The words for the person at the terminal, on one line: marked as whose they are, every invisible
    /// code point escaped ([`visible`]), cut after a few hundred characters.
    pub fn for_terminal(&self) -> String {
        let n = self.text.chars().count();
        let head: String = self.text.chars().take(SHOWN_CHARS).collect();
        let more = if n > SHOWN_CHARS {
            format!("… ({} more characters)", n - SHOWN_CHARS)
        } else {
            String::new()
        };
        format!("(shown here only) {}: {}{more}", self.what, visible(&head))
    }
}

impl std::fmt::Debug for OutsideText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code point, in order, with whether the Unicode properties call it invisible (checked one by
    /// one, through a second regex per property, so a mistake in the combined class shows).
    fn by_property(c: char) -> bool {
        static EACH: LazyLock<Vec<Regex>> = LazyLock::new(|| {
            [
                r"\p{Cc}",
                r"\p{Cf}",
                r"\p{Zl}",
                r"\p{Zp}",
                r"\p{Co}",
                r"\p{Cn}",
                r"\p{Default_Ignorable_Code_Point}",
                r"\p{Bidi_Control}",
                r"\p{Variation_Selector}",
            ]
            .iter()
            .map(|p| Regex::new(&format!("^{p}$")).unwrap())
            .collect()
        });
        let mut buf = [0u8; 4];
        let s = c.encode_utf8(&mut buf);
        EACH.iter().any(|re| re.is_match(s))
    }

    /// The code points the issue found printed raw, and the ones the old hand list knew.
    const NAMED: &[(u32, u32)] = &[
        (0xE0000, 0xE007F),   // tags: a whole hidden sentence
        (0x061C, 0x061C),     // Arabic letter mark
        (0x2060, 0x2060),     // word joiner
        (0x00AD, 0x00AD),     // soft hyphen
        (0x180E, 0x180E),     // Mongolian vowel separator
        (0x3164, 0x3164),     // Hangul filler
        (0xFFF9, 0xFFFB),     // interlinear annotation
        (0x0000, 0x001F),     // C0
        (0x007F, 0x009F),     // DEL, C1
        (0x200B, 0x200F),     // zero-width, LRM, RLM
        (0x202A, 0x202E),     // bidi embeddings and overrides
        (0x2066, 0x2069),     // bidi isolates
        (0xFEFF, 0xFEFF),     // BOM
        (0xFE00, 0xFE0F),     // variation selectors
        (0xE0100, 0xE01EF),   // variation selectors supplement
        (0x2028, 0x2029),     // line and paragraph separators
        (0x115F, 0x1160),     // Hangul choseong and jungseong fillers
        (0xFFA0, 0xFFA0),     // halfwidth Hangul filler
        (0x034F, 0x034F),     // combining grapheme joiner
        (0xE000, 0xE000),     // private use
        (0x10FFFF, 0x10FFFF), // noncharacter
    ];

    /// The shortcut for printable ASCII gives what the regex gives, for every pair of ASCII characters.
    #[test]
    fn the_ascii_shortcut_agrees_with_the_regex() {
        let keep_lines = |c: char| c == '\n' || c == '\t';
        for a in 0..128u8 {
            for b in 0..128u8 {
                let text = format!("x{}{}y", a as char, b as char);
                assert_eq!(
                    escape(&text, |_| false),
                    escape_each(&text, |_| false),
                    "{text:?}"
                );
                assert_eq!(
                    escape(&text, keep_lines),
                    escape_each(&text, keep_lines),
                    "{text:?}"
                );
            }
        }
    }

    #[test]
    fn every_code_point_the_properties_call_invisible_is_escaped_and_no_other() {
        let mut escaped = 0usize;
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let expect = by_property(c);
            assert_eq!(is_invisible(c), expect, "U+{:04X}", c as u32);
            let shown = visible(&c.to_string());
            if expect {
                escaped += 1;
                assert_eq!(shown, format!("\\u{{{:04x}}}", c as u32));
            } else {
                assert_eq!(shown, c.to_string(), "U+{:04X}", c as u32);
            }
        }
        // Sanity: the set is large (private use and unassigned planes) but leaves most assigned text alone.
        assert!(escaped > 900_000, "{escaped}");
        for &(lo, hi) in NAMED {
            for c in (lo..=hi).filter_map(char::from_u32) {
                assert!(is_invisible(c), "U+{:04X}", c as u32);
            }
        }
    }

    #[test]
    fn text_reads_the_same_except_for_escapes() {
        let attack = "ok\u{1b}[8mhidden\u{9b}2J\u{202e}txt.exe\u{200b}\u{e0041}\u{e0042}";
        let shown = visible(attack);
        assert_eq!(
            shown,
            "ok\\u{001b}[8mhidden\\u{009b}2J\\u{202e}txt.exe\\u{200b}\\u{e0041}\\u{e0042}"
        );
        assert!(!shown.chars().any(is_invisible));
        for plain in ["bob@example.com", "Grüße, 東京 — €5 ✓", "", "a b\\c"] {
            assert_eq!(visible(plain), plain);
            assert_eq!(visible_lines(plain), plain);
        }
        assert_eq!(visible_lines("a\r\nb\u{2028}"), "a\\u{000d}\nb\\u{2028}");
    }

    #[test]
    fn outside_text_is_cut_on_the_terminal_and_never_shown_elsewhere() {
        let long = OutsideText::new("the tool's error text", "x".repeat(2000));
        let shown = long.for_terminal();
        assert!(shown.ends_with("… (1500 more characters)"), "{shown}");
        assert_eq!(
            long.redacted(),
            format!(
                "<redacted: the tool's error text, 2000 characters, {}>",
                crate::digest::sha256_bytes("x".repeat(2000).as_bytes())
            )
        );
        assert_eq!(format!("{long:?}"), long.redacted());
    }
}
