//! The stable id of the rule that decided a claim (docs/policy.md, "Decisions"). Typed here; written as
//! text (`args.to.require`) in traces, lint output and reports, and read back from that text.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a requirement on an argument or on the control context checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Check {
    /// `require`: integrity alternatives (`trusted`, `verified(K)`, `any`).
    Require,
    ForbidTags,
    Public,
    ReadersMustInclude,
}

impl Check {
    pub fn name(self) -> &'static str {
        match self {
            Check::Require => "require",
            Check::ForbidTags => "forbid_tags",
            Check::Public => "public",
            Check::ReadersMustInclude => "readers_must_include",
        }
    }

    fn parse(s: &str) -> Option<Check> {
        [
            Check::Require,
            Check::ForbidTags,
            Check::Public,
            Check::ReadersMustInclude,
        ]
        .into_iter()
        .find(|c| c.name() == s)
    }
}

/// The rule that decided a claim.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    /// Every requirement holds.
    Allow,
    UnknownTool,
    UnknownArgument,
    MissingArgument,
    UnknownLabel,
    MalformedRecipients,
    MaxToolCalls,
    /// A requirement on the argument `name`.
    Arg {
        name: String,
        check: Check,
    },
    /// A requirement on the control context.
    Control(Check),
}

impl Rule {
    /// The argument a rule is about, if any.
    pub fn arg(&self) -> Option<&str> {
        match self {
            Rule::Arg { name, .. } => Some(name),
            _ => None,
        }
    }

    /// What a requirement rule checks, for an argument or the control context.
    pub fn check(&self) -> Option<Check> {
        match self {
            Rule::Arg { check, .. } | Rule::Control(check) => Some(*check),
            _ => None,
        }
    }
}

impl Rule {
    /// Every rule without parameters.
    pub const FIXED: [Rule; 7] = [
        Rule::Allow,
        Rule::UnknownTool,
        Rule::UnknownArgument,
        Rule::MissingArgument,
        Rule::UnknownLabel,
        Rule::MalformedRecipients,
        Rule::MaxToolCalls,
    ];

    /// The text of a rule without parameters.
    fn fixed_text(&self) -> Option<&'static str> {
        Some(match self {
            Rule::Allow => "allow",
            Rule::UnknownTool => "fixed.unknown_tool",
            Rule::UnknownArgument => "fixed.unknown_argument",
            Rule::MissingArgument => "fixed.missing_argument",
            Rule::UnknownLabel => "fixed.unknown_label",
            Rule::MalformedRecipients => "fixed.malformed_recipients",
            Rule::MaxToolCalls => "limits.max_tool_calls",
            Rule::Arg { .. } | Rule::Control(_) => return None,
        })
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::Arg { name, check } => write!(f, "args.{name}.{}", check.name()),
            Rule::Control(check) => write!(f, "control.{}", check.name()),
            fixed => f.write_str(fixed.fixed_text().unwrap_or_default()),
        }
    }
}

impl FromStr for Rule {
    type Err = String;

    /// ```
    /// use zamburak::policy::rule::{Check, Rule};
    /// let r: Rule = "args.to.require".parse().unwrap();
    /// assert_eq!(r, Rule::Arg { name: "to".into(), check: Check::Require });
    /// assert_eq!(r.to_string(), "args.to.require");
    /// assert!("args..x".parse::<Rule>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Rule, String> {
        if let Some(r) = Rule::FIXED.into_iter().find(|r| r.fixed_text() == Some(s)) {
            return Ok(r);
        }
        let unknown = || format!("unknown rule id `{s}`");
        if let Some(rest) = s.strip_prefix("control.") {
            return Check::parse(rest).map(Rule::Control).ok_or_else(unknown);
        }
        // The check is after the last dot, so an argument name may hold dots of its own.
        let rest = s.strip_prefix("args.").ok_or_else(unknown)?;
        let (name, check) = rest.rsplit_once('.').ok_or_else(unknown)?;
        let check = Check::parse(check).ok_or_else(unknown)?;
        if name.is_empty() {
            return Err(unknown());
        }
        Ok(Rule::Arg {
            name: name.to_string(),
            check,
        })
    }
}

impl PartialEq<&str> for Rule {
    fn eq(&self, other: &&str) -> bool {
        other.parse::<Rule>().is_ok_and(|r| r == *self)
    }
}

impl Serialize for Rule {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Rule {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Rule, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_reads_back_from_its_text() {
        let mut rules = Rule::FIXED.to_vec();
        for check in [
            Check::Require,
            Check::ForbidTags,
            Check::Public,
            Check::ReadersMustInclude,
        ] {
            rules.push(Rule::Control(check));
            rules.push(Rule::Arg {
                name: "to".into(),
                check,
            });
        }
        for r in rules {
            assert_eq!(r.to_string().parse::<Rule>(), Ok(r.clone()));
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<Rule>(&json).unwrap(), r);
        }
        // An argument name may hold dots: the check is after the last one.
        let dotted = Rule::Arg {
            name: "a.b".into(),
            check: Check::Public,
        };
        assert_eq!(dotted.to_string().parse::<Rule>(), Ok(dotted));
        for bad in [
            "",
            "args.",
            "args.to",
            "args.to.nope",
            "args..require",
            "control.",
            "fixed.x",
        ] {
            assert!(bad.parse::<Rule>().is_err(), "{bad}");
        }
    }
}
