//! What can train on this machine: the GPU adapters Burn's wgpu backend can reach, and the CPU
//! (Burn's pure-Rust `flex` backend).
//!
//! # Which adapters are listed, and in what order
//!
//! `burn::tensor::Device::wgpu` leaves the graphics API to cubecl-wgpu 0.11.4, which settles on
//! exactly one API per process (`settle` in its `runtime.rs`): it walks the chain
//! Vulkan → DX12 → OpenGL (Metal alone on macOS) and takes the first API with a hardware adapter,
//! or failing that the first with any adapter at all. Adapters on the other APIs are unreachable
//! through `Device::wgpu` (pinning an API needs Burn's `vulkan`/`metal` features, which compile
//! SPIR-V/MSL and crash lavapipe), so listing them would offer choices that cannot be honoured.
//! [`list_devices`] therefore repeats that walk with the same `wgpu` version and the same instance
//! settings and lists that one API's adapters in wgpu's enumeration order, then the CPU entry
//! last, so `gpu:N` reads top to bottom in `kiln devices`. Nothing is deduplicated: only one API
//! is ever listed, so the same GPU cannot appear twice.
//!
//! Adapters whose type wgpu reports as `Other` (OpenGL often says this of real GPUs) are left out:
//! Burn's `DeviceKind` has no variant that selects them.
//!
//! # From `gpu:N` to a Burn device
//!
//! cubecl does not take an overall adapter index. `DeviceKind::DiscreteGpu(i)` is the i-th
//! *discrete* adapter of that one API's enumeration (`select_from_adapter_list` filters by type,
//! then takes the i-th), and likewise for integrated and virtual GPUs. So the N-th listed adapter
//! maps to its type's variant with i = the number of listed adapters of the same type before it.
//! A software rasterizer (wgpu type `Cpu`) maps to `DeviceKind::Cpu`, which carries no index and
//! always means the first of them; a second software adapter cannot be addressed and is refused.

mod choice;
mod cuda;
mod kernel_cache;
#[cfg(target_arch = "wasm32")]
mod page;
mod probe;

#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::OnceLock;

use burn::tensor::{Device, DeviceKind, FloatDType};
use serde::{Deserialize, Serialize};

use crate::config::Precision;
use crate::remote::{BoxAddress, RemoteError};

pub use choice::{DeviceChoice, data_parallel_problem, devices_text, parse_devices};
pub use cuda::{CUDA_BACKEND, all_reduces};
pub use kernel_cache::{keep_kernel_cache_in, kernel_cache_dir};
#[cfg(target_arch = "wasm32")]
pub use page::{page_devices, resolve_in_page};
use probe::{Adapter, backend_name, probe_with_timeout};

/// The `backend` text of the CPU entry.
pub const CPU_BACKEND: &str = "flex (CPU)";

/// The `backend` text of a remote device.
pub const REMOTE_BACKEND: &str = "WebSocket";

/// What kind of processor a device is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceClass {
    /// A GPU with its own memory.
    DiscreteGpu,
    /// A GPU sharing memory with the CPU.
    IntegratedGpu,
    /// A GPU handed to a virtual machine.
    VirtualGpu,
    /// A wgpu adapter that runs on the CPU (lavapipe, llvmpipe, WARP, SwiftShader).
    Software,
    /// The CPU through Burn's `flex` backend.
    Cpu,
    /// A device another machine hosts with `kiln serve` (see [`crate::remote`]).
    Remote,
}

impl DeviceClass {
    /// Whether this is real GPU hardware, the only kind `auto` picks over the CPU.
    pub fn is_hardware_gpu(self) -> bool {
        matches!(
            self,
            Self::DiscreteGpu | Self::IntegratedGpu | Self::VirtualGpu
        )
    }

    /// A short phrase for people, e.g. "integrated GPU".
    pub fn label(self) -> &'static str {
        match self {
            Self::DiscreteGpu => "discrete GPU",
            Self::IntegratedGpu => "integrated GPU",
            Self::VirtualGpu => "virtual GPU",
            Self::Software => "software rasterizer",
            Self::Cpu => "CPU",
            Self::Remote => "remote device",
        }
    }
}

impl fmt::Display for DeviceClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad`, so `kiln devices` can line its KIND column up with `{:<19}`.
        f.pad(self.label())
    }
}

/// One device that can train, as `kiln devices` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// The text the CLI accepts for it: `cpu` or `gpu:N`.
    pub id: String,
    /// The adapter's name as the driver reports it, or "CPU (N cores)".
    pub name: String,
    /// The graphics API (Vulkan, Dx12, Metal, Gl) or [`CPU_BACKEND`].
    pub backend: String,
    /// What kind of processor it is.
    pub class: DeviceClass,
    /// The driver's name, empty when the driver does not say (and for the CPU).
    pub driver: String,
    /// The driver's version text, empty when the driver does not say (and for the CPU).
    pub driver_info: String,
    /// Whether the adapter runs 16-bit float shaders (wgpu's `SHADER_F16`), which f16 training
    /// needs. Always false for the CPU, which Kiln trains in f32 only.
    #[serde(default)]
    pub shader_f16: bool,
}

impl DeviceInfo {
    /// The CPU entry, which every machine has.
    pub fn cpu() -> Self {
        // The machine's cores, not a run's threads: a small MLP steps on one thread of them,
        // and the run says so when it ends.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let plural = if cores == 1 { "" } else { "s" };
        Self {
            id: DeviceChoice::Cpu.to_string(),
            name: format!("CPU ({cores} core{plural})"),
            backend: CPU_BACKEND.to_owned(),
            class: DeviceClass::Cpu,
            driver: String::new(),
            driver_info: String::new(),
            shader_f16: false,
        }
    }

    /// Device `index` of the box at `address`, before the box has said what it is (see
    /// [`DeviceInfo::on_box`]).
    pub fn remote(address: &BoxAddress, index: usize) -> Self {
        Self {
            id: DeviceChoice::Remote {
                address: address.clone(),
                index,
            }
            .to_string(),
            name: format!("device {index} of {address}"),
            backend: REMOTE_BACKEND.to_owned(),
            class: DeviceClass::Remote,
            driver: String::new(),
            driver_info: String::new(),
            shader_f16: false,
        }
    }

    /// Device `index` of the box at `address`, named as the box describes it (`box_device`,
    /// see [`crate::remote::About`]).
    pub fn on_box(address: &BoxAddress, index: usize, box_device: &DeviceInfo) -> Self {
        Self {
            name: format!("{} on {address}", box_device.name),
            driver: box_device.driver.clone(),
            driver_info: box_device.driver_info.clone(),
            ..Self::remote(address, index)
        }
    }

    fn from_adapter(index: usize, adapter: &Adapter) -> Option<Self> {
        let Adapter {
            info: adapter,
            features,
        } = adapter;
        let class = match adapter.device_type {
            wgpu::DeviceType::DiscreteGpu => DeviceClass::DiscreteGpu,
            wgpu::DeviceType::IntegratedGpu => DeviceClass::IntegratedGpu,
            wgpu::DeviceType::VirtualGpu => DeviceClass::VirtualGpu,
            wgpu::DeviceType::Cpu => DeviceClass::Software,
            wgpu::DeviceType::Other => return None,
        };
        Some(Self {
            id: DeviceChoice::Gpu(index).to_string(),
            name: adapter.name.clone(),
            backend: backend_name(adapter.backend).to_owned(),
            class,
            driver: adapter.driver.clone(),
            driver_info: adapter.driver_info.clone(),
            shader_f16: features.contains(wgpu::Features::SHADER_F16),
        })
    }
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [", self.name)?;
        // "CPU (2 cores) [CPU, flex (CPU)]" would say CPU three times.
        if self.class != DeviceClass::Cpu {
            write!(f, "{}, ", self.class)?;
        }
        f.write_str(&self.backend)?;
        let driver = format!("{} {}", self.driver, self.driver_info);
        if !driver.trim().is_empty() {
            write!(f, ", {}", driver.trim())?;
        }
        f.write_str("]")
    }
}

/// Why a device choice cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    /// The text is not `auto`, `cpu`, `gpu:N`, `cuda:N` or `remote:HOST:PORT/N`.
    #[error(
        "unknown device \"{text}\": use `auto` (a hardware GPU if there is one, else the CPU), \
         `cpu`, `gpu:N` or `cuda:N` with N a number shown by `kiln devices`, or \
         `remote:HOST:PORT/N` for device N of a box that runs `kiln serve`"
    )]
    UnknownChoice {
        /// What was given.
        text: String,
    },
    /// `gpu:N` with N past the last listed adapter.
    #[error("there is no gpu:{index}: {available}")]
    NoSuchGpu {
        /// The index asked for.
        index: usize,
        /// What this machine does have, and what to do instead.
        available: String,
    },
    /// `cuda:N` asked of a build without Burn's CUDA backend.
    #[error(
        "cuda:{index} needs a Kiln built with CUDA (`cargo build --release --features cuda`); \
         this one reaches NVIDIA GPUs through Vulkan as gpu:N (`kiln devices` lists them)"
    )]
    CudaNotBuilt {
        /// The index asked for.
        index: usize,
    },
    /// `cuda:N` with N past the last CUDA device, or no CUDA driver at all.
    #[error("there is no cuda:{index}: {available}")]
    NoSuchCuda {
        /// The index asked for.
        index: usize,
        /// What this machine does have, and what to do instead.
        available: String,
    },
    /// f16 training asked of a device that cannot compute in f16.
    #[error("{device} cannot train in f16: {reason}. Train in f32 instead (`--precision f32`)")]
    NoHalfPrecision {
        /// The device's name.
        device: String,
        /// Why not.
        reason: &'static str,
    },
    /// A remote device that cannot be named or reached.
    #[error(transparent)]
    Remote(#[from] RemoteError),
    /// A second software adapter, which Burn's `DeviceKind::Cpu` cannot select.
    #[error(
        "gpu:{index} ({name}) is a second software rasterizer, and Burn's wgpu backend can only \
         use the first one ({first}); use {first}, a hardware GPU, or `cpu`"
    )]
    UnreachableAdapter {
        /// The index asked for.
        index: usize,
        /// The adapter's name.
        name: String,
        /// The id of the software adapter Burn can use.
        first: String,
    },
}

/// Every device that can train here: the GPU adapters Burn's wgpu backend reaches, in wgpu's
/// order (`gpu:0`, `gpu:1`, …), then in a build with the `cuda` feature the CUDA driver's
/// devices (`cuda:0`, …), then the CPU, which is always present and always last.
///
/// Enumerated once per process and cached, so `gpu:N` means the same adapter for the whole run.
/// Without a usable GPU driver (or if enumeration fails, panics or hangs) only the CPU is listed.
pub fn list_devices() -> Vec<DeviceInfo> {
    static DEVICES: OnceLock<Vec<DeviceInfo>> = OnceLock::new();
    DEVICES
        .get_or_init(|| {
            let mut devices: Vec<DeviceInfo> = probe_with_timeout()
                .iter()
                .filter(|adapter| adapter.info.device_type != wgpu::DeviceType::Other)
                .enumerate()
                .filter_map(|(index, adapter)| DeviceInfo::from_adapter(index, adapter))
                .collect();
            devices.extend(cuda::listed());
            devices.push(DeviceInfo::cpu());
            devices
        })
        .clone()
}

/// Checks that `device` (listed as `info`) can train in `precision`. For a GPU, Burn's own answer
/// decides: the adapter must run 16-bit float shaders, or f16 kernels would not compile.
pub fn check_precision(
    info: &DeviceInfo,
    device: &Device,
    precision: Precision,
) -> Result<(), DeviceError> {
    if precision == Precision::F32 {
        return Ok(());
    }
    let refuse = |reason| DeviceError::NoHalfPrecision {
        device: info.name.clone(),
        reason,
    };
    if info.class == DeviceClass::Cpu {
        return Err(refuse(
            "the CPU backend computes f16 by way of f32, so it would only be slower",
        ));
    }
    if !device.supports_dtype(FloatDType::F16) {
        return Err(refuse(
            "its adapter has no 16-bit float shaders (wgpu's SHADER_F16)",
        ));
    }
    Ok(())
}

/// Which device `auto` means among `devices`: the first discrete GPU, else the first integrated,
/// else the first virtual one, else the CPU. A software rasterizer is never chosen: on a machine
/// without a GPU, Burn's CPU backend trains an MLP about 12× faster than lavapipe.
pub fn auto_choice(devices: &[DeviceInfo]) -> DeviceChoice {
    [
        DeviceClass::DiscreteGpu,
        DeviceClass::IntegratedGpu,
        DeviceClass::VirtualGpu,
    ]
    .iter()
    .find_map(|class| gpus(devices).position(|gpu| gpu.class == *class))
    .map_or(DeviceChoice::Cpu, DeviceChoice::Gpu)
}

/// The device `choice` names on this machine, with a Burn device for it (without autodiff: the
/// trainer adds that). The Burn device is lazy: the adapter is opened on first use.
pub fn resolve(choice: &DeviceChoice) -> Result<(DeviceInfo, Device), DeviceError> {
    // Only `auto` and `gpu:N` need the adapters: listing them wakes every GPU driver, which on
    // Mesa prints warnings ahead of a CPU run that never touches a GPU. `cuda:N` needs only
    // CUDA's own listing.
    let listed = match choice {
        DeviceChoice::Auto | DeviceChoice::Gpu(_) => list_devices(),
        DeviceChoice::Cuda(_) => cuda::listed(),
        DeviceChoice::Cpu | DeviceChoice::Remote { .. } => Vec::new(),
    };
    let (info, target) = select(choice, &listed)?;
    match target {
        Target::Flex => Ok((info, Device::flex())),
        Target::Wgpu(kind) => Ok((info, Device::wgpu(kind))),
        Target::Cuda(index) => Ok((info, cuda::device(index)?)),
        #[cfg(not(target_arch = "wasm32"))]
        Target::Remote { address, index } => {
            let token = crate::remote::token_for(&address)?;
            let (device, about) = crate::remote::connect(&address, index, &token)?;
            Ok((DeviceInfo::on_box(&address, index, &about.device), device))
        }
        #[cfg(target_arch = "wasm32")]
        Target::Remote { address, .. } => Err(RemoteError::FromBrowser { address }.into()),
    }
}

/// Where a listed device runs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Flex,
    Wgpu(DeviceKind),
    Cuda(usize),
    Remote { address: BoxAddress, index: usize },
}

/// The GPU entries of a listing, in `gpu:N` order.
fn gpus(devices: &[DeviceInfo]) -> impl Iterator<Item = &DeviceInfo> {
    devices
        .iter()
        .filter(|device| device.class != DeviceClass::Cpu && device.backend != cuda::CUDA_BACKEND)
}

fn select(
    choice: &DeviceChoice,
    devices: &[DeviceInfo],
) -> Result<(DeviceInfo, Target), DeviceError> {
    match choice {
        DeviceChoice::Auto => match auto_choice(devices) {
            // Never `Auto` again, so this recursion is one level deep.
            DeviceChoice::Auto => Ok((DeviceInfo::cpu(), Target::Flex)),
            picked => select(&picked, devices),
        },
        DeviceChoice::Cpu => {
            let info = devices
                .iter()
                .find(|device| device.class == DeviceClass::Cpu)
                .cloned()
                .unwrap_or_else(DeviceInfo::cpu);
            Ok((info, Target::Flex))
        }
        DeviceChoice::Cuda(index) => Ok((cuda::listed_as(*index, devices)?, Target::Cuda(*index))),
        DeviceChoice::Remote { address, index } => Ok((
            DeviceInfo::remote(address, *index),
            Target::Remote {
                address: address.clone(),
                index: *index,
            },
        )),
        DeviceChoice::Gpu(index) => {
            let index = *index;
            let info = gpus(devices)
                .nth(index)
                .cloned()
                .ok_or_else(|| no_such_gpu(index, devices))?;
            // cubecl indexes within adapters of one type (see the module docs).
            let same_before = gpus(devices)
                .take(index)
                .filter(|gpu| gpu.class == info.class)
                .count();
            let kind = match info.class {
                DeviceClass::DiscreteGpu => DeviceKind::DiscreteGpu(same_before),
                DeviceClass::IntegratedGpu => DeviceKind::IntegratedGpu(same_before),
                DeviceClass::VirtualGpu => DeviceKind::VirtualGpu(same_before),
                DeviceClass::Software if same_before == 0 => DeviceKind::Cpu,
                DeviceClass::Software => {
                    let first = gpus(devices)
                        .find(|gpu| gpu.class == DeviceClass::Software)
                        .map_or_else(String::new, |gpu| gpu.id.clone());
                    return Err(DeviceError::UnreachableAdapter {
                        index,
                        name: info.name,
                        first,
                    });
                }
                // `gpus` leaves the CPU out, and a listing has no remote devices.
                DeviceClass::Cpu | DeviceClass::Remote => return Ok((info, Target::Flex)),
            };
            Ok((info, Target::Wgpu(kind)))
        }
    }
}

fn no_such_gpu(index: usize, devices: &[DeviceInfo]) -> DeviceError {
    let listed: Vec<String> = gpus(devices)
        .map(|gpu| format!("{} is {}", gpu.id, gpu))
        .collect();
    let available = match listed.len() {
        0 => "this machine has no GPU adapter that Kiln can use; use `cpu` or `auto`".to_owned(),
        n => {
            let adapters = if n == 1 { "adapter" } else { "adapters" };
            format!(
                "this machine has {n} GPU {adapters} ({}). `kiln devices` lists them; `auto` \
                 picks the best one",
                listed.join("; ")
            )
        }
    };
    DeviceError::NoSuchGpu { index, available }
}
