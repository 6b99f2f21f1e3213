//! Time per batch of the input pipeline: the f32 `select` gather against the byte batch builder,
//! on the CPU (`flex`) and on wgpu: `cargo run -p kiln-shaders --example batch_speed` (the
//! workspace optimizes the dev build of Burn and of this crate).
//!
//! Each figure is the median over 15 rounds of 40 batches, the device synced after each round.
//! Every batch is summed into an accumulator so that no path can skip unused work.

// A failed unwrap in a test or an example is a failure that names its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use burn::tensor::{Device, DeviceKind, Int, Tensor, TensorData};
use kiln_shaders::{BatchOptions, ByteSplit, DeviceSplit, ImageShape, PixelTransform};

const ROUNDS: usize = 15;
const PER_ROUND: usize = 40;

fn median_ms(mut round: impl FnMut() -> Tensor<1>, device: &Device) -> f64 {
    let mut times = Vec::new();
    for i in 0..=ROUNDS {
        let started = Instant::now();
        let total = round();
        let _ = total.into_data();
        let _ = device.sync();
        // The first round pays for shader compilation; keep it out of the median.
        if i > 0 {
            times.push(started.elapsed().as_secs_f64() * 1e3 / PER_ROUND as f64);
        }
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn order(len: usize, batch: usize, step: usize, device: &Device) -> Tensor<1, Int> {
    let data: Vec<i32> = (0..batch)
        .map(|i| ((step * batch + i) * 7919 % len) as i32)
        .collect();
    Tensor::from_data(TensorData::new(data, [batch]), device)
}

fn run(name: &str, device: &Device, shape: ImageShape, len: usize, batch: usize, out: usize) {
    let images: Vec<u8> = (0..len * shape.values())
        .map(|i| (i * 31 % 251) as u8)
        .collect();
    let labels: Vec<u8> = (0..len).map(|i| (i % 10) as u8).collect();
    let transform = PixelTransform::uniform(shape.channels, 0.0, 1.0 / 255.0);
    let old = DeviceSplit::upload(
        &images,
        &labels,
        shape.values(),
        shape.plane(),
        &transform,
        device,
    );
    let Ok(new) = ByteSplit::upload(&images, &labels, shape, device) else {
        return;
    };
    let zero = || Tensor::<1>::zeros([1], device);
    if out == shape.height {
        let old_ms = median_ms(
            || {
                let mut acc = zero();
                for step in 0..PER_ROUND {
                    let (x, _) = old.gather(order(len, batch, step, device));
                    let x = x.reshape([batch, shape.channels, shape.height, shape.width]);
                    acc = acc + x.sum();
                }
                acc
            },
            device,
        );
        println!("{name}: f32 select gather      {old_ms:8.3} ms/batch");
    }
    let mut options = BatchOptions::new(transform);
    options.output_size = Some((out, out));
    let plain_ms = median_ms(
        || {
            let mut acc = zero();
            for step in 0..PER_ROUND {
                if let Ok((x, _)) = new.batch(order(len, batch, step, device), &options) {
                    acc = acc + x.sum();
                }
            }
            acc
        },
        device,
    );
    println!("{name}: byte batch             {plain_ms:8.3} ms/batch (→{out}×{out})");
    options.crop_padding = 4;
    options.flip = true;
    let augmented_ms = median_ms(
        || {
            let mut acc = zero();
            for step in 0..PER_ROUND {
                options.seed = BatchOptions::step_seed(1, step as u64);
                if let Ok((x, _)) = new.batch(order(len, batch, step, device), &options) {
                    acc = acc + x.sum();
                }
            }
            acc
        },
        device,
    );
    println!("{name}: byte batch + crop/flip {augmented_ms:8.3} ms/batch (→{out}×{out})");
}

fn main() {
    let fashion = ImageShape::new(1, 28, 28);
    let cifar = ImageShape::new(3, 32, 32);
    let cpu = Device::flex();
    run("flex fashion b64", &cpu, fashion, 60_000, 64, 28);
    run("flex cifar b32", &cpu, cifar, 10_000, 32, 32);
    run("flex cifar b32", &cpu, cifar, 10_000, 32, 224);
    let gpu = Device::wgpu(DeviceKind::DefaultDevice);
    // The f32 copy of all 60 000 images (188 MB) is past what lavapipe allocates in one buffer.
    run("wgpu fashion b64", &gpu, fashion, 20_000, 64, 28);
    run("wgpu cifar b32", &gpu, cifar, 10_000, 32, 32);
    run("wgpu cifar b32", &gpu, cifar, 10_000, 32, 224);
}
