//! The host's side of remembered values (docs/semantics.md, "Remembered values"): before a call is
//! decided, each argument whose decision reads the person's store gets the `known` roles its value holds,
//! and the person is told, value by value, whether it is known, new, or like a known one.

use super::host::RunHost;
use crate::known::Novelty;
use crate::known::store::{Scope, canonical};
use crate::policy::{Claim, Remembered, chosen_by_data, consults_remembered, meets_but_known};
use crate::value::{LValue, Raw};

impl RunHost<'_, '_> {
    /// Fills `claim`'s `remembered` for each argument whose decision reads the store, and returns what
    /// the person is told of each value looked up. Whether the store is read depends on the policy and the
    /// labels alone ([`consults_remembered`]); what it says never leaves the person's side except as the
    /// decision, which the planner is told only up to the cut.
    pub(super) fn consult_remembered(
        &self,
        args: &[(String, LValue)],
        claim: &mut Claim,
    ) -> Vec<Novelty> {
        let mut told = Vec::new();
        let now = jiff::Timestamp::now();
        // The scope resolves the policy's path on the file system: only for a call that looks a value up.
        let scope_name = std::cell::OnceCell::new();
        let user = self.policy.user().unwrap_or("").to_string();
        for (arg_claim, (_, value)) in claim.args.iter_mut().zip(args) {
            // A value data chose that the policy gives no `known` role is new to the person, and stays so:
            // it is told as new, and nothing is looked up.
            let consults = consults_remembered(self.policy, &self.space, &claim.tool, arg_claim);
            if !consults && !chosen_by_data(self.policy, &self.space, &claim.tool, arg_claim) {
                continue;
            }
            let roles: Vec<String> = if consults {
                self.policy
                    .known_roles(&claim.tool, &arg_claim.name)
                    .into_iter()
                    .map(str::to_string)
                    .collect()
            } else {
                Vec::new()
            };
            // Only the values data chose: an element the plan wrote (or a verifier checked) is not new.
            let chosen = |label: &crate::label::Label| {
                !meets_but_known(
                    self.policy,
                    &self.space,
                    &claim.tool,
                    &arg_claim.name,
                    label,
                )
            };
            let structure_chosen = arg_claim.label.is_untrusted();
            let values: Vec<(Option<usize>, Option<String>)> = match &value.raw {
                Raw::List(items) | Raw::Tuple(items) => items
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| {
                        structure_chosen
                            || arg_claim
                                .elements
                                .as_ref()
                                .and_then(|e| e.get(*i))
                                .is_none_or(chosen)
                    })
                    .map(|(i, v)| (Some(i), canonical(&v.to_json())))
                    .collect(),
                _ => vec![(None, canonical(&value.to_json()))],
            };
            let mut whole = Vec::new();
            let mut elements = arg_claim
                .elements
                .as_ref()
                .map(|e| vec![Vec::new(); e.len()]);
            for (index, text) in values {
                // A value with no canonical form (a dict, `None`) is never remembered: it stays new.
                let mut novelty = Novelty {
                    arg: arg_claim.name.clone(),
                    index,
                    value: text.clone().unwrap_or_default(),
                    status: "new".into(),
                    by: None,
                    on: None,
                    like: None,
                    why: None,
                    marked: None,
                    roles: roles.clone(),
                };
                let mut near: Vec<String> = Vec::new();
                for role in &roles {
                    let role_args = self
                        .policy
                        .known_role_args(role, &claim.tool, &arg_claim.name);
                    let scope = Scope {
                        scope: scope_name.get_or_init(|| self.policy.known_scope()),
                        user: &user,
                        role,
                        args: &role_args,
                    };
                    let Some(store) = self.known else { continue };
                    let Some(text) = &text else { continue };
                    if let Some(entry) = store.find(&scope, text, now) {
                        match (index, elements.as_mut()) {
                            (Some(i), Some(els)) => {
                                if let Some(slot) = els.get_mut(i) {
                                    slot.push(role.clone());
                                }
                            }
                            _ => whole.push(role.clone()),
                        }
                        if novelty.status != "known" {
                            novelty.status = "known".into();
                            novelty.by = Some(entry.by.clone());
                            novelty.on = Some(entry.day().to_string());
                        }
                    } else {
                        near.extend(store.values_in(&scope, now).iter().map(|e| e.value.clone()));
                    }
                }
                if novelty.status != "known"
                    && let Some(text) = &text
                    && let Some(like) = crate::known::lookalike::look_alikes(
                        text,
                        near.iter().map(String::as_str),
                        1,
                    )
                    .into_iter()
                    .next()
                {
                    novelty.status = "looks_like".into();
                    novelty.why = serde_json::to_value(&like.why)
                        .ok()
                        .and_then(|v| v.as_str().map(|s| s.replace('_', " ")));
                    novelty.marked = Some(like.marked);
                    novelty.like = Some(like.known);
                }
                told.push(novelty);
            }
            if consults {
                arg_claim.remembered = Remembered::Roles { whole, elements };
            }
        }
        told
    }
}
