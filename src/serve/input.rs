//! What the client sends, bounded, and the moment it stops sending. A message is one line of JSON-RPC on
//! stdin; a line longer than [`MAX_MESSAGE_BYTES`] ends the input where it starts (the lines before it are
//! still delivered), so a hostile client can make the server hold at most that much of one message, and
//! the session closes instead of leaving the client waiting on a request that was dropped
//! ([`crate::mcp::transport::Bounded`], the same bound the client side puts on MCP servers).
//!
//! The end of the input (stdin closed, or a line over the bound) is announced at once ([`InputEnd`]): the
//! server starts its shutdown then, instead of after rmcp has waited for the runs under way.
//!
//! A line that is not JSON gets the JSON-RPC 2.0 parse error, `{"jsonrpc":"2.0","id":null,"error":{"code":
//! -32700,"message":"Parse error"}}`, and the session reads on (rmcp alone ignores such a line, so a client
//! that sent a request there would wait for an answer forever): the line is left out before rmcp reads
//! ([`Checked`]), and [`Replying`] sends the error through rmcp's own writer, whose id-less errors
//! [`NullIds`] gives the `"id": null` JSON-RPC 2.0 asks for. At most [`MAX_PARSE_ERRORS`] such answers wait
//! to be sent; a client that sends junk faster than it reads loses the ones past that.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll, ready};

use rmcp::RoleServer;
use rmcp::model::ErrorData;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{Notify, mpsc};

use crate::mcp::transport::{Bounded, Checked, Meter, OnBad};

/// Most parse errors waiting to be sent at once.
pub const MAX_PARSE_ERRORS: usize = 64;

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

/// The client's input with its lines that are not JSON left out ([`Checked`]), and what hears of them.
pub fn checked<R>(input: R) -> (Checked<R>, mpsc::Receiver<()>) {
    let (said, heard) = mpsc::channel(MAX_PARSE_ERRORS);
    (Checked::new(input, OnBad::Report(said)), heard)
}

/// rmcp's transport `inner`, answering each line [`checked`] left out with a parse error.
pub struct Replying<T> {
    inner: T,
    heard: mpsc::Receiver<()>,
    sending: Arc<AtomicUsize>,
}

impl<T> Replying<T> {
    pub fn new(inner: T, heard: mpsc::Receiver<()>) -> Replying<T> {
        Replying {
            inner,
            heard,
            sending: Arc::new(AtomicUsize::new(0)),
        }
    }
}

/// The parse error, as rmcp writes it (no `id`; [`NullIds`] adds `"id": null`).
fn parse_error() -> TxJsonRpcMessage<RoleServer> {
    TxJsonRpcMessage::<RoleServer>::error(ErrorData::parse_error("Parse error", None), None)
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Replying<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            tokio::select! {
                biased;
                Some(()) = self.heard.recv() => {
                    // Sent on a task of its own: `receive` is cancelled whenever rmcp has something else to
                    // do, and the answer must not be lost with it.
                    if self.sending.fetch_add(1, Ordering::SeqCst) < MAX_PARSE_ERRORS {
                        let send = self.inner.send(parse_error());
                        let sending = Arc::clone(&self.sending);
                        tokio::spawn(async move {
                            let _ = send.await;
                            sending.fetch_sub(1, Ordering::SeqCst);
                        });
                    } else {
                        self.sending.fetch_sub(1, Ordering::SeqCst);
                    }
                }
                message = self.inner.receive() => return message,
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// How rmcp starts an error without an id (MCP 2026-07-28 leaves it out), and what JSON-RPC 2.0 asks for.
const NO_ID: &[u8] = br#"{"jsonrpc":"2.0","error":"#;
const NULL_ID: &[u8] = br#"{"jsonrpc":"2.0","id":null,"error":"#;

/// The server's output: rmcp's lines, with `"id": null` in each error that has no id (a line that starts
/// [`NO_ID`]). rmcp writes one message at a time, so the lines are whole here.
pub struct NullIds<W> {
    inner: W,
    /// The start of the current line while it may still be [`NO_ID`].
    head: Vec<u8>,
    /// Whether the next byte starts a line.
    deciding: bool,
    /// Bytes accepted and not yet written.
    out: Vec<u8>,
}

impl<W> NullIds<W> {
    pub fn new(inner: W) -> NullIds<W> {
        NullIds {
            inner,
            head: Vec::new(),
            deciding: true,
            out: Vec::new(),
        }
    }

    fn take(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|&b| b == b'\n');
            if self.deciding {
                let need = NO_ID.len() - self.head.len();
                let take = newline.map_or(need, |i| (i + 1).min(need)).min(bytes.len());
                self.head.extend_from_slice(&bytes[..take]);
                bytes = &bytes[take..];
                let ended = self.head.last() == Some(&b'\n');
                if self.head == NO_ID {
                    self.out.extend_from_slice(NULL_ID);
                } else if ended || !NO_ID.starts_with(&self.head) {
                    self.out.extend_from_slice(&self.head);
                } else {
                    continue;
                }
                self.head.clear();
                self.deciding = ended;
            } else {
                let take = newline.map_or(bytes.len(), |i| i + 1);
                self.out.extend_from_slice(&bytes[..take]);
                bytes = &bytes[take..];
                self.deciding = newline.is_some();
            }
        }
    }
}

impl<W: AsyncWrite + Unpin> NullIds<W> {
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.out.is_empty() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.out))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.out.drain(..n);
        }
        Poll::Ready(Ok(()))
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for NullIds<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        this.take(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.out.extend_from_slice(&std::mem::take(&mut this.head));
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
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
    fn errors_without_an_id_get_a_null_one_however_the_bytes_come() {
        use tokio::io::AsyncWriteExt;
        let lines = b"{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{}}\n{\"jsonrpc\":\"2.0\",\"result\":{}}\n\n{\"jsonrpc\":\"2.0\",\"error\":{}}\n";
        let want = b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{}}\n{\"jsonrpc\":\"2.0\",\"result\":{}}\n\n{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{}}\n";
        for size in [1, 2, 7, 25, 26, 1000] {
            let mut out = NullIds::new(Vec::new());
            rt().block_on(async {
                for piece in lines.chunks(size) {
                    out.write_all(piece).await.unwrap();
                }
                out.flush().await.unwrap();
            });
            assert_eq!(
                String::from_utf8_lossy(&out.inner),
                String::from_utf8_lossy(want),
                "{size}"
            );
        }
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
