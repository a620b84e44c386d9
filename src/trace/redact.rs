//! What of a value may be written down (docs/semantics.md, "Redaction" and "A shareable trace shares
//! nothing private"): a keyed digest for everything, the value itself only when it is trusted and public,
//! and error messages replaced by the sources they depend on.
//!
//! ```
//! use serde_json::json;
//! use zamburak::digest::DigestKey;
//! use zamburak::label::Label;
//! use zamburak::trace::redact::stored;
//! let key = DigestKey::fresh().unwrap();
//! let (digest, preview) = stored(&key, &json!("hello"), &Label::literal());
//! assert!(digest.starts_with("hmac-sha256:"));
//! assert_eq!(preview, Some(json!("hello")));
//! ```

use serde_json::Value;

use crate::digest::DigestKey;
use crate::label::{Integrity, Label, Readers};
use crate::trace::canonical::{canonical, survives_round_trip};

/// Most sources named in a redaction; the rest are counted, so a message stays short.
const MAX_NAMED_SOURCES: usize = 8;

pub use crate::digest::sha256_bytes;

/// `sha256:<hex>` of the value's canonical JSON (object keys sorted by bytes, no whitespace): the plain
/// digest traces before format 5 name values by. Only for reading those back (an old value store); a new
/// trace names values by [`keyed_digest`], since a plain digest lets whoever holds the trace confirm a
/// guess of the value.
///
/// ```
/// use serde_json::json;
/// use zamburak::trace::redact::{digest, sha256_bytes};
/// assert_eq!(digest(&json!({"b": 1, "a": 2})), sha256_bytes(br#"{"a":2,"b":1}"#));
/// ```
pub fn digest(value: &Value) -> String {
    sha256_bytes(canonical(value).as_bytes())
}

/// `hmac-sha256:<hex>` of the value's canonical JSON under the run's key (docs/semantics.md, "A shareable
/// trace shares nothing private"): the same value has the same digest within a run, whatever order its
/// keys were built in, and a digest nobody without the key can recompute.
///
/// ```
/// use serde_json::json;
/// use zamburak::digest::DigestKey;
/// use zamburak::trace::redact::{digest, keyed_digest};
/// let key = DigestKey::fresh().unwrap();
/// assert_eq!(keyed_digest(&key, &json!({"b": 1, "a": 2})), key.keyed(br#"{"a":2,"b":1}"#));
/// assert_ne!(keyed_digest(&key, &json!("123456")), digest(&json!("123456")));
/// ```
pub fn keyed_digest(key: &DigestKey, value: &Value) -> String {
    key.keyed(canonical(value).as_bytes())
}

/// True when a value with this label may appear in clear in a trace: trusted, no tags, readers public, known.
pub fn is_clean(label: &Label) -> bool {
    label.integrity == Integrity::Trusted
        && label.tags.is_empty()
        && label.readers == Readers::Public
        && !label.unknown
}

/// The keyed digest of `value` and, when its label is clean ([`is_clean`]), the value as a preview. A value
/// holding a float that JSON would not read back exactly gets no preview (see [`survives_round_trip`]): the
/// trace must re-read to the same bytes.
pub fn stored(key: &DigestKey, value: &Value, label: &Label) -> (String, Option<Value>) {
    let preview = (is_clean(label) && survives_round_trip(value)).then(|| value.clone());
    (keyed_digest(key, value), preview)
}

/// An error message as it may be shown: `msg` itself when it derives only from clean data, otherwise
/// `<redacted: depends on get_email#2, ...>` naming the sources (`<redacted>` when none are known).
///
/// ```
/// use zamburak::trace::redact::redact_message;
/// let sources = vec!["get_email#2".to_string()];
/// assert_eq!(redact_message("bad: x@evil", false, &sources), "<redacted: depends on get_email#2>");
/// assert_eq!(redact_message("index out of range", true, &[]), "index out of range");
/// ```
pub fn redact_message(msg: &str, label_is_clean: bool, sources: &[String]) -> String {
    if label_is_clean {
        return msg.to_string();
    }
    if sources.is_empty() {
        return "<redacted>".to_string();
    }
    let named = sources[..sources.len().min(MAX_NAMED_SOURCES)].join(", ");
    let more = sources.len().saturating_sub(MAX_NAMED_SOURCES);
    if more > 0 {
        format!("<redacted: depends on {named} and {more} more>")
    } else {
        format!("<redacted: depends on {named}>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::label::{KindSet, TagSet};
    use serde_json::json;
    use std::collections::BTreeSet;

    #[test]
    fn sha256_known_vectors() {
        // FIPS 180-2 test vectors.
        assert_eq!(
            sha256_bytes(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_bytes(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn digest_is_over_sorted_compact_json() {
        // sha256 of the 13 bytes `{"a":1,"b":2}`, computed with `printf '{"a":1,"b":2}' | sha256sum`.
        let expected = "sha256:43258cff783fe7036d8a43033f830adfc60ec037382473548ac742b888292777";
        assert_eq!(digest(&json!({"b": 2, "a": 1})), expected);
        assert_eq!(digest(&json!({"a": 1, "b": 2})), expected);
        assert_ne!(digest(&json!({"a": 1, "b": 3})), expected);
    }

    fn label(integrity: Integrity, tags: u16, readers: Readers, unknown: bool) -> Label {
        Label {
            integrity,
            verified: KindSet::NONE,
            tags: TagSet(tags),
            readers,
            sources: BTreeSet::new(),
            unknown,
        }
    }

    #[test]
    fn preview_only_when_trusted_untagged_public_known() {
        let key = DigestKey::fresh().unwrap();
        let v = json!("secret?");
        let only_user = Readers::Only(BTreeSet::new());
        assert!(
            stored(
                &key,
                &v,
                &label(Integrity::Trusted, 0, Readers::Public, false)
            )
            .1
            .is_some()
        );
        for l in [
            label(Integrity::Untrusted, 0, Readers::Public, false),
            label(Integrity::Trusted, 1, Readers::Public, false),
            label(Integrity::Trusted, 0, only_user, false),
            label(Integrity::Trusted, 0, Readers::Public, true),
        ] {
            let (d, preview) = stored(&key, &v, &l);
            assert_eq!(preview, None, "{l:?}");
            // Keyed, never the plain hash anyone could compute from a guess.
            assert_eq!(d, keyed_digest(&key, &v));
            assert_ne!(d, digest(&v));
        }
    }

    #[test]
    fn redaction_names_sources_and_caps_them() {
        let many: Vec<String> = (0..10).map(|i| format!("t#{i}")).collect();
        assert_eq!(
            redact_message("x", false, &many),
            "<redacted: depends on t#0, t#1, t#2, t#3, t#4, t#5, t#6, t#7 and 2 more>"
        );
        assert_eq!(redact_message("x", false, &[]), "<redacted>");
        let two = vec!["get_email#2".to_string(), "search#5".to_string()];
        assert_eq!(
            redact_message("x", false, &two),
            "<redacted: depends on get_email#2, search#5>"
        );
    }
}
