//! NVIDIA GPUs through Burn's CUDA backend, in builds with the `cuda` cargo feature.
//!
//! `cuda:N` is the CUDA driver's device N (so `CUDA_VISIBLE_DEVICES` applies), listed after
//! wgpu's adapters: the same card is then listed twice, as `gpu:N` through Vulkan and as
//! `cuda:N`. What CUDA adds is NCCL: a data-parallel run over `cuda:N` devices sums its
//! gradients with Burn's collective all-reduce (see `train::parallel`), where wgpu devices pass
//! them by device-to-device copies (as CUDA devices do too where NCCL's library is missing).
//! cudarc loads libcuda when first asked, so a CUDA build starts, and lists no CUDA device, on a
//! machine without NVIDIA's driver.

use burn::tensor::Device;

use super::{DeviceError, DeviceInfo};

/// The `backend` text of a CUDA device.
pub const CUDA_BACKEND: &str = "CUDA";

/// Whether `device` (without autodiff) can join Burn's collective all-reduce: a CUDA device
/// where NCCL's library loads (cubecl asks for it when it opens the device). Never in a build
/// without CUDA.
pub fn all_reduces(device: &Device) -> bool {
    #[cfg(feature = "cuda")]
    {
        match device.as_dispatch() {
            burn::backend::DispatchDevice::Cube(cube @ cubecl::Device::Cuda(_)) => {
                cube.client().has_device_transport()
            }
            _ => false,
        }
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = device;
        false
    }
}

/// The CUDA devices of this machine, in the driver's order; none without the driver (or in a
/// build without CUDA). Enumerated once per process, like the wgpu adapters: naming a device
/// opens it.
pub(super) fn listed() -> Vec<DeviceInfo> {
    #[cfg(feature = "cuda")]
    {
        use burn::tensor::DeviceType;
        static LISTED: std::sync::OnceLock<Vec<DeviceInfo>> = std::sync::OnceLock::new();
        LISTED
            .get_or_init(|| {
                // cubecl asks whether libcuda loads before it counts, so no driver is no devices.
                Device::enumerate(DeviceType::Cuda)
                    .into_vec()
                    .iter()
                    .enumerate()
                    .map(|(index, device)| describe(index, device))
                    .collect()
            })
            .clone()
    }
    #[cfg(not(feature = "cuda"))]
    {
        Vec::new()
    }
}

/// How `kiln devices` shows CUDA device `index`.
#[cfg(feature = "cuda")]
fn describe(index: usize, device: &Device) -> DeviceInfo {
    use super::{DeviceChoice, DeviceClass};
    use burn::tensor::FloatDType;
    // Asking a device its name opens it (a CUDA context); a driver that refuses leaves a
    // plain name rather than failing the whole listing.
    let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let name = device.identity().map(|identity| identity.name);
        (name, device.supports_dtype(FloatDType::F16))
    }));
    let (name, f16) = opened.unwrap_or((None, false));
    DeviceInfo {
        id: DeviceChoice::Cuda(index).to_string(),
        name: name.unwrap_or_else(|| format!("CUDA device {index}")),
        backend: CUDA_BACKEND.to_owned(),
        class: DeviceClass::DiscreteGpu,
        driver: String::new(),
        driver_info: String::new(),
        shader_f16: f16,
    }
}

/// The listing's entry for `cuda:index`, or why there is none.
pub(super) fn listed_as(index: usize, devices: &[DeviceInfo]) -> Result<DeviceInfo, DeviceError> {
    if !cfg!(feature = "cuda") {
        return Err(DeviceError::CudaNotBuilt { index });
    }
    let cudas: Vec<&DeviceInfo> = devices
        .iter()
        .filter(|device| device.backend == CUDA_BACKEND)
        .collect();
    if let Some(info) = cudas.get(index) {
        return Ok((*info).clone());
    }
    let available = match cudas.len() {
        0 => "this machine has no CUDA device (no NVIDIA driver's libcuda was found, or \
              CUDA_VISIBLE_DEVICES hides them all); gpu:N reaches a GPU through Vulkan"
            .to_owned(),
        n => format!(
            "this machine has {n} ({}); `kiln devices` lists them",
            cudas
                .iter()
                .map(|cuda| format!("{} is {}", cuda.id, cuda.name))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    };
    Err(DeviceError::NoSuchCuda { index, available })
}

/// Burn's device for `cuda:index`, which [`listed_as`] has found.
pub(super) fn device(index: usize) -> Result<Device, DeviceError> {
    #[cfg(feature = "cuda")]
    {
        Ok(Device::cuda(index))
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(DeviceError::CudaNotBuilt { index })
    }
}
