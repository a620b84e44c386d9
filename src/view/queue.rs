//! `zamburak view --queue [DIR…]`: the review queue. Every claim pending under the given directories
//! ([`snapshot::find_pending`]) on one page, and each on a page of its own, shown in full (the text `approve`
//! shows at a terminal: values in clear, who wrote each, who may read it and who may not, the rule, what
//! approving does) with its own Approve and Reject buttons: plain HTML forms, no script.
//!
//! A decision is a POST of one claim's form. The form names the claim's digest and carries a CSRF token of
//! its own: random, issued with the page for that one claim (its snapshot's path, its digest, and the
//! suspension it belongs to: the trace record it follows and when it was made), kept in this server's
//! memory, and taken by the first POST that shows it. A POST
//! whose token this server did not issue or already took (a forged or replayed form), whose digest is not
//! the one its token was issued for, or whose claim is no longer the one shown (decided meanwhile, the
//! snapshot replaced) is refused with a page that says why, and nothing is decided. An accepted one goes
//! through [`snapshot::decide`], exactly as `zamburak approve` and `reject` do (the same trace records, the
//! same checks, single use), on a blocking thread: deciding starts a worker process and maybe MCP servers.
//! No request decides more than one claim.
//!
//! The queue answers only its own page ([`OwnAddress`]): every request must name it in `Host` (its bound
//! `127.0.0.1:PORT`, or `localhost:PORT`), so a page on another name that resolves to 127.0.0.1 (DNS
//! rebinding) or on another port gets nothing; a request that a page of another origin made (an `Origin`
//! other than its own; a fetch, frame or image another site asked for, by its `Sec-Fetch-*` headers) is
//! refused; and every POST must say that it comes from a page of this origin (`Sec-Fetch-Site:
//! same-origin`): one that says otherwise, or says nothing, is refused before its form is read. Browsers
//! port-scope none of this: the same-origin policy keeps another port's page from reading the answers, and
//! these checks keep it from being answered at all.
//!
//! Besides the list and each claim's page (`claim/N`, numbered as first shown), `run/NAME?claim=CODE` is the
//! page of the claim pending in run directory NAME (directly under a queue directory): the link
//! `zamburak mcp serve` gives for a waiting run, which names the claim before this server has shown it.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::extract::{DefaultBodyLimit, Form, FromRequest, Request, State};
use axum::http::header::{CONTENT_TYPE, HOST, LOCATION, ORIGIN};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use minijinja::value::Serde;
use minijinja::{Environment, context};
use serde::{Deserialize, Serialize};

use super::render::CSS;
use super::server::{
    LINK_SCRIPT, QUEUE_CSP, QUEUE_LINK_CSP, behind_token, html, not_found, secured,
};
use crate::runtime::run::Engine;
use crate::runtime::snapshot::{self, Decided, Snapshot, Verdict};
use crate::text::{visible, visible_lines};

/// What the queue serves and who decides.
pub struct Queue {
    /// The directories searched for pending claims (as `zamburak pending` searches them).
    pub dirs: Vec<PathBuf>,
    /// Who decides: recorded in each `approval` record, as `approve --by`.
    pub by: String,
    /// Where a continued run's interpreter runs.
    pub engine: Engine,
}

/// Most CSRF tokens kept at once; past it the oldest are forgotten (their forms are then refused, and a
/// reload gives fresh ones). Each page view issues one per claim shown.
const MAX_FORMS: usize = 4096;

/// Most bytes of a decision's form: three short fields.
const MAX_FORM_BYTES: usize = 4096;

/// Most bytes of a continued run's printed output kept for the outcome shown after a decision.
const MAX_PRINTED: usize = 64 << 10;

const TEMPLATES: &[(&str, &str)] = &[
    (
        "queue_base.html",
        include_str!("../../templates/queue_base.html"),
    ),
    ("queue.html", include_str!("../../templates/queue.html")),
    (
        "queue_claim.html",
        include_str!("../../templates/queue_claim.html"),
    ),
    (
        "queue_refused.html",
        include_str!("../../templates/queue_refused.html"),
    ),
    (
        "_queue_claim.html",
        include_str!("../../templates/_queue_claim.html"),
    ),
    (
        "_queue_outcome.html",
        include_str!("../../templates/_queue_outcome.html"),
    ),
    (
        "_queue_run.html",
        include_str!("../../templates/_queue_run.html"),
    ),
];

/// The queue's own address, and the check that a request is its own page's.
#[derive(Clone, Debug)]
pub struct OwnAddress {
    /// What `Host` may be: the bound address (`127.0.0.1:PORT`, `[::1]:PORT`) and `localhost:PORT`.
    hosts: [String; 2],
    /// `http://` and the bound address, for the refusal's message.
    shown: String,
}

/// A header's value when it is there exactly once and is text; `Err` when it is there otherwise (twice, or
/// not text), which every check below treats as its worst.
fn one_header<'h>(headers: &'h HeaderMap, name: &str) -> Result<Option<&'h str>, ()> {
    let mut all = headers.get_all(name).iter();
    match (all.next(), all.next()) {
        (None, _) => Ok(None),
        (Some(v), None) => v.to_str().map(Some).map_err(|_| ()),
        (Some(_), Some(_)) => Err(()),
    }
}

/// A refusal: the status and one plain sentence, and nothing of any claim.
fn refusal(status: StatusCode, why: String) -> Response {
    (status, [(CONTENT_TYPE, "text/plain; charset=utf-8")], why).into_response()
}

impl OwnAddress {
    /// The queue bound at `bound`.
    pub fn of(bound: std::net::SocketAddr) -> OwnAddress {
        OwnAddress {
            hosts: [bound.to_string(), format!("localhost:{}", bound.port())],
            shown: format!("http://{bound}"),
        }
    }

    /// Why a request with `method` and `headers` is not answered, or `None` when it is the queue's own
    /// page's (or a navigation to it, or not from a browser at all, which then still needs the URL token
    /// and, to decide, a form token of a page this server gave).
    ///
    /// * `Host` must be one of ours: a page on another name that resolves to 127.0.0.1 (DNS rebinding), or
    ///   a request meant for another port, gets `421`.
    /// * `Origin`, when there, must be ours or `null`: a page on another port sends its own. (`null` is
    ///   what Chromium sends on the queue's own form POSTs, whose pages have no referrer; for a POST the
    ///   next check decides.)
    /// * A POST must carry `Sec-Fetch-Site: same-origin`, which every browser sends on a form of a page of
    ///   this origin (Chromium 76, Firefox 90, Safari 16.4 and later). Another port of 127.0.0.1 is
    ///   `same-site`, not `same-origin`; a request that says nothing is not from such a browser's page of
    ///   ours, and is refused too: a person decides in a browser, and the terminal has `zamburak approve`.
    /// * A GET from another site's or port's page is answered only as a navigation of a whole window
    ///   (`Sec-Fetch-Mode: navigate`, `Sec-Fetch-Dest: document`), as a link the person clicks elsewhere
    ///   opens it: never to a fetch, a frame, an image or a script of that page.
    pub fn refuse(&self, method: &Method, headers: &HeaderMap) -> Option<Response> {
        let host = one_header(headers, HOST.as_str())
            .ok()
            .flatten()
            .filter(|h| self.hosts.iter().any(|o| o.eq_ignore_ascii_case(h)));
        let Some(host) = host else {
            return Some(refusal(
                StatusCode::MISDIRECTED_REQUEST,
                format!(
                    "this review queue answers only to its own address, {}: nothing was shown or decided\n",
                    self.shown
                ),
            ));
        };
        match one_header(headers, ORIGIN.as_str()) {
            Ok(None) => {}
            Ok(Some(o)) if o == "null" || o.eq_ignore_ascii_case(&format!("http://{host}")) => {}
            other => {
                let o = other.ok().flatten().unwrap_or("(several, or not text)");
                return Some(refusal(
                    StatusCode::FORBIDDEN,
                    format!(
                        "a page of another origin ({}) sent this request, and this review queue answers only its \
                         own pages: nothing was shown or decided\n",
                        visible(o)
                    ),
                ));
            }
        }
        let site = one_header(headers, "sec-fetch-site");
        if method != Method::GET && method != Method::HEAD {
            return (site != Ok(Some("same-origin"))).then(|| {
                let says = match site {
                    Ok(Some(s)) => format!("says Sec-Fetch-Site: {}", visible(s)),
                    Ok(None) => "says nothing of where it comes from".to_string(),
                    Err(_) => "says it unreadably".to_string(),
                };
                refusal(
                    StatusCode::FORBIDDEN,
                    format!(
                        "this form was not sent from a page of this queue (a browser says so with \
                         Sec-Fetch-Site: same-origin; this request {says}): from another site or page, or \
                         not from a browser, nothing was decided\n"
                    ),
                )
            });
        }
        match site {
            Ok(None | Some("same-origin" | "none")) => None,
            Ok(Some(_))
                if one_header(headers, "sec-fetch-mode") == Ok(Some("navigate"))
                    && one_header(headers, "sec-fetch-dest") == Ok(Some("document")) =>
            {
                None
            }
            _ => Some(refusal(
                StatusCode::FORBIDDEN,
                "a page of another site or port asked for this inside itself (a fetch, a frame, an image): \
                 this review queue answers only its own pages, and links opened in a window: nothing was shown\n"
                    .to_string(),
            )),
        }
    }
}

/// In front of the queue: [`OwnAddress::refuse`].
async fn guard(State(own): State<Arc<OwnAddress>>, req: Request, next: Next) -> Response {
    match own.refuse(req.method(), req.headers()) {
        Some(refused) => refused,
        None => next.run(req).await,
    }
}

/// What a CSRF token was issued for: one claim as one page showed it. The suspension (the trace record
/// the snapshot follows, and when it was made) tells a claim decided and made again with the same digest
/// (the plan ran again on the same data) from the one shown; `decide` checks the snapshot's bytes
/// against the trace.
#[derive(Clone, Debug, PartialEq)]
struct Issued {
    path: PathBuf,
    claim_digest: String,
    trace_prev: String,
    created_at: String,
}

impl Issued {
    fn of(path: &Path, s: &Snapshot) -> Issued {
        Issued {
            path: path.to_path_buf(),
            claim_digest: s.claim_digest.clone(),
            trace_prev: s.trace_prev.clone(),
            created_at: s.created_at.clone(),
        }
    }
}

/// The snapshot at `path` if its claim still waits: its trace's last record is the `suspend` naming it.
fn still_pending(path: &Path) -> Result<Snapshot, String> {
    match snapshot::pending_file(path.to_path_buf()) {
        Some((_, snap)) => Ok(snap),
        // Why not, for the page: gone (and who decided it), unreadable, or no longer the one waited on.
        None => Err(match snapshot::peek(path) {
            Err(e) => e.to_string(),
            Ok(_) => format!(
                "the claim at {} no longer waits (it was decided, or its run ended)",
                shown(path)
            ),
        }),
    }
}

/// A file's identity and version as the file system tells them (a snapshot is replaced by a rename, so
/// its inode changes; a trace grows).
#[derive(Clone, Debug, PartialEq)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    inode: u64,
}

fn stamp(p: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(p).ok()?;
    Some(Stamp {
        len: m.len(),
        modified: m.modified().ok(),
        #[cfg(unix)]
        inode: std::os::unix::fs::MetadataExt::ino(&m),
    })
}

/// A pending snapshot as last read: its stamp and its trace's, and the snapshot without its paused run
/// (the bulk of the file, which only `decide` needs and reads itself).
struct Seen {
    snapshot: Stamp,
    trace: Option<Stamp>,
    pending: Snapshot,
}

/// The claims pending under `dirs`, as [`snapshot::find_pending`] finds them (the same files, each checked
/// by [`snapshot::pending_file`], oldest first), reading again only a snapshot or a trace that changed since
/// the last look. Only what is shown comes from here: a decision checks its claim afresh.
fn find_pending_cached(
    dirs: &[PathBuf],
    cache: &mut HashMap<PathBuf, Seen>,
) -> Vec<(PathBuf, Snapshot)> {
    let files = snapshot::snapshot_files(dirs);
    cache.retain(|p, _| files.contains(p));
    let mut out = Vec::new();
    for path in files {
        // Stamped before reading: a change while it is read shows as a change next time.
        let Some(now) = stamp(&path) else { continue };
        if let Some(seen) = cache.get(&path)
            && seen.snapshot == now
            && seen.trace == stamp(&seen.pending.trace)
        {
            out.push((path, seen.pending.clone()));
            continue;
        }
        cache.remove(&path);
        if let Some((path, mut pending)) = snapshot::pending_file(path) {
            // The trace is stamped after it was read: if a decision lands in between, the cached claim
            // still looks pending until `decide` removes or replaces its snapshot (a changed stamp), and a
            // POST for it is refused meanwhile, as it checks afresh.
            let trace = stamp(&pending.trace);
            pending.paused = serde_json::Value::Null;
            out.push((path.clone(), pending.clone()));
            cache.insert(
                path,
                Seen {
                    snapshot: now,
                    trace,
                    pending,
                },
            );
        }
    }
    out.sort_by(|a, b| a.1.created_at.cmp(&b.1.created_at));
    out
}

/// The live CSRF tokens, oldest first in `order`.
#[derive(Default)]
struct Forms {
    live: HashMap<String, Issued>,
    order: VecDeque<String>,
}

impl Forms {
    fn issue(&mut self, issued: Issued) -> Result<String, String> {
        let token = super::server::token().map_err(|e| e.to_string())?;
        self.live.insert(token.clone(), issued);
        self.order.push_back(token.clone());
        while self.live.len() > MAX_FORMS || self.order.len() > 2 * MAX_FORMS {
            match self.order.pop_front() {
                Some(old) => {
                    self.live.remove(&old);
                }
                None => break,
            }
        }
        Ok(token)
    }

    /// Takes a token: whatever the POST turns out to be, it is never good again.
    fn take(&mut self, token: &str) -> Option<Issued> {
        self.live.remove(token)
    }

    /// Forgets every form of the claim at `path` (it was decided; its other forms could only be refused).
    fn forget(&mut self, path: &Path) {
        self.live.retain(|_, i| i.path != path);
    }
}

/// One line of a claim's text; `warn` marks what the person must not miss (who wrote it, who may not read
/// it, that approving only drafts).
#[derive(Serialize)]
struct Line {
    text: String,
    warn: bool,
}

/// A pending claim as a page shows it.
#[derive(Serialize)]
struct ClaimView {
    id: usize,
    snapshot: String,
    trace: String,
    plan: String,
    line: u32,
    tool: String,
    call_id: u32,
    code: String,
    digest: String,
    reason: String,
    rule: String,
    drafts: bool,
    created_at: String,
    expires_at: String,
    age: String,
    expiry: String,
    expired: bool,
    lines: Vec<Line>,
    /// Why the claim's values cannot be shown (they do not match its digests): then it can only be rejected.
    problem: Option<String>,
    csrf: String,
    /// A tick per value the approval may also remember (docs/approvals.md, "Remembered values"): unticked
    /// by default, so one click never remembers a value the person did not look at.
    remember: Vec<Tick>,
}

/// One value a tick on the page remembers with the approval.
#[derive(Clone, Serialize)]
struct Tick {
    /// `ARG` or `ARG[i]`, as `approve --remember` names it.
    place: String,
    /// The value and what the claim says of it.
    text: String,
}

/// What a decision did, shown at the top of the queue after it.
#[derive(Clone, Serialize)]
struct Outcome {
    approved: bool,
    headline: String,
    lines: Vec<String>,
    printed: String,
    ended: String,
    problems: Vec<String>,
    trace: String,
}

struct QueueState {
    queue: Queue,
    token: String,
    env: Environment<'static>,
    forms: Mutex<Forms>,
    /// Claim page ids: the index of a snapshot path, in the order the server first showed it.
    ids: Mutex<Vec<PathBuf>>,
    outcomes: Mutex<Vec<Outcome>>,
    /// The pending snapshots as last read, for listing them again without reading every one.
    seen: Mutex<HashMap<PathBuf, Seen>>,
}

/// A lock that a panicking holder poisoned still holds consistent data here (each critical section is a
/// single insert, remove or push), so the queue keeps serving.
fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl QueueState {
    fn root(&self) -> String {
        format!("/{}/", self.token)
    }

    fn id_of(&self, path: &Path) -> usize {
        let mut ids = locked(&self.ids);
        match ids.iter().position(|p| p == path) {
            Some(i) => i,
            None => {
                ids.push(path.to_path_buf());
                ids.len() - 1
            }
        }
    }

    fn render(&self, name: &str, ctx: minijinja::Value) -> Result<String, String> {
        self.env
            .get_template(name)
            .and_then(|t| t.render(ctx))
            .map_err(|e| format!("cannot render {name}: {e}"))
    }

    /// A pending claim as shown, with a fresh form token bound to it.
    fn claim_view(&self, path: &Path, snap: &Snapshot) -> Result<ClaimView, String> {
        let csrf = locked(&self.forms).issue(Issued::of(path, snap))?;
        Ok(view_of(self.id_of(path), path, snap, csrf))
    }

    fn list_page(&self, decided: Option<usize>) -> Result<String, String> {
        let found = find_pending_cached(&self.queue.dirs, &mut locked(&self.seen));
        let claims = found
            .iter()
            .map(|(path, snap)| self.claim_view(path, snap))
            .collect::<Result<Vec<_>, _>>()?;
        let outcome = decided.and_then(|n| locked(&self.outcomes).get(n).cloned());
        // The directories as absolute paths: `.` on a page says nothing.
        let dirs: Vec<String> = self
            .queue
            .dirs
            .iter()
            .map(|d| {
                visible(
                    &std::fs::canonicalize(d)
                        .unwrap_or_else(|_| d.clone())
                        .display()
                        .to_string(),
                )
            })
            .collect();
        self.render(
            "queue.html",
            context! {
                root => self.root(),
                by => visible(&self.queue.by),
                dirs => dirs,
                claims => Serde(&claims),
                outcome => Serde(&outcome),
            },
        )
    }

    /// One claim's page; `None`: no such id.
    fn claim_page(&self, id: usize) -> Option<Result<String, String>> {
        let path = locked(&self.ids).get(id).cloned()?;
        let (claim, gone) = match still_pending(&path) {
            Ok(snap) => match self.claim_view(&path, &snap) {
                Ok(c) => (Some(c), None),
                Err(e) => return Some(Err(e)),
            },
            Err(e) => (None, Some(visible(&e))),
        };
        Some(self.render(
            "queue_claim.html",
            context! {
                root => self.root(),
                by => visible(&self.queue.by),
                c => Serde(&claim),
                gone => gone,
                id => id,
            },
        ))
    }

    /// The page of the claim pending in the run directory `name` (directly under one of the queue's
    /// directories, as `zamburak mcp serve` makes them: `run-N`), so a link can name a claim before this
    /// server has shown it. `code`: the claim the link was made for; when the run now waits on another
    /// claim (the first was decided and the run stopped again), that one is shown with a note saying so.
    /// `None`: not a run directory's name.
    fn run_page(&self, name: &str, code: Option<&str>) -> Option<Result<String, String>> {
        let ok = !name.is_empty()
            && name.len() <= 64
            && !name.starts_with('.')
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !ok {
            return None;
        }
        let dirs: Vec<PathBuf> = self.queue.dirs.iter().map(|d| d.join(name)).collect();
        // The run itself, as the planner's answer links to it: everything it printed and decided.
        let run = dirs
            .iter()
            .find_map(|d| crate::view::run_shown::of_trace(&d.join("plan.zjson")));
        let found = snapshot::find_pending(&dirs)
            .into_iter()
            .find(|(p, _)| dirs.iter().any(|d| p.parent() == Some(d.as_path())));
        let asked = code.map(visible);
        let Some((path, snap)) = found else {
            let what = asked.as_deref().map_or_else(
                || format!("no claim of {name} waits"),
                |c| format!("claim {c} of {name} no longer waits"),
            );
            return Some(self.render(
                "queue_claim.html",
                context! {
                    root => self.root(),
                    by => visible(&self.queue.by),
                    c => Serde(&None::<ClaimView>),
                    gone => format!("{what} (it was decided, or its run ended)"),
                    id => asked.unwrap_or_else(|| name.to_string()),
                    run => Serde(&run),
                    run_name => name,
                },
            ));
        };
        let claim = match self.claim_view(&path, &snap) {
            Ok(c) => c,
            Err(e) => return Some(Err(e)),
        };
        let note = asked.filter(|c| *c != claim.code).map(|c| {
            format!(
                "claim {c} no longer waits (it was decided); {name} now waits on claim {}, below",
                claim.code
            )
        });
        Some(self.render(
            "queue_claim.html",
            context! {
                root => self.root(),
                by => visible(&self.queue.by),
                c => Serde(&Some(claim)),
                note => note,
                id => name,
                run => Serde(&run),
                run_name => name,
            },
        ))
    }

    fn refused(&self, status: StatusCode, why: &str) -> Response {
        let body = self.render(
            "queue_refused.html",
            context! { root => self.root(), by => visible(&self.queue.by), why => visible(why) },
        );
        match body {
            Ok(b) => (status, html(b)).into_response(),
            Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
        }
    }
}

/// A path for the page: relative to the current directory when under it, invisible characters escaped.
fn shown(p: &Path) -> String {
    let rel = std::env::current_dir()
        .ok()
        .and_then(|cwd| p.strip_prefix(&cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| p.to_path_buf());
    let text = rel.display().to_string();
    visible(text.strip_prefix("./").unwrap_or(&text))
}

fn view_of(id: usize, path: &Path, s: &Snapshot, csrf: String) -> ClaimView {
    let now = jiff::Timestamp::now();
    let age = s
        .created_at
        .parse::<jiff::Timestamp>()
        .map(|t| crate::runtime::snapshot::short_duration(now.duration_since(t).as_secs()))
        .unwrap_or_else(|_| "?".into());
    let expired = s.expired();
    let expiry = match s.expires_at.parse::<jiff::Timestamp>() {
        Ok(t) if !expired => format!(
            "expires in {}",
            crate::runtime::snapshot::short_duration(t.duration_since(now).as_secs())
        ),
        Ok(_) => "expired: it can only be rejected (which closes the run)".into(),
        Err(_) => "expiry unreadable: it can only be rejected".into(),
    };
    // The values shown are checked against the claim's digests first: what the page shows is what the
    // claim's code binds, or nothing.
    let (lines, problem) = match s.shown_checked() {
        Ok(shown) => (
            // The terminal's words with every value whole (crate::claim): the page, the form and `approve`
            // can never show a claim differently.
            crate::claim::claim_text_full(&s.claim, shown)
                .lines()
                .map(|l| {
                    let t = l.trim_start();
                    Line {
                        warn: t.starts_with('!')
                            || t.starts_with("not allowed to read")
                            || t.starts_with("approving this writes a draft"),
                        text: l.to_string(),
                    }
                })
                .collect(),
            None,
        ),
        Err(e) => (
            Vec::new(),
            Some(format!(
                "{e}: it cannot be shown, so it cannot be approved here; reject it"
            )),
        ),
    };
    ClaimView {
        id,
        snapshot: shown(path),
        trace: shown(&s.trace),
        plan: shown(&s.plan),
        line: s.claim.line,
        tool: visible(&s.claim.tool),
        call_id: s.claim.call_id,
        code: s.claim_code(),
        digest: s.claim_digest.clone(),
        reason: visible(&s.claim.reason),
        rule: visible(&s.claim.rule),
        drafts: s.claim.on_approval.as_deref() == Some("draft"),
        created_at: visible(&s.created_at),
        expires_at: visible(&s.expires_at),
        age,
        expiry,
        expired,
        remember: s
            .shown_checked()
            .map(|shown| {
                shown
                    .novelty
                    .iter()
                    .filter(|n| n.status != "known" && !n.roles.is_empty())
                    .map(|n| Tick {
                        place: n.place(),
                        text: format!(
                            "{} = {} ({})",
                            n.place(),
                            serde_json::Value::String(visible(&n.value)),
                            n.line()
                        ),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        lines,
        problem,
        csrf,
    }
}

/// The decision's form: which claim (its digest), the page's token for it, and approve or reject.
#[derive(Deserialize)]
struct DecideForm {
    csrf: String,
    digest: String,
    decision: String,
    /// The ticked values, `remember.N` = `ARG` or `ARG[i]` (a form may hold each name once).
    #[serde(flatten)]
    ticks: std::collections::BTreeMap<String, String>,
}

/// What the decision did, in the words `zamburak approve|reject` uses at the terminal.
fn outcome(d: &Decided, approve: bool, by: &str, printed: &str) -> Outcome {
    let Decided {
        snapshot,
        report,
        suspended_again,
        snapshot_removed,
        head,
        ..
    } = d;
    let headline = d.headline(approve, by);
    let plan = shown(&snapshot.plan);
    let remembered = d.remembered.iter().map(|e| {
        format!(
            "remembered: `{}` = {} as {} until {}",
            visible(&e.arg),
            serde_json::Value::String(visible(&e.value)),
            visible(&e.role),
            visible(e.expires.get(..10).unwrap_or(&e.expires))
        )
    });
    let mut lines: Vec<String> = remembered
        .collect::<Vec<_>>()
        .into_iter()
        .chain(
            report
                .decisions
                .iter()
                .skip(snapshot.state.decisions.len())
                .map(|d| {
                    let decision = serde_json::to_value(d.decision)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default();
                    format!(
                        "{plan}:{}: {decision} {}: {} ({})",
                        d.line,
                        visible(&d.tool),
                        visible(&d.reason),
                        d.rule
                    )
                }),
        )
        .collect();
    if let Some(e) = &report.error {
        let at = e.line.map(|l| format!(" at line {l}")).unwrap_or_default();
        lines.push(format!(
            "{}{at}: {}",
            visible(&e.exc_type),
            visible(&e.message)
        ));
    }
    let mut problems = Vec::new();
    let ended = match (d.ending(approve), suspended_again) {
        (Some(ended), _) => ended,
        (None, Some(Err(e))) => {
            problems.push(visible(&e.to_string()));
            "suspended again, but its new claim could not be saved".to_string()
        }
        (None, _) => {
            "suspended again: another claim of this run waits, in the queue below".to_string()
        }
    };
    if let Err(e) = snapshot_removed {
        problems.push(format!(
            "the used snapshot was not removed: {}",
            visible(&e.to_string())
        ));
    }
    let trace = match head {
        Ok(h) => format!("{} (head {h})", shown(&snapshot.trace)),
        Err(e) => {
            problems.push(format!(
                "the trace could not be completed: {}",
                visible(&e.to_string())
            ));
            shown(&snapshot.trace)
        }
    };
    Outcome {
        approved: approve,
        headline,
        lines,
        printed: visible_lines(printed),
        ended,
        problems,
        trace,
    }
}

/// Checks a POST and, when it is the form of a claim that still waits as shown, decides it.
async fn decide_post(state: Arc<QueueState>, req: Request) -> Response {
    // A form another site or page made the browser send, or none: refused before its content is read.
    // [`OwnAddress::refuse`] in front refuses it already; this says so again where the decision is made.
    if req
        .headers()
        .get("sec-fetch-site")
        .is_none_or(|site| site.as_bytes() != b"same-origin")
    {
        return state.refused(
            StatusCode::FORBIDDEN,
            "the form was sent from another site or page than this queue: nothing was decided",
        );
    }
    let Ok(Form(form)) = Form::<DecideForm>::from_request(req, &()).await else {
        return state.refused(
            StatusCode::BAD_REQUEST,
            "this is not a decision form of the queue: nothing was decided",
        );
    };
    let approve = match form.decision.as_str() {
        "approve" => true,
        "reject" => false,
        _ => {
            return state.refused(
                StatusCode::BAD_REQUEST,
                "a decision is `approve` or `reject`: nothing was decided",
            );
        }
    };
    let Some(issued) = locked(&state.forms).take(&form.csrf) else {
        return state.refused(
            StatusCode::FORBIDDEN,
            "this form is not one this queue issued, or it was already used (each form decides once): \
             nothing was decided. Reload the queue to see what still waits.",
        );
    };
    if issued.claim_digest != form.digest {
        return state.refused(
            StatusCode::FORBIDDEN,
            "the form names another claim than the one its page showed: nothing was decided",
        );
    }
    let remember: Vec<String> = form
        .ticks
        .iter()
        .filter(|(k, _)| k.starts_with("remember."))
        .map(|(_, v)| v.clone())
        .collect();
    let worker = state.clone();
    let decided =
        tokio::task::spawn_blocking(move || decide_issued(&worker, &issued, approve, &remember))
            .await
            .unwrap_or_else(|e| {
                Err((
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("the decision failed: {e}"),
                ))
            });
    match decided {
        Ok(n) => (
            StatusCode::SEE_OTHER,
            [(LOCATION, format!("{}?decided={n}", state.root()))],
        )
            .into_response(),
        Err((status, why)) => state.refused(status, &why),
    }
}

/// Decides the claim a taken form was issued for, if it still waits exactly as the page showed it.
/// Returns the outcome's number.
fn decide_issued(
    state: &QueueState,
    issued: &Issued,
    approve: bool,
    remember: &[String],
) -> Result<usize, (StatusCode, String)> {
    let stale = |why: String| (StatusCode::CONFLICT, format!("{why}: nothing was decided"));
    let path = &issued.path;
    let snap = still_pending(path).map_err(stale)?;
    if Issued::of(path, &snap) != *issued {
        return Err(stale(format!(
            "{} holds another claim than the page showed (the plan ran again, or the file was replaced)",
            shown(path)
        )));
    }
    // The code of the claim the page showed: `decide` refuses if the snapshot now holds any other.
    let code = crate::trace::record::claim_code(&issued.claim_digest);
    let mut printed = String::new();
    let decided = snapshot::decide(
        path,
        Verdict {
            approve,
            code: Some(&code),
            // A rejection remembers nothing, whatever was ticked.
            remember: if approve { remember } else { &[] },
        },
        &state.queue.by,
        &state.queue.engine,
        &mut |text| {
            if printed.len() < MAX_PRINTED {
                printed.push_str(text);
            }
        },
    )
    .map_err(|e| stale(format!("not decided: {e}")))?;
    locked(&state.forms).forget(path);
    let shown = outcome(&decided, approve, &state.queue.by, &printed);
    let mut outcomes = locked(&state.outcomes);
    outcomes.push(shown);
    Ok(outcomes.len() - 1)
}

async fn handle(State(state): State<Arc<QueueState>>, req: Request) -> Response {
    let Some(page) = behind_token(req.uri().path(), &state.token).map(str::to_string) else {
        return not_found();
    };
    if req.method() == Method::POST {
        return if page == "decide" {
            decide_post(state, req).await
        } else {
            not_found()
        };
    }
    if req.method() != Method::GET {
        return not_found();
    }
    if page == "static/view.css" {
        return ([(CONTENT_TYPE, "text/css; charset=utf-8")], CSS).into_response();
    }
    let query = req.uri().query().map(str::to_string);
    let decided = query
        .as_deref()
        .and_then(|q| q.strip_prefix("decided="))
        .and_then(|n| n.parse().ok());
    // Finding and reading snapshots touches the disk: off the server's threads.
    let rendered = tokio::task::spawn_blocking(move || match page.as_str() {
        "" => Some(state.list_page(decided)),
        other => match other.strip_prefix("run/") {
            Some(name) => {
                let code = query.as_deref().and_then(|q| q.strip_prefix("claim="));
                state.run_page(name, code)
            }
            None => other
                .strip_prefix("claim/")
                .and_then(|id| id.parse().ok())
                .and_then(|id| state.claim_page(id)),
        },
    })
    .await;
    match rendered {
        Ok(Some(Ok(body))) => html(body),
        Ok(Some(Err(e))) => (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
        Ok(None) => not_found(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// How the queue is served: where, and whether its pages remember their address for token-less links.
#[derive(Clone, Debug)]
pub struct Serving {
    /// The address bound: requests must name it ([`OwnAddress`]).
    pub bound: std::net::SocketAddr,
    /// Whether every page carries [`LINK_SCRIPT`], which remembers the queue's address in this origin's
    /// storage so that a token-less link (`zamburak mcp serve`'s `/run/NAME?claim=CODE`) opens the claim
    /// in the person's browser; `false` for a page with no script at all (`zamburak view --queue`).
    pub links: bool,
}

/// The queue's application behind `token`: one handler, a small body limit, [`OwnAddress::refuse`] in
/// front, and the viewer's security headers with forms allowed to post to this server only (and, with
/// `links`, [`LINK_SCRIPT`] the only script allowed). Also returns how many claims are pending now (read
/// once here, so the first page does not read them again).
pub fn app(queue: Queue, token: String, serving: &Serving) -> Result<(Router, usize), String> {
    let mut env = Environment::new();
    for (name, text) in TEMPLATES {
        env.add_template(name, text)
            .map_err(|e| format!("template {name}: {e}"))?;
    }
    env.add_global("link_script", if serving.links { LINK_SCRIPT } else { "" });
    let mut seen = HashMap::new();
    let waiting = find_pending_cached(&queue.dirs, &mut seen).len();
    let state = Arc::new(QueueState {
        queue,
        token,
        env,
        forms: Mutex::new(Forms::default()),
        ids: Mutex::new(Vec::new()),
        outcomes: Mutex::new(Vec::new()),
        seen: Mutex::new(seen),
    });
    let router = Router::new()
        .fallback(handle)
        .with_state(state)
        .layer(DefaultBodyLimit::max(MAX_FORM_BYTES))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(OwnAddress::of(serving.bound)),
            guard,
        ));
    let csp = if serving.links {
        QUEUE_LINK_CSP
    } else {
        QUEUE_CSP
    };
    Ok((secured(router, csp), waiting))
}

/// Serves the queue until Ctrl-C; a decision in progress then finishes. `ready` gets the URL and how many
/// claims are pending.
pub fn serve(
    queue: Queue,
    addr: std::net::SocketAddr,
    ready: &mut dyn FnMut(&str, usize),
) -> Result<(), super::server::ServeError> {
    let waiting = std::cell::Cell::new(0);
    super::server::serve_app(
        |token, bound| {
            let (router, n) = app(
                queue,
                token,
                &Serving {
                    bound,
                    links: false,
                },
            )?;
            waiting.set(n);
            Ok(router)
        },
        addr,
        &mut |url| ready(url, waiting.get()),
    )
}

#[cfg(test)]
mod tests {
    use super::{Forms, Issued, MAX_FORMS};
    use std::path::PathBuf;

    fn issued() -> Issued {
        Issued {
            path: PathBuf::from("a.zsnap"),
            claim_digest: "sha256:00".into(),
            trace_prev: "11".into(),
            created_at: "2026-11-26T00:00:00Z".into(),
        }
    }

    #[test]
    fn a_form_token_is_good_once() {
        let mut forms = Forms::default();
        let t = forms.issue(issued()).unwrap();
        assert!(forms.take(&t).is_some());
        assert!(forms.take(&t).is_none(), "a replay is refused");
        assert!(forms.take("").is_none());
    }

    #[test]
    fn old_form_tokens_are_forgotten_past_the_bound() {
        let mut forms = Forms::default();
        let first = forms.issue(issued()).unwrap();
        for _ in 0..MAX_FORMS {
            forms.issue(issued()).unwrap();
        }
        assert!(forms.live.len() <= MAX_FORMS);
        assert!(forms.take(&first).is_none());
        forms.forget(&PathBuf::from("a.zsnap"));
        assert!(forms.live.is_empty());
    }
}
