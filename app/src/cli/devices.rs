//! `kiln devices`.

use clap::Args;
use kiln_core::device::{self, DeviceChoice, DeviceInfo};
use kiln_core::remote::{self, BoxAddress};

/// Options of `kiln devices`.
#[derive(Debug, Args)]
pub struct DevicesArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// List the devices of the box `kiln serve` runs on at HOST:PORT instead (its token from
    /// KILN_REMOTE_TOKEN, or remembered).
    #[arg(long, value_name = "HOST:PORT")]
    remote: Option<BoxAddress>,
    /// Keep the token of KILN_REMOTE_TOKEN for this box in a file only you can read, so later
    /// commands and the window need no variable.
    #[arg(long, requires = "remote")]
    remember: bool,
}

/// Lists every adapter and the CPU, marking the one `auto` picks; or a box's devices.
pub fn run(args: &DevicesArgs) -> anyhow::Result<()> {
    let (devices, auto) = match &args.remote {
        Some(address) => (remote_devices(address, args.remember)?, None),
        None => {
            let auto = device::resolve(&DeviceChoice::Auto)
                .ok()
                .map(|(info, _)| info.id);
            (device::list_devices(), auto)
        }
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&devices)?);
        return Ok(());
    }
    let width = devices.iter().map(|d| d.id.len()).max().unwrap_or(0).max(7);
    println!(
        "{:<width$} {:<10} {:<19} {:<4} NAME",
        "ID", "BACKEND", "KIND", "F16"
    );
    for info in &devices {
        let mark = if auto.as_deref() == Some(info.id.as_str()) {
            "  <- auto"
        } else {
            ""
        };
        // f16 training needs the adapter's 16-bit float shaders.
        let f16 = if info.shader_f16 { "yes" } else { "no" };
        println!(
            "{:<width$} {:<10} {:<19} {:<4} {}{mark}",
            info.id, info.backend, info.class, f16, info.name
        );
    }
    Ok(())
}

/// The box's devices, after checking its token (and remembering it when asked).
fn remote_devices(address: &BoxAddress, remember: bool) -> anyhow::Result<Vec<DeviceInfo>> {
    let token = match remember {
        true => remote::Token::new(&std::env::var(remote::TOKEN_VARIABLE).map_err(|_| {
            anyhow::anyhow!(
                "--remember keeps the token of {}: set it to the token `kiln serve` printed",
                remote::TOKEN_VARIABLE
            )
        })?)?,
        false => remote::token_for(address)?,
    };
    let devices = remote::box_devices(address, &token)?;
    if remember {
        let kept = remote::remember_token(address, &token)?;
        eprintln!("kept the token for {address} in {kept}");
    }
    Ok(devices)
}
