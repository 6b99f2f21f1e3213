//! The batch builder for backends without the fused kernel (the CPU's `flex`): Burn tensor ops
//! with the reference's semantics, in the reference's order of arithmetic.

use burn::tensor::ops::PadMode;
use burn::tensor::{Device, Int, Tensor, TensorData};

use crate::PixelTransform;
use crate::batch::{BatchOptions, ImageShape, SampleChoice};
use crate::reference::{MID_GREY, Taps, WarpTaps, warp_taps, window_taps};

/// Builds the batch of `rows` (`[N, C·H·W]` bytes) named by `indices`, one choice per sample.
pub(crate) fn batch(
    rows: Tensor<2, Int>,
    indices: Tensor<1, Int>,
    shape: ImageShape,
    options: &BatchOptions,
    choices: &[SampleChoice],
) -> Tensor<4> {
    let device = rows.device();
    let count = choices.len();
    let (c, h, w) = (shape.channels, shape.height, shape.width);
    let images = rows.select(0, indices).float();
    if options.is_plain(shape) {
        // Today's gather plus one map: no crop, flip or resize to pay for.
        return affine(
            images.reshape([count, c, h * w]),
            &options.transform,
            &device,
        )
        .reshape([count, c, h, w]);
    }
    let (out_h, out_w) = options.output_size(shape);
    let moves_pixels = options.crop_padding > 0
        || options.flip
        || options.resized_crop()
        || (out_h, out_w) != (h, w);
    let resampled = if options.rotates() {
        warp(images.reshape([count, c, h * w]), shape, options, choices)
    } else if moves_pixels {
        crop_and_resize(images.reshape([count, c, h, w]), shape, options, choices)
    } else {
        // Jitter alone: every pixel stays where it is.
        images.reshape([count, c, h, w])
    };
    let resampled = if options.jitters() {
        jitter(resampled, choices, &device)
    } else {
        resampled
    };
    affine(
        resampled.reshape([count, c, out_h * out_w]),
        &options.transform,
        &device,
    )
    .reshape([count, c, out_h, out_w])
}

/// Crop window, flip and resize as two separable gathers, columns first, then rows: the
/// reference's h0·(w0·a + w1·b) + h1·(w0·c + w1·d).
fn crop_and_resize(
    images: Tensor<4>,
    shape: ImageShape,
    options: &BatchOptions,
    choices: &[SampleChoice],
) -> Tensor<4> {
    let device = images.device();
    let count = choices.len();
    let c = shape.channels;
    let pad = options.crop_padding;
    let padded = if pad > 0 {
        images.pad([(pad, pad), (pad, pad)], PadMode::Constant(0.0))
    } else {
        images
    };
    let padded_h = shape.height + 2 * pad;
    let (out_h, out_w) = options.output_size(shape);
    let col_taps: Vec<Vec<Taps>> = choices
        .iter()
        .map(|choice| window_taps(choice.width as usize, out_w))
        .collect();
    let row_taps: Vec<Vec<Taps>> = choices
        .iter()
        .map(|choice| window_taps(choice.height as usize, out_h))
        .collect();

    let column = |pick: fn(&Taps) -> usize| {
        let data: Vec<i32> = choices
            .iter()
            .zip(&col_taps)
            .flat_map(|(choice, taps)| {
                taps.iter().map(move |tap| {
                    // A flip mirrors the crop window, so it only renames the column a tap reads.
                    let x = pick(tap);
                    let x = if choice.flip {
                        choice.width as usize - 1 - x
                    } else {
                        x
                    };
                    (x + choice.dx as usize) as i32
                })
            })
            .collect();
        Tensor::<4, Int>::from_data(TensorData::new(data, [count, 1, 1, out_w]), &device)
            .expand([count, c, padded_h, out_w])
    };
    // Where every tap lands on a whole pixel (a crop or flip without a resize), the blend
    // `1·a + 0·b` is `a` exactly: one gather and no arithmetic.
    let whole = |taps: &[Vec<Taps>]| taps.iter().flatten().all(|t| t.lambda == 0.0);
    let left = padded.clone().gather(3, column(|t| t.first));
    let blended = if whole(&col_taps) {
        left
    } else {
        let (w0, w1) = weights(&col_taps, &device);
        let right = padded.gather(3, column(|t| t.second));
        left * w0.reshape([count, 1, 1, out_w]) + right * w1.reshape([count, 1, 1, out_w])
    };

    let row = |pick: fn(&Taps) -> usize| {
        let data: Vec<i32> = choices
            .iter()
            .zip(&row_taps)
            .flat_map(|(choice, taps)| {
                taps.iter()
                    .map(move |tap| (pick(tap) + choice.dy as usize) as i32)
            })
            .collect();
        Tensor::<4, Int>::from_data(TensorData::new(data, [count, 1, out_h, 1]), &device)
            .expand([count, c, out_h, out_w])
    };
    let top = blended.clone().gather(2, row(|t| t.first));
    if whole(&row_taps) {
        return top;
    }
    let (h0, h1) = weights(&row_taps, &device);
    let bottom = blended.gather(2, row(|t| t.second));
    top * h0.reshape([count, 1, out_h, 1]) + bottom * h1.reshape([count, 1, out_h, 1])
}

/// The rotated path: four gathers from each `[B, C, H·W]` plane at the reference's
/// [`warp_taps`], weighted and summed in the reference's order.
fn warp(
    planes: Tensor<3>,
    shape: ImageShape,
    options: &BatchOptions,
    choices: &[SampleChoice],
) -> Tensor<4> {
    let device = planes.device();
    let count = choices.len();
    let c = shape.channels;
    let (out_h, out_w) = options.output_size(shape);
    let pixels = out_h * out_w;
    let taps: Vec<WarpTaps> = choices
        .iter()
        .flat_map(|&choice| {
            (0..pixels).map(move |p| {
                warp_taps(
                    shape,
                    options.crop_padding,
                    (out_h, out_w),
                    choice,
                    p / out_w,
                    p % out_w,
                )
            })
        })
        .collect();
    let mut sum: Option<Tensor<3>> = None;
    for corner in 0..4 {
        let index: Vec<i32> = taps.iter().map(|t| t.index[corner] as i32).collect();
        let weight: Vec<f32> = taps.iter().map(|t| t.weight[corner]).collect();
        let index =
            Tensor::<3, Int>::from_data(TensorData::new(index, [count, 1, pixels]), &device)
                .expand([count, c, pixels]);
        let weight = Tensor::<3>::from_data(TensorData::new(weight, [count, 1, pixels]), &device);
        let term = planes.clone().gather(2, index) * weight;
        sum = Some(match sum {
            Some(sum) => sum + term,
            None => term,
        });
    }
    sum.unwrap_or_else(|| Tensor::zeros([count, c, pixels], &device))
        .reshape([count, c, out_h, out_w])
}

/// The reference's [`crate::reference::jitter`] with one brightness and contrast per sample.
fn jitter(x: Tensor<4>, choices: &[SampleChoice], device: &Device) -> Tensor<4> {
    let count = choices.len();
    let per_sample = |f: fn(&SampleChoice) -> f32| {
        let values: Vec<f32> = choices.iter().map(f).collect();
        Tensor::<4>::from_data(TensorData::new(values, [count, 1, 1, 1]), device)
    };
    let bright = (x * per_sample(|c| c.brightness)).clamp(0.0, 255.0);
    (bright.sub_scalar(MID_GREY) * per_sample(|c| c.contrast))
        .add_scalar(MID_GREY)
        .clamp(0.0, 255.0)
}

/// The weights `(1 - lambda, lambda)` of each sample's tap pairs, as the reference computes
/// them: `[B, n]` each.
fn weights(taps: &[Vec<Taps>], device: &Device) -> (Tensor<2>, Tensor<2>) {
    let first: Vec<f32> = taps.iter().flatten().map(|t| 1.0 - t.lambda).collect();
    let second: Vec<f32> = taps.iter().flatten().map(|t| t.lambda).collect();
    let shape = [taps.len(), taps.first().map_or(0, Vec::len)];
    (
        Tensor::from_data(TensorData::new(first, shape), device),
        Tensor::from_data(TensorData::new(second, shape), device),
    )
}

/// `(x - offset[c]) * scale[c]` on `[B, C, P]`; two scalar ops when every channel agrees.
fn affine(x: Tensor<3>, transform: &PixelTransform, device: &Device) -> Tensor<3> {
    let uniform = |v: &[f32]| v.windows(2).all(|pair| pair[0] == pair[1]);
    if uniform(&transform.offset) && uniform(&transform.scale) {
        let (offset, scale) = (
            transform.offset.first().copied().unwrap_or(0.0),
            transform.scale.first().copied().unwrap_or(1.0),
        );
        return x.sub_scalar(offset).mul_scalar(scale);
    }
    let channels = transform.channels();
    let column = |v: &[f32]| {
        Tensor::<1>::from_data(TensorData::new(v.to_vec(), [channels]), device)
            .reshape([1, channels, 1])
    };
    (x - column(&transform.offset)) * column(&transform.scale)
}
