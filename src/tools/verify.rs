//! The deterministic verifiers a policy may declare. Each checks one value and says yes or no; the runtime
//! adds the verified kind on yes and stops the plan on no. Error texts never repeat the value (it may be
//! attacker data).
//!
//! ```
//! use serde_json::json;
//! use zamburak::policy::builtins::VerifierSpec;
//! use zamburak::tools::verify::check;
//! let spec = VerifierSpec::EmailAllowlist { allow: vec!["*@example.com".into()], mints: "Recipient".into() };
//! assert!(check(&spec, &json!("alice@example.com")).is_ok());
//! assert!(check(&spec, &json!("alice@example.com.evil.test")).is_err());
//! ```

use serde_json::Value;

use crate::policy::builtins::VerifierSpec;
use crate::policy::url_rule;

/// Checks `value` against `spec`.
pub fn check(spec: &VerifierSpec, value: &Value) -> Result<(), String> {
    match spec {
        VerifierSpec::EmailAllowlist { allow, .. } => {
            let Value::String(s) = value else {
                return Err("not an e-mail address (expected a string)".into());
            };
            let addr = parse_address(s)
                .ok_or_else(|| "not a single well-formed e-mail address".to_string())?;
            if allow.iter().any(|p| address_matches(&addr, p)) {
                Ok(())
            } else {
                Err("not an allowed e-mail address".into())
            }
        }
        VerifierSpec::UrlAllowlist {
            schemes,
            hosts,
            paths,
            ..
        } => {
            let Value::String(s) = value else {
                return Err("not a URL (expected a string)".into());
            };
            // The same normalisation the web adapter fetches with, so what is verified is what is fetched.
            let u = url_rule::normalise(s).map_err(|e| e.to_string())?;
            let scheme_ok = schemes.iter().any(|x| x.eq_ignore_ascii_case(u.scheme()));
            let host_ok = hosts.iter().any(|x| x.eq_ignore_ascii_case(&u.host()));
            // A prefix that does not normalise was refused when the policy was loaded; here it matches nothing.
            let path_ok = paths.as_ref().is_none_or(|ps| {
                ps.iter().any(|p| {
                    url_rule::normal_path(p).is_ok_and(|p| url_rule::path_within(&p, u.path()))
                })
            });
            if scheme_ok && host_ok && path_ok {
                Ok(())
            } else {
                Err("not an allowed URL".into())
            }
        }
        VerifierSpec::NumberRange { min, max, .. } => {
            let n = match value {
                Value::Number(n) => n.as_f64(),
                _ => None,
            };
            match n {
                Some(n) if n.is_finite() && n >= *min && n <= *max => Ok(()),
                Some(_) => Err("number out of the allowed range".into()),
                None => Err("not a number".into()),
            }
        }
        VerifierSpec::OneOf { values, .. } => match value {
            Value::String(s) if values.iter().any(|v| v == s) => Ok(()),
            _ => Err("not one of the allowed values".into()),
        },
    }
}

/// `local@domain`, lowercased, when `s` is exactly one plain address (no display name, spaces, commas,
/// angle brackets or control characters).
fn parse_address(s: &str) -> Option<String> {
    if s.is_empty()
        || s.len() > 254
        || s.chars()
            .any(|c| c.is_whitespace() || c.is_control() || ",;<>()\"'\\[]:".contains(c))
    {
        return None;
    }
    let (local, domain) = s.rsplit_once('@')?;
    if local.is_empty()
        || local.contains('@')
        || domain.is_empty()
        || domain.starts_with('.')
        || domain.ends_with('.')
        || domain.contains("..")
    {
        return None;
    }
    if !domain
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
    {
        return None;
    }
    Some(s.to_ascii_lowercase())
}

fn address_matches(addr: &str, pattern: &str) -> bool {
    let pattern = pattern.to_ascii_lowercase();
    match pattern.strip_prefix("*@") {
        Some(domain) => addr.rsplit_once('@').is_some_and(|(_, d)| d == domain),
        None => addr == pattern,
    }
}

/// The scheme and host of an absolute `scheme://host[:port]/...` URL without user info.
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn email() -> VerifierSpec {
        VerifierSpec::EmailAllowlist {
            allow: vec!["*@example.com".into(), "partner@other.test".into()],
            mints: "R".into(),
        }
    }

    #[test]
    fn email_allowlist() {
        for ok in ["alice@example.com", "A@EXAMPLE.COM", "partner@other.test"] {
            assert!(check(&email(), &json!(ok)).is_ok(), "{ok}");
        }
        for bad in [
            "a@example.com.evil.test",
            "x@example.com, y@evil.test",
            "\"me\" <a@evil.test>",
            "a@evil.test",
            "a@example.com\r\nBcc: x@evil.test",
            "@example.com",
            "a@@example.com",
            "other@other.test",
        ] {
            assert!(check(&email(), &json!(bad)).is_err(), "{bad}");
        }
        assert!(check(&email(), &json!(["a@example.com"])).is_err());
        let err = check(&email(), &json!("mallory@evil.test")).unwrap_err();
        assert!(!err.contains("mallory"));
    }

    #[test]
    fn url_allowlist() {
        let spec = VerifierSpec::UrlAllowlist {
            schemes: vec!["https".into()],
            hosts: vec!["docs.example.com".into()],
            paths: None,
            mints: "U".into(),
        };
        assert!(check(&spec, &json!("https://docs.example.com/a?b=c")).is_ok());
        assert!(check(&spec, &json!("https://DOCS.example.com:443/")).is_ok());
        for bad in [
            "http://docs.example.com/",
            "https://docs.example.com.evil.test/",
            "https://docs.example.com@evil.test/",
            "https://evil.test/docs.example.com",
            "docs.example.com",
            "https://docs.example.com /",
        ] {
            assert!(check(&spec, &json!(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn url_allowlist_paths_compare_normalised_segments() {
        let spec = VerifierSpec::UrlAllowlist {
            schemes: vec!["https".into()],
            hosts: vec!["docs.example.com".into()],
            paths: Some(vec!["/docs/".into(), "api".into()]),
            mints: "U".into(),
        };
        for good in [
            "https://docs.example.com/docs/",
            "https://docs.example.com/docs/a?b=c",
            "https://docs.example.com/api",
            "https://docs.example.com/api/v1",
            "https://docs.example.com/x/../docs/a",
        ] {
            assert!(check(&spec, &json!(good)).is_ok(), "{good}");
        }
        for bad in [
            "https://docs.example.com/",
            "https://docs.example.com/docsecret",
            "https://docs.example.com/apix",
            "https://docs.example.com/docs/../admin",
            "https://docs.example.com/docs/%2e%2e/admin",
            "https://docs.example.com/docs/..%2fadmin",
        ] {
            assert!(check(&spec, &json!(bad)).is_err(), "{bad}");
        }
        // Without `paths`, any path of an allowed host (documented in docs/policy.md).
        let any = VerifierSpec::UrlAllowlist {
            schemes: vec!["https".into()],
            hosts: vec!["docs.example.com".into()],
            paths: None,
            mints: "U".into(),
        };
        assert!(check(&any, &json!("https://docs.example.com/admin")).is_ok());
    }

    #[test]
    fn number_range_and_one_of() {
        let spec = VerifierSpec::NumberRange {
            min: 0.0,
            max: 100.0,
            mints: "N".into(),
        };
        assert!(check(&spec, &json!(50)).is_ok());
        assert!(check(&spec, &json!(100.0)).is_ok());
        assert!(check(&spec, &json!(100.5)).is_err());
        assert!(check(&spec, &json!(-1)).is_err());
        assert!(check(&spec, &json!("50")).is_err());
        let spec = VerifierSpec::OneOf {
            values: vec!["urgent".into(), "later".into()],
            mints: "T".into(),
        };
        assert!(check(&spec, &json!("urgent")).is_ok());
        assert!(check(&spec, &json!("Urgent")).is_err());
        assert!(check(&spec, &json!(1)).is_err());
    }
}
