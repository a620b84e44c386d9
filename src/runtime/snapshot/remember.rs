//! What `approve --remember ARG` (and a tick on the queue page or in the form) remembers: each value of the
//! named arguments, taken from the claim's values as the snapshot binds them to the claim's digests (never
//! from what the snapshot says it showed), for every `known` role the policy gives that argument
//! (docs/semantics.md, "Remembered values").

use super::{Snapshot, SnapshotError};
use crate::known::store::{Entry, canonical};
use crate::policy::Policy;

/// The entries remembering `args` of the claim in `snapshot` would add, by `by`. Refused (nothing is
/// remembered, nothing runs) when an argument is not the claim's, has no `known` role in the policy, or
/// holds a value no store keeps (a dict, `None`).
pub fn entries(
    snapshot: &Snapshot,
    policy: &Policy,
    args: &[String],
    by: &str,
) -> Result<Vec<Entry>, SnapshotError> {
    let shown = snapshot.shown_checked()?;
    let tool = &snapshot.claim.tool;
    let scope = policy.known_scope();
    let user = policy.user().unwrap_or("");
    let code = snapshot.claim_code();
    let mut out = Vec::new();
    for named in args {
        let refuse = |why: String| SnapshotError::NotRemembered {
            arg: crate::text::visible(named),
            why,
        };
        // `ARG` (every value of it) or `ARG[i]` (one element of a list, from 0: a tick per value).
        let (arg, index) = match named.strip_suffix(']').and_then(|n| n.split_once('[')) {
            Some((a, i)) => match i.parse::<usize>() {
                Ok(i) => (a.to_string(), Some(i)),
                Err(_) => {
                    return Err(refuse(
                        "an element is named `ARG[N]`, N a number from 0".into(),
                    ));
                }
            },
            None => (named.clone(), None),
        };
        let arg = &arg;
        let roles = policy.known_roles(tool, arg);
        if roles.is_empty() {
            let named: Vec<String> = shown
                .values
                .iter()
                .map(|(n, _)| n.clone())
                .filter(|n| !policy.known_roles(tool, n).is_empty())
                .collect();
            return Err(refuse(if named.is_empty() {
                format!(
                    "the policy gives no argument of `{tool}` a `known` role, so nothing of this claim can be remembered"
                )
            } else {
                format!(
                    "the policy gives `{tool}`'s argument `{arg}` no `known` role; it may remember: {}",
                    named.join(", ")
                )
            }));
        }
        let Some((_, value)) = shown.values.iter().find(|(n, _)| n == arg) else {
            return Err(refuse(format!("`{tool}` was not called with it")));
        };
        let values: Vec<&serde_json::Value> = match (value, index) {
            (serde_json::Value::Array(items), None) => items.iter().collect(),
            (serde_json::Value::Array(items), Some(i)) => match items.get(i) {
                Some(v) => vec![v],
                None => return Err(refuse(format!("`{arg}` has {} element(s)", items.len()))),
            },
            (_, Some(_)) => return Err(refuse(format!("`{arg}` is not a list"))),
            (v, None) => vec![v],
        };
        for v in values {
            let Some(text) = canonical(v) else {
                return Err(refuse(
                    "it holds a value that is not a string, a number or a boolean".to_string(),
                ));
            };
            for role in &roles {
                out.push(Entry::new(
                    &text,
                    role,
                    tool,
                    arg,
                    &scope,
                    user,
                    by,
                    &code,
                    policy.known_expiry_days(),
                ));
            }
        }
    }
    Ok(out)
}
