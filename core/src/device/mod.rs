//! What can train on this machine: the GPU adapters Burn's wgpu backend can reach, and the CPU
//! (Burn's pure-Rust `flex` backend).
//!
//! # Which adapters are listed, and in what order
//!
//! `burn::tensor::Device::wgpu` leaves the graphics API to cubecl-wgpu 0.11.3, which settles on
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

use std::fmt;
use std::str::FromStr;
use std::sync::{OnceLock, mpsc};
use std::time::Duration;

use burn::tensor::{Device, DeviceKind, FloatDType};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::config::Precision;
use crate::remote::{BoxAddress, RemoteError};

mod cuda;
pub use cuda::{CUDA_BACKEND, all_reduces};

/// The `backend` text of the CPU entry.
pub const CPU_BACKEND: &str = "flex (CPU)";

/// The `backend` text of a remote device.
pub const REMOTE_BACKEND: &str = "WebSocket";

/// How long adapter enumeration may take before Kiln gives up on the GPU and lists only the CPU.
/// A broken driver can block inside the loader; a working one answers in well under a second.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

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

fn backend_name(backend: wgpu::Backend) -> &'static str {
    match backend {
        wgpu::Backend::Vulkan => "Vulkan",
        wgpu::Backend::Metal => "Metal",
        wgpu::Backend::Dx12 => "Dx12",
        wgpu::Backend::Gl => "Gl",
        wgpu::Backend::BrowserWebGpu => "WebGpu",
        wgpu::Backend::Noop => "Noop",
    }
}

/// Which device a person asked for: `auto` (default), `cpu`, `gpu:N`, `cuda:N` or
/// `remote:HOST:PORT/N`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum DeviceChoice {
    /// The first hardware GPU (discrete, then integrated, then virtual), else the CPU.
    #[default]
    Auto,
    /// The CPU through Burn's `flex` backend.
    Cpu,
    /// The N-th GPU adapter in [`list_devices`] order.
    Gpu(usize),
    /// The CUDA driver's device N, through Burn's CUDA backend (builds with the `cuda` feature).
    Cuda(usize),
    /// Device `index` of the box `kiln serve` runs on at `address`.
    Remote {
        /// Where the box listens.
        address: BoxAddress,
        /// Which of its devices, in the order `kiln serve` printed them.
        index: usize,
    },
}

impl fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::Cpu => f.write_str("cpu"),
            Self::Gpu(index) => write!(f, "gpu:{index}"),
            Self::Cuda(index) => write!(f, "cuda:{index}"),
            Self::Remote { address, index } => write!(f, "remote:{address}/{index}"),
        }
    }
}

impl FromStr for DeviceChoice {
    type Err = DeviceError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let lower = text.trim().to_ascii_lowercase();
        let unknown = || DeviceError::UnknownChoice {
            text: text.to_owned(),
        };
        if let Some(rest) = text.trim().strip_prefix("remote:") {
            let (address, index) = match rest.rsplit_once('/') {
                Some((address, index)) => (address, Some(index)),
                None => (rest, None),
            };
            let index = match index {
                None => 0,
                Some(digits)
                    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    digits.parse().map_err(|_| unknown())?
                }
                Some(_) => return Err(unknown()),
            };
            let address = address.parse().map_err(DeviceError::Remote)?;
            return Ok(Self::Remote { address, index });
        }
        match lower.as_str() {
            "auto" => Ok(Self::Auto),
            "cpu" => Ok(Self::Cpu),
            other => {
                let (digits, numbered): (_, fn(usize) -> Self) =
                    match (other.strip_prefix("gpu:"), other.strip_prefix("cuda:")) {
                        (Some(digits), _) => (digits, Self::Gpu),
                        (_, Some(digits)) => (digits, Self::Cuda),
                        _ => return Err(unknown()),
                    };
                // `usize::from_str` also takes "+1"; people only ever mean plain digits.
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(unknown());
                }
                digits.parse().map(numbered).map_err(|_| unknown())
            }
        }
    }
}

/// The devices of `gpu:0,gpu:1`, in order: a data-parallel run's list (one entry trains alone).
pub fn parse_devices(text: &str) -> Result<Vec<DeviceChoice>, DeviceError> {
    text.split(',').map(str::parse).collect()
}

/// The devices of a list joined as [`parse_devices`] reads them.
pub fn devices_text(devices: &[DeviceChoice]) -> String {
    devices
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Why `devices` cannot train one model data parallel, if they cannot: each must be named, none
/// twice, and all of one kind (GPUs of this machine on one backend, or devices of one box),
/// since gradients travel between them every step and Burn moves them between devices of one
/// backend only.
pub fn data_parallel_problem(devices: &[DeviceChoice]) -> Option<String> {
    if devices.len() < 2 {
        return None;
    }
    if devices.contains(&DeviceChoice::Auto) {
        return Some(
            "name each device of a data-parallel run, such as gpu:0,gpu:1 or \
             remote:HOST:PORT/0,remote:HOST:PORT/1; auto picks one"
                .to_owned(),
        );
    }
    if devices.contains(&DeviceChoice::Cpu) {
        return Some(
            "the CPU is one device and its cores already share every step; list GPUs or the \
             devices of one box"
                .to_owned(),
        );
    }
    let repeated = (1..devices.len()).find(|&i| devices[..i].contains(&devices[i]));
    if let Some(i) = repeated {
        return Some(format!("{} is listed twice", devices[i]));
    }
    /// What gradients travel through between devices.
    #[derive(PartialEq)]
    enum Path<'a> {
        Wgpu,
        Cuda,
        Box(&'a BoxAddress),
    }
    fn path_of(device: &DeviceChoice) -> Path<'_> {
        match device {
            DeviceChoice::Remote { address, .. } => Path::Box(address),
            DeviceChoice::Cuda(_) => Path::Cuda,
            _ => Path::Wgpu,
        }
    }
    let first = path_of(&devices[0]);
    if devices.iter().any(|d| path_of(d) != first) {
        return Some(
            "the devices of a data-parallel run are all gpu:N, all cuda:N or all devices of one \
             box: gradients move between them every step"
                .to_owned(),
        );
    }
    None
}

impl Serialize for DeviceChoice {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for DeviceChoice {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
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

/// What a browser page offers before it has asked for anything: the page's WebGPU adapter as
/// `gpu:0` (whether the browser really has one is known only when a run asks for it, see
/// [`resolve_in_page`]) and the CPU backend on the page's one thread.
#[cfg(target_arch = "wasm32")]
pub fn page_devices() -> Vec<DeviceInfo> {
    vec![webgpu_in_page(), DeviceInfo::cpu()]
}

/// The page's WebGPU adapter; the browser does not say what hardware is behind it.
#[cfg(target_arch = "wasm32")]
fn webgpu_in_page() -> DeviceInfo {
    DeviceInfo {
        id: DeviceChoice::Gpu(0).to_string(),
        name: "Browser GPU".to_owned(),
        backend: "WebGPU".to_owned(),
        class: DeviceClass::IntegratedGpu,
        driver: String::new(),
        driver_info: String::new(),
        shader_f16: false,
    }
}

#[cfg(target_arch = "wasm32")]
thread_local! {
    /// The page's WebGPU device once a run started it. Burn registers a device's runtime once
    /// and refuses a second start ("a server is still registered"), so every later run of the
    /// page reuses it; they trained on the CPU instead.
    static PAGE_WEBGPU: std::cell::RefCell<Option<Device>> = const { std::cell::RefCell::new(None) };
}

/// [`resolve`] in a browser page, which cannot wait for an adapter synchronously: `auto` and
/// `gpu:0` ask the browser for its WebGPU adapter (once; later runs reuse it) and, where it has
/// none, train on the CPU backend with the browser's reason in the device's name, so the run
/// says where it trained.
#[cfg(target_arch = "wasm32")]
pub async fn resolve_in_page(choice: &DeviceChoice) -> Result<(DeviceInfo, Device), DeviceError> {
    let cpu = || {
        let mut info = DeviceInfo::cpu();
        info.name = "CPU (flex, the page's one thread)".to_owned();
        info
    };
    match choice {
        DeviceChoice::Cpu => Ok((cpu(), Device::flex())),
        DeviceChoice::Auto | DeviceChoice::Gpu(0) => {
            if let Some(device) = PAGE_WEBGPU.with(|started| started.borrow().clone()) {
                return Ok((webgpu_in_page(), device));
            }
            match Device::wgpu_options().init_async().await {
                Ok(device) => {
                    PAGE_WEBGPU.with(|started| *started.borrow_mut() = Some(device.clone()));
                    Ok((webgpu_in_page(), device))
                }
                Err(e) => {
                    let mut info = cpu();
                    info.name = format!("{}: this browser gave no WebGPU adapter ({e})", info.name);
                    Ok((info, Device::flex()))
                }
            }
        }
        DeviceChoice::Gpu(index) => Err(DeviceError::NoSuchGpu {
            index: *index,
            available: "a browser page has one adapter, gpu:0 (WebGPU), and the CPU".to_owned(),
        }),
        DeviceChoice::Cuda(index) => Err(DeviceError::NoSuchCuda {
            index: *index,
            available: "a browser page reaches its GPU through WebGPU only, as gpu:0".to_owned(),
        }),
        DeviceChoice::Remote { address, .. } => Err(RemoteError::FromBrowser {
            address: address.clone(),
        }
        .into()),
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

/// The adapters of the graphics API cubecl settles on, enumerated on a named thread so that a
/// driver which blocks or panics costs at most [`PROBE_TIMEOUT`] and leaves the CPU entry.
/// What the probe keeps of one adapter.
struct Adapter {
    info: wgpu::AdapterInfo,
    features: wgpu::Features,
}

fn probe_with_timeout() -> Vec<Adapter> {
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

/// The per-user folder Kiln keeps CubeCL's autotune results in.
pub fn kernel_cache_dir() -> Option<std::path::PathBuf> {
    dirs::cache_dir().map(|dir| dir.join("kiln").join("cubecl"))
}

/// Keeps CubeCL's autotune results in `dir`, so a second launch of the same workload skips the
/// autotuning of the first. CubeCL's own default is the `target/` folder of the nearest Cargo
/// workspace, which an installed program does not have. Must run before any GPU device starts;
/// returns false when it came too late or a `cubecl.toml` already chose a place.
#[cfg(not(target_arch = "wasm32"))]
pub fn keep_kernel_cache_in(dir: &std::path::Path) -> bool {
    use cubecl::config::cache::CacheConfig;
    use cubecl::config::{CubeClRuntimeConfig, RuntimeConfig};
    let mut config = CubeClRuntimeConfig::from_current_dir().override_from_env();
    if !matches!(config.environment.path, CacheConfig::Target) {
        return false;
    }
    config.environment.path = CacheConfig::Directory(dir.to_owned());
    CubeClRuntimeConfig::try_set(config)
}

/// In a browser there is no disk for autotune results: each page load autotunes afresh.
#[cfg(target_arch = "wasm32")]
pub fn keep_kernel_cache_in(_dir: &std::path::Path) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_class_fills_the_width_of_its_column() {
        assert_eq!(
            format!("{:<19}|", DeviceClass::Remote),
            "remote device      |"
        );
    }

    #[test]
    fn a_device_list_parses_in_order_and_data_parallel_takes_one_kind_of_device() {
        let list = parse_devices("gpu:0, gpu:1").unwrap();
        assert_eq!(list, vec![DeviceChoice::Gpu(0), DeviceChoice::Gpu(1)]);
        assert_eq!(devices_text(&list), "gpu:0,gpu:1");
        assert!(data_parallel_problem(&list).is_none());
        let boxed = parse_devices("remote:box:7340/0,remote:box:7340/1").unwrap();
        assert!(data_parallel_problem(&boxed).is_none());
        let cudas = parse_devices("cuda:0,cuda:1").unwrap();
        assert!(data_parallel_problem(&cudas).is_none());
        assert!(parse_devices("gpu:0,").is_err(), "an empty entry is a typo");
        for (list, said) in [
            ("remote:box:7340/0,remote:other:7340/0", "one box"),
            ("gpu:0,remote:box:7340/1", "one box"),
            ("gpu:0,cuda:1", "all gpu:N, all cuda:N"),
            ("cuda:0,remote:box:7340/1", "all gpu:N, all cuda:N"),
            ("gpu:1,gpu:1", "gpu:1 is listed twice"),
            ("auto,gpu:1", "name each device"),
            ("gpu:0,cpu", "the CPU is one device"),
        ] {
            let problem = data_parallel_problem(&parse_devices(list).unwrap());
            assert!(
                problem.as_deref().is_some_and(|p| p.contains(said)),
                "{list}: {problem:?}"
            );
        }
        // One device is not data parallel, whatever it is.
        assert!(data_parallel_problem(&[DeviceChoice::Auto]).is_none());
    }

    #[cfg(not(feature = "cuda"))]
    #[test]
    fn a_cuda_device_in_a_build_without_cuda_says_how_to_build_with_it() {
        let error = resolve(&DeviceChoice::Cuda(0)).unwrap_err();
        assert_eq!(error, DeviceError::CudaNotBuilt { index: 0 });
        let message = error.to_string();
        assert!(message.contains("--features cuda"), "{message}");
        assert!(message.contains("gpu:N"), "{message}");
        assert!(cuda::listed().is_empty());
    }

    #[test]
    fn cuda_devices_are_not_counted_among_the_wgpu_adapters() {
        let mut listed = listing(&[DeviceClass::DiscreteGpu]);
        let mut cuda = listed[0].clone();
        (cuda.id, cuda.backend) = ("cuda:0".to_owned(), CUDA_BACKEND.to_owned());
        listed.insert(1, cuda);
        assert_eq!(gpus(&listed).count(), 1);
        let gone = select(&DeviceChoice::Gpu(1), &listed).unwrap_err();
        assert!(
            matches!(gone, DeviceError::NoSuchGpu { index: 1, .. }),
            "{gone}"
        );
        if cfg!(feature = "cuda") {
            let (info, target) = select(&DeviceChoice::Cuda(0), &listed).unwrap();
            assert_eq!((info.id.as_str(), target), ("cuda:0", Target::Cuda(0)));
            let missing = select(&DeviceChoice::Cuda(1), &listed)
                .unwrap_err()
                .to_string();
            assert!(missing.contains("there is no cuda:1") && missing.contains("cuda:0 is"));
        }
    }

    #[test]
    fn the_cpu_is_named_by_its_cores_not_by_the_threads_a_run_steps_on() {
        let name = DeviceInfo::cpu().name;
        assert!(name.starts_with("CPU (") && name.contains("core"), "{name}");
        assert!(!name.contains("thread"), "{name}");
    }
    use burn::tensor::Tensor;

    /// A listing as `list_devices` would build it from adapters of these classes.
    fn listing(classes: &[DeviceClass]) -> Vec<DeviceInfo> {
        let mut devices: Vec<DeviceInfo> = classes
            .iter()
            .enumerate()
            .map(|(index, class)| DeviceInfo {
                id: format!("gpu:{index}"),
                name: format!("adapter {index}"),
                backend: "Vulkan".to_owned(),
                class: *class,
                driver: "driver".to_owned(),
                driver_info: "1.0".to_owned(),
                shader_f16: false,
            })
            .collect();
        devices.push(DeviceInfo::cpu());
        devices
    }

    use DeviceClass::{DiscreteGpu, IntegratedGpu, Software, VirtualGpu};

    #[test]
    fn remote_choices_parse_with_the_device_index_defaulting_to_zero() {
        let choice: DeviceChoice = "remote:box.lan:7340".parse().unwrap();
        let address = BoxAddress {
            host: "box.lan".into(),
            port: 7340,
        };
        assert_eq!(choice, DeviceChoice::Remote { address, index: 0 });
        assert_eq!(choice.to_string(), "remote:box.lan:7340/0");
        let ipv6: DeviceChoice = "remote:[::1]:7340/2".parse().unwrap();
        assert_eq!(ipv6.to_string(), "remote:[::1]:7340/2");
        for bad in [
            "remote:box",
            "remote:box:7340/x",
            "remote:box:7340/",
            "remote:",
        ] {
            let error = bad.parse::<DeviceChoice>().unwrap_err().to_string();
            assert!(error.contains("HOST:PORT"), "{bad}: {error}");
        }
    }

    #[test]
    fn choices_parse_and_display() {
        for (text, choice) in [
            ("auto", DeviceChoice::Auto),
            ("cpu", DeviceChoice::Cpu),
            ("gpu:0", DeviceChoice::Gpu(0)),
            ("gpu:12", DeviceChoice::Gpu(12)),
            ("cuda:0", DeviceChoice::Cuda(0)),
            ("cuda:3", DeviceChoice::Cuda(3)),
        ] {
            assert_eq!(text.parse::<DeviceChoice>(), Ok(choice.clone()));
            assert_eq!(choice.to_string(), text);
        }
        assert_eq!(" GPU:1 ".parse::<DeviceChoice>(), Ok(DeviceChoice::Gpu(1)));
        assert_eq!("Auto".parse::<DeviceChoice>(), Ok(DeviceChoice::Auto));
        assert_eq!(DeviceChoice::default(), DeviceChoice::Auto);
    }

    #[test]
    fn unknown_choices_say_what_is_accepted() {
        for text in [
            "", "gpu", "gpu:", "gpu:x", "gpu:+1", "gpu:-1", "cuda", "cuda:", "cuda:+0", "gpu0",
            "gpu:1:2",
        ] {
            let error = text.parse::<DeviceChoice>().unwrap_err();
            assert_eq!(
                error,
                DeviceError::UnknownChoice {
                    text: text.to_owned()
                }
            );
            let message = error.to_string();
            for accepted in ["`auto`", "`cpu`", "`gpu:N`", "`cuda:N`", "kiln devices"] {
                assert!(message.contains(accepted), "{message}");
            }
        }
        let huge = "gpu:99999999999999999999999".parse::<DeviceChoice>();
        assert!(matches!(huge, Err(DeviceError::UnknownChoice { .. })));
    }

    #[test]
    fn choices_serialize_as_their_text() {
        let json = serde_json::to_string(&DeviceChoice::Gpu(1)).unwrap();
        assert_eq!(json, "\"gpu:1\"");
        let back: DeviceChoice = serde_json::from_str("\"cpu\"").unwrap();
        assert_eq!(back, DeviceChoice::Cpu);
        let bad = serde_json::from_str::<DeviceChoice>("\"tpu\"").unwrap_err();
        assert!(bad.to_string().contains("`gpu:N`"), "{bad}");
    }

    #[test]
    fn auto_never_picks_a_software_rasterizer() {
        assert_eq!(auto_choice(&listing(&[Software])), DeviceChoice::Cpu);
        assert_eq!(auto_choice(&listing(&[])), DeviceChoice::Cpu);
        assert_eq!(auto_choice(&[]), DeviceChoice::Cpu);
        let (info, target) = select(&DeviceChoice::Auto, &listing(&[Software])).unwrap();
        assert_eq!((info.class, target), (DeviceClass::Cpu, Target::Flex));
        let (info, target) = select(&DeviceChoice::Auto, &[]).unwrap();
        assert_eq!((info.id.as_str(), target), ("cpu", Target::Flex));
    }

    #[test]
    fn auto_prefers_discrete_then_integrated_then_virtual() {
        let mixed = listing(&[Software, IntegratedGpu, DiscreteGpu, DiscreteGpu]);
        assert_eq!(auto_choice(&mixed), DeviceChoice::Gpu(2));
        let (info, target) = select(&DeviceChoice::Auto, &mixed).unwrap();
        assert_eq!(info.id, "gpu:2");
        assert_eq!(target, Target::Wgpu(DeviceKind::DiscreteGpu(0)));
        assert_eq!(
            auto_choice(&listing(&[VirtualGpu, IntegratedGpu])),
            DeviceChoice::Gpu(1)
        );
        assert_eq!(
            auto_choice(&listing(&[Software, VirtualGpu])),
            DeviceChoice::Gpu(1)
        );
    }

    #[test]
    fn gpu_index_counts_within_its_type_as_cubecl_does() {
        let devices = listing(&[
            IntegratedGpu,
            DiscreteGpu,
            Software,
            IntegratedGpu,
            VirtualGpu,
        ]);
        let kinds: Vec<Target> = (0..5)
            .map(|n| select(&DeviceChoice::Gpu(n), &devices).unwrap().1)
            .collect();
        assert_eq!(
            kinds,
            [
                Target::Wgpu(DeviceKind::IntegratedGpu(0)),
                Target::Wgpu(DeviceKind::DiscreteGpu(0)),
                Target::Wgpu(DeviceKind::Cpu),
                Target::Wgpu(DeviceKind::IntegratedGpu(1)),
                Target::Wgpu(DeviceKind::VirtualGpu(0)),
            ]
        );
        let (info, target) = select(&DeviceChoice::Cpu, &devices).unwrap();
        assert_eq!((info.id.as_str(), target), ("cpu", Target::Flex));
    }

    #[test]
    fn a_second_software_adapter_is_refused() {
        let devices = listing(&[Software, Software]);
        let error = select(&DeviceChoice::Gpu(1), &devices).unwrap_err();
        assert!(matches!(
            error,
            DeviceError::UnreachableAdapter { index: 1, .. }
        ));
        assert!(error.to_string().contains("gpu:0"), "{error}");
    }

    #[test]
    fn a_missing_gpu_lists_what_exists() {
        let devices = listing(&[DiscreteGpu, Software]);
        let error = select(&DeviceChoice::Gpu(5), &devices).unwrap_err();
        let message = error.to_string();
        assert!(message.starts_with("there is no gpu:5: "), "{message}");
        for part in [
            "2 GPU adapters (gpu:0 is adapter 0 [",
            "; gpu:1 is",
            "kiln devices",
        ] {
            assert!(message.contains(part), "{message}");
        }
        let none = select(&DeviceChoice::Gpu(0), &listing(&[])).unwrap_err();
        assert!(none.to_string().contains("no GPU adapter"), "{none}");
        assert!(none.to_string().contains("`cpu`"), "{none}");
    }

    #[test]
    fn the_listing_ends_with_the_cpu_and_numbers_gpus_in_order() {
        let devices = list_devices();
        let cpus: Vec<&DeviceInfo> = devices
            .iter()
            .filter(|device| device.class == DeviceClass::Cpu)
            .collect();
        assert_eq!(cpus.len(), 1);
        assert_eq!(devices.last(), Some(cpus[0]));
        assert_eq!(cpus[0].id, "cpu");
        assert_eq!(cpus[0].backend, CPU_BACKEND);
        for (index, gpu) in gpus(&devices).enumerate() {
            assert_eq!(gpu.id, format!("gpu:{index}"));
            assert_eq!(gpu.id.parse::<DeviceChoice>(), Ok(DeviceChoice::Gpu(index)));
        }
        assert_eq!(
            list_devices(),
            devices,
            "the listing is stable within a process"
        );
    }

    #[test]
    fn auto_on_this_machine_is_never_software() {
        let (info, _device) = resolve(&DeviceChoice::Auto).unwrap();
        assert_ne!(info.class, DeviceClass::Software);
    }

    #[test]
    fn the_cpu_device_computes() {
        let (info, device) = resolve(&DeviceChoice::Cpu).unwrap();
        assert_eq!(info.class, DeviceClass::Cpu);
        let sum: f32 = Tensor::<1>::from_floats([1.0, 2.0], &device)
            .sum()
            .into_scalar();
        assert_eq!(sum, 3.0);
    }

    #[test]
    fn device_info_serializes_with_its_fields() {
        let json = serde_json::to_value(DeviceInfo::cpu()).unwrap();
        assert_eq!(json["id"], "cpu");
        assert_eq!(json["class"], "cpu");
        assert_eq!(json["backend"], CPU_BACKEND);
        let gpu = &listing(&[IntegratedGpu])[0];
        assert_eq!(
            serde_json::to_value(gpu).unwrap()["class"],
            "integrated_gpu"
        );
        assert_eq!(
            gpu.to_string(),
            "adapter 0 [integrated GPU, Vulkan, driver 1.0]"
        );
        let cpu = DeviceInfo::cpu().to_string();
        assert!(
            cpu.starts_with("CPU (") && cpu.ends_with(" [flex (CPU)]"),
            "{cpu}"
        );
    }
}
