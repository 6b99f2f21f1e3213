//! Devices on another machine: a box runs `kiln serve`, which hosts its devices with Burn's own
//! remote server (`burn::server::RemoteServer`, WebSocket transport), and a client trains on
//! them as `remote:HOST:PORT/N` through Burn's remote backend, exactly as on a local device.
//! The run folder, the autodiff graph and the data's host copy stay on the client; the data set
//! is uploaded to the box once, and each step sends the operations and an index slice.
//!
//! # Tokens
//!
//! A box serves only the clients that present its token (Burn's `TokenAuthorizer`). The client
//! reads it from `KILN_REMOTE_TOKEN`, else from where it remembered it for that box (the
//! keyring, or a file only its user can read: see the `tokens` module), never from a command-line
//! argument, which other users of the machine can read.
//!
//! Over WebSocket the token travels unencrypted, as Burn's docs say: it keeps stray clients of a
//! trusted network out, not someone reading the traffic. The box binds 127.0.0.1 unless told
//! otherwise; an SSH tunnel (`ssh -L PORT:127.0.0.1:PORT box`) reaches it from elsewhere.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

// Serving and reaching a box need sockets and threads, which a browser page has not; what a box
// is (its address, its token, what can go wrong) is known everywhere.
#[cfg(not(target_arch = "wasm32"))]
mod about;
#[cfg(not(target_arch = "wasm32"))]
mod session;
#[cfg(not(target_arch = "wasm32"))]
mod tokens;

#[cfg(not(target_arch = "wasm32"))]
pub use about::About;
#[cfg(not(target_arch = "wasm32"))]
pub use session::{SessionLog, box_devices, connect, devices_to_host, serve};
#[cfg(not(target_arch = "wasm32"))]
pub use tokens::{KEYRING_VARIABLE, Kept, remember_token, token_for};

/// The Kiln version of this program: a client and its box must run the same one.
pub const KILN_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The environment variable a client reads a box's token from.
pub const TOKEN_VARIABLE: &str = "KILN_REMOTE_TOKEN";

/// The port `kiln serve` listens on unless `--listen` says otherwise.
pub const DEFAULT_PORT: u16 = 7340;

/// Where a box listens: a host name or address and a port, as `HOST:PORT` (`[::1]:PORT` for an
/// IPv6 address).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BoxAddress {
    /// The host name or address, without brackets.
    pub host: String,
    /// The TCP port.
    pub port: u16,
}

impl fmt::Display for BoxAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl FromStr for BoxAddress {
    type Err = RemoteError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || RemoteError::BadAddress {
            text: text.to_owned(),
        };
        let text = text.trim();
        let (host, port) = match text.strip_prefix('[') {
            Some(rest) => {
                let (host, port) = rest.split_once("]:").ok_or_else(bad)?;
                (host, port)
            }
            None => text.rsplit_once(':').ok_or_else(bad)?,
        };
        let plain_host = !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'));
        // A port of digits only: `u16::from_str` also takes "+80".
        if !plain_host || port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let port: u16 = port.parse().map_err(|_| bad())?;
        if port == 0 {
            return Err(bad());
        }
        Ok(Self {
            host: host.to_owned(),
            port,
        })
    }
}

/// A box's shared secret. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// A fresh token of 32 random bytes from the operating system, as 64 hex digits.
    pub fn generate() -> Result<Self, RemoteError> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| RemoteError::NoRandomness(e.to_string()))?;
        Ok(Self(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// A token given as text; surrounding whitespace (a file's last newline) is not part of it.
    pub fn new(text: &str) -> Result<Self, RemoteError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(RemoteError::EmptyToken);
        }
        Ok(Self(text.to_owned()))
    }

    /// The token in the file at `path`.
    pub fn read(path: &Path) -> Result<Self, RemoteError> {
        let text = std::fs::read_to_string(path).map_err(|e| RemoteError::TokenFile {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
        Self::new(&text).map_err(|_| RemoteError::TokenFile {
            path: path.to_owned(),
            reason: "it is empty".to_owned(),
        })
    }

    /// The token's text, for the one line `kiln serve` prints and for a token file.
    pub fn reveal(&self) -> &str {
        &self.0
    }
}

/// Why a box could not be served or reached, told as what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemoteError {
    /// An address that is not `HOST:PORT`.
    #[error(
        "\"{text}\" is not a box address: write HOST:PORT (for example 192.168.1.20:{DEFAULT_PORT} \
         or [::1]:{DEFAULT_PORT}), as `kiln serve` prints it"
    )]
    BadAddress {
        /// What was given.
        text: String,
    },
    /// No token for a box.
    #[error(
        "no token for {address}: set {TOKEN_VARIABLE} to the token its `kiln serve` printed, or \
         remember it with `kiln devices --remote {address} --remember`"
    )]
    NoToken {
        /// The box.
        address: BoxAddress,
    },
    /// An empty token, which a box would take as no token at all.
    #[error("the token is empty: use the one `kiln serve` printed")]
    EmptyToken,
    /// A token file that cannot be read or written.
    #[error("the token file {} cannot be used: {reason}", path.display())]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// Why not.
        reason: String,
    },
    /// No per-user configuration folder to remember a token in.
    #[error(
        "this system has no per-user configuration folder to remember the token in; set {TOKEN_VARIABLE} instead"
    )]
    NoConfigDir,
    /// The operating system gave no random bytes for a token.
    #[error(
        "the operating system gave no random bytes for a token ({0}); write one into a file and pass --token-file"
    )]
    NoRandomness(String),
    /// Nothing answered at the address.
    #[error(
        "nothing answers at {address} ({reason}): is `kiln serve` running there, and does its \
         --listen address let this machine in?"
    )]
    Unreachable {
        /// The box.
        address: BoxAddress,
        /// What the connection said.
        reason: String,
    },
    /// The box refused the token.
    #[error(
        "{address} refused the token: set {TOKEN_VARIABLE} to the token its `kiln serve` printed \
         (a restarted box prints a new one unless it reads --token-file)"
    )]
    WrongToken {
        /// The box.
        address: BoxAddress,
    },
    /// The box has fewer devices than the index asked for.
    #[error(
        "{address} hosts {count} device(s), so there is no remote:{address}/{index}; `kiln devices --remote {address}` lists them"
    )]
    NoSuchDevice {
        /// The box.
        address: BoxAddress,
        /// The index asked for.
        index: usize,
        /// How many it hosts.
        count: usize,
    },
    /// A server of another Burn release.
    #[error(
        "{address} runs another Kiln or Burn version (its remote protocol is version \
         {server_version}, this Kiln's {client_version}): install the same Kiln version on both \
         machines"
    )]
    OtherVersion {
        /// The box.
        address: BoxAddress,
        /// The box's protocol version.
        server_version: u16,
        /// This client's.
        client_version: u16,
    },
    /// A box of another Kiln version, or one that does not say what it hosts.
    #[error(
        "{address} did not answer as a box of Kiln {KILN_VERSION} ({reason}; its Kiln: \
         {box_version}): install the same Kiln version on both machines, and check that its \
         `kiln serve` still runs"
    )]
    OtherKiln {
        /// The box.
        address: BoxAddress,
        /// The Kiln version the box said it runs, or "unknown".
        box_version: String,
        /// What its answer was.
        reason: String,
    },
    /// Something answered but the session broke off.
    #[error(
        "{address} answered, but not as a Kiln box of this version ({reason}): check that \
         `kiln serve` of the same Kiln version listens there"
    )]
    Handshake {
        /// The box.
        address: BoxAddress,
        /// What went wrong.
        reason: String,
    },
    /// Devices a box cannot host together.
    #[error("cannot host {devices}: {reason}")]
    Host {
        /// The devices asked for.
        devices: String,
        /// Why not.
        reason: String,
    },
    /// A box asked for from a browser page, which cannot open Burn's remote connection.
    #[error(
        "{address} cannot be reached from a browser page: train on a box from the Kiln app or \
         `kiln train --device remote:{address}/N`"
    )]
    FromBrowser {
        /// The box.
        address: BoxAddress,
    },
    /// The box could not start serving.
    #[error("cannot serve on {listen}: {reason}")]
    Serve {
        /// Where it was to listen.
        listen: String,
        /// Why not.
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;

    use burn::remote::ConnectError;
    use burn::server::{RemoteServer, TokenAuthorizer, WebSocketTransport};
    use burn::tensor::Device;

    use super::session::same_kiln;
    use super::*;
    use crate::device::DeviceInfo;

    #[test]
    fn box_addresses_parse_and_display_with_ipv6_in_brackets() {
        for (text, host, port) in [
            ("127.0.0.1:7340", "127.0.0.1", 7340),
            ("gpu-box.lan:80", "gpu-box.lan", 80),
            ("[::1]:7340", "::1", 7340),
        ] {
            let address: BoxAddress = text.parse().unwrap();
            assert_eq!(
                address,
                BoxAddress {
                    host: host.into(),
                    port
                }
            );
            assert_eq!(address.to_string(), text);
        }
    }

    #[test]
    fn malformed_box_addresses_are_refused_with_an_example() {
        for text in [
            "",
            "box",
            "box:",
            ":80",
            "box:0",
            "box:+80",
            "box:70000",
            "a b:1",
            "ws://box:1",
        ] {
            let error = text.parse::<BoxAddress>().unwrap_err();
            assert!(error.to_string().contains("HOST:PORT"), "{text}: {error}");
        }
    }

    #[test]
    fn a_generated_token_is_64_hex_digits_and_new_each_time() {
        let one = Token::generate().unwrap();
        let two = Token::generate().unwrap();
        assert_eq!(one.reveal().len(), 64);
        assert!(one.reveal().bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(one, two);
        assert_eq!(format!("{one:?}"), "Token(..)");
    }

    #[test]
    fn a_token_file_is_read_without_its_newline_and_an_empty_one_is_refused() {
        let dir = std::env::temp_dir().join(format!("kiln-token-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("box.token");
        std::fs::write(&path, "s3cret\n").unwrap();
        assert_eq!(Token::read(&path).unwrap().reveal(), "s3cret");
        std::fs::write(&path, " \n").unwrap();
        let error = Token::read(&path).unwrap_err().to_string();
        assert!(error.contains("empty"), "{error}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_box_of_another_kiln_version_or_none_is_refused_with_both_versions() {
        let address: BoxAddress = "box:7340".parse().unwrap();
        let ours = About {
            kiln_version: KILN_VERSION.to_owned(),
            device: DeviceInfo::cpu(),
        };
        assert_eq!(same_kiln(&address, Ok(ours.clone())).unwrap(), ours);
        let older = About {
            kiln_version: "0.0.1".to_owned(),
            ..ours
        };
        let error = same_kiln(&address, Ok(older)).unwrap_err().to_string();
        assert!(error.contains("its Kiln: 0.0.1"), "{error}");
        assert!(error.contains(&format!("Kiln {KILN_VERSION}")), "{error}");
        assert!(
            error.contains("same Kiln version on both machines"),
            "{error}"
        );
        // Burn's own server, or a Kiln before boxes described their devices.
        let error = same_kiln(&address, Err("the session ended".to_owned()))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("the session ended; its Kiln: unknown"),
            "{error}"
        );
    }

    #[test]
    fn burns_own_server_which_cannot_say_what_it_hosts_is_refused_as_another_kiln() {
        // Burn's server as any program can start it, without Kiln's answer about its devices.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address: BoxAddress = listener.local_addr().unwrap().to_string().parse().unwrap();
        let authorizer = TokenAuthorizer::new("t").unwrap();
        std::thread::spawn(move || {
            RemoteServer::new([Device::flex()])
                .with_authorizer(authorizer)
                .serve(WebSocketTransport::from_listener(listener))
        });
        let error = connect(&address, 0, &Token::new("t").unwrap())
            .map(|(_, about)| about)
            .unwrap_err();
        assert!(matches!(error, RemoteError::OtherKiln { .. }), "{error:?}");
        assert!(error.to_string().contains("its Kiln: unknown"), "{error}");
    }

    #[test]
    fn a_server_of_another_burn_protocol_is_told_with_both_versions() {
        let address: BoxAddress = "box:7340".parse().unwrap();
        let error = RemoteError::from_connect(
            ConnectError::IncompatibleProtocol {
                client_version: 7,
                server_version: 6,
            },
            &address,
            0,
        )
        .to_string();
        assert!(
            error.contains("protocol is version 6, this Kiln's 7"),
            "{error}"
        );
        assert!(
            error.contains("same Kiln version on both machines"),
            "{error}"
        );
    }

    #[test]
    fn nothing_listening_is_told_as_unreachable_with_what_to_check() {
        // A port bound and dropped at once is free and closed for the moment of this test.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let address: BoxAddress = format!("127.0.0.1:{port}").parse().unwrap();
        let error = connect(&address, 0, &Token::new("t").unwrap())
            .map(|(_, about)| about)
            .unwrap_err();
        assert!(
            matches!(error, RemoteError::Unreachable { .. }),
            "{error:?}"
        );
        assert!(error.to_string().contains("kiln serve"), "{error}");
    }
}
