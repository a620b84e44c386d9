//! HTTP GET of allow-listed URLs. The allow-list compares the normalised scheme, host, port and path prefix
//! on segment boundaries (`url_rule`), never raw strings, and the normalised URL is what is fetched;
//! redirects are not followed; bodies are capped.

use std::time::Duration;

use serde_json::{Value, json};

use super::ToolError;
use crate::policy::builtins::WebConfig;
use crate::policy::url_rule::{NormalUrl, Prefix, normalise};

/// The normalised form of `url` when it is inside one of the allowed prefixes (`url_rule`).
pub fn allowed(cfg: &WebConfig, url: &str) -> Option<NormalUrl> {
    let u = normalise(url).ok()?;
    cfg.allow
        .iter()
        .filter_map(|a| Prefix::parse(a).ok())
        .any(|a| a.contains(&u))
        .then_some(u)
}

/// Fetches an allowed URL: exactly its normalised form, which is what the allow-list checked.
pub fn get(cfg: &WebConfig, url: &str) -> Result<Value, ToolError> {
    let Some(url) = allowed(cfg, url) else {
        return Err(ToolError::Refused("the URL is not in builtins.web.allow"));
    };
    let url = url.as_str();
    let timeout = Duration::from_millis(cfg.timeout_ms.unwrap_or(5000));
    let max = cfg.max_bytes.unwrap_or(1 << 20);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .max_redirects(0)
        .http_status_as_error(false)
        .build()
        .into();
    let mut resp = agent
        .get(url)
        .call()
        .map_err(|_| ToolError::Refused("the request failed"))?;
    let status = resp.status().as_u16();
    let bytes = resp
        .body_mut()
        .with_config()
        .limit(max)
        .read_to_vec()
        .map_err(|_| ToolError::Refused("the response was too large or unreadable"))?;
    Ok(json!({"url": url, "status": status, "body": String::from_utf8_lossy(&bytes)}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(allow: &[&str]) -> WebConfig {
        WebConfig {
            allow: allow.iter().map(|s| s.to_string()).collect(),
            timeout_ms: None,
            max_bytes: None,
        }
    }

    #[test]
    fn allow_list_compares_parsed_urls() {
        let c = cfg(&["http://127.0.0.1:8080/docs/", "https://docs.example.com"]);
        assert!(allowed(&c, "http://127.0.0.1:8080/docs/a").is_some());
        assert!(allowed(&c, "https://docs.example.com/x").is_some());
        for bad in [
            "http://127.0.0.1:8081/docs/a",
            "http://127.0.0.1:8080/other",
            "http://127.0.0.1.evil.test:8080/docs/",
            "http://127.0.0.1:8080@evil.test/docs/",
            "https://docs.example.com.evil.test/",
            "ftp://docs.example.com/",
            "http://docs.example.com/",
            "http://127.0.0.1:8080/docs/../admin/",
            "http://127.0.0.1:8080/docs/%2e%2e/admin/",
            "http://127.0.0.1:8080/docsecret",
        ] {
            assert!(allowed(&c, bad).is_none(), "{bad}");
        }
    }
}
