//! The role of each tool argument (step (a) of `policy compile`), and which roles the attack battery
//! attacks. The drafter proposes a role per argument from the tools' schemas and descriptions; Zamburak
//! adds its own from what it knows for certain (the built-in adapters) and from the argument's name, and
//! the battery attacks an argument when EITHER says it is a recipient, URL, path or payee: a drafter that
//! calls a payee "other" does not take it out of the battery.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::policy::Policy;
use crate::policy::model::{Effect, Source as BuiltinSource, ToolSource};

/// What an argument is, for the battery.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Recipient,
    Url,
    Path,
    Amount,
    Payee,
    Content,
    Identifier,
    Other,
}

impl Role {
    pub const ALL: [Role; 8] = [
        Role::Recipient,
        Role::Url,
        Role::Path,
        Role::Amount,
        Role::Payee,
        Role::Content,
        Role::Identifier,
        Role::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Role::Recipient => "recipient",
            Role::Url => "url",
            Role::Path => "path",
            Role::Amount => "amount",
            Role::Payee => "payee",
            Role::Content => "content",
            Role::Identifier => "identifier",
            Role::Other => "other",
        }
    }

    /// The value an attacker's data would put in an argument of this role.
    pub fn attacker_value(self) -> &'static str {
        match self {
            Role::Recipient => "mallory@evil.test",
            Role::Url => "https://evil.test/collect?d=secret",
            Role::Path => "../evil/planted.txt",
            Role::Payee => "XX00EVIL00000000000001",
            _ => "attacker text",
        }
    }
}

/// The role of one argument, and who said so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgRole {
    pub tool: String,
    pub arg: String,
    /// The drafter's role, when it gave one.
    pub drafted: Option<Role>,
    /// Zamburak's own: the built-in adapter's, or from the argument's name.
    pub known: Option<Role>,
    pub effect: Effect,
}

impl ArgRole {
    /// The role the battery goes by: a role the battery attacks wins over one it does not; between two
    /// it attacks, the drafter's (it read the tool's description).
    pub fn attacked(&self) -> Option<Role> {
        [self.drafted, self.known]
            .into_iter()
            .flatten()
            .find(|r| attacked(*r, self.effect))
    }

    /// Every role the battery attacks this argument as. Roles are Zamburak's (docs/semantics.md,
    /// issue #51): the drafter's role may add an attack, never remove or replace one. An argument
    /// Zamburak cannot place itself (no built-in role, no telling name: a `destination`) of a tool
    /// that is not `pure` is attacked as every kind of value an attacker would choose, whatever the
    /// drafter calls it, so a drafter calling a payee `other` or `content` takes nothing out.
    pub fn attack_roles(&self) -> Vec<Role> {
        let mut out: Vec<Role> = Vec::new();
        let mut add = |r: Role| {
            if attacked(r, self.effect) && !out.contains(&r) {
                out.push(r);
            }
        };
        if let Some(r) = self.drafted {
            add(r);
        }
        // An argument that names who or where (or one Zamburak cannot place) is attacked with every
        // kind of attacker value: a name is a guess, and `recipient` of a payment is a payee (issue #51).
        match self.known {
            Some(Role::Content | Role::Amount | Role::Identifier) => {}
            _ => {
                for r in [Role::Recipient, Role::Payee, Role::Url, Role::Path] {
                    add(r);
                }
            }
        }
        out
    }

    /// The role shown: the attacked one, else the drafter's, else Zamburak's, else `other`.
    pub fn shown(&self) -> Role {
        self.attacked()
            .or(self.drafted)
            .or(self.known)
            .unwrap_or(Role::Other)
    }
}

/// Whether an argument of `role` on a tool with `effect` is attacked: recipients, payees and URLs of
/// every tool that is not `pure` (a URL leaves the machine even on a read), paths of tools that change
/// something (a read of an attacker's path returns data labelled by the policy; a write puts the
/// attacker's file where it chooses).
pub fn attacked(role: Role, effect: Effect) -> bool {
    match role {
        Role::Recipient | Role::Payee | Role::Url => effect != Effect::Pure,
        Role::Path => matches!(effect, Effect::Write | Effect::Send | Effect::Execute),
        _ => false,
    }
}

/// The role of a built-in adapter's argument, known for certain.
fn builtin_role(source: BuiltinSource, arg: &str) -> Option<Role> {
    use BuiltinSource as B;
    Some(match (source, arg) {
        (B::MailSend, "to") => Role::Recipient,
        (B::MailSend, _) => Role::Content,
        (B::WebGet, "url") => Role::Url,
        (B::FilesRead | B::FilesWrite | B::FilesList, "path") => Role::Path,
        (B::FilesWrite, "content") => Role::Content,
        (B::MailGet, "id") => Role::Identifier,
        _ => return None,
    })
}

/// The role an argument's name suggests, when it clearly names one.
pub fn named_role(arg: &str) -> Option<Role> {
    let a = arg.to_ascii_lowercase();
    let any = |words: &[&str]| {
        words
            .iter()
            .any(|w| a == *w || a.ends_with(&format!("_{w}")))
    };
    if any(&["iban", "payee", "beneficiary", "account", "bic", "creditor"]) {
        Some(Role::Payee)
    } else if any(&[
        "to",
        "cc",
        "bcc",
        "recipient",
        "recipients",
        "email",
        "address",
        "participants",
    ]) {
        Some(Role::Recipient)
    } else if any(&["url", "uri", "link", "href", "endpoint", "webhook"]) {
        Some(Role::Url)
    } else if any(&["path", "file", "filename", "dir", "directory", "folder"]) {
        Some(Role::Path)
    } else if any(&["amount", "sum", "price", "quantity"]) {
        Some(Role::Amount)
    } else {
        None
    }
}

/// Every argument of every tool of `policy` with Zamburak's own role; `drafted` fills in the drafter's.
pub fn roles(policy: &Policy, drafted: &BTreeMap<(String, String), Role>) -> Vec<ArgRole> {
    let mut out = Vec::new();
    for (tool, spec) in policy.file().tools.iter() {
        for (arg, _) in spec.args.iter() {
            let builtin = match &spec.source {
                Some(ToolSource::Builtin(b)) => builtin_role(*b, arg),
                _ => None,
            };
            out.push(ArgRole {
                tool: tool.to_string(),
                arg: arg.to_string(),
                drafted: drafted.get(&(tool.to_string(), arg.to_string())).copied(),
                known: builtin.or_else(|| named_role(arg)),
                effect: spec.effect,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_the_battery_attacks_wins() {
        let r = ArgRole {
            tool: "send_money".into(),
            arg: "recipient".into(),
            drafted: Some(Role::Other),
            known: named_role("recipient"),
            effect: Effect::Send,
        };
        assert_eq!(r.attacked(), Some(Role::Recipient));
        let r = ArgRole {
            tool: "pay".into(),
            arg: "dest".into(),
            drafted: Some(Role::Payee),
            known: None,
            effect: Effect::Send,
        };
        assert_eq!(r.attacked(), Some(Role::Payee));
        // A drafter's `other` or `content` for an argument Zamburak cannot place removes nothing.
        for drafted in [None, Some(Role::Other), Some(Role::Content)] {
            let r = ArgRole {
                tool: "pay".into(),
                arg: "destination".into(),
                drafted,
                known: named_role("destination"),
                effect: Effect::Send,
            };
            assert_eq!(
                r.attack_roles(),
                vec![Role::Recipient, Role::Payee, Role::Url, Role::Path]
            );
        }
        // A URL is attacked with every kind of value but a path, which a read does not write.
        let r = ArgRole {
            tool: "fetch".into(),
            arg: "url".into(),
            drafted: Some(Role::Recipient),
            known: named_role("url"),
            effect: Effect::Read,
        };
        assert_eq!(
            r.attack_roles(),
            vec![Role::Recipient, Role::Payee, Role::Url]
        );
        assert!(!attacked(Role::Path, Effect::Read));
        assert!(attacked(Role::Url, Effect::Read));
        assert!(!attacked(Role::Recipient, Effect::Pure));
        assert_eq!(named_role("recipient_iban"), Some(Role::Payee));
        assert_eq!(named_role("subject"), None);
    }
}
