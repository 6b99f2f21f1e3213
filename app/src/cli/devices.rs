//! `kiln devices`.

use clap::Args;
use kiln_core::device::{self, DeviceChoice};

/// Options of `kiln devices`.
#[derive(Debug, Args)]
pub struct DevicesArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Lists every adapter and the CPU, marking the one `auto` picks.
pub fn run(args: &DevicesArgs) -> anyhow::Result<()> {
    let devices = device::list_devices();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&devices)?);
        return Ok(());
    }
    let auto = device::resolve(&DeviceChoice::Auto)
        .ok()
        .map(|(info, _)| info.id);
    println!("{:<7} {:<10} {:<15} NAME", "ID", "BACKEND", "KIND");
    for info in &devices {
        let mark = if auto.as_deref() == Some(info.id.as_str()) {
            "  <- auto"
        } else {
            ""
        };
        println!(
            "{:<7} {:<10} {:<15} {}{mark}",
            info.id, info.backend, info.class, info.name
        );
    }
    Ok(())
}
