//! Every batch path against the host reference: the fused kernel on wgpu (lavapipe on machines
//! without a GPU) and the tensor-op path on the CPU's `flex`.

// A failed unwrap in a test or an example is a failure that names its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use burn::backend::DispatchDevice;
use burn::backend::wgpu::wgpu;
use burn::tensor::{Device, DeviceKind, Int, Tensor, TensorData};
use kiln_shaders::reference::batch_reference;
use kiln_shaders::{BatchOptions, ByteSplit, DeviceSplit, ImageShape, PixelTransform};

/// Runs a future to completion; wgpu's native futures are ready at once.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut context) {
            return value;
        }
        std::thread::yield_now();
    }
}

/// The wgpu device, or `None` (with the reason printed) where no adapter exists at all.
fn wgpu_device() -> Option<Device> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    let adapters = block_on(instance.enumerate_adapters(wgpu::Backends::all()));
    if adapters.is_empty() {
        eprintln!("skipped: no wgpu adapter on this machine (install mesa-vulkan-drivers)");
        return None;
    }
    let device = Device::wgpu(DeviceKind::DefaultDevice);
    // The fused kernel runs on CubeCL devices only; anything else would test the tensor path.
    assert!(matches!(device.as_dispatch(), DispatchDevice::Cube(_)));
    Some(device)
}

/// Deterministic bytes with every value 0..=255 present.
fn bytes(count: usize, salt: u32) -> Vec<u8> {
    (0..count as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(salt) >> 13) as u8)
        .collect()
}

/// A small split: `count` images of `shape` and labels 0..count.
fn split(shape: ImageShape, count: usize) -> (Vec<u8>, Vec<u8>) {
    let images = bytes(count * shape.values(), 7);
    let labels = (0..count).map(|i| i as u8).collect();
    (images, labels)
}

fn ints(values: &[usize], device: &Device) -> Tensor<1, Int> {
    let data: Vec<i32> = values.iter().map(|&v| v as i32).collect();
    Tensor::from_data(TensorData::new(data, [values.len()]), device)
}

fn floats<const D: usize>(tensor: Tensor<D>) -> Vec<f32> {
    tensor
        .into_data()
        .convert::<f32>()
        .try_to_vec()
        .expect("f32 data")
}

fn labels_of(tensor: Tensor<1, Int>) -> Vec<i64> {
    tensor.into_data().iter::<i64>().collect()
}

fn assert_close(got: &[f32], expected: &[f32], tolerance: f32, what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}: length");
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        assert!(
            (g - e).abs() <= tolerance * e.abs().max(1.0),
            "{what}: value {i} is {g}, reference {e}"
        );
    }
}

/// The cases every path must agree on: plain gather, per-channel map, crop, flip, resize, all.
fn cases() -> Vec<(&'static str, ImageShape, BatchOptions)> {
    let gray = ImageShape::new(1, 5, 7);
    let rgb = ImageShape::new(3, 6, 4);
    let normalize = PixelTransform {
        offset: vec![125.3, 123.0, 113.9],
        scale: vec![1.0 / 63.0, 1.0 / 62.1, 1.0 / 66.7],
    };
    let plain = BatchOptions::new(PixelTransform::uniform(1, 0.0, 1.0 / 255.0));
    let rgb_plain = BatchOptions::new(normalize.clone());
    let crop = BatchOptions {
        crop_padding: 2,
        seed: 11,
        ..rgb_plain.clone()
    };
    let flip = BatchOptions {
        flip: true,
        seed: 5,
        ..plain.clone()
    };
    let upsize = BatchOptions {
        output_size: Some((13, 9)),
        ..rgb_plain.clone()
    };
    let downsize = BatchOptions {
        output_size: Some((3, 2)),
        ..plain.clone()
    };
    let everything = BatchOptions {
        output_size: Some((16, 11)),
        crop_padding: 3,
        flip: true,
        seed: 99,
        ..rgb_plain.clone()
    };
    let resized_crop = BatchOptions {
        crop_scale: 0.3,
        seed: 3,
        ..rgb_plain.clone()
    };
    let resized_crop_all = BatchOptions {
        output_size: Some((9, 7)),
        crop_padding: 1,
        crop_scale: 0.5,
        flip: true,
        seed: 8,
        ..rgb_plain.clone()
    };
    let rotation = BatchOptions {
        rotation_degrees: 25.0,
        seed: 4,
        ..plain.clone()
    };
    let rotation_all = BatchOptions {
        output_size: Some((8, 10)),
        crop_padding: 2,
        crop_scale: 0.6,
        flip: true,
        rotation_degrees: 15.0,
        seed: 21,
        ..rgb_plain.clone()
    };
    let jitter = BatchOptions {
        brightness: 0.4,
        contrast: 0.5,
        seed: 6,
        ..rgb_plain.clone()
    };
    let every_augmentation = BatchOptions {
        brightness: 0.3,
        contrast: 0.2,
        seed: 77,
        ..rotation_all.clone()
    };
    vec![
        ("plain", gray, plain),
        ("per-channel map", rgb, rgb_plain),
        ("crop", rgb, crop),
        ("flip", gray, flip),
        ("upsize", rgb, upsize),
        ("downsize", gray, downsize),
        ("crop+flip+resize", rgb, everything),
        ("resized crop", rgb, resized_crop),
        ("resized crop+pad+flip+resize", rgb, resized_crop_all),
        ("rotation", gray, rotation),
        ("rotation+resized crop+pad+flip+resize", rgb, rotation_all),
        ("brightness+contrast", rgb, jitter),
        ("every augmentation", rgb, every_augmentation),
    ]
}

/// Checks every case on `device` against the reference, with `tolerance` relative error.
fn check_against_reference(device: &Device, tolerance: f32) {
    // Index 6 twice and in reverse order: a gather, not a slice.
    let order = [6usize, 0, 3, 6, 1];
    for (name, shape, options) in cases() {
        let (images, labels) = split(shape, 7);
        let split = ByteSplit::upload(&images, &labels, shape, device).expect("upload");
        let (batch, batch_labels) = split.batch(ints(&order, device), &options).expect("batch");
        let (out_h, out_w) = options.output_size(shape);
        assert_eq!(
            batch.dims(),
            [order.len(), shape.channels, out_h, out_w],
            "{name}"
        );
        let expected = batch_reference(&images, shape, &order, &options);
        assert_close(&floats(batch), &expected, tolerance, name);
        assert_eq!(
            labels_of(batch_labels),
            vec![6, 0, 3, 6, 1],
            "{name}: labels"
        );

        let (range, range_labels) = split.range(2, 5, &options).expect("range");
        let expected = batch_reference(&images, shape, &[2, 3, 4], &options);
        assert_close(
            &floats(range),
            &expected,
            tolerance,
            &format!("{name} range"),
        );
        assert_eq!(
            labels_of(range_labels),
            vec![2, 3, 4],
            "{name}: range labels"
        );
    }
}

/// The same cases with the bytes in four buffers of four images each, and a gather that reads
/// from every buffer, the last one short.
fn check_chunked_against_reference(device: &Device, tolerance: f32) {
    let order = [14usize, 0, 9, 14, 5, 3, 12];
    for (name, shape, options) in cases() {
        let (images, labels) = split(shape, 15);
        let split =
            ByteSplit::upload_in_chunks(&images, &labels, shape, device, 4 * shape.values())
                .expect("upload");
        let (batch, batch_labels) = split.batch(ints(&order, device), &options).expect("batch");
        let expected = batch_reference(&images, shape, &order, &options);
        assert_close(
            &floats(batch),
            &expected,
            tolerance,
            &format!("{name} in chunks"),
        );
        assert_eq!(
            labels_of(batch_labels),
            vec![14, 0, 9, 14, 5, 3, 12],
            "{name}: labels"
        );
        // A range across the boundary of the first two buffers.
        let (range, _) = split.range(2, 7, &options).expect("range");
        let expected = batch_reference(&images, shape, &[2, 3, 4, 5, 6], &options);
        assert_close(
            &floats(range),
            &expected,
            tolerance,
            &format!("{name} range in chunks"),
        );
    }
}

#[test]
fn wgpu_kernel_reads_a_split_spread_over_several_buffers() {
    let Some(device) = wgpu_device() else { return };
    check_chunked_against_reference(&device, 1e-5);
}

#[test]
fn wgpu_kernel_follows_a_change_of_map_on_one_split() {
    let Some(device) = wgpu_device() else { return };
    // The kernel keeps the last map on the device; a different one must replace it.
    let shape = ImageShape::new(3, 6, 4);
    let (images, labels) = split(shape, 6);
    let split = ByteSplit::upload(&images, &labels, shape, &device).expect("upload");
    let unit = BatchOptions::new(PixelTransform::uniform(3, 0.0, 1.0 / 255.0));
    let centred = BatchOptions::new(PixelTransform::uniform(3, 127.5, 1.0 / 127.5));
    for options in [&unit, &centred, &unit] {
        let (batch, _) = split.batch(ints(&[5, 2], &device), options).expect("batch");
        let expected = batch_reference(&images, shape, &[5, 2], options);
        assert_close(&floats(batch), &expected, 1e-5, "map change");
    }
}

#[test]
fn a_split_past_four_buffers_is_refused_with_its_size() {
    let Some(device) = wgpu_device() else { return };
    let shape = ImageShape::new(1, 4, 4);
    let (images, labels) = split(shape, 17);
    // Four images per buffer, four buffers: sixteen images fit, seventeen do not.
    let error = ByteSplit::upload_in_chunks(&images, &labels, shape, &device, 64)
        .expect_err("17 images in 4 buffers of 4");
    let message = error.to_string();
    assert!(message.contains("272 bytes"), "{message}");
    assert!(message.contains("CPU"), "{message}");
    let fits = &labels[..16];
    ByteSplit::upload_in_chunks(&images[..16 * 16], fits, shape, &device, 64).expect("16 fit");
}

#[test]
fn cpu_tensor_path_matches_the_reference() {
    check_against_reference(&Device::flex(), 1e-6);
}

#[test]
fn wgpu_kernel_matches_the_reference() {
    let Some(device) = wgpu_device() else { return };
    // The GPU may fuse multiply-adds where the host rounds twice.
    check_against_reference(&device, 1e-5);
}

#[test]
fn wgpu_kernel_resizes_cifar_to_vgg_size() {
    let Some(device) = wgpu_device() else { return };
    let shape = ImageShape::new(3, 32, 32);
    let (images, labels) = split(shape, 4);
    let split = ByteSplit::upload(&images, &labels, shape, &device).expect("upload");
    let options = BatchOptions {
        output_size: Some((224, 224)),
        crop_padding: 4,
        flip: true,
        seed: BatchOptions::step_seed(3, 17),
        ..BatchOptions::new(PixelTransform::uniform(3, 0.0, 1.0 / 255.0))
    };
    let (batch, _) = split
        .batch(ints(&[3, 1], &device), &options)
        .expect("batch");
    let expected = batch_reference(&images, shape, &[3, 1], &options);
    assert_close(&floats(batch), &expected, 1e-5, "cifar 32→224");
}

#[test]
fn the_same_seed_draws_the_same_batch_and_another_seed_another() {
    let device = Device::flex();
    let shape = ImageShape::new(1, 8, 8);
    let (images, labels) = split(shape, 16);
    let split = ByteSplit::upload(&images, &labels, shape, &device).expect("upload");
    let order: Vec<usize> = (0..16).collect();
    let draw = |seed| {
        let options = BatchOptions {
            crop_padding: 2,
            flip: true,
            seed,
            ..BatchOptions::new(PixelTransform::uniform(1, 0.0, 1.0))
        };
        floats(
            split
                .batch(ints(&order, &device), &options)
                .expect("batch")
                .0,
        )
    };
    assert_eq!(draw(1), draw(1));
    assert_ne!(draw(1), draw(2));
}

#[test]
fn the_random_choices_cover_every_offset_and_both_flips() {
    let options = BatchOptions {
        crop_padding: 2,
        flip: true,
        seed: 42,
        ..BatchOptions::new(PixelTransform::uniform(1, 0.0, 1.0))
    };
    let choices: Vec<_> = (0..500)
        .map(|i| options.choice(i, ImageShape::new(1, 8, 8)))
        .collect();
    for offset in 0..=4 {
        assert!(choices.iter().any(|c| c.dy == offset), "dy {offset}");
        assert!(choices.iter().any(|c| c.dx == offset), "dx {offset}");
    }
    let flips = choices.iter().filter(|c| c.flip).count();
    assert!((200..300).contains(&flips), "{flips} flips of 500");
}

#[test]
fn the_plain_byte_batch_equals_the_f32_gather() {
    let device = Device::flex();
    let shape = ImageShape::new(1, 4, 4);
    let (images, labels) = split(shape, 6);
    let transform = PixelTransform::uniform(1, 33.0, 1.0 / 78.0);
    let old = DeviceSplit::upload(&images, &labels, 16, 16, &transform, &device);
    let new = ByteSplit::upload(&images, &labels, shape, &device).expect("upload");
    let order = [5, 2, 2, 0];
    let (old_batch, old_labels) = old.gather(ints(&order, &device));
    let (new_batch, new_labels) = new
        .batch(ints(&order, &device), &BatchOptions::new(transform))
        .expect("batch");
    assert_eq!(floats(old_batch), floats(new_batch));
    assert_eq!(labels_of(old_labels), labels_of(new_labels));
}

#[test]
fn bad_requests_are_errors_not_panics() {
    let device = Device::flex();
    let shape = ImageShape::new(1, 2, 2);
    assert!(ByteSplit::upload(&[0; 7], &[0, 1], shape, &device).is_err());
    assert!(ByteSplit::upload(&[], &[], ImageShape::new(0, 2, 2), &device).is_err());
    let split = ByteSplit::upload(&[0; 8], &[0, 1], shape, &device).expect("upload");
    let options = BatchOptions::new(PixelTransform::uniform(3, 0.0, 1.0));
    assert!(split.batch(ints(&[0], &device), &options).is_err());
    let options = BatchOptions {
        output_size: Some((0, 4)),
        ..BatchOptions::new(PixelTransform::uniform(1, 0.0, 1.0))
    };
    assert!(split.batch(ints(&[0], &device), &options).is_err());
    let options = BatchOptions::new(PixelTransform::uniform(1, 0.0, 1.0));
    assert!(split.range(1, 3, &options).is_err());
    let (empty, labels) = split.range(1, 1, &options).expect("empty range");
    assert_eq!(empty.dims(), [0, 1, 2, 2]);
    assert_eq!(labels.dims(), [0]);
}

#[test]
fn an_autodiff_device_gets_autodiff_batches() {
    let device = Device::flex().autodiff();
    let shape = ImageShape::new(1, 2, 2);
    let split = ByteSplit::upload(&[1, 2, 3, 4], &[0], shape, &device).expect("upload");
    let options = BatchOptions::new(PixelTransform::uniform(1, 0.0, 1.0));
    let (batch, labels) = split.range(0, 1, &options).expect("range");
    assert!(batch.is_autodiff() && labels.is_autodiff());
    assert_eq!(floats(batch.inner()), vec![1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn the_augmentation_draws_stay_in_their_ranges_and_go_both_ways() {
    let shape = ImageShape::new(3, 20, 30);
    let options = BatchOptions {
        crop_scale: 0.25,
        rotation_degrees: 10.0,
        brightness: 0.2,
        contrast: 0.4,
        seed: 5,
        ..BatchOptions::new(PixelTransform::uniform(3, 0.0, 1.0))
    };
    let choices: Vec<_> = (0..2000).map(|i| options.choice(i, shape)).collect();
    let area = 20.0 * 30.0;
    for c in &choices {
        assert!(c.height >= 1 && c.height <= 20 && c.width >= 1 && c.width <= 30);
        assert!(c.dy + c.height <= 20 && c.dx + c.width <= 30, "{c:?}");
        // Rounding each side moves the area by at most about one row and one column.
        let share = f64::from(c.height * c.width) / area;
        assert!((0.15..=1.0).contains(&share), "{c:?}: share {share}");
        assert!(c.angle.abs() <= 10f32.to_radians(), "{c:?}");
        assert!((0.8..=1.2).contains(&c.brightness), "{c:?}");
        assert!((0.6..=1.4).contains(&c.contrast), "{c:?}");
    }
    let both_ways = |f: fn(&kiln_shaders::SampleChoice) -> bool| {
        let count = choices.iter().filter(|c| f(c)).count();
        (600..1400).contains(&count)
    };
    assert!(both_ways(|c| c.angle > 0.0));
    assert!(both_ways(|c| c.brightness > 1.0));
    assert!(both_ways(|c| c.contrast > 1.0));
    // Aspect ratios 3:4 to 4:3 either way, whatever the image's own.
    assert!(choices.iter().any(|c| c.width > c.height));
    assert!(choices.iter().any(|c| c.height > c.width));
    for c in choices.iter().filter(|c| c.height < 20 && c.width < 30) {
        let ratio = f64::from(c.width) / f64::from(c.height);
        let slack = 1.0 / f64::from(c.height.min(c.width));
        assert!((0.75 - slack..=4.0 / 3.0 + slack).contains(&ratio), "{c:?}");
    }
    // Small windows and the whole image both occur.
    assert!(choices.iter().any(|c| c.height * c.width < 200));
    assert!(choices.iter().any(|c| c.height * c.width > 540));
}

#[test]
fn out_of_range_augmentations_are_errors_not_panics() {
    let device = Device::flex();
    let shape = ImageShape::new(1, 2, 2);
    let split = ByteSplit::upload(&[1, 2, 3, 4], &[0], shape, &device).expect("upload");
    let plain = BatchOptions::new(PixelTransform::uniform(1, 0.0, 1.0));
    for options in [
        BatchOptions {
            crop_scale: 0.01,
            ..plain.clone()
        },
        BatchOptions {
            rotation_degrees: 45.0,
            ..plain.clone()
        },
        BatchOptions {
            brightness: 1.5,
            ..plain.clone()
        },
        BatchOptions {
            contrast: f32::NAN,
            ..plain.clone()
        },
    ] {
        let error = split
            .batch(ints(&[0], &device), &options)
            .expect_err("out of range");
        assert!(error.to_string().contains("augmentation"), "{error}");
    }
}
