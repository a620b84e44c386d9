//! What the client sends, bounded, and the moment it stops sending. A message is one line of JSON-RPC on
//! stdin; a line longer than [`MAX_MESSAGE_BYTES`] ends the input where it starts (the lines before it are
//! still delivered), so a hostile client can make the server hold at most that much of one message, and
//! the session closes instead of leaving the client waiting on a request that was dropped
//! ([`crate::mcp::transport::Bounded`], the same bound the client side puts on MCP servers).
//!
//! The end of the input (stdin closed, or a line over the bound) is announced at once ([`InputEnd`]): the
//! server starts its shutdown then, instead of after rmcp has waited for the runs under way.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::Notify;

use crate::mcp::transport::{Bounded, Meter};

/// Largest message a client may send: a plan at `run`'s size limit ([`crate::runtime::setup::MAX_PLAN_BYTES`],
/// 1 MiB) JSON-escaped at worst six bytes a byte (`\u0001`), and the request around it.
pub const MAX_MESSAGE_BYTES: u64 = 8 << 20;

/// Whether and why the client's input ended.
#[derive(Debug, Default)]
pub struct InputEnd {
    ended: AtomicBool,
    notify: Notify,
    meter: Arc<Meter>,
}

impl InputEnd {
    /// Waits until the input has ended.
    pub async fn ended(&self) {
        loop {
            let notified = self.notify.notified();
            if self.ended.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }

    /// Whether the input has ended by now.
    pub fn ended_now(&self) -> bool {
        self.ended.load(Ordering::SeqCst)
    }

    /// Whether the input ended at a message over [`MAX_MESSAGE_BYTES`].
    pub fn too_large(&self) -> bool {
        self.meter.over()
    }
}

/// The client's input: `inner` with its lines bounded, announcing its end.
pub struct ClientInput<R> {
    inner: Bounded<R>,
    end: Arc<InputEnd>,
}

/// `inner` (stdin) bounded at `max` bytes a line, and what tells when it ends.
pub fn bounded<R>(inner: R, max: u64) -> (ClientInput<R>, Arc<InputEnd>) {
    let end = Arc::new(InputEnd::default());
    let input = ClientInput {
        inner: Bounded::new(inner, max, Arc::clone(&end.meter)),
        end: Arc::clone(&end),
    };
    (input, end)
}

impl<R: AsyncRead + Unpin> AsyncRead for ClientInput<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let room = buf.remaining() > 0;
        let read = ready!(Pin::new(&mut this.inner).poll_read(cx, buf));
        // Nothing read into a buffer with room: the end of the input (or an error, which ends it too).
        if read.is_err() || (room && buf.filled().len() == before) {
            this.end.ended.store(true, Ordering::SeqCst);
            this.end.notify.notify_waiters();
        }
        Poll::Ready(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn the_end_of_the_input_is_announced_and_says_whether_a_line_was_too_long() {
        rt().block_on(async {
            let (mut input, end) = bounded(&b"12\n34\n"[..], 4);
            let waiter = {
                let end = Arc::clone(&end);
                tokio::spawn(async move { end.ended().await })
            };
            let mut out = Vec::new();
            input.read_to_end(&mut out).await.unwrap();
            assert_eq!(out, b"12\n34\n");
            tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
                .await
                .expect("announced")
                .unwrap();
            assert!(!end.too_large());

            let (mut input, end) = bounded(&b"12\n123456789\n34\n"[..], 4);
            let mut out = Vec::new();
            input.read_to_end(&mut out).await.unwrap();
            assert_eq!(out, b"12\n", "the input ends before the long line");
            end.ended().await;
            assert!(end.too_large());
        });
    }
}
