//! Content digests shared by every layer: the policy's hash in a trace, a sent message's digest, a plan's.
//! The trace's own value digests (canonical JSON) live in `trace::redact`.

use sha2::{Digest, Sha256};

/// `sha256:<hex>` of raw bytes (plan and policy files, messages).
pub fn sha256_bytes(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}
