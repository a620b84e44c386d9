//! The person's review queue inside `zamburak mcp serve`: `view::queue`'s application for the server's runs
//! directory, on loopback, started with the MCP session and stopped with it, so a waiting run's answer can
//! carry the link of its claim's page.
//!
//! That link goes to the client's model, and a model with a fetch or shell tool could open it: a link
//! that carried the queue's token would let it read the claim's values (the attacker's text among them)
//! and post the approve form itself. So the link names the claim and no secret (`/run/run-3?claim=CODE`),
//! and it opens only in a browser that has opened the queue's own address (with its token), which only the
//! person is given: on the server's stderr, and in `RUNS/queue.url` (mode 0600). The queue's pages keep
//! the token in their origin's storage, and the link's page (the same for everyone, with nothing of any
//! claim) opens the claim's page behind the token when the browser has it ([`LINK_SCRIPT`]); elsewhere it
//! says where to look.
//!
//! Not a cookie: a browser sends a cookie of 127.0.0.1 with every request to any port of 127.0.0.1, so a
//! page served on another local port, by anyone, would be sent the person's session and could replay it
//! from outside the browser (open the link, read the form, post it). An origin's storage is its own,
//! port and all, and nothing of it is sent with any request. The queue's own checks are unchanged and
//! stand in front of everything here too ([`crate::view::queue::OwnAddress`]): requests must name this
//! server in `Host` (`127.0.0.1:PORT` or `localhost:PORT`: a page on another name resolving to 127.0.0.1,
//! DNS rebinding, or meant for another port gets `421`), a request from a page of another origin is
//! refused, and so is every POST without `Sec-Fetch-Site: same-origin`; behind them, the URL token on every
//! page and form and a single-use form token per claim shown.
//!
//! Nothing here prints; the CLI announces the address.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::view::queue::{self, OwnAddress, Queue, Serving};
use crate::view::server::{LINK_SCRIPT, QUEUE_LINK_CSP, ServeError, behind_token, secured, token};

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
    own: OwnAddress,
    runs: PathBuf,
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

/// The page a token-less link gives: the same for every client, nothing of any claim. `stale`: the
/// browser came with a token this server did not give (its storage remembered an earlier queue on this
/// port), and the page has no script (which would only come back here).
fn closed_door(runs: &Path, stale: bool) -> Response {
    let runs = escape(&crate::text::visible(&runs.display().to_string()));
    let (status, script, opened) = if stale {
        (
            StatusCode::NOT_FOUND,
            String::new(),
            "This browser remembered the address of an earlier review queue on this port, which has \
             stopped. Open the queue's own address",
        )
    } else {
        (
            StatusCode::FORBIDDEN,
            format!("<script>{LINK_SCRIPT}</script>"),
            "Open the queue's own address once in this browser",
        )
    };
    let body = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"referrer\" \
         content=\"no-referrer\"><title>zamburak review queue</title>{script}</head><body><main>\n\
         <h1>This review queue is for the person running Zamburak</h1>\n\
         <p>{opened}: <code>zamburak mcp serve</code> printed it when it started (your MCP client's log of \
         the server), and it is in <code>{runs}/{URL_FILE}</code>. Then this link opens the claim.</p>\n\
         </main></body></html>\n"
    );
    (status, [(CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

/// Whether `path` starts with a segment shaped like a URL token (64 hex digits).
fn token_shaped(path: &str) -> bool {
    let first = path.trim_start_matches('/').split('/').next().unwrap_or("");
    first.len() == 64 && first.bytes().all(|b| b.is_ascii_hexdigit())
}

/// In front of the queue: the queue's own checks ([`OwnAddress::refuse`]), then the token-less link's
/// page for `/` and `/run/…`, whoever asks, and the stale page for another token. Everything else goes on
/// to the queue, behind its token.
async fn door(State(door): State<Arc<Door>>, req: Request, next: Next) -> Response {
    if let Some(refused) = door.own.refuse(req.method(), req.headers()) {
        return refused;
    }
    let path = req.uri().path();
    if path == "/" || path.starts_with("/run/") {
        return closed_door(&door.runs, false);
    }
    if req.method() == Method::GET
        && behind_token(path, &door.token).is_none()
        && token_shaped(path)
    {
        return closed_door(&door.runs, true);
    }
    next.run(req).await
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
    let serving = Serving { bound, links: true };
    let (app, _) = queue::app(queue, url_token.clone(), &serving).map_err(ServeError::App)?;
    let door_state = Arc::new(Door {
        token: url_token,
        own: OwnAddress::of(bound),
        runs: runs.to_path_buf(),
    });
    let app: Router = secured(
        app.layer(axum::middleware::from_fn_with_state(door_state, door)),
        QUEUE_LINK_CSP,
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
    fn html_is_escaped_and_token_shaped_paths_are_told() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert!(token_shaped(&format!("/{}/run/x", "a".repeat(64))));
        assert!(token_shaped(&format!("/{}", "0".repeat(64))));
        assert!(!token_shaped("/run/x"));
        assert!(!token_shaped(&format!("/{}/", "g".repeat(64))));
        assert!(!token_shaped("/"));
    }
}
