//! The error type of this crate.

use std::net::SocketAddr;

/// What can go wrong when starting a fake provider.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The listen address could not be bound (a port in use, an address not on this machine).
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why binding failed.
        #[source]
        source: std::io::Error,
    },
    /// The server's runtime or thread could not be started.
    #[error("cannot start the fake provider's runtime")]
    Runtime {
        /// Why it could not start.
        #[source]
        source: std::io::Error,
    },
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
