//! Lint's machine-applicable fixes, applied the way a scripted repair loop applies them: read each
//! diagnostic's `fix` from `lint --format json`, keep the fixes whose edits do not overlap one already chosen
//! (the first in diagnostic order wins), and apply every chosen edit from the end of the file backwards so
//! that earlier byte offsets stay valid.
//!
//! The contract (docs/lint.md, "Repair loop: measured"): `fix` is `null` or
//! `{"message", "applicability": "safe"|"unsafe", "edits": [{"start", "end", "line", "column", "end_line",
//! "end_column", "content"}]}`, with `start`/`end` UTF-8 byte offsets into the plan (end exclusive) and
//! 1-based lines and character columns. A missing `fix` key reads as `null`. A fix that breaks the contract
//! (offsets outside the file or inside a character, positions that disagree with the offsets, edits of one
//! fix that overlap) is an `Err`: the repair harness reports it as a lint bug instead of guessing.
#![allow(
    dead_code,
    reason = "each test binary uses a different part of `common`"
)]

use serde_json::Value;

/// One replacement: bytes `start..end` of the plan become `content`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub content: String,
}

/// The fix of one diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// The diagnostic's code, to say which fixes a round applied.
    pub code: String,
    pub message: String,
    pub applicability: String,
    pub edits: Vec<Edit>,
}

/// The fixes of a lint JSON document, in diagnostic order, each checked against `plan` (the text linted).
pub fn fixes_of(doc: &Value, plan: &str) -> Result<Vec<Fix>, String> {
    let diagnostics = doc["diagnostics"]
        .as_array()
        .ok_or_else(|| format!("lint JSON without a `diagnostics` array: {doc}"))?;
    let mut fixes = Vec::new();
    for d in diagnostics {
        let fix = match d.get("fix") {
            None | Some(Value::Null) => continue,
            Some(f) => f,
        };
        let code = d["code"].as_str().unwrap_or("?").to_string();
        let bad = |what: &str| format!("{code}: fix {what}: {fix}");
        let message = fix["message"]
            .as_str()
            .ok_or_else(|| bad("without a `message`"))?;
        let applicability = fix["applicability"]
            .as_str()
            .filter(|a| ["safe", "unsafe"].contains(a))
            .ok_or_else(|| bad("whose `applicability` is not \"safe\" or \"unsafe\""))?;
        let mut edits = Vec::new();
        for e in fix["edits"]
            .as_array()
            .ok_or_else(|| bad("without an `edits` array"))?
        {
            edits.push(edit_of(e, plan).map_err(|m| bad(&m))?);
        }
        if edits.is_empty() {
            return Err(bad("with no edits"));
        }
        for (i, a) in edits.iter().enumerate() {
            if edits[i + 1..].iter().any(|b| overlaps(a, b)) {
                return Err(bad("whose own edits overlap"));
            }
        }
        fixes.push(Fix {
            code,
            message: message.to_string(),
            applicability: applicability.to_string(),
            edits,
        });
    }
    Ok(fixes)
}

/// One edit, checked: offsets inside `plan` on character boundaries, and the line and column fields naming
/// the same places as the offsets.
fn edit_of(e: &Value, plan: &str) -> Result<Edit, String> {
    let num = |k: &str| {
        e[k].as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| format!("edit without a numeric `{k}`"))
    };
    let (start, end) = (num("start")?, num("end")?);
    let content = e["content"]
        .as_str()
        .ok_or("edit without a string `content`")?
        .to_string();
    if start > end || end > plan.len() {
        return Err(format!(
            "edit {start}..{end} outside the plan ({} bytes)",
            plan.len()
        ));
    }
    if !plan.is_char_boundary(start) || !plan.is_char_boundary(end) {
        return Err(format!("edit {start}..{end} cuts a character"));
    }
    for (offset, line_key, column_key) in
        [(start, "line", "column"), (end, "end_line", "end_column")]
    {
        let want = position(plan, offset);
        let got = (num(line_key)?, num(column_key)?);
        if got != want {
            return Err(format!(
                "edit {start}..{end}: `{line_key}`/`{column_key}` say {got:?}, the offset {offset} is at {want:?}"
            ));
        }
    }
    Ok(Edit {
        start,
        end,
        content,
    })
}

/// The 1-based line and character column of byte `offset` in `text`.
pub fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// Whether two edits cannot both be applied unambiguously: their ranges share a byte, or they start at the
/// same place and one of them inserts there (which text comes first would be a guess).
pub fn overlaps(a: &Edit, b: &Edit) -> bool {
    (a.start < b.end && b.start < a.end)
        || (a.start == b.start && (a.start == a.end || b.start == b.end))
}

/// The fixes to apply in one round: each fix in order, unless one of its edits overlaps an edit of a fix
/// already chosen. Returns the chosen fixes and the dropped ones.
pub fn choose(fixes: Vec<Fix>) -> (Vec<Fix>, Vec<Fix>) {
    let mut chosen: Vec<Fix> = Vec::new();
    let mut dropped = Vec::new();
    for fix in fixes {
        let clash = fix.edits.iter().any(|e| {
            chosen
                .iter()
                .flat_map(|c| c.edits.iter())
                .any(|c| overlaps(e, c))
        });
        if clash {
            dropped.push(fix);
        } else {
            chosen.push(fix);
        }
    }
    (chosen, dropped)
}

/// `plan` with every edit of `fixes` applied, from the end of the file backwards. The fixes must not overlap
/// (what [`choose`] returns) and their offsets must be valid for `plan` (what [`fixes_of`] checks).
pub fn apply(plan: &str, fixes: &[Fix]) -> String {
    let mut edits: Vec<&Edit> = fixes.iter().flat_map(|f| f.edits.iter()).collect();
    // Latest start first. No two edits share a start ([`overlaps`] refuses that), and an edit that ends
    // where the next one starts is applied after it, so every offset still names the original text.
    edits.sort_by_key(|e| std::cmp::Reverse(e.start));
    let mut text = plan.to_string();
    for e in edits {
        text.replace_range(e.start..e.end, &e.content);
    }
    text
}
