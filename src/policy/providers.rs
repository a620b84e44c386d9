//! The policy's `providers:` section: LLM providers a `query_llm`-style tool (`source: builtin.llm.NAME`)
//! sends prose to. A provider is a principal (`reader`): it may be sent only what it may read.
//!
//! Only the description lives here; the adapter that talks to a provider is `tools::llm`.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Default time one answer may take.
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;
/// Default largest request body (prompt, data and schema) sent.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 64 * 1024;
/// Default largest answer asked for, in tokens.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u64 = 1024;

/// How Zamburak talks to the provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// Any OpenAI-compatible `POST {base_url}/chat/completions` (OpenAI, vLLM, llama.cpp server, Ollama), with
    /// structured output (`response_format: json_schema`).
    OpenaiChat,
    /// Answers from a JSON file keyed by the sha256 of the request (offline tests).
    Fixture,
}

/// One LLM provider.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderSpec {
    pub kind: ProviderKind,
    /// The principal the provider reads as, such as `llm:local`. Data goes to it only when it is a reader.
    pub reader: String,
    /// `openai_chat`: the API base, such as `http://127.0.0.1:8080/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// `openai_chat`: the model name sent with each request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `openai_chat`: the environment variable holding the API key (never the key itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// `fixture`: the answers file. Relative to the policy file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixtures: Option<PathBuf>,
    /// Milliseconds one answer may take (default 60000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Largest request body in bytes (default 65536); a larger one is refused before anything is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_input_bytes: Option<u64>,
    /// Largest answer asked for, in tokens (default 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    /// The provider keeps what it was sent (a conversation, a thread, a memory), whatever the request asks:
    /// then each of its answers carries the labels of everything the run sent it before, as well as the
    /// call's own (docs/semantics.md, "The quarantined model is stateless"). Default false: Zamburak sends
    /// every request on its own and asks the provider not to store it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stateful: bool,
}

impl ProviderSpec {
    pub fn timeout_ms(&self) -> u64 {
        self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS)
    }
    pub fn max_input_bytes(&self) -> u64 {
        self.max_input_bytes.unwrap_or(DEFAULT_MAX_INPUT_BYTES)
    }
    pub fn max_output_tokens(&self) -> u64 {
        self.max_output_tokens.unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS)
    }
}

/// The name `readers_must_include` uses for the provider of a `builtin.llm.NAME` tool.
pub const PROVIDER_RECIPIENT: &str = "provider";
