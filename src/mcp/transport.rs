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
    /// The server sent a line that is not JSON ([`Checked`] with [`OnBad::End`]).
    garbled: AtomicBool,
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

    /// Whether the server sent a line that is not JSON (the stream has ended there).
    pub fn garbled(&self) -> bool {
        self.garbled.load(Ordering::SeqCst)
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

/// What [`Checked`] does with a line that is not JSON.
#[derive(Debug)]
pub enum OnBad {
    /// End the stream there, for good, and mark the meter [`Meter::garbled`]: the client side, where the
    /// pending request then fails at once instead of waiting out its timeout for an answer that was lost.
    End(Arc<Meter>),
    /// Leave the line out and say so on the channel (a full channel drops the word): the server side,
    /// which answers each such line with a JSON-RPC parse error and reads on.
    Report(tokio::sync::mpsc::Sender<()>),
}

/// A reader that hands on only lines that are JSON (or blank): each line is held until its newline, then
/// checked. A line with no newline at the end of the stream is no message and is left out. What it holds
/// is one line, which the [`Bounded`] reader under it bounds.
#[derive(Debug)]
pub struct Checked<R> {
    inner: R,
    /// The line being read, not yet checked.
    line: Vec<u8>,
    /// Checked lines not yet read, from `at`.
    out: Vec<u8>,
    at: usize,
    ended: bool,
    on_bad: OnBad,
}

impl<R> Checked<R> {
    pub fn new(inner: R, on_bad: OnBad) -> Checked<R> {
        Checked {
            inner,
            line: Vec::new(),
            out: Vec::new(),
            at: 0,
            ended: false,
            on_bad,
        }
    }

    /// Takes a chunk just read: complete lines are checked, the rest waits for its newline.
    fn take(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() && !self.ended {
            let Some(i) = chunk.iter().position(|&b| b == b'\n') else {
                self.line.extend_from_slice(chunk);
                return;
            };
            self.line.extend_from_slice(&chunk[..=i]);
            chunk = &chunk[i + 1..];
            if is_json_line(&self.line) {
                self.out.extend_from_slice(&self.line);
            } else {
                match &self.on_bad {
                    OnBad::End(meter) => {
                        meter.garbled.store(true, Ordering::SeqCst);
                        self.ended = true;
                    }
                    OnBad::Report(said) => {
                        let _ = said.try_send(());
                    }
                }
            }
            self.line.clear();
        }
    }
}

/// Whether one line (its newline included) is a JSON document, or blank (no message, which rmcp skips).
/// A UTF-8 byte order mark before it is allowed, as rmcp allows it.
pub fn is_json_line(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
    line.trim_ascii().is_empty() || serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok()
}

impl<R: AsyncRead + Unpin> AsyncRead for Checked<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.at < this.out.len() || buf.remaining() == 0 {
                let n = buf.remaining().min(this.out.len() - this.at);
                buf.put_slice(&this.out[this.at..this.at + n]);
                this.at += n;
                if this.at == this.out.len() {
                    this.out.clear();
                    this.at = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                // Nothing filled: the end of the stream, for good.
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 8192];
            let mut read = ReadBuf::new(&mut chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            if read.filled().is_empty() {
                this.ended = true;
                this.line.clear();
                continue;
            }
            let filled = read.filled().to_vec();
            this.take(&filled);
        }
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

    fn checked(input: &[u8], on_bad: OnBad) -> Vec<u8> {
        let mut reader = Checked::new(input, on_bad);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut out = Vec::new();
        rt.block_on(reader.read_to_end(&mut out)).unwrap();
        out
    }

    #[test]
    fn only_json_lines_pass_a_checked_reader() {
        assert!(is_json_line(b"{\"a\":1}\r\n") && is_json_line(b"  \n") && is_json_line(b"\n"));
        assert!(is_json_line(b"\xef\xbb\xbf[1]\n"));
        for bad in [
            &b"{not json\n"[..],
            b"[1,\n",
            b"\xff\xfe\n",
            b"{} x\n",
            b"NaN\n",
        ] {
            assert!(!is_json_line(bad), "{}", String::from_utf8_lossy(bad));
        }
        assert!(!is_json_line(b"{\"result\":NaN}\n"));

        // The server side: a bad line is left out and reported; the reading goes on.
        let (tx, mut rx) = tokio::sync::mpsc::channel(4);
        let out = checked(b"{\"a\":1}\n{oops\n[2]\n{\"partial\"", OnBad::Report(tx));
        assert_eq!(
            out, b"{\"a\":1}\n[2]\n",
            "a line with no newline at the end is no message"
        );
        assert_eq!(rx.try_recv(), Ok(()));
        assert!(rx.try_recv().is_err());

        // The client side: the stream ends at the bad line.
        let meter = Arc::new(Meter::default());
        let out = checked(b"[1]\n{\"x\":NaN}\n[2]\n", OnBad::End(meter.clone()));
        assert_eq!(out, b"[1]\n");
        assert!(meter.garbled());
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
