use std::time::Duration;

use socket2::{SockRef, TcpKeepalive};
use tokio::net::TcpStream;

use crate::{
    base::{Address, Protocol},
    websocket::{client::WsClient, server::WsServer},
};

#[derive(Clone)]
/// A websocket implements a [communication protocol](Protocol) that can be used to communicate
/// over the internet.
pub struct WebSocket {}

impl Protocol for WebSocket {
    type Client = WsClient;
    type Server = WsServer;
}

/// Validate that an [`Address`] uses the websocket scheme.
///
/// The [`Address`] is already canonicalized at construction (scheme defaults to `ws`, path
/// stripped), so this only has to reject a non-`ws` scheme. The address is returned
/// unchanged on success and its [`Display`](std::fmt::Display) form is the connection url.
pub(crate) fn parse_ws_address(address: Address) -> Result<Address, String> {
    match address.scheme() {
        "ws" | "wss" => Ok(address),
        other => Err(format!("Invalid scheme: {other}")),
    }
}

/// Read limit at both ends; a message goes out as one frame, so frames get the same limit.
pub(crate) const MAX_MESSAGE_SIZE: usize = 1024 * 1024 * 1024;

/// Probe an idle connection after 10 s, then every 5 s, and drop it after 4 unanswered probes: a
/// vanished peer is noticed in 30 s, like iroh's idle timeout.
#[cfg(any(
    target_os = "linux",
    target_os = "android",
    target_os = "macos",
    target_os = "ios",
    target_os = "windows",
))]
const KEEPALIVE: TcpKeepalive = TcpKeepalive::new()
    .with_time(Duration::from_secs(10))
    .with_interval(Duration::from_secs(5))
    .with_retries(4);

/// Elsewhere only the first probe's delay can be set; the interval and count are the system's.
#[cfg(not(any(
    target_os = "linux",
    target_os = "android",
    target_os = "macos",
    target_os = "ios",
    target_os = "windows",
)))]
const KEEPALIVE: TcpKeepalive = TcpKeepalive::new().with_time(Duration::from_secs(10));

/// Drops a connection whose peer vanished without closing it (a crash, a dropped network, a
/// sleeping laptop), which TCP alone never notices while the connection is idle.
pub(crate) trait DeadPeerTimeout {
    /// The connection works without it, so a failure is logged rather than returned.
    fn set_dead_peer_timeout(&self);
}

/// How long sent data may stay unacknowledged before the connection is dropped (Kiln's patch).
/// Keep-alive probes only an idle connection: one cut while data is in flight (a client that
/// just sent a step) waited on TCP's retransmissions, about 15 minutes on Linux, before anyone
/// noticed. 30 s, as the keep-alive above; a busy peer's kernel still acknowledges at once.
#[cfg(any(target_os = "linux", target_os = "android"))]
const UNACKNOWLEDGED_TIMEOUT: Duration = Duration::from_secs(30);

impl DeadPeerTimeout for TcpStream {
    fn set_dead_peer_timeout(&self) {
        if let Err(err) = SockRef::from(self).set_tcp_keepalive(&KEEPALIVE) {
            log::warn!("Cannot set TCP keep-alive, so a vanished peer will not be noticed: {err}");
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if let Err(err) = SockRef::from(self).set_tcp_user_timeout(Some(UNACKNOWLEDGED_TIMEOUT)) {
            log::warn!("Cannot set TCP_USER_TIMEOUT, so a cut network is noticed late: {err}");
        }
    }
}
