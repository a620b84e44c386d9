//! One session's life: MCP on stdin/stdout until the client leaves (stdin closed, or a message over the
//! bound, [`super::input`]) or a signal comes (SIGTERM, SIGINT), then every child is stopped before the
//! server returns: the pool's warm workers, the runs' workers and the MCP servers the policy's `servers:`
//! started. The runs under way end as errors with their traces' `end` records written (their threads get
//! [`super::runs::STOP_GRACE`]; one still inside a tool call after that leaves its trace without an
//! `end`, which `zamburak verify` reports as incomplete). Workers also die with the server should it be
//! killed outright (they ask the kernel to), MCP servers do not: SIGKILL leaves them to their own end.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{RoleServer, ServiceExt};
use tokio::signal::unix::{SignalKind, signal};

use super::input::{self, MAX_MESSAGE_BYTES};
use super::runs::{Runs, STOP_GRACE};
use super::{ServeError, Server};
use crate::runtime::worker::pool::Pool;

/// Why a session ended (the CLI picks the exit code).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The client closed stdin.
    ClientLeft,
    /// The client sent a message over [`MAX_MESSAGE_BYTES`]; the session was closed there.
    TooLarge,
    /// A signal asked the server to stop (its number: SIGTERM 15, SIGINT 2).
    Signal(i32),
}

/// How long the MCP session gets to send what it still has once the children are stopped.
const SESSION_GRACE: Duration = Duration::from_secs(2);

/// The review queue to serve beside the session: the person's, on its own loopback address.
pub(super) struct QueueStart<'a> {
    pub review: crate::view::queue::Queue,
    pub addr: std::net::SocketAddr,
    /// Given the queue's address (with its token) once it listens.
    pub ready: &'a mut dyn FnMut(&str),
}

/// Serves `server` (and the review queue, when `queue` says where) until the session ends, then stops
/// every child.
pub(super) fn run(
    mut server: Server,
    runs: &Arc<Runs>,
    pool: &Arc<Pool>,
    queue: Option<QueueStart<'_>>,
) -> Result<Ended, ServeError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| ServeError::Session(e.to_string()))?;
    let ended = rt.block_on(async {
        if let Some(q) = queue {
            let served = super::queue::start(q.review, &server.runner.runs, q.addr)
                .await
                .map_err(ServeError::Queue);
            let served = match served {
                Ok(served) => served,
                Err(e) => {
                    pool.shutdown();
                    return Err(e);
                }
            };
            (q.ready)(&served.address);
            server.queue = Some(served);
        }
        let served_queue = server.queue.clone();
        let session = serve_until_ended(server).await;
        stop_children(runs, pool).await;
        if let Some(q) = served_queue {
            q.forget();
        }
        let (ended, service) = session?;
        if let Some((cancel, waiting)) = service {
            cancel.cancel();
            let _ = tokio::time::timeout(SESSION_GRACE, waiting).await;
        }
        Ok(ended)
    });
    // Whatever is left on the runtime's threads is not waited for long (a run's thread stuck in a tool
    // call is not waited for at all; its trace stays without an `end`).
    rt.shutdown_timeout(Duration::from_millis(200));
    ended
}

type Waiting = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

/// Serves until the input ends or a signal comes. Returns why, and the session when it still runs (its
/// cancellation and its end, to close it after the children are stopped).
async fn serve_until_ended(
    server: Server,
) -> Result<
    (
        Ended,
        Option<(rmcp::service::RunningServiceCancellationToken, Waiting)>,
    ),
    ServeError,
> {
    let signals = |kind| signal(kind).map_err(|e| ServeError::Session(e.to_string()));
    let mut term = signals(SignalKind::terminate())?;
    let mut int = signals(SignalKind::interrupt())?;
    let (stdin, end) = input::bounded(tokio::io::stdin(), MAX_MESSAGE_BYTES);
    let input_ended = {
        let end = Arc::clone(&end);
        move || {
            if end.too_large() {
                Ended::TooLarge
            } else {
                Ended::ClientLeft
            }
        }
    };
    let stop = async {
        tokio::select! {
            _ = term.recv() => Ended::Signal(nix::sys::signal::Signal::SIGTERM as i32),
            _ = int.recv() => Ended::Signal(nix::sys::signal::Signal::SIGINT as i32),
            () = end.ended() => input_ended(),
        }
    };
    tokio::pin!(stop);
    // rmcp's own line bound (which drops a line and reads on) stays above ours, so ours decides.
    let rmcp_max = usize::try_from(MAX_MESSAGE_BYTES)
        .unwrap_or(usize::MAX)
        .saturating_add(2);
    // A line that is not JSON is left out here and answered with a parse error ([`input::Replying`]).
    let (stdin, heard) = input::checked(stdin);
    let transport = input::Replying::new(
        AsyncRwTransport::<RoleServer, _, _>::new(stdin, input::NullIds::new(tokio::io::stdout()))
            .with_max_line_length(rmcp_max),
        heard,
    );
    let service = tokio::select! {
        started = server.serve(transport) => started,
        why = &mut stop => return Ok((why, None)),
    };
    let service = match service {
        Ok(service) => service,
        // A client that leaves before the handshake has only left.
        Err(_) if end.ended_now() => return Ok((input_ended(), None)),
        Err(e) => return Err(ServeError::Session(e.to_string())),
    };
    let cancel = service.cancellation_token();
    let mut waiting: Waiting = Box::pin(async move {
        let _ = service.waiting().await;
    });
    tokio::select! {
        () = &mut waiting => Ok((input_ended(), None)),
        why = &mut stop => Ok((why, Some((cancel, waiting)))),
    }
}

/// Stops every child: no new run, the warm workers killed, every run's worker and MCP servers killed (so
/// its thread ends the run and its trace), then whatever MCP server is left.
async fn stop_children(runs: &Runs, pool: &Pool) {
    runs.stop_all();
    pool.shutdown();
    crate::mcp::client::kill_all_servers();
    runs.drained(STOP_GRACE).await;
    // A run that was starting its servers as the stop came has its own stopped since; any left is killed.
    crate::mcp::client::kill_all_servers();
}
