//! How a person names a device (`auto`, `cpu`, `gpu:N`, `cuda:N`, `remote:HOST:PORT/N`), and
//! lists of devices trained on together.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::DeviceError;
use crate::remote::BoxAddress;

/// Which device a person asked for: `auto` (default), `cpu`, `gpu:N`, `cuda:N` or
/// `remote:HOST:PORT/N`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum DeviceChoice {
    /// The first hardware GPU (discrete, then integrated, then virtual), else the CPU.
    #[default]
    Auto,
    /// The CPU through Burn's `flex` backend.
    Cpu,
    /// The N-th GPU adapter in [`super::list_devices`] order.
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
