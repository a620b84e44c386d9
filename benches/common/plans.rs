//! The workloads the benchmarks share: the plans and the tool results they are answered with.
#![allow(dead_code, reason = "each bench uses its own subset")]

use monty_types::MontyObject;
use serde_json::{Value, json};

/// A representative agent plan (55 lines): read mail, normalise, count, group, summarise, report.
pub const AGENT_PLAN: &str = r#"
def normalize(addr):
    return addr.strip().lower()

def summarize(e):
    words = e["body"].split()
    short = " ".join(words[:8])
    if len(words) > 8:
        short = short + "..."
    return f"{normalize(e['from'])}: {e['subject']} ({len(words)} words) {short}"

emails = get_emails(limit=20)
by_sender = {}
urgent = []
total_words = 0
for e in emails:
    sender = normalize(e["from"])
    ids = by_sender.get(sender, [])
    ids.append(e["id"])
    by_sender[sender] = ids
    n = len(e["body"].split())
    total_words += n
    if "urgent" in e["subject"].lower():
        urgent.append(summarize(e))

senders = sorted(by_sender.keys())
lines = []
for s in senders:
    lines.append(f"{s}: {len(by_sender[s])} messages")

report = "\n".join(lines)
if len(urgent) > 0:
    report = report + "\n\nUrgent:\n" + "\n".join(urgent)
else:
    report = report + "\n\nNothing urgent."

stats = {"senders": len(senders), "words": total_words, "urgent": len(urgent)}
average = total_words // max(len(emails), 1)
top = max(senders, key=lambda s: len(by_sender[s])) if senders else ""
report = report + f"\n\n{stats['senders']} senders, {average} words on average, most mail from {top}"
send_email(to="me@example.com", subject="Inbox report", body=report)
"#;

pub const LOOP_PLAN: &str = "total = 0\nparts = []\nfor i in range(100000):\n    total = total + i * 2\n    if i % 1000 == 0:\n        parts.append(str(i))\nout = ','.join(parts)\n";

pub const WORDS_PLAN: &str = "doc = get_text(name=\"big\")\ncounts = {}\nfor w in doc.split():\n    k = w.strip('.,').lower()\n    counts[k] = counts.get(k, 0) + 1\ntop = sorted(counts.items(), key=lambda kv: kv[1], reverse=True)[:10]\ntotal = sum([c for k, c in top])\n";

/// 500 tool calls, each result labelled with its own call id as the runtime labels it: from call 20 on the
/// labels are big ints inside Monty (exact lineage), and the final join names all 500 calls.
pub const CALLS_PLAN: &str = "parts = []\nfor i in range(500):\n    parts.append(get_text(name=\"n\"))\nout = ''.join(parts)\nsend_email(to=\"me@example.com\", subject=\"s\", body=out)\n";

/// `len` of the 20-mail list, 100 times: the structure label alone (#19), where `len` took the deep join
/// over every field of every mail before (180 µs a call then).
pub const LEN_PLAN: &str =
    "emails = get_emails(limit=20)\nn = 0\nfor i in range(100):\n    n = n + len(emails)\n";

pub fn emails() -> Value {
    Value::Array(
        (0..20)
            .map(|i| {
                json!({"id": format!("{i}"), "from": format!(" Sender{}@Example.com ", i % 5),
                       "to": ["me@example.com"], "cc": [], "date": "2026-11-01",
                       "subject": if i % 4 == 0 { format!("URGENT item {i}") } else { format!("item {i}") },
                       "body": "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor"})
            })
            .collect(),
    )
}

pub fn big_text() -> Value {
    let words = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "Iota.", "kappa,",
    ];
    Value::String(
        (0..100_000)
            .map(|i| words[(i * 7 + i / 3) % words.len()])
            .collect::<Vec<_>>()
            .join(" "),
    )
}

pub fn to_monty(v: &Value) -> MontyObject {
    match v {
        Value::Null => MontyObject::None,
        Value::Bool(b) => MontyObject::Bool(*b),
        Value::Number(n) => n.as_i64().map_or(
            MontyObject::Float(n.as_f64().unwrap_or(0.0)),
            MontyObject::Int,
        ),
        Value::String(s) => MontyObject::String(s.clone()),
        Value::Array(xs) => MontyObject::List(xs.iter().map(to_monty).collect()),
        Value::Object(m) => MontyObject::dict(
            m.iter()
                .map(|(k, v)| (MontyObject::String(k.clone()), to_monty(v)))
                .collect::<Vec<_>>(),
        ),
    }
}
