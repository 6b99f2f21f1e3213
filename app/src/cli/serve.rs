//! `kiln serve`: this machine's devices for Kiln on other machines, through Burn's remote server.

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use kiln_core::device::DeviceChoice;
use kiln_core::remote::{self, SessionLog, Token};

/// Options of `kiln serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The device to host (`auto`, `cpu`, `gpu:N` or `cuda:N`), as remote:…/0.
    #[arg(
        long,
        value_name = "auto|cpu|gpu:N|cuda:N",
        default_value = "auto",
        conflicts_with = "devices"
    )]
    device: DeviceChoice,
    /// Host several devices, as remote:…/0, /1, …: `all` is every GPU of this machine (its CUDA
    /// devices in a build with CUDA; the CPU when it has none), or list them (`gpu:0,gpu:1`; `cpu,cpu` hosts the CPU twice, two streams
    /// sharing its cores, for trying data parallel on a machine without GPUs).
    #[arg(long, value_name = "all|gpu:0,gpu:1")]
    devices: Option<String>,
    /// Where to listen. Only this machine can connect unless this names another interface
    /// (`0.0.0.0:PORT` for all of them); port 0 lets the system pick one.
    #[arg(long, value_name = "ADDR:PORT", default_value_t = format!("127.0.0.1:{}", remote::DEFAULT_PORT))]
    listen: String,
    /// Read the token clients must present from this file (kept across restarts) instead of
    /// printing a new one.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
}

/// Serves until Ctrl+C: prints what it hosts and the line a client needs, then one line per
/// session a client opens or is refused.
pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    let choices = match args.devices.as_deref().map(str::trim) {
        Some("all") => None,
        Some(list) => Some(kiln_core::device::parse_devices(list).context("--devices")?),
        None => Some(vec![args.device.clone()]),
    };
    let hosted = remote::devices_to_host(choices)?;
    let token = match &args.token_file {
        Some(path) => Token::read(path)?,
        None => Token::generate()?,
    };
    let listen = listen_address(&args.listen)?;
    let listener = TcpListener::bind(listen)
        .with_context(|| format!("cannot listen on {listen}: is another `kiln serve` there?"))?;
    let bound = listener.local_addr()?;
    for (index, (info, _)) in hosted.iter().enumerate() {
        println!("remote device {index}: {info}");
    }
    let dial = dial_address(bound);
    let token_text = match &args.token_file {
        Some(path) => format!("$(cat {})", path.display()),
        None => token.reveal().to_owned(),
    };
    println!("Kiln serves on {bound}. On the client:");
    println!(
        "  {}={token_text} kiln train --device remote:{dial}/0",
        remote::TOKEN_VARIABLE
    );
    if hosted.len() > 1 {
        let all: Vec<String> = (0..hosted.len())
            .map(|index| format!("remote:{dial}/{index}"))
            .collect();
        println!(
            "  (--devices {} trains on all {} at once, data parallel)",
            all.join(","),
            hosted.len()
        );
    }
    if bound.ip().is_loopback() {
        println!(
            "Only this machine can connect; from another, tunnel with `ssh -L {port}:127.0.0.1:{port} THIS-BOX` or serve with --listen 0.0.0.0:{port}.",
            port = bound.port()
        );
    }
    remote::serve(&hosted, listener, &token, |log: SessionLog| {
        println!("{log}");
    })?;
    Ok(())
}

/// `text` as one socket address; a host name is looked up, and its first address taken.
fn listen_address(text: &str) -> anyhow::Result<SocketAddr> {
    let bad = || {
        anyhow::anyhow!(
            "--listen {text} is not an address to listen on: write ADDR:PORT, e.g. 127.0.0.1:{} \
             or 0.0.0.0:{} for every interface",
            remote::DEFAULT_PORT,
            remote::DEFAULT_PORT
        )
    };
    text.to_socket_addrs()
        .map_err(|_| bad())?
        .next()
        .ok_or_else(bad)
}

/// What a client dials for a box bound to `bound`: its own address, or this machine's host
/// name when it listens on every interface.
fn dial_address(bound: SocketAddr) -> String {
    if !bound.ip().is_unspecified() {
        return bound.to_string();
    }
    let name = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "THIS-BOX".to_owned());
    format!("{name}:{}", bound.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_box_listening_everywhere_is_dialled_by_its_host_name() {
        let loopback: SocketAddr = "127.0.0.1:7340".parse().unwrap();
        assert_eq!(dial_address(loopback), "127.0.0.1:7340");
        let everywhere: SocketAddr = "0.0.0.0:7340".parse().unwrap();
        let dial = dial_address(everywhere);
        assert!(
            dial.ends_with(":7340") && !dial.starts_with("0.0.0.0"),
            "{dial}"
        );
    }

    #[test]
    fn a_listen_address_without_a_port_is_refused_with_an_example() {
        let error = listen_address("127.0.0.1").unwrap_err().to_string();
        assert!(error.contains("ADDR:PORT"), "{error}");
        assert_eq!(
            listen_address("127.0.0.1:0").unwrap(),
            "127.0.0.1:0".parse::<SocketAddr>().unwrap()
        );
    }
}
