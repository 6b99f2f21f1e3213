//! Probing the GPU adapters wgpu reaches, as cubecl-wgpu will settle on them, without letting a
//! broken driver hang or crash the listing.

use std::sync::mpsc;
use std::time::Duration;

/// How long adapter enumeration may take before Kiln gives up on the GPU and lists only the CPU.
/// A broken driver can block inside the loader; a working one answers in well under a second.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// The name `kiln devices` gives a graphics API.
pub(super) fn backend_name(backend: wgpu::Backend) -> &'static str {
    match backend {
        wgpu::Backend::Vulkan => "Vulkan",
        wgpu::Backend::Metal => "Metal",
        wgpu::Backend::Dx12 => "Dx12",
        wgpu::Backend::Gl => "Gl",
        wgpu::Backend::BrowserWebGpu => "WebGpu",
        wgpu::Backend::Noop => "Noop",
    }
}

/// What the probe keeps of one adapter.
pub(super) struct Adapter {
    pub(super) info: wgpu::AdapterInfo,
    pub(super) features: wgpu::Features,
}

/// The adapters of the graphics API cubecl settles on, enumerated on a named thread so that a
/// driver which blocks or panics costs at most [`PROBE_TIMEOUT`] and leaves the CPU entry.
pub(super) fn probe_with_timeout() -> Vec<Adapter> {
    let (sender, receiver) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("kiln-gpu-probe".to_owned())
        .spawn(move || {
            // The receiver may have given up already; nothing is left to tell.
            let _ = sender.send(settled_adapters());
        });
    if spawned.is_err() {
        return Vec::new();
    }
    // A panic drops the sender, which ends the wait as surely as a timeout does.
    receiver.recv_timeout(PROBE_TIMEOUT).unwrap_or_default()
}

/// Mirrors cubecl-wgpu 0.11.3's `settle(WgpuBackend::Auto)`: the first API in the chain with a
/// hardware adapter, else the first with any adapter, else nothing.
fn settled_adapters() -> Vec<Adapter> {
    let mut software_only = None;
    for api in graphics_api_chain() {
        if !wgpu::Instance::enabled_backend_features().contains(api.into()) {
            continue;
        }
        let adapters = adapters_on(api);
        if adapters
            .iter()
            .any(|adapter| adapter.info.device_type != wgpu::DeviceType::Cpu)
        {
            return adapters;
        }
        if software_only.is_none() && !adapters.is_empty() {
            software_only = Some(adapters);
        }
    }
    software_only.unwrap_or_default()
}

/// cubecl-wgpu 0.11.3's `AutoGraphicsApi::chain()`.
fn graphics_api_chain() -> Vec<wgpu::Backend> {
    if cfg!(target_os = "macos") {
        vec![wgpu::Backend::Metal]
    } else {
        vec![
            wgpu::Backend::Vulkan,
            wgpu::Backend::Dx12,
            wgpu::Backend::Gl,
        ]
    }
}

/// cubecl-wgpu 0.11.3's `probe`: an instance limited to `api` with otherwise default settings,
/// so the adapters come back in the order cubecl later indexes them in.
#[cfg(not(target_arch = "wasm32"))]
fn adapters_on(api: wgpu::Backend) -> Vec<Adapter> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: api.into(),
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    crate::executor::block_on(instance.enumerate_adapters(api.into()))
        .iter()
        .map(|adapter| Adapter {
            info: adapter.get_info(),
            features: adapter.features(),
        })
        .collect()
}

/// A browser page cannot wait for wgpu's adapter listing: it asks for its one adapter when the
/// page starts, asynchronously, so nothing is listed here.
#[cfg(target_arch = "wasm32")]
fn adapters_on(_api: wgpu::Backend) -> Vec<Adapter> {
    Vec::new()
}
