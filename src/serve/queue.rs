//! The person's review queue inside `zamburak mcp serve`: `view::queue`'s application for the server's runs
//! directory, on loopback, started with the MCP session and stopped with it, so a waiting run's answer can
//! carry the link of its claim's page.
//!
//! That link goes to the client's model, and a model with a fetch or shell tool could open it: a link
//! that carried the queue's token would let it read the claim's values (the attacker's text among them)
//! and post the approve form itself. So the link names the claim and no secret (`/run/run-3?claim=CODE`),
//! and it opens only in a browser that holds this server's session cookie. The person's browser gets the
//! cookie from the queue's own address (with its token), which only the person is given: on the server's
//! stderr, and in `RUNS/queue.url` (mode 0600). Without the cookie the link shows a page saying where to
//! look, and nothing of the claim. The queue's own protections (the URL token on every page and form, a
//! single-use form token per claim shown, `Sec-Fetch-Site` checked) are unchanged; on top, every request
//! must name this server by its loopback address in `Host` (a page on another name resolving to
//! 127.0.0.1, DNS rebinding, gets nothing).
//!
//! Nothing here prints; the CLI announces the address.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header::{CONTENT_TYPE, COOKIE, HOST, SET_COOKIE};
use axum::http::{HeaderValue, Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::view::queue::{self, Queue};
use crate::view::server::{QUEUE_CSP, ServeError, behind_token, same, secured, token};

/// The file in the runs directory that holds the queue's own address, for the person.
pub const URL_FILE: &str = "queue.url";

/// A queue being served: where, and how to link to a claim.
#[derive(Clone, Debug)]
pub struct Served {
    /// `http://127.0.0.1:PORT`.
    base: String,
    /// The queue's own address, with its token: the person's, never the model's.
    pub address: String,
    /// Where [`URL_FILE`] was written (removed again by [`Served::forget`]).
    file: Option<PathBuf>,
}

impl Served {
    /// The link of the claim `code` of run `run`: no secret in it (see the module's preamble).
    pub fn claim_url(&self, run: &str, code: &str) -> String {
        format!("{}/run/{run}?claim={code}", self.base)
    }

    /// The link of run `run`'s page: its output with labels, its decisions and any claim, for the person
    /// (no secret in it, as [`Served::claim_url`]).
    pub fn run_url(&self, run: &str) -> String {
        format!("{}/run/{run}", self.base)
    }

    /// Removes [`URL_FILE`] when it still holds this server's address (another server on the same runs
    /// directory may have written its own since).
    pub fn forget(&self) {
        if let Some(file) = &self.file
            && std::fs::read_to_string(file).is_ok_and(|t| t.trim() == self.address)
        {
            let _ = std::fs::remove_file(file);
        }
    }
}

/// What the door in front of the queue knows.
struct Door {
    token: String,
    /// The session cookie's name (per port: several servers may run at once) and value.
    cookie: String,
    session: String,
    /// `Host` as a browser that was given this server's address sends it.
    host: String,
    runs: PathBuf,
}

impl Door {
    fn has_session(&self, req: &Request) -> bool {
        req.headers()
            .get_all(COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|c| c.trim().split_once('='))
            .any(|(name, value)| name == self.cookie && same(value, &self.session))
    }

    fn set_cookie(&self) -> Option<HeaderValue> {
        // HttpOnly: no script reads it (the pages run none anyway). SameSite=Lax: a link the person
        // clicks elsewhere opens the claim; no other site's form or fetch carries it.
        HeaderValue::from_str(&format!(
            "{}={}; HttpOnly; SameSite=Lax; Path=/",
            self.cookie, self.session
        ))
        .ok()
    }
}

/// Escapes text for HTML.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page a browser without the session gets: where the person finds the queue's address. Nothing of
/// any claim.
fn closed_door(runs: &Path) -> Response {
    let runs = escape(&crate::text::visible(&runs.display().to_string()));
    let body = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"referrer\" \
         content=\"no-referrer\"><title>zamburak review queue</title></head><body><main>\n\
         <h1>This review queue is for the person running Zamburak</h1>\n\
         <p>Open the queue's own address once in this browser: <code>zamburak mcp serve</code> printed it \
         when it started (your MCP client's log of the server), and it is in <code>{runs}/{URL_FILE}</code>. \
         Then this link opens the claim.</p>\n</main></body></html>\n"
    );
    (
        StatusCode::FORBIDDEN,
        [(CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response()
}

/// In front of the queue: the `Host` check, the token-less claim links for a browser with the session,
/// and the session cookie for a browser that opened a page behind the token.
async fn door(State(door): State<Arc<Door>>, mut req: Request, next: Next) -> Response {
    let host_ok = req
        .headers()
        .get(HOST)
        .is_some_and(|h| h.as_bytes() == door.host.as_bytes());
    if !host_ok {
        return (
            StatusCode::MISDIRECTED_REQUEST,
            "this server answers only to its loopback address",
        )
            .into_response();
    }
    let path = req.uri().path().to_string();
    if path == "/" || path.starts_with("/run/") {
        if req.method() != Method::GET || !door.has_session(&req) {
            return closed_door(&door.runs);
        }
        if path == "/" {
            let mut to = format!("/{}/", door.token);
            if let Some(q) = req.uri().query() {
                to = format!("{to}?{q}");
            }
            return match to.parse::<Uri>() {
                Ok(uri) => {
                    *req.uri_mut() = uri;
                    next.run(req).await
                }
                Err(_) => closed_door(&door.runs),
            };
        }
        let query = req
            .uri()
            .query()
            .map(|q| format!("?{q}"))
            .unwrap_or_default();
        return match format!("/{}{path}{query}", door.token).parse::<Uri>() {
            Ok(uri) => {
                *req.uri_mut() = uri;
                next.run(req).await
            }
            Err(_) => closed_door(&door.runs),
        };
    }
    let behind = req.method() == Method::GET && behind_token(&path, &door.token).is_some();
    let mut response = next.run(req).await;
    if behind
        && response.status().is_success()
        && let Some(cookie) = door.set_cookie()
    {
        response.headers_mut().append(SET_COOKIE, cookie);
    }
    response
}

/// Writes the queue's address to `RUNS/queue.url`, readable by the owner only.
fn write_url_file(runs: &Path, address: &str) -> Option<PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let path = runs.join(URL_FILE);
    // Replaced, not rewritten in place: a file someone else made there keeps its own mode otherwise.
    let _ = std::fs::remove_file(&path);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .ok()?;
    f.write_all(format!("{address}\n").as_bytes()).ok()?;
    Some(path)
}

/// Binds `addr` (a loopback address, port 0 for a free one) and serves the review queue of `queue.dirs`
/// (the server's runs directory, `runs`) on the current runtime until it shuts down.
pub async fn start(queue: Queue, runs: &Path, addr: SocketAddr) -> Result<Served, ServeError> {
    let listen = |source| ServeError::Listen { addr, source };
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(listen)?;
    let bound = listener.local_addr().map_err(listen)?;
    let url_token = token()?;
    let base = format!("http://{bound}");
    let address = format!("{base}/{url_token}/");
    let (app, _) = queue::app(queue, url_token.clone()).map_err(ServeError::App)?;
    let door_state = Arc::new(Door {
        token: url_token,
        cookie: format!("zamburak_queue_{}", bound.port()),
        session: token()?,
        host: bound.to_string(),
        runs: runs.to_path_buf(),
    });
    let app: Router = secured(
        app.layer(axum::middleware::from_fn_with_state(door_state, door)),
        QUEUE_CSP,
    );
    tokio::spawn(async move {
        // A failing accept loop ends the queue, not the MCP session: claims can still be decided with
        // `zamburak view --queue` or `zamburak approve`.
        let _ = axum::serve(listener, app).await;
    });
    let file = write_url_file(runs, &address);
    Ok(Served {
        base,
        address,
        file,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_link_carries_no_secret() {
        let served = Served {
            base: "http://127.0.0.1:4000".into(),
            address: "http://127.0.0.1:4000/abcdef/".into(),
            file: None,
        };
        let link = served.claim_url("run-3", "9SN6-6WTY-QV5X");
        assert_eq!(link, "http://127.0.0.1:4000/run/run-3?claim=9SN6-6WTY-QV5X");
        assert!(!link.contains("abcdef"));
    }

    #[test]
    fn the_session_cookie_is_matched_by_name_and_value() {
        let door = Door {
            token: "t".into(),
            cookie: "zamburak_queue_4000".into(),
            session: "s3cret".into(),
            host: "127.0.0.1:4000".into(),
            runs: PathBuf::from("/r"),
        };
        let with = |cookie: &str| {
            axum::http::Request::builder()
                .header(COOKIE, cookie)
                .body(axum::body::Body::empty())
                .unwrap()
        };
        assert!(door.has_session(&with("a=b; zamburak_queue_4000=s3cret")));
        assert!(!door.has_session(&with("zamburak_queue_4001=s3cret")));
        assert!(!door.has_session(&with("zamburak_queue_4000=s3cre")));
        assert!(!door.has_session(&with("zamburak_queue_4000=")));
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
