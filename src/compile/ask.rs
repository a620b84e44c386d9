//! One request of `policy compile` to the drafting provider, and the checks its answer passes before
//! anything reads it. The provider client is `query_llm`'s ([`crate::tools::llm::post_chat`]), with bounds
//! of its own: a policy draft is larger than an extracted value, but still bounded. The answer is
//! untrusted input: it is read strictly (no repeated key), checked against the step's JSON Schema, then
//! deserialized into the step's type; any failure is an error that names the step and the place, never
//! quoting the answer.

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::policy::providers::{ProviderKind, ProviderSpec};
use crate::tools::answer::{self, Refusal};
use crate::tools::llm::{self, Bounds, Chat, LlmError};

/// Largest request sent to the drafter (constitution, tool catalogue, base policy, failures to repair).
pub const MAX_REQUEST_BYTES: u64 = 512 * 1024;
/// Largest response body read from the drafter.
pub const MAX_RESPONSE_BYTES: u64 = 512 * 1024;
/// Tokens the drafter may answer with.
pub const MAX_OUTPUT_TOKENS: u64 = 16_384;

/// Why a step got no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error("the provider gave no answer to step `{step}`: {source}")]
    Provider {
        step: &'static str,
        #[source]
        source: LlmError,
    },
    #[error("the provider's answer to step `{step}` is unusable: {why}")]
    Unusable { step: &'static str, why: String },
}

const SYSTEM: &str = "You help a user write a security policy for Zamburak, a runtime that checks every \
tool call an AI agent's plan makes. Follow the user's constitution exactly; when in doubt, be stricter. \
Answer only in the JSON format you are given.";

/// Sends `user` for `step` to `provider` and returns the answer as `T`, checked against `schema`.
pub fn ask<T: DeserializeOwned>(
    provider: &ProviderSpec,
    step: &'static str,
    user: &str,
    schema: &Value,
) -> Result<T, AskError> {
    let failed = |source| AskError::Provider { step, source };
    let content = match provider.kind {
        ProviderKind::OpenaiChat => {
            let body = llm::chat_body(
                provider,
                &Chat {
                    system: SYSTEM,
                    user,
                    schema_name: step,
                    schema,
                    max_tokens: MAX_OUTPUT_TOKENS,
                },
            );
            let bounds = Bounds {
                max_request_bytes: MAX_REQUEST_BYTES,
                max_response_bytes: MAX_RESPONSE_BYTES,
            };
            llm::post_chat(provider, &body, bounds).map_err(failed)?
        }
        // The key covers the whole request, as for query_llm's fixtures: the step, its text and schema.
        ProviderKind::Fixture => {
            let key = llm::fixture_key(user, &json!(step), schema);
            llm::fixture_reply(provider, &key).map_err(failed)?
        }
    };
    read(step, &content, schema)
}

/// Reads an answer's content: strict JSON, the step's schema, then its type.
pub fn read<T: DeserializeOwned>(
    step: &'static str,
    content: &str,
    schema: &Value,
) -> Result<T, AskError> {
    let unusable = |why: String| AskError::Unusable { step, why };
    if content.len() as u64 > MAX_RESPONSE_BYTES {
        return Err(unusable(format!(
            "it is over {} KiB",
            MAX_RESPONSE_BYTES >> 10
        )));
    }
    let value = answer::parse(content).map_err(|r| {
        unusable(match r {
            Refusal::NotJson => "it is not JSON".into(),
            Refusal::Duplicate => "it repeats a key".into(),
            Refusal::Shape(why) => why,
        })
    })?;
    crate::mcp::schema::check(schema, &value, "").map_err(|e| {
        unusable(format!(
            "it does not match the step's schema: {}",
            e.message()
        ))
    })?;
    serde_json::from_value(value)
        .map_err(|e| unusable(format!("it does not have the step's shape: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Two {
        #[expect(dead_code, reason = "read only to check the shape")]
        a: String,
    }

    #[test]
    fn unusable_answers_say_why_without_quoting() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false});
        for (content, why) in [
            ("not json at all SECRETWORD", "not JSON"),
            ("{\"a\": \"x\", \"a\": \"y\"}", "repeats a key"),
            ("{\"a\": 3}", "schema"),
            ("{\"SECRETWORD\": 3, \"a\": \"x\"}", "schema"),
            ("[1, 2]", "schema"),
        ] {
            let e = read::<Two>("roles", content, &schema)
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "{content}: {e}");
            assert!(!e.contains("SECRETWORD"), "{e}");
        }
        let huge = format!("{{\"a\": \"{}\"}}", "x".repeat(MAX_RESPONSE_BYTES as usize));
        assert!(
            read::<Two>("roles", &huge, &schema)
                .unwrap_err()
                .to_string()
                .contains("KiB")
        );
        assert!(read::<Two>("roles", "{\"a\": \"x\"}", &schema).is_ok());
    }
}
