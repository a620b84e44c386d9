//! Content digests shared by every layer: the policy's hash in a trace, a sent message's digest, a plan's;
//! and the run's keyed digest of values ([`DigestKey`]). The trace's own value digests (canonical JSON)
//! live in `trace::redact`.

use hmac::{KeyInit, Mac};
use sha2::{Digest, Sha256};

/// `sha256:<hex>` of raw bytes (plan and policy files, messages).
pub fn sha256_bytes(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The prefix of a keyed digest: `hmac-sha256:<hex>`.
pub const KEYED_PREFIX: &str = "hmac-sha256:";

/// Bytes in a run's key: SHA-256's output size, the key length RFC 2104 recommends.
const KEY_BYTES: usize = 32;
/// SHA-256's block size: RFC 2104 pads a shorter key with zeros to it.
const BLOCK_BYTES: usize = 64;

/// A run's secret for digests of values (docs/semantics.md, "A shareable trace shares nothing private"):
/// the trace names each value by HMAC-SHA256 under this key, so whoever holds the trace without the key
/// cannot confirm a guess of a value (a one-time code, an amount, a yes/no) by hashing it. The key is made
/// fresh for every run and kept only where the values are (the value store `PLAN.zvalues` and a suspended
/// run's snapshot, both private to the user); it is never written to the trace.
///
/// ```
/// use zamburak::digest::DigestKey;
/// let a = DigestKey::fresh().unwrap();
/// let b = DigestKey::fresh().unwrap();
/// assert_ne!(a.keyed(b"123456"), b.keyed(b"123456"));
/// assert!(a.keyed(b"x").starts_with("hmac-sha256:"));
/// assert_eq!(DigestKey::from_hex(&a.to_hex()), Some(a.clone()));
/// assert!(!format!("{a:?}").contains(&a.to_hex()));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct DigestKey([u8; KEY_BYTES]);

impl DigestKey {
    /// A new key from the operating system's random source. `Err` when it has none to give: the caller
    /// does not start the run (a trace without a secret key would hold guessable digests).
    pub fn fresh() -> Result<DigestKey, getrandom::Error> {
        let mut key = [0u8; KEY_BYTES];
        getrandom::fill(&mut key)?;
        Ok(DigestKey(key))
    }

    /// The key as written in the value store and the snapshot: 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// The key written by [`DigestKey::to_hex`]; `None` for anything else.
    pub fn from_hex(text: &str) -> Option<DigestKey> {
        let bytes = hex::decode(text).ok()?;
        <[u8; KEY_BYTES]>::try_from(bytes.as_slice())
            .ok()
            .map(DigestKey)
    }

    /// `hmac-sha256:<hex>` of `bytes` under this key.
    pub fn keyed(&self, bytes: &[u8]) -> String {
        // RFC 2104: a key shorter than the block is padded with zeros to it, so this is HMAC under the
        // 32-byte key; a block-sized key makes the constructor the infallible one.
        let mut block = [0u8; BLOCK_BYTES];
        block[..KEY_BYTES].copy_from_slice(&self.0);
        let mut mac = hmac::Hmac::<Sha256>::new(&block.into());
        mac.update(bytes);
        format!("{KEYED_PREFIX}{}", hex::encode(mac.finalize().into_bytes()))
    }
}

impl std::fmt::Debug for DigestKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A key in a debug print or a panic message would end up in logs.
        f.write_str("DigestKey(<secret>)")
    }
}

impl serde::Serialize for DigestKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> serde::Deserialize<'de> for DigestKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<DigestKey, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        DigestKey::from_hex(&text)
            .ok_or_else(|| serde::de::Error::custom("a digest key is 64 hex digits"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_known_vectors() {
        // RFC 4231, test case 2: key "Jefe", data "what do ya want for nothing?". A key shorter than 32
        // bytes is the same key zero-padded (RFC 2104), so it is written here as such.
        let mut key = [0u8; KEY_BYTES];
        key[..4].copy_from_slice(b"Jefe");
        assert_eq!(
            DigestKey(key).keyed(b"what do ya want for nothing?"),
            "hmac-sha256:5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // RFC 4231, test case 1: a 20-byte key of 0x0b, data "Hi There".
        let mut key = [0u8; KEY_BYTES];
        key[..20].copy_from_slice(&[0x0b; 20]);
        assert_eq!(
            DigestKey(key).keyed(b"Hi There"),
            "hmac-sha256:b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
    }

    #[test]
    fn a_key_reads_back_only_from_its_own_form() {
        let k = DigestKey([7; KEY_BYTES]);
        assert_eq!(DigestKey::from_hex(&k.to_hex()), Some(k.clone()));
        for bad in ["", "07", &"0".repeat(63), &"g".repeat(64), &"0".repeat(66)] {
            assert_eq!(DigestKey::from_hex(bad), None, "{bad}");
        }
        let json = serde_json::to_string(&k).unwrap();
        assert_eq!(serde_json::from_str::<DigestKey>(&json).unwrap(), k);
        assert!(serde_json::from_str::<DigestKey>("\"00\"").is_err());
    }
}
