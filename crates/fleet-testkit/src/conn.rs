//! The server's connections: a listener that numbers each accepted connection and can end it
//! with a TCP reset. A handler learns its connection from [`ConnInfo`] (axum's `ConnectInfo`),
//! which the request log prints (so a client's socket can be matched by its port) and through
//! which a `reset_after_events` fault asks for the reset.
//!
//! A reset needs `SO_LINGER` 0 on the socket at the moment it is closed; hyper owns the socket
//! and closes it by dropping it, so the flag lives here and [`Conn`]'s `Drop` applies it.

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// Who a request came in on.
#[derive(Debug, Clone)]
pub(crate) struct ConnInfo {
    /// 1, 2, … in accept order (0 for the listener itself).
    pub id: u64,
    pub peer: SocketAddr,
    reset: Arc<AtomicBool>,
}

impl ConnInfo {
    /// Set it, and the connection is reset when it is next closed.
    pub fn reset_flag(&self) -> Arc<AtomicBool> {
        self.reset.clone()
    }
}

impl Connected<IncomingStream<'_, ConnListener>> for ConnInfo {
    fn connect_info(stream: IncomingStream<'_, ConnListener>) -> Self {
        stream.remote_addr().clone()
    }
}

/// A TCP listener whose connections carry a number and a reset flag.
pub(crate) struct ConnListener {
    inner: TcpListener,
    next_id: AtomicU64,
}

impl ConnListener {
    pub fn new(inner: TcpListener) -> Self {
        Self {
            inner,
            next_id: AtomicU64::new(1),
        }
    }
}

impl Listener for ConnListener {
    type Io = Conn;
    type Addr = ConnInfo;

    async fn accept(&mut self) -> (Conn, ConnInfo) {
        // axum's own accept retries errors (EMFILE …) with a pause.
        let (tcp, peer) = Listener::accept(&mut self.inner).await;
        // Small SSE pieces must leave as written, not wait for Nagle's algorithm.
        let _ = tcp.set_nodelay(true);
        let reset = Arc::new(AtomicBool::new(false));
        let info = ConnInfo {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            peer,
            reset: reset.clone(),
        };
        (Conn { tcp, reset }, info)
    }

    fn local_addr(&self) -> io::Result<ConnInfo> {
        Ok(ConnInfo {
            id: 0,
            peer: self.inner.local_addr()?,
            reset: Arc::new(AtomicBool::new(false)),
        })
    }
}

/// An accepted connection: the TCP stream, reset on drop when its flag is set.
pub(crate) struct Conn {
    tcp: TcpStream,
    reset: Arc<AtomicBool>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        if self.reset.load(Ordering::Relaxed) {
            // Linger 0: closing sends RST and discards unsent data; it never blocks.
            let _ = self.tcp.set_zero_linger();
        }
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}
