//! The devices of a browser page: its WebGPU adapter and the CPU backend on its one thread.

use burn::tensor::Device;

use super::{DeviceChoice, DeviceClass, DeviceError, DeviceInfo};
use crate::remote::RemoteError;

/// What a browser page offers before it has asked for anything: the page's WebGPU adapter as
/// `gpu:0` (whether the browser really has one is known only when a run asks for it, see
/// [`resolve_in_page`]) and the CPU backend on the page's one thread.
pub fn page_devices() -> Vec<DeviceInfo> {
    vec![webgpu_in_page(), DeviceInfo::cpu()]
}

/// The page's WebGPU adapter; the browser does not say what hardware is behind it.
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
