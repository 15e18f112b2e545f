//! The accept loop: each connection served by hyper, watched so that a client that is slow to
//! send a request's head, or that keeps an idle connection open, is closed.
//!
//! hyper is driven directly rather than through `axum::serve`, which cannot be told that a
//! client may half-close: one that shuts down its sending side after its request (as a plain
//! socket client may) would otherwise lose its reply whenever the end of its input is read
//! before the reply is written.
//!
//! hyper's own `header_read_timeout` also runs while a kept-alive connection waits for its
//! next request, so it cannot tell a slow head from an idle connection; here a watchdog knows
//! both, from the bytes the connection reads and the requests it serves.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use axum::response::Response;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

/// How long a connection may take over a request's head, and stay idle between requests.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionTimeouts {
    /// From a connection's first byte (or its opening) to the end of a request's head.
    pub(crate) header_read: Duration,
    /// From the end of a reply to the first byte of the next request.
    pub(crate) idle: Duration,
}

/// Why the watchdog closed a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closed {
    /// A request's head had begun and was not complete within the header-read timeout: the
    /// request is lost.
    SlowHead,
    /// Open and never used within the header-read timeout, or idle between requests past the
    /// idle timeout: nothing was lost.
    Idle,
}

/// Serves connections from `listener` with `handle` until `shutdown`, then lets the replies in
/// flight end; `closed` hears of every connection the watchdog closes.
///
/// The handler comes as a function, so that this loop knows nothing of what it serves.
pub(crate) async fn serve<H, F, C>(
    listener: TcpListener,
    (handle, closed): (H, C),
    timeouts: ConnectionTimeouts,
    shutdown: oneshot::Receiver<()>,
) -> io::Result<()>
where
    H: Fn(Request<Body>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response> + Send + 'static,
    C: Fn(Closed) + Clone + Send + 'static,
{
    let graceful = GracefulShutdown::new();
    let mut shutdown = pin!(shutdown);
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                // Out of file descriptors and the like: the connection is lost, not the server.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        // Without TCP_NODELAY, a stream of small event writes meets the client's delayed
        // acknowledgements and each reply waits about 40 ms.
        let _ = tcp.set_nodelay(true);
        let watch = Arc::new(Watch::new());
        let io = TokioIo::new(Watched { tcp, watch: watch.clone() });
        let service = hyper::service::service_fn({
            let (handle, watch) = (handle.clone(), watch.clone());
            move |request: Request<Incoming>| {
                let (handle, watch) = (handle.clone(), watch.clone());
                async move {
                    let busy = Busy::start(watch);
                    let response = handle(request.map(Body::new)).await;
                    Ok::<_, Infallible>(response.map(|body| Tracked { body, _busy: busy }))
                }
            }
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .half_close(true)
            .timer(TokioTimer::new())
            // The watchdog below times the head; hyper's timer would also cut idle connections.
            .header_read_timeout(None)
            .serve_connection(io, service);
        let connection = graceful.watch(connection);
        tokio::spawn(watchdog(connection, watch, timeouts, closed.clone()));
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// Runs `connection` until it ends, or until it overstays its phase's timeout, which it tells
/// `closed`.
async fn watchdog<F: Future>(
    connection: F,
    watch: Arc<Watch>,
    timeouts: ConnectionTimeouts,
    closed: impl Fn(Closed),
) {
    let mut connection = pin!(connection);
    loop {
        let deadline = watch.deadline(timeouts);
        let changed = watch.changed.notified();
        tokio::select! {
            _ = &mut connection => return,
            () = changed => {}
            () = sleep_until(deadline) => {
                if watch.deadline(timeouts).is_some_and(|deadline| deadline <= Instant::now()) {
                    // Dropping the connection closes it.
                    closed(watch.closed());
                    return;
                }
            }
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// What a connection is doing, for its watchdog.
#[derive(Debug)]
struct Watch {
    state: Mutex<Phase>,
    changed: Notify,
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Open since then, and not a byte read yet.
    Open(Instant),
    /// Reading a request's head since then (the connection's opening, for its first).
    Head(Instant),
    /// Serving this many requests.
    Busy(usize),
    /// Idle since the end of the last reply.
    Idle(Instant),
}

impl Watch {
    fn new() -> Watch {
        Watch { state: Mutex::new(Phase::Open(Instant::now())), changed: Notify::new() }
    }

    fn deadline(&self, timeouts: ConnectionTimeouts) -> Option<Instant> {
        match *self.state.lock().unwrap_or_else(PoisonError::into_inner) {
            Phase::Open(since) | Phase::Head(since) => Some(since + timeouts.header_read),
            Phase::Busy(_) => None,
            Phase::Idle(since) => Some(since + timeouts.idle),
        }
    }

    /// Why a connection closed now, in its phase, is closed.
    fn closed(&self) -> Closed {
        match *self.state.lock().unwrap_or_else(PoisonError::into_inner) {
            Phase::Head(_) => Closed::SlowHead,
            Phase::Open(_) | Phase::Busy(_) | Phase::Idle(_) => Closed::Idle,
        }
    }

    fn update(&self, change: impl FnOnce(Phase) -> Phase) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        *state = change(*state);
        drop(state);
        self.changed.notify_one();
    }
}

/// A request being served: the connection is busy until the reply's body is dropped.
#[derive(Debug)]
struct Busy(Arc<Watch>);

impl Busy {
    fn start(watch: Arc<Watch>) -> Busy {
        watch.update(|phase| match phase {
            Phase::Busy(n) => Phase::Busy(n + 1),
            Phase::Open(_) | Phase::Head(_) | Phase::Idle(_) => Phase::Busy(1),
        });
        Busy(watch)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.update(|phase| match phase {
            Phase::Busy(n) if n > 1 => Phase::Busy(n - 1),
            _ => Phase::Idle(Instant::now()),
        });
    }
}

/// A reply body that keeps its request counted as busy until it is sent or dropped.
#[derive(Debug)]
struct Tracked {
    body: Body,
    _busy: Busy,
}

impl http_body::Body for Tracked {
    type Data = <Body as http_body::Body>::Data;
    type Error = <Body as http_body::Body>::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The connection's socket, noting when an idle connection starts a request's head.
#[derive(Debug)]
struct Watched {
    tcp: TcpStream,
    watch: Arc<Watch>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.tcp).poll_read(cx, buf);
        if buf.filled().len() > before {
            let phase = *self.watch.state.lock().unwrap_or_else(PoisonError::into_inner);
            match phase {
                // The first head is timed from the connection's opening.
                Phase::Open(since) => self.watch.update(|_| Phase::Head(since)),
                Phase::Idle(_) => self.watch.update(|_| Phase::Head(Instant::now())),
                Phase::Head(_) | Phase::Busy(_) => {}
            }
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
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
}
