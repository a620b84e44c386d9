//! Values the person remembered when approving a claim (docs/semantics.md, "Remembered values"): the
//! store ([`store`]), which known value a new one looks like ([`lookalike`]), and what a claim tells the
//! person of each consequential value ([`Novelty`]).

pub mod lookalike;
pub mod store;

use serde::{Deserialize, Serialize};

/// What a claim says of one consequential value (an argument with a `known` role, or one element of it):
/// known, new, or like a known one. Shown to the person only (the terminal, the queue, the form); the trace
/// records the status word alone ([`Novelty::status_word`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Novelty {
    pub arg: String,
    /// The element of a list, from 0; `None` for the whole value.
    pub index: Option<usize>,
    /// The value in the form it would be remembered in.
    pub value: String,
    /// `known`, `new` or `looks_like`.
    pub status: String,
    /// For `known`: who remembered it and on which day; for `looks_like`: the known value it resembles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub like: Option<String>,
    /// For `looks_like`: why, and the difference marked (`[value's→known's]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marked: Option<String>,
    /// The roles this value would be remembered for.
    pub roles: Vec<String>,
}

impl Novelty {
    /// Whether a person glancing at the claim should stop: a value never approved, or one like a known one.
    pub fn is_new(&self) -> bool {
        self.status != "known"
    }

    /// The line a claim shows for it, the same on every surface: `known (remembered by alice on
    /// 2026-12-02)`, `NEW — never approved`, or `looks like a known value: "…" (mixed scripts) [a→b]`.
    pub fn line(&self) -> String {
        let text = |s: &Option<String>| crate::text::visible(s.as_deref().unwrap_or(""));
        match self.status.as_str() {
            "known" => format!(
                "known (remembered by {} on {})",
                text(&self.by),
                text(&self.on)
            ),
            "looks_like" => format!(
                "LOOKS LIKE a known value, but is not it: {} ({}); differs: {}",
                serde_json::Value::String(self.like.clone().unwrap_or_default()),
                text(&self.why),
                text(&self.marked)
            ),
            _ => "NEW — never approved".to_string(),
        }
    }

    /// `ARG` or `ARG[i]`, as the claim names the value.
    pub fn place(&self) -> String {
        match self.index {
            Some(i) => format!("{}[{i}]", self.arg),
            None => self.arg.clone(),
        }
    }
}
