//! The local server: loopback only, every path behind an unguessable token, strict headers on every
//! response, no outbound requests. The trace viewer's pages are served here; the review queue
//! (`view::queue`) is served by the same loop, behind the same token and headers.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use axum::http::{HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use tower_http::set_header::SetResponseHeaderLayer;

use super::render::{CSS, Page, Pages};

/// The Content-Security-Policy of every response: no script of any kind, styles only from this server.
pub const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; \
                       form-action 'none'; frame-ancestors 'none'";

/// The review queue's policy: [`CSP`], except that its forms may post to this server (and nowhere else).
pub const QUEUE_CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; \
                             form-action 'self'; frame-ancestors 'none'";

/// The one script of `zamburak mcp serve`'s review queue, on its pages and on the page a token-less claim
/// link (`/run/NAME?claim=CODE`) gives. On a page behind the token it keeps the token in this origin's
/// `localStorage`; on the link's page it reads it back and opens the same page behind the token. That is
/// what lets the link, which goes through the model and so carries no secret, open the claim in the
/// person's browser (once that browser has opened the queue's own address) and in no other client.
///
/// Why storage and not a cookie: an origin's storage is its own (scheme, host *and port*), while a browser
/// sends a cookie of 127.0.0.1 to every port of 127.0.0.1, so any page served on another local port would
/// receive a session cookie and could replay it from outside the browser. No request carries the stored
/// token except those this script makes to the queue's own origin.
pub const LINK_SCRIPT: &str = r#"(function(){try{var k="zamburak-queue",p=location.pathname,m=/^\/([0-9a-f]{64})\//.exec(p);if(m){localStorage.setItem(k,m[1]);return}var t=localStorage.getItem(k);if(t&&/^[0-9a-f]{64}$/.test(t)&&(p==="/"||p.indexOf("/run/")===0))location.replace("/"+t+p+location.search)}catch(e){}})();"#;

/// [`QUEUE_CSP`], with [`LINK_SCRIPT`] (by its SHA-256) the only script allowed.
pub const QUEUE_LINK_CSP: &str = "default-src 'none'; script-src 'sha256-HX592YYq5y0xTAdiY2qYFu5MJ/L6fjh3YXj78KUUmKg='; \
                                  style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; \
                                  frame-ancestors 'none'";

/// Why the viewer or the review queue did not start, or stopped.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// `--addr` is not `IP:PORT`.
    #[error("`{text}` is not IP:PORT (e.g. 127.0.0.1:8080)")]
    NotAnAddress { text: String },
    /// `--addr` is not on the loopback interface.
    #[error("`{text}` is not a loopback address; the viewer only listens on 127.0.0.1 or [::1]")]
    NotLoopback { text: String },
    /// The operating system gave no randomness for the access token.
    #[error("no randomness for the access token: {0}")]
    NoRandomness(#[source] std::io::Error),
    /// The server's runtime could not be built.
    #[error("cannot start the server: {0}")]
    Runtime(#[source] std::io::Error),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// The server failed while serving.
    #[error("the server stopped: {0}")]
    Stopped(#[source] std::io::Error),
    /// The application could not be built: a template of the binary's own does not compile (a bug, not
    /// the user's), said in the template engine's words.
    #[error("{0}")]
    App(String),
}

/// Checks an `--addr`: an IP address on the loopback interface. Host names are refused too (they could
/// resolve anywhere).
pub fn loopback_addr(addr: Option<&str>) -> Result<SocketAddr, ServeError> {
    let Some(text) = addr else {
        return Ok(SocketAddr::from(([127, 0, 0, 1], 0)));
    };
    let a: SocketAddr = text.parse().map_err(|_| ServeError::NotAnAddress {
        text: text.to_string(),
    })?;
    if !a.ip().is_loopback() {
        return Err(ServeError::NotLoopback {
            text: text.to_string(),
        });
    }
    Ok(a)
}

/// 32 random bytes from the operating system, as hex.
pub fn token() -> Result<String, ServeError> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(ServeError::NoRandomness)?;
    Ok(hex::encode(bytes))
}

struct AppState {
    pages: Pages,
    token: String,
}

pub(super) fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "not found").into_response()
}

pub(super) fn html(body: String) -> Response {
    ([(CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

/// The page a request path names behind the token (`/TOKEN/page` → `page`); `None` without the right
/// token, which every caller answers with 404.
pub fn behind_token<'p>(path: &'p str, token: &str) -> Option<&'p str> {
    let rest = path.strip_prefix('/')?;
    let (tok, page) = rest.split_once('/').unwrap_or((rest, ""));
    same(tok, token).then_some(page)
}

/// Compares without an early exit, so response times do not reveal how much of a guessed token is right.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

async fn handle(State(state): State<Arc<AppState>>, uri: Uri) -> Response {
    let Some(page) = behind_token(uri.path(), &state.token) else {
        return not_found();
    };
    let root = format!("/{}/", state.token);
    let page = match page {
        "" => Page::Summary,
        "plan" => Page::Plan,
        "graph" => match uri.query().and_then(|q| q.strip_prefix("focus=")) {
            None => Page::Graph(None),
            Some(id) => match id.parse() {
                Ok(id) => Page::Graph(Some(id)),
                Err(_) => return not_found(),
            },
        },
        "static/view.css" => {
            return ([(CONTENT_TYPE, "text/css; charset=utf-8")], CSS).into_response();
        }
        other => match other.strip_prefix("call/").and_then(|id| id.parse().ok()) {
            Some(id) => Page::Call(id),
            None => return not_found(),
        },
    };
    match state.pages.page(&page, &root) {
        None => match page {
            Page::Call(id) => match state.pages.missing_call(id, &root) {
                Ok(body) => (StatusCode::NOT_FOUND, html(body)).into_response(),
                Err(_) => not_found(),
            },
            _ => not_found(),
        },
        Some(Ok(body)) => html(body),
        Some(Err(e)) => (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    }
}

/// The application: one handler behind the token, and the security headers on every response (404s too).
pub fn app(pages: Pages, token: String) -> Router {
    let state = Arc::new(AppState { pages, token });
    secured(Router::new().fallback(handle).with_state(state), CSP)
}

/// `router` with the security headers on every response it gives (404s too), `csp` among them.
pub fn secured(router: Router, csp: &'static str) -> Router {
    let header = |name, value: &'static str| {
        SetResponseHeaderLayer::overriding(name, HeaderValue::from_static(value))
    };
    router
        .layer(header(CONTENT_SECURITY_POLICY, csp))
        .layer(header(X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .layer(header(REFERRER_POLICY, "no-referrer"))
        .layer(header(X_FRAME_OPTIONS, "DENY"))
        .layer(header(CACHE_CONTROL, "no-store"))
}

/// Serves the trace's pages until Ctrl-C. `ready` gets the URL once the socket is bound.
pub fn serve(
    pages: Pages,
    addr: SocketAddr,
    ready: &mut dyn FnMut(&str),
) -> Result<(), ServeError> {
    serve_app(|token, _| Ok(app(pages, token)), addr, ready)
}

/// Serves the application `make` builds for a fresh token and the address bound until Ctrl-C (then lets
/// the requests in progress finish). `ready` gets the URL, with the token, once the socket is bound.
pub fn serve_app(
    make: impl FnOnce(String, SocketAddr) -> Result<Router, String>,
    addr: SocketAddr,
    ready: &mut dyn FnMut(&str),
) -> Result<(), ServeError> {
    let token = token()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let listen = |source| ServeError::Listen { addr, source };
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await.map_err(listen)?;
        let bound = listener.local_addr().map_err(listen)?;
        let url = format!("http://{bound}/{token}/");
        let app = make(token, bound).map_err(ServeError::App)?;
        ready(&url);
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(ServeError::Stopped)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Standard base64, as a CSP hash source writes a digest.
    fn base64(bytes: &[u8]) -> String {
        const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
            for i in 0..4 {
                if i <= chunk.len() {
                    out.push(char::from(ABC[(n >> (18 - 6 * i) & 63) as usize]));
                } else {
                    out.push('=');
                }
            }
        }
        out
    }

    #[test]
    fn the_queue_link_policy_allows_exactly_the_link_script() {
        use sha2::Digest;
        assert_eq!(base64(b"ab"), "YWI=");
        let hash = base64(&sha2::Sha256::digest(LINK_SCRIPT.as_bytes()));
        assert!(
            QUEUE_LINK_CSP.contains(&format!("script-src 'sha256-{hash}';")),
            "{hash}"
        );
        assert_eq!(
            QUEUE_LINK_CSP.replace(&format!("script-src 'sha256-{hash}'; "), ""),
            QUEUE_CSP
        );
        assert!(!LINK_SCRIPT.contains("</"));
    }

    #[test]
    fn only_a_loopback_ip_and_port_is_accepted() {
        assert_eq!(
            loopback_addr(None).unwrap(),
            SocketAddr::from(([127, 0, 0, 1], 0))
        );
        assert_eq!(loopback_addr(Some("[::1]:8080")).unwrap().port(), 8080);
        let e = loopback_addr(Some("localhost:8080")).unwrap_err();
        assert!(
            matches!(&e, ServeError::NotAnAddress { text } if text == "localhost:8080"),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "`localhost:8080` is not IP:PORT (e.g. 127.0.0.1:8080)"
        );
        let e = loopback_addr(Some("0.0.0.0:8080")).unwrap_err();
        assert!(matches!(&e, ServeError::NotLoopback { .. }), "{e}");
    }
}
