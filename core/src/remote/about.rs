//! What a box says about each device it hosts: the adapter as `kiln devices` shows it on the
//! box, and the Kiln version serving it.
//!
//! Burn's remote protocol tells a client how many devices a server hosts and nothing else. So
//! `kiln serve` answers one custom operation of Burn's own protocol (`with_custom_op`, the route
//! Burn gives backend extensions): the client registers it with no inputs, the box fills its one
//! output, and the client reads that back like any tensor. The answer is JSON, one byte per
//! element of an f32 tensor, its length first:
//!
//! ```text
//! [ length, b0, b1, …, b(length-1), 0, 0, … ]     CAPACITY elements, exact in f32
//! ```
//!
//! A server that does not know the operation (an older Kiln, or Burn's own server) ends the
//! session, which the client reads as "another Kiln version".

use burn::backend::ops::FloatTensorOps;
use burn::backend::{
    BackendTensor, Cube, DispatchAutodiffContext, DispatchDevice, DispatchTensor,
    DispatchTensorKind, Flex,
};
use burn::remote::CustomOpClient;
use burn::server::RemoteServer;
use burn::tensor::{DType, Device, Shape, Tensor, TensorData};
use burn_ir::{CustomOpIr, TensorIr};
use serde::{Deserialize, Serialize};

use super::KILN_VERSION;
use crate::device::DeviceInfo;

/// The custom operation's id; a new meaning needs a new id, since old boxes keep the old one.
const OPERATION: &str = "kiln.about-device";

/// Elements in the answer: room for a device's JSON with a long driver text.
const CAPACITY: usize = 4096;

/// One hosted device as its box describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct About {
    /// The Kiln version `kiln serve` runs on the box.
    pub kiln_version: String,
    /// The device as `kiln devices` lists it on the box (`id` is the box's own, e.g. `gpu:0`).
    pub device: DeviceInfo,
}

impl About {
    /// What this Kiln says about `device`.
    fn of(device: &DeviceInfo) -> Self {
        Self {
            kiln_version: KILN_VERSION.to_owned(),
            device: device.clone(),
        }
    }
}

/// `about` as the operation's output values.
fn encode(about: &About) -> Vec<f32> {
    let mut bytes = serde_json::to_vec(about).unwrap_or_default();
    // A description too long for the tensor loses its tail and fails to parse on the client,
    // which then names the device by its index: better than a box that cannot answer.
    bytes.truncate(CAPACITY - 1);
    let mut values = Vec::with_capacity(CAPACITY);
    values.push(bytes.len() as f32);
    values.extend(bytes.iter().map(|&b| f32::from(b)));
    values.resize(CAPACITY, 0.0);
    values
}

/// The answer in `values`, or why it is not one.
fn decode(values: &[f32]) -> Result<About, String> {
    let malformed = || "its answer about the device is malformed".to_owned();
    let (&length, rest) = values.split_first().ok_or_else(malformed)?;
    if !(0.0..=rest.len() as f32).contains(&length) || length.fract() != 0.0 {
        return Err(malformed());
    }
    let bytes = rest[..length as usize]
        .iter()
        .map(|&v| match (0.0..=255.0).contains(&v) && v.fract() == 0.0 {
            true => Ok(v as u8),
            false => Err(malformed()),
        })
        .collect::<Result<Vec<u8>, String>>()?;
    serde_json::from_slice(&bytes).map_err(|_| malformed())
}

/// `server` answering the operation for `hosted`, which are all of one backend (Burn refuses a
/// handler for a backend the server's devices do not use).
pub(super) fn answering(server: RemoteServer, hosted: &[(DeviceInfo, Device)]) -> RemoteServer {
    let mut cpu = None;
    let mut gpus = Vec::new();
    for (info, device) in hosted {
        match device.as_dispatch().clone().inner() {
            // Every hosted CPU is the same CPU.
            DispatchDevice::Flex(_) => cpu = cpu.or_else(|| Some(encode(&About::of(info)))),
            DispatchDevice::Cube(device) => gpus.push((device, encode(&About::of(info)))),
            _ => {}
        }
    }
    if let Some(answer) = cpu {
        return server.with_custom_op::<Flex, _>(OPERATION, move |handles, op, device| {
            if let Some(out) = op.outputs.first() {
                let data = TensorData::new(answer.clone(), [CAPACITY]);
                handles.register_float_tensor::<Flex>(&out.id, Flex::float_from_data(data, device));
            }
        });
    }
    let Some((_, first)) = gpus.first() else {
        return server;
    };
    let fallback = first.clone();
    server.with_custom_op::<Cube, _>(OPERATION, move |handles, op, device| {
        let answer = gpus
            .iter()
            .find(|(hosted, _)| hosted == device)
            .map_or(&fallback, |(_, answer)| answer);
        if let Some(out) = op.outputs.first() {
            let data = TensorData::new(answer.clone(), [CAPACITY]);
            handles.register_float_tensor::<Cube>(&out.id, Cube::float_from_data(data, device));
        }
    })
}

/// What the box behind the remote `device` says about it; an error when it does not answer the
/// operation (a box of another Kiln version) or the device is not remote.
pub(super) fn ask(device: &Device) -> Result<About, String> {
    let DispatchDevice::Remote(remote) = device.as_dispatch().clone().inner() else {
        return Err("it is not a remote device".to_owned());
    };
    let client = CustomOpClient::new(&remote);
    let output = TensorIr::uninit(
        client.create_empty_handle(),
        Shape::from([CAPACITY]),
        DType::F32,
    );
    let primitive = client
        .register(CustomOpIr::new(OPERATION, &[], &[output]))
        .into_iter()
        .next()
        .ok_or_else(|| "it gave no answer about the device".to_owned())?;
    let answer: Tensor<1> = Tensor::from_dispatch(DispatchTensor {
        kind: DispatchTensorKind::Remote(BackendTensor::Float(primitive)),
        autodiff: DispatchAutodiffContext::Disabled,
    });
    let data = answer
        .try_into_data()
        .map_err(|e| format!("it did not answer about the device ({e})"))?;
    let values = data
        .try_to_vec::<f32>()
        .map_err(|_| "its answer about the device is malformed".to_owned())?;
    decode(&values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_survives_the_trip_through_f32_values() {
        let about = About::of(&DeviceInfo {
            driver_info: "Mesa 25.0.7 — ünïcode".to_owned(),
            ..DeviceInfo::cpu()
        });
        let values = encode(&about);
        assert_eq!(values.len(), CAPACITY);
        assert_eq!(decode(&values).unwrap(), about);
    }

    #[test]
    fn a_malformed_answer_is_an_error_not_a_panic() {
        let good = encode(&About::of(&DeviceInfo::cpu()));
        let mut long = good.clone();
        long[0] = CAPACITY as f32;
        let mut fractional = good.clone();
        fractional[3] = 65.5;
        let mut negative = good.clone();
        negative[0] = -1.0;
        let mut wrong_json = good.clone();
        wrong_json[1] = f32::from(b'[');
        for values in [
            vec![],
            vec![f32::NAN],
            long,
            fractional,
            negative,
            wrong_json,
            good[..10].to_vec(),
        ] {
            assert!(
                decode(&values).is_err(),
                "{:?}",
                &values[..values.len().min(4)]
            );
        }
    }
}
