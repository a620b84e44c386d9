//! One rule for URLs, shared by the web adapter's allow-list (`builtins.web.allow`) and the `url_allowlist`
//! verifier: normalise per RFC 3986 with the `url` crate, then compare scheme, host, port and path on
//! segment boundaries. The adapter fetches exactly the normalised URL, so what was checked is what is asked
//! for: a server that resolves `..` or `%2e%2e` itself never sees either.
//!
//! Normalisation (RFC 3986 §6.2.2): percent-encoded unreserved characters are decoded (`%2e` is `.`,
//! `%7E` is `~`), dot segments are removed, the scheme and host are lowercased, a default port is dropped,
//! and the fragment (never sent to a server) is dropped. Refused outright, because servers disagree on what
//! they mean: anything but `http`/`https`, user info (`user@host`), whitespace or control characters, a
//! backslash (`\` or `%5C`), an encoded slash (`%2F`), and a dot segment with parameters (`..;`, which
//! some servers treat as `..`).
//!
//! ```
//! use zamburak::policy::url_rule::{normalise, Prefix};
//! let u = normalise("HTTP://Docs.Example.com:80/docs/%2e%2e/admin/#x").unwrap();
//! assert_eq!(u.as_str(), "http://docs.example.com/admin/");
//! let docs = Prefix::parse("http://docs.example.com/docs").unwrap();
//! assert!(!docs.contains(&u));
//! assert!(docs.contains(&normalise("http://docs.example.com/docs/a").unwrap()));
//! assert!(!docs.contains(&normalise("http://docs.example.com/docsecret").unwrap()));
//! ```

use url::Url;

/// A URL after normalisation: the only form that is checked or fetched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NormalUrl(Url);

impl NormalUrl {
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
    pub fn scheme(&self) -> &str {
        self.0.scheme()
    }
    /// The lowercased host (IPv4 in dotted form, IPv6 in brackets).
    pub fn host(&self) -> String {
        self.0.host_str().unwrap_or_default().to_string()
    }
    /// The port, or the scheme's default.
    pub fn port(&self) -> Option<u16> {
        self.0.port_or_known_default()
    }
    pub fn path(&self) -> &str {
        self.0.path()
    }
}

/// Why a URL was refused. Short, and never repeats the URL (it may be attacker data).
pub type Refusal = &'static str;

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Decodes `%XX` where `XX` encodes an unreserved character; leaves every other escape as it is.
fn decode_unreserved(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
            && is_unreserved(b)
        {
            out.push(char::from(b));
            i += 3;
            continue;
        }
        // `s` is a str and `%XX` is ASCII, so `i` is always at a char boundary here.
        let c = s[i..].chars().next().unwrap_or('\u{fffd}');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Normalises `s`, or says why it is refused.
pub fn normalise(s: &str) -> Result<NormalUrl, Refusal> {
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("the URL contains whitespace or control characters");
    }
    if s.contains('\\') {
        return Err("the URL contains a backslash");
    }
    let decoded = decode_unreserved(s);
    let lower = decoded.to_ascii_lowercase();
    if lower.contains("%2f") || lower.contains("%5c") {
        return Err("the URL contains an encoded slash or backslash");
    }
    // The WHATWG parser the `url` crate follows repairs `http:h/x` and `http:///h/x` into `http://h/x`;
    // a URL that needs repair is ambiguous, so it is refused.
    let authority_form = decoded
        .split_once(':')
        .and_then(|(_, rest)| rest.strip_prefix("//"))
        .is_some_and(|rest| !rest.starts_with('/'));
    if !authority_form {
        return Err("not a well-formed URL (expected scheme://host/...)");
    }
    let mut url = Url::parse(&decoded).map_err(|_| "not a well-formed URL")?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("only http and https URLs are allowed");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("URLs with user info are refused");
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("the URL has no host");
    }
    if url.path().split('/').any(|seg| {
        let name = seg.split(';').next().unwrap_or(seg);
        seg.contains(';') && (name == "." || name == "..")
    }) {
        return Err("the URL has a dot segment with parameters");
    }
    url.set_fragment(None);
    Ok(NormalUrl(url))
}

/// An allow-list entry: scheme, host, port and a path prefix, all normalised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prefix(NormalUrl);

impl Prefix {
    /// An entry like `https://docs.example.com/docs/`. Its query, if any, is ignored.
    pub fn parse(entry: &str) -> Result<Prefix, Refusal> {
        normalise(entry).map(Prefix)
    }

    /// Whether `u` is inside this prefix: same scheme, host and port, and a path equal to the prefix's or
    /// below it on a segment boundary (`/docs` covers `/docs`, `/docs/` and `/docs/a`, not `/docsecret`).
    pub fn contains(&self, u: &NormalUrl) -> bool {
        let p = &self.0;
        p.scheme() == u.scheme()
            && p.host() == u.host()
            && p.port() == u.port()
            && path_within(p.path(), u.path())
    }
}

/// A path prefix (`/docs/`, from a verifier's `paths`) normalised like a URL's path.
pub fn normal_path(prefix: &str) -> Result<String, Refusal> {
    let slash = if prefix.starts_with('/') { "" } else { "/" };
    normalise(&format!("http://h{slash}{prefix}")).map(|u| u.path().to_string())
}

/// Whether `path` is `prefix` or below it on a segment boundary.
pub fn path_within(prefix: &str, path: &str) -> bool {
    if prefix.ends_with('/') {
        return path.starts_with(prefix) || path == prefix.trim_end_matches('/');
    }
    path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> String {
        normalise(s)
            .map(|u| u.as_str().to_string())
            .unwrap_or_else(|e| format!("refused: {e}"))
    }

    #[test]
    fn dot_segments_are_removed_in_every_spelling() {
        for s in [
            "http://h/docs/../admin/",
            "http://h/docs/%2e%2e/admin/",
            "http://h/docs/%2E%2E/admin/",
            "http://h/docs/.%2e/admin/",
            "http://h/docs/%2e./admin/",
            "http://h/docs/./../admin/",
            "http://h/docs/a/../../admin/",
            "http://h/docs/%2561/../../admin/",
        ] {
            assert_eq!(n(s), "http://h/admin/", "{s}");
        }
        assert_eq!(n("http://h/docs/a/../b?q=1#frag"), "http://h/docs/b?q=1");
        assert_eq!(n("http://h/docs/%7Euser/%41"), "http://h/docs/~user/A");
        // Reserved escapes stay escaped: `%3F` is a character of a segment, not a query.
        assert_eq!(n("http://h/docs/a%3Fb"), "http://h/docs/a%3Fb");
    }

    #[test]
    fn ambiguous_urls_are_refused() {
        for s in [
            "http://h/docs/..%2fadmin/",
            "http://h/docs/..%2Fadmin/",
            "http://h/docs/..%5cadmin/",
            "http://h/docs\\..\\admin/",
            "http://h/docs/..;/admin/",
            "http://h/docs/.;x/admin/",
            "http://user@h/docs/",
            "http://user:pw@h/docs/",
            "ftp://h/docs/",
            "file:///etc/passwd",
            "http://h/docs /",
            "http:///docs/",
            "http:h/docs/",
            "http:/h/docs/",
            "docs/a",
            "",
        ] {
            assert!(normalise(s).is_err(), "{s}: {}", n(s));
        }
    }

    #[test]
    fn hosts_and_ports_are_normalised() {
        assert_eq!(n("HTTP://EXAMPLE.com:80/"), "http://example.com/");
        assert_eq!(n("https://example.com:443"), "https://example.com/");
        assert_eq!(n("http://2130706433/x"), "http://127.0.0.1/x");
        assert_eq!(n("http://127.0.0.1:8080/x"), "http://127.0.0.1:8080/x");
    }

    #[test]
    fn prefixes_match_on_segment_boundaries() {
        let p = |s: &str| Prefix::parse(s).unwrap();
        let u = |s: &str| normalise(s).unwrap();
        for prefix in ["http://h/docs", "http://h/docs/"] {
            assert!(p(prefix).contains(&u("http://h/docs/a")), "{prefix}");
            assert!(p(prefix).contains(&u("http://h/docs/")), "{prefix}");
            assert!(!p(prefix).contains(&u("http://h/docsecret")), "{prefix}");
            assert!(
                !p(prefix).contains(&u("http://h/docs/../admin")),
                "{prefix}"
            );
            assert!(!p(prefix).contains(&u("http://h/")), "{prefix}");
        }
        assert!(p("http://h/docs").contains(&u("http://h/docs")));
        assert!(p("http://h").contains(&u("http://h/anything")));
        assert!(!p("http://h").contains(&u("http://h:81/")));
        assert!(!p("http://h").contains(&u("https://h/")));
        assert!(!p("http://h").contains(&u("http://h.evil.test/")));
    }
}
