//! The batch builder for backends without the fused kernel (the CPU's `flex`): Burn tensor ops
//! with the reference's semantics, in the reference's order of arithmetic.

use burn::tensor::ops::PadMode;
use burn::tensor::{Device, Int, Tensor, TensorData};

use crate::PixelTransform;
use crate::batch::{BatchOptions, ImageShape, SampleChoice};
use crate::reference::{Taps, source_taps};

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
    let pad = options.crop_padding;
    let images = images.reshape([count, c, h, w]);
    let padded = if pad > 0 {
        images.pad([(pad, pad), (pad, pad)], PadMode::Constant(0.0))
    } else {
        images
    };
    let padded_h = h + 2 * pad;
    let (out_h, out_w) = options.output_size(shape);
    let rows_taps: Vec<Taps> = (0..out_h).map(|o| source_taps(h, out_h, o)).collect();
    let cols_taps: Vec<Taps> = (0..out_w).map(|o| source_taps(w, out_w, o)).collect();

    // Columns first, then rows: the reference's h0·(w0·a + w1·b) + h1·(w0·c + w1·d).
    let column = |pick: fn(&Taps) -> usize| {
        let data: Vec<i32> = choices
            .iter()
            .flat_map(|choice| {
                cols_taps.iter().map(move |taps| {
                    // A flip mirrors the crop window, so it only renames the column a tap reads.
                    let x = pick(taps);
                    let x = if choice.flip { w - 1 - x } else { x };
                    (x + choice.dx as usize) as i32
                })
            })
            .collect();
        Tensor::<4, Int>::from_data(TensorData::new(data, [count, 1, 1, out_w]), &device)
            .expand([count, c, padded_h, out_w])
    };
    let (w0, w1) = weights(&cols_taps, &device);
    let left = padded.clone().gather(3, column(|t| t.first));
    let right = padded.gather(3, column(|t| t.second));
    let blended = left * w0.reshape([1, 1, 1, out_w]) + right * w1.reshape([1, 1, 1, out_w]);

    let row = |pick: fn(&Taps) -> usize| {
        let data: Vec<i32> = choices
            .iter()
            .flat_map(|choice| {
                rows_taps
                    .iter()
                    .map(move |taps| (pick(taps) + choice.dy as usize) as i32)
            })
            .collect();
        Tensor::<4, Int>::from_data(TensorData::new(data, [count, 1, out_h, 1]), &device)
            .expand([count, c, out_h, out_w])
    };
    let (h0, h1) = weights(&rows_taps, &device);
    let top = blended.clone().gather(2, row(|t| t.first));
    let bottom = blended.gather(2, row(|t| t.second));
    let resized = top * h0.reshape([1, 1, out_h, 1]) + bottom * h1.reshape([1, 1, out_h, 1]);

    affine(
        resized.reshape([count, c, out_h * out_w]),
        &options.transform,
        &device,
    )
    .reshape([count, c, out_h, out_w])
}

/// The weights `(1 - lambda, lambda)` of each tap pair, as the reference computes them.
fn weights(taps: &[Taps], device: &Device) -> (Tensor<1>, Tensor<1>) {
    let first: Vec<f32> = taps.iter().map(|t| 1.0 - t.lambda).collect();
    let second: Vec<f32> = taps.iter().map(|t| t.lambda).collect();
    let n = taps.len();
    (
        Tensor::from_data(TensorData::new(first, [n]), device),
        Tensor::from_data(TensorData::new(second, [n]), device),
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
