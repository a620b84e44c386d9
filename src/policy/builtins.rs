//! Configuration of the built-in adapters and verifiers, as it appears in a policy file.
//!
//! The policy model embeds these types (`builtins:` and each entry of `verifiers:`); the adapters in
//! `src/tools/` read them. Relative paths are resolved against the policy file's directory by the policy loader.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where the built-in tools find the user's data. Each part is optional: a tool whose part is missing
/// fails with a clear error when called.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuiltinsConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mail: Option<MailConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<FilesConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web: Option<WebConfig>,
}

/// Mail over Maildir folders (the format of mbsync, offlineimap and mutt).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailConfig {
    /// The Maildir read by list/get/search (has `cur/`, `new/`, `tmp/`).
    pub maildir: PathBuf,
    /// The Maildir that `send` delivers into.
    pub outbox: PathBuf,
    /// The Maildir that `send` writes into when the decision is `draft`.
    pub drafts: PathBuf,
}

/// A sandboxed directory; nothing outside it can be read or written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilesConfig {
    pub root: PathBuf,
}

/// HTTP GET of allow-listed URLs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebConfig {
    /// URL prefixes that may be fetched, e.g. `https://docs.example.com/`.
    pub allow: Vec<String>,
    /// Per-request timeout. Default 5000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Largest body returned, in bytes. Default 1 MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
}

/// A deterministic host verifier declared in the policy. It returns its input unchanged with `mints` added to
/// the label, or stops the plan with an error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum VerifierSpec {
    /// An e-mail address matching one of the patterns (`*@example.com`, `boss@example.com`).
    EmailAllowlist { allow: Vec<String>, mints: String },
    /// A URL whose scheme and host are listed and, when `paths` is given, whose path is one of them or
    /// below one on a segment boundary. Compared after normalisation (policy::url_rule). Without `paths`
    /// a verified URL may reach any path of an allowed host.
    UrlAllowlist {
        schemes: Vec<String>,
        hosts: Vec<String>,
        /// Path prefixes such as `/docs/`; absent: any path.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        paths: Option<Vec<String>>,
        mints: String,
    },
    /// A number (int or float) within `[min, max]`.
    NumberRange { min: f64, max: f64, mints: String },
    /// A string equal to one of `values`.
    OneOf { values: Vec<String>, mints: String },
}

impl VerifierSpec {
    /// The verified kind this verifier adds.
    pub fn mints(&self) -> &str {
        match self {
            VerifierSpec::EmailAllowlist { mints, .. }
            | VerifierSpec::UrlAllowlist { mints, .. }
            | VerifierSpec::NumberRange { mints, .. }
            | VerifierSpec::OneOf { mints, .. } => mints,
        }
    }
}
