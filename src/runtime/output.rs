//! What a plan printed, read back as labelled segments. The prelude's `print` writes each call as one frame
//! (`NUL label NUL length NUL text`, the length in characters); this module owns that format's reading side.
//! Text outside a frame, or a frame that does not parse, is a segment whose label is unknown (fail closed).

use num_bigint::BigInt;

use crate::label::Packed;
use crate::runtime::boxing::packed_of;

/// The segments of `printed`, in order: each with its label and text.
pub fn segments(printed: &str) -> Vec<(Packed, String)> {
    let mut out = Vec::new();
    let mut rest = printed;
    while !rest.is_empty() {
        match frame(rest) {
            Some((label, text, after)) => {
                out.push((label, text.to_string()));
                rest = after;
            }
            None => {
                // Not a frame: everything up to the next frame start is of unknown origin.
                let cut = rest
                    .char_indices()
                    .skip(1)
                    .find(|(_, c)| *c == '\0')
                    .map_or(rest.len(), |(i, _)| i);
                out.push((Packed::UNKNOWN, rest[..cut].to_string()));
                rest = &rest[cut..];
            }
        }
    }
    out
}

/// `text` as the person is shown it when the plan did not write it: every line starts with a gutter naming
/// where it came from (`⚠ read_inbox#1 │ `), so data is never passed off as the agent's own words.
pub fn marked(text: &str, sources: &[String]) -> String {
    let from = if sources.is_empty() {
        "unknown origin".to_string()
    } else {
        sources.join(", ")
    };
    let gutter = format!("⚠ {from} │ ");
    let mut out = String::with_capacity(text.len() + gutter.len());
    for line in text.split_inclusive('\n') {
        out.push_str(&gutter);
        out.push_str(line);
    }
    out
}

/// One frame at the start of `s`: its label, its text and what follows it.
fn frame(s: &str) -> Option<(Packed, &str, &str)> {
    let s = s.strip_prefix('\0')?;
    let (label, s) = s.split_once('\0')?;
    let (len, s) = s.split_once('\0')?;
    let len: usize = len.parse().ok()?;
    let end = s.char_indices().nth(len).map_or(s.len(), |(i, _)| i);
    if s[..end].chars().count() != len {
        return None;
    }
    let label = parse_label(label)?;
    Some((label, &s[..end], &s[end..]))
}

/// A label as the prelude writes it: a non-negative decimal integer, wide labels as big integers.
fn parse_label(text: &str) -> Option<Packed> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let obj = match text.parse::<i64>() {
        Ok(n) => monty_types::MontyObject::Int(n),
        Err(_) => monty_types::MontyObject::BigInt(BigInt::parse_bytes(text.as_bytes(), 10)?),
    };
    packed_of(&obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_text_names_its_sources_on_every_line() {
        let m = marked("a\nb\n", &["read_inbox#1".to_string()]);
        assert_eq!(m, "⚠ read_inbox#1 │ a\n⚠ read_inbox#1 │ b\n");
        assert_eq!(marked("x", &[]), "⚠ unknown origin │ x");
    }

    #[test]
    fn frames_read_back_and_anything_else_is_unknown() {
        let lit = Packed::LITERAL.bits();
        let printed = format!("\u{0}{lit}\u{0}3\u{0}a\u{0}b\u{0}{lit}\u{0}2\u{0}é\n");
        let segs = segments(&printed);
        assert_eq!(segs.len(), 2, "{segs:?}");
        assert_eq!(segs[0].1, "a\0b");
        assert_eq!(segs[1].1, "é\n");
        assert!(!segs[0].0.is_unknown());
        // Text without a frame, a bad length and a bad label: unknown, never dropped.
        for bad in [
            "plain",
            "\u{0}x\u{0}1\u{0}a",
            "\u{0}5\u{0}9\u{0}short",
            "é\u{0}",
        ] {
            let segs = segments(bad);
            assert!(segs.iter().all(|(l, _)| l.is_unknown()), "{bad:?}");
            let all: String = segs.iter().map(|(_, t)| t.as_str()).collect();
            assert_eq!(all, bad);
        }
    }
}
