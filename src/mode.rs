//! The propagation mode (docs/semantics.md, "Control context and modes"): one enum for the policy file's
//! `mode:`, the `--mode` flag, the lowering and the lint.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the control context propagates.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Values assigned, stored, returned or mutated under a control context join it; not-taken branches.
    Strict,
    /// The control context is computed and checked at tool calls, but never joined into values.
    Normal,
}

impl Mode {
    /// `strict` or `normal`, as the policy file and the trace write it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Strict => "strict",
            Mode::Normal => "normal",
        }
    }
}
