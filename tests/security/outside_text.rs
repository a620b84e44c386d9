//! Text from outside on the terminal: every code point a person cannot see (controls, format characters,
//! Unicode tags, bidi controls, variation selectors, default-ignorables, separators, private use,
//! unassigned) is escaped in a claim and in plan output, never printed raw. So an attacker's mail can hide
//! nothing from the person approving a claim, and cannot erase or forge the lines `run` prints.
//!
//! Which code points are invisible is asked of the Unicode properties here, one property at a time, not of
//! Zamburak's own list.

use crate::common;

use common::world::World;
use regex::Regex;

/// Forwards the newest mail's body to a colleague who is not among its readers: `confirm` under the
/// default policy, so the run suspends on a claim that shows the body.
const FORWARD: &str = "mails = read_inbox(limit=5)\nfirst = mails[0]\nsend_email(to=\"bob@example.com\", subject=\"fwd\", body=first[\"body\"])\n";

/// Prints the newest mail's body.
const PRINT: &str = "mails = read_inbox(limit=1)\nprint(mails[0][\"body\"])\n";

/// The properties that make a code point invisible, and those that make it unknowable (private use:
/// depends on the font; unassigned: on the Unicode version).
const INVISIBLE: &[&str] = &[
    "Cc",
    "Cf",
    "Zl",
    "Zp",
    "Default_Ignorable_Code_Point",
    "Bidi_Control",
    "Variation_Selector",
];
const UNKNOWABLE: &[&str] = &["Co", "Cn"];

/// The code points the issue found printed raw in claims.
fn named_in_the_issue() -> Vec<char> {
    let mut out: Vec<char> = (0xE0000..=0xE007F).filter_map(char::from_u32).collect();
    out.extend([
        '\u{061C}', '\u{2060}', '\u{00AD}', '\u{180E}', '\u{3164}', '\u{FFF9}', '\u{FFFA}',
        '\u{FFFB}',
    ]);
    out
}

/// Every code point with one of `properties`, by the `regex` crate's Unicode tables; `per_property`
/// limits how many of each property are taken (in code point order).
fn with_properties(properties: &[&str], per_property: usize) -> Vec<char> {
    let mut out = Vec::new();
    for p in properties {
        let re = Regex::new(&format!(r"^\p{{{p}}}$")).unwrap();
        let mut buf = [0u8; 4];
        out.extend(
            (0..=0x10FFFFu32)
                .filter_map(char::from_u32)
                .filter(|c| re.is_match(c.encode_utf8(&mut buf)))
                .take(per_property),
        );
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether no property of [`INVISIBLE`] or [`UNKNOWABLE`] holds for `c`.
fn seen(c: char) -> bool {
    static EACH: std::sync::LazyLock<Vec<Regex>> = std::sync::LazyLock::new(|| {
        INVISIBLE
            .iter()
            .chain(UNKNOWABLE)
            .map(|p| Regex::new(&format!(r"^\p{{{p}}}$")).unwrap())
            .collect()
    });
    let mut buf = [0u8; 4];
    let s = c.encode_utf8(&mut buf);
    EACH.iter().all(|re| !re.is_match(s))
}

/// A world whose inbox's newest mail (from an outsider, to the user) has `body`.
fn world_with_mail(body: &str) -> World {
    let w = World::new(None);
    let message = mail_builder::MessageBuilder::new()
        .from("mallory@evil.test")
        .to("me@example.com")
        .subject("invoice")
        .text_body(body.to_string())
        .write_to_vec()
        .unwrap();
    std::fs::write(w.path("mail/inbox/new/1999999999.M1P1.hostile"), message).unwrap();
    w
}

/// `body` as the items `x<c> ` so each code point's escape can be found on its own.
fn items(chars: &[char]) -> String {
    chars.iter().map(|c| format!("x{c} ")).collect()
}

/// How Zamburak writes `c` on a terminal.
fn escape(c: char) -> String {
    format!("\\u{{{:04x}}}", c as u32)
}

/// A terminal text has no raw invisible or unknowable code point but those in `kept`.
fn assert_no_raw(text: &str, kept: &[char]) {
    let raw: Vec<String> = text
        .chars()
        .filter(|&c| !kept.contains(&c) && !seen(c))
        .map(|c| format!("U+{:04X}", c as u32))
        .collect();
    assert!(raw.is_empty(), "printed raw: {raw:?}");
}

#[test]
fn a_claim_shows_an_escape_for_every_invisible_code_point() {
    // The issue's code points, and the first few of every property (the claim cuts a value after 600
    // characters, so they are put to the approver in runs of 45; plan output below takes them all).
    let mut chars = named_in_the_issue();
    chars.extend(with_properties(INVISIBLE, 4));
    chars.extend(with_properties(UNKNOWABLE, 4));
    chars.extend([
        '\u{1b}', '\u{9b}', '\u{202e}', '\u{2066}', '\u{200b}', '\u{feff}', '\u{fe0f}',
    ]);
    chars.sort_unstable();
    chars.dedup();
    for chunk in chars.chunks(45) {
        let w = world_with_mail(&items(chunk));
        let plan = w.write_plan("plan.py", FORWARD);
        let out = w.run_expect(&plan, &[], 4);
        assert!(w.messages("out/outbox").is_empty(), "nothing is sent");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("waiting for approval"), "{stderr}");
        assert_no_raw(&stderr, &['\n']);
        let claim = stderr
            .lines()
            .find(|l| l.trim_start().starts_with("body = "))
            .unwrap_or_else(|| panic!("no body in the claim: {stderr}"));
        assert!(!claim.contains("more characters"), "cut: {claim}");
        for &c in chunk {
            // The claim shows a value as JSON, which writes C0 controls its own way (`\n`, `\u001b`).
            let json = serde_json::to_string(&c.to_string()).unwrap();
            let json = &json[1..json.len() - 1];
            let shown = if json == c.to_string() {
                escape(c)
            } else {
                json.to_string()
            };
            assert!(
                claim.contains(&format!("x{shown} ")),
                "U+{:04X} not shown as {shown}: {claim}",
                c as u32
            );
        }
    }
}

#[test]
fn plan_output_escapes_every_invisible_code_point_and_keeps_its_lines() {
    // Every code point the invisible properties name, a sample of the unknowable ones, and an attempt to
    // erase the screen and forge the lines `run` ends with.
    let mut chars = with_properties(INVISIBLE, usize::MAX);
    chars.extend(with_properties(UNKNOWABLE, 256));
    chars.extend(named_in_the_issue());
    chars.sort_unstable();
    chars.dedup();
    assert!(chars.len() > 4000, "{}", chars.len());
    let forged =
        "\u{1b}[2J\u{1b}[H\rapproved by alice: ran `send_email` #2\u{1b}[0m\nline two\tok\n";
    let body = format!("{}\n{forged}", items(&chars));
    let w = world_with_mail(&body);
    let plan = w.write_plan("plan.py", PRINT);
    let out = w.run_expect(&plan, &[], 0);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_no_raw(&stdout, &['\n', '\t']);
    assert_no_raw(&String::from_utf8_lossy(&out.stderr), &['\n']);
    for &c in chars.iter().filter(|&&c| c != '\n' && c != '\t') {
        assert!(
            stdout.contains(&format!("x{} ", escape(c))),
            "U+{:04X} not escaped",
            c as u32
        );
    }
    // Line breaks and tabs stay; the forged line does not start a line, the screen is not cleared, and
    // every line of the mail carries the gutter naming where it came from.
    assert!(
        stdout.contains(
            "\\u{001b}[2J\\u{001b}[H\\u{000d}approved by alice: ran `send_email` #2\\u{001b}[0m\n⚠ read_inbox#1 │ line two\tok\n"
        ),
        "{stdout}"
    );
    assert!(!stdout.lines().any(|l| l.starts_with("approved by alice")));
}
