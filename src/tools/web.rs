//! HTTP GET of allow-listed URLs. The allow-list compares the parsed scheme, host, port and path prefix,
//! never raw string prefixes; redirects are not followed; bodies are capped.

use std::time::Duration;

use serde_json::{Value, json};

use super::ToolError;
use super::config::WebConfig;

struct Url {
    scheme: String,
    host: String,
    port: u16,
    path: String,
}

fn parse(url: &str) -> Option<Url> {
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let split = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(split);
    if authority.contains('@') || authority.contains('\\') || authority.is_empty() {
        return None;
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, p.parse().ok()?),
        None => (authority, default_port),
    };
    if host.is_empty() {
        return None;
    }
    Some(Url {
        scheme,
        host: host.to_ascii_lowercase(),
        port,
        path: if path.is_empty() {
            "/".into()
        } else {
            path.to_string()
        },
    })
}

/// Whether `url` is inside one of the allowed prefixes.
pub fn allowed(cfg: &WebConfig, url: &str) -> bool {
    let Some(u) = parse(url) else { return false };
    cfg.allow.iter().filter_map(|a| parse(a)).any(|a| {
        a.scheme == u.scheme && a.host == u.host && a.port == u.port && u.path.starts_with(&a.path)
    })
}

/// Fetches an allowed URL.
pub fn get(cfg: &WebConfig, url: &str) -> Result<Value, ToolError> {
    if !allowed(cfg, url) {
        return Err(ToolError::Refused("the URL is not in builtins.web.allow"));
    }
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
        assert!(allowed(&c, "http://127.0.0.1:8080/docs/a"));
        assert!(allowed(&c, "https://docs.example.com/x"));
        for bad in [
            "http://127.0.0.1:8081/docs/a",
            "http://127.0.0.1:8080/other",
            "http://127.0.0.1.evil.test:8080/docs/",
            "http://127.0.0.1:8080@evil.test/docs/",
            "https://docs.example.com.evil.test/",
            "ftp://docs.example.com/",
            "http://docs.example.com/",
        ] {
            assert!(!allowed(&c, bad), "{bad}");
        }
    }
}
