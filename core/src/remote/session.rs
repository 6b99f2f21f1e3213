//! Talking to a box: a client connecting to one of its devices (Burn's remote backend), and
//! `kiln serve` hosting this machine's devices (Burn's remote server).

use std::fmt;
use std::net::TcpListener;

use burn::remote::{ConnectError, RemoteHost};
use burn::server::{AuthorizationRequest, RemoteServer, TokenAuthorizer, WebSocketTransport};
use burn::tensor::Device;

use super::about::{self, About};
use super::{BoxAddress, KILN_VERSION, RemoteError, Token};
use crate::device::{self, DeviceChoice, DeviceClass, DeviceInfo};

impl RemoteError {
    pub(super) fn from_connect(error: ConnectError, address: &BoxAddress, index: usize) -> Self {
        let address = address.clone();
        match error {
            ConnectError::Unauthorized => Self::WrongToken { address },
            ConnectError::NoSuchDevice { device_count } => Self::NoSuchDevice {
                address,
                index,
                count: device_count,
            },
            ConnectError::IncompatibleProtocol {
                client_version,
                server_version,
            } => Self::OtherVersion {
                address,
                server_version,
                client_version,
            },
            ConnectError::Handshake { reason } => Self::Handshake { address, reason },
            ConnectError::Unreachable { reason } => Self::Unreachable { address, reason },
            other => Self::Unreachable {
                address,
                reason: other.to_string(),
            },
        }
    }
}

fn host(address: &BoxAddress, token: &Token) -> RemoteHost {
    RemoteHost::websocket(&format!("ws://{address}")).with_credential(token.reveal())
}

/// Device `index` of the box at `address`, connected, with what the box says about it (so a
/// wrong token, a stopped box or one of another Kiln version is told here, before any run folder
/// exists for it).
pub fn connect(
    address: &BoxAddress,
    index: usize,
    token: &Token,
) -> Result<(Device, About), RemoteError> {
    let device = Device::remote_options(&host(address, token))
        .device_index(index)
        .init()
        .map_err(|e| RemoteError::from_connect(e, address, index))?;
    let about = same_kiln(address, about::ask(&device))?;
    Ok((device, about))
}

/// The box's answer about a device, if it comes from a box of this Kiln version.
pub(super) fn same_kiln(
    address: &BoxAddress,
    answer: Result<About, String>,
) -> Result<About, RemoteError> {
    let other_kiln = |box_version: &str, reason: String| RemoteError::OtherKiln {
        address: address.clone(),
        box_version: box_version.to_owned(),
        reason,
    };
    match answer {
        Ok(about) if about.kiln_version == KILN_VERSION => Ok(about),
        Ok(about) => Err(other_kiln(
            &about.kiln_version,
            "its Kiln version differs".to_owned(),
        )),
        Err(reason) => Err(other_kiln("unknown", reason)),
    }
}

/// Every device of the box at `address`, in `remote:…/N` order, named as the box describes them.
pub fn box_devices(address: &BoxAddress, token: &Token) -> Result<Vec<DeviceInfo>, RemoteError> {
    (0..device_count(address, token)?)
        .map(|index| {
            let (_, about) = connect(address, index, token)?;
            Ok(DeviceInfo::on_box(address, index, &about.device))
        })
        .collect()
}

/// How many devices the box at `address` hosts.
fn device_count(address: &BoxAddress, token: &Token) -> Result<usize, RemoteError> {
    host(address, token)
        .devices()
        .map(|devices| devices.len())
        .map_err(|e| RemoteError::from_connect(e, address, 0))
}

/// What `kiln serve` hosts: `choices` in order, or without them every GPU of this machine (its
/// CUDA devices in a build that has any, since a card is listed both ways; the CPU when it has
/// no GPU). Burn's server hosts devices of one backend, so the list is all GPUs or all the CPU;
/// the CPU listed twice is hosted twice, as two streams sharing its cores.
pub fn devices_to_host(
    choices: Option<Vec<DeviceChoice>>,
) -> Result<Vec<(DeviceInfo, Device)>, RemoteError> {
    let choices = match choices {
        Some(choices) => choices,
        None => {
            let (cudas, gpus): (Vec<DeviceChoice>, Vec<DeviceChoice>) = device::list_devices()
                .iter()
                .filter(|info| info.class != DeviceClass::Cpu)
                .filter_map(|info| info.id.parse().ok())
                .partition(|choice| matches!(choice, DeviceChoice::Cuda(_)));
            [cudas, gpus, vec![DeviceChoice::Cpu]]
                .into_iter()
                .find(|choices| !choices.is_empty())
                .unwrap_or_default()
        }
    };
    let refuse = |reason: &str| RemoteError::Host {
        devices: device::devices_text(&choices),
        reason: reason.to_owned(),
    };
    if choices
        .iter()
        .any(|c| matches!(c, DeviceChoice::Remote { .. }))
    {
        return Err(refuse(
            "a box serves its own devices, not another box's: use auto, cpu, gpu:N or cuda:N",
        ));
    }
    let cpus = choices.iter().filter(|c| **c == DeviceChoice::Cpu).count();
    if cpus > 0 && cpus < choices.len() {
        return Err(refuse(
            "Burn's server hosts devices of one backend: list GPUs, or the CPU",
        ));
    }
    choices
        .iter()
        .map(|choice| device::resolve(choice).map_err(|e| refuse(&e.to_string())))
        .collect()
}

/// One session a box opened or refused, for its log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLog {
    /// The client's address.
    pub client: String,
    /// The device it asked for.
    pub device_index: u32,
    /// Whether its token was right.
    pub admitted: bool,
}

impl fmt::Display for SessionLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.admitted {
            true => write!(
                f,
                "{} opened a session on device {}",
                self.client, self.device_index
            ),
            false => write!(
                f,
                "refused {} (wrong or missing token) on device {}",
                self.client, self.device_index
            ),
        }
    }
}

/// Serves `hosted` (all of one backend: GPUs or the CPU, as [`devices_to_host`] gives them) to
/// the clients that present `token`, on `listener`, one session after another and several at
/// once, until Ctrl+C or SIGTERM. `on_session` hears of every session opened or refused; a
/// client that goes away ends its session, and what it held on the box is freed with it.
pub fn serve(
    hosted: &[(DeviceInfo, Device)],
    listener: TcpListener,
    token: &Token,
    on_session: impl Fn(SessionLog) + Send + Sync + 'static,
) -> Result<(), RemoteError> {
    let listen = listener
        .local_addr()
        .map_or_else(|_| "?".to_owned(), |a| a.to_string());
    let refused = |reason: String| RemoteError::Serve {
        listen: listen.clone(),
        reason,
    };
    let check =
        TokenAuthorizer::new(token.reveal()).map_err(|_| refused("the token is empty".into()))?;
    let authorizer = move |request: AuthorizationRequest<'_>| {
        use burn::server::PeerAuthorizer;
        let client = request.client.to_string();
        let device_index = request.device_index;
        let verdict = check.authorize(request);
        on_session(SessionLog {
            client: client
                .strip_prefix("WebSocket client ")
                .unwrap_or(&client)
                .to_owned(),
            device_index,
            admitted: verdict.is_ok(),
        });
        verdict
    };
    let devices = hosted.iter().map(|(_, device)| device.clone());
    about::answering(RemoteServer::new(devices), hosted)
        .with_authorizer(authorizer)
        .serve(WebSocketTransport::from_listener(listener))
        .map_err(|e| refused(e.to_string()))
}
