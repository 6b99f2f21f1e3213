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
    println!(
        "{:<7} {:<10} {:<19} {:<4} NAME",
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
            "{:<7} {:<10} {:<19} {:<4} {}{mark}",
            info.id, info.backend, info.class, f16, info.name
        );
    }
    Ok(())
}
