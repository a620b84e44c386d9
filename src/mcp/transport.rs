//! What a server may send, bounded: the server's stdout as the client reads it.
//!
//! A message is one line of JSON-RPC. A line longer than the limit ends the stream where it is found, so the
//! pending request fails at once and is reported as too large: neither buffered without bound nor, as
//! rmcp's own bound does, dropped while the connection stays open and the request waits out its timeout.
//! Complete lines before it are still delivered. Every byte read is counted, which bounds a tool listing
//! across all of its pages ([`Meter::read`]).
//!
//! Requests of the server's own (`ping`, `sampling/createMessage`…) are answered by rmcp, and a server that
//! sends them without reading the answers would have them queue up without bound: more than
//! [`MAX_SERVER_REQUESTS`] while one request of the client's is pending end the stream too ([`Watched`]).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll, ready};

use rmcp::RoleClient;
use rmcp::model::JsonRpcMessage;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, ReadBuf};

/// Most requests of its own a server may send while one request of the client's is pending. A server has
/// little to ask a client that advertises no capability (a `ping` now and then); answers it never reads
/// would pile up in memory.
pub const MAX_SERVER_REQUESTS: u64 = 100;

/// What a server has sent so far, shared between its reader and the client.
#[derive(Debug, Default)]
pub struct Meter {
    read: AtomicU64,
    over: AtomicBool,
    /// Requests of the server's own since the client's last request began.
    requests: AtomicU64,
    flooded: AtomicBool,
}

impl Meter {
    /// Bytes the server has sent since it started.
    pub fn read(&self) -> u64 {
        self.read.load(Ordering::SeqCst)
    }

    /// Whether the server sent a line over the limit (the stream has ended there).
    pub fn over(&self) -> bool {
        self.over.load(Ordering::SeqCst)
    }

    /// Called as the client sends a request: the server's own requests are counted from here.
    pub fn begin_request(&self) {
        self.requests.store(0, Ordering::SeqCst);
    }

    /// Whether the server sent more than [`MAX_SERVER_REQUESTS`] of its own during one request of the
    /// client's (the stream has ended there).
    pub fn flooded(&self) -> bool {
        self.flooded.load(Ordering::SeqCst)
    }
}

/// rmcp's transport `inner`, ended when the server floods the client with requests of its own.
pub struct Watched<T> {
    inner: T,
    meter: Arc<Meter>,
}

impl<T> Watched<T> {
    pub fn new(inner: T, meter: Arc<Meter>) -> Watched<T> {
        Watched { inner, meter }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Watched<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        if self.meter.flooded() {
            return None;
        }
        let message = self.inner.receive().await?;
        if matches!(message, JsonRpcMessage::Request(_))
            && self.meter.requests.fetch_add(1, Ordering::SeqCst) >= MAX_SERVER_REQUESTS
        {
            self.meter.flooded.store(true, Ordering::SeqCst);
            return None;
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// A reader that ends at the first line longer than `max` bytes (the newline not counted).
pub struct Bounded<R> {
    inner: R,
    max: u64,
    /// Bytes of the current line read so far.
    line: u64,
    meter: Arc<Meter>,
}

impl<R> Bounded<R> {
    pub fn new(inner: R, max: u64, meter: Arc<Meter>) -> Bounded<R> {
        Bounded {
            inner,
            max,
            line: 0,
            meter,
        }
    }
}

/// Where a chunk of input first passes the limit: the length of its prefix made of complete lines that
/// fit (`Some`), or `None` when it all fits. `line` is the length of the line in progress before the chunk,
/// and becomes the one after it.
fn first_overflow(chunk: &[u8], line: &mut u64, max: u64) -> Option<usize> {
    let mut kept = 0;
    for (i, &b) in chunk.iter().enumerate() {
        if b == b'\n' {
            *line = 0;
            kept = i + 1;
        } else {
            *line += 1;
            if *line > max {
                return Some(kept);
            }
        }
    }
    None
}

impl<R: AsyncRead + Unpin> AsyncRead for Bounded<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.meter.over() {
            // Nothing filled: the end of the stream, for good.
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        let chunk = &buf.filled()[before..];
        let mut len = chunk.len();
        if let Some(kept) = first_overflow(chunk, &mut this.line, this.max) {
            this.meter.over.store(true, Ordering::SeqCst);
            len = kept;
            buf.set_filled(before + kept);
        }
        this.meter
            .read
            .fetch_add(u64::try_from(len).unwrap_or(u64::MAX), Ordering::SeqCst);
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn read_all(input: &[u8], max: u64) -> (Vec<u8>, Arc<Meter>) {
        let meter = Arc::new(Meter::default());
        let mut reader = Bounded::new(input, max, meter.clone());
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut out = Vec::new();
        rt.block_on(reader.read_to_end(&mut out)).unwrap();
        (out, meter)
    }

    #[test]
    fn lines_within_the_limit_pass_and_are_counted() {
        let (out, meter) = read_all(b"1234\n12\n1234", 4);
        assert_eq!(out, b"1234\n12\n1234");
        assert!(!meter.over());
        assert_eq!(meter.read(), 12);
    }

    #[test]
    fn the_stream_ends_before_the_first_line_over_the_limit() {
        let (out, meter) = read_all(b"1234\n12345\n12\n", 4);
        assert_eq!(out, b"1234\n", "complete lines before it still arrive");
        assert!(meter.over());
        assert_eq!(meter.read(), 5);
        // A line with no newline at all.
        let (out, meter) = read_all(&[b'x'; 100], 10);
        assert!(out.is_empty());
        assert!(meter.over());
    }

    #[test]
    fn a_line_split_across_reads_is_measured_whole() {
        let mut line = 3;
        assert_eq!(first_overflow(b"12", &mut line, 4), Some(0));
        let mut line = 3;
        assert_eq!(first_overflow(b"1\n1234\n", &mut line, 4), None);
        assert_eq!(line, 0);
    }
}
