//! What a plan may call, as the structural checks and the lowering see it: a neutral view of the policy.

use std::collections::{BTreeMap, BTreeSet};

/// The callable names of a policy, with the argument names of each tool in declaration order.
///
/// ```
/// use zamburak::plan::Signatures;
/// let mut s = Signatures::default();
/// s.tools.insert("send_email".into(), vec!["to".into(), "subject".into(), "body".into()]);
/// s.verifiers.insert("verify_recipient".into());
/// assert!(s.is_callable("send_email") && s.is_callable("verify_recipient") && !s.is_callable("eval"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Signatures {
    /// Tool name → its argument names, in the order the policy declares them (positional arguments bind in
    /// this order).
    pub tools: BTreeMap<String, Vec<String>>,
    /// Verifier names. A verifier takes exactly one positional argument.
    pub verifiers: BTreeSet<String>,
}

impl Signatures {
    pub fn is_callable(&self, name: &str) -> bool {
        self.tools.contains_key(name) || self.verifiers.contains(name)
    }
}
