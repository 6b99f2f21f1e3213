//! A depthwise 2D convolution and its gradients (f32, one filter per channel: groups equal to
//! the input and output channels, as MobileNet's and EfficientNet's 3×3 and 5×5 and ConvNeXt's
//! 7×7), computed directly, a channel plane at a time in parallel, a kernel tap's row at a time
//! so that the loops run over contiguous pixels.
//!
//! Kiln's patch (see `patches/README.md` in Kiln). Burn's default backward passes take a
//! grouped convolution's gradients one group at a time (the weight) and through a grouped
//! transposed convolution (the input): for a depthwise layer that is hundreds of one-channel
//! convolutions per step. Measured before this change, 2 threads, batch 16 at 224×224:
//! MobileNetV2's backward pass took 1668 ms in Kiln against 313 ms in PyTorch.
//!
//! Burn's forward pass took the generic direct convolution, a tap at a time over every output
//! pixel with its bounds checked. All three visit the taps in a fixed order per plane and sum a
//! channel's images in image order, so their bits do not depend on how many threads computed
//! them.

use alloc::vec;
use alloc::vec::Vec;
use burn_backend::ops::ConvOptions;
use burn_backend::{DType, TensorMetadata};
use burn_std::{Bytes, Shape};

use super::conv2d_gemm::for_each_indexed;
use crate::{FlexTensor, Layout};

/// Sizes of one depthwise convolution.
#[derive(Clone, Copy)]
struct Depthwise {
    batch: usize,
    channels: usize,
    in_h: usize,
    in_w: usize,
    k_h: usize,
    k_w: usize,
    out_h: usize,
    out_w: usize,
    stride: [usize; 2],
    pad: [usize; 2],
    dilation: [usize; 2],
}

impl Depthwise {
    /// `None` unless an f32 convolution of `x_shape` by a weight of `weight_shape` is
    /// depthwise.
    fn new(x_shape: &Shape, weight_shape: &Shape, options: &ConvOptions<2>) -> Option<Self> {
        let channels = x_shape[1];
        let depthwise = options.groups == channels
            && channels > 1
            && weight_shape[0] == channels
            && weight_shape[1] == 1;
        if !depthwise {
            return None;
        }
        let [(top, bottom), (left, right)] = options.padding;
        let side = |input: usize, before: usize, after: usize, axis: usize| {
            let reach = options.dilation[axis] * (weight_shape[2 + axis] - 1) + 1;
            (input + before + after)
                .checked_sub(reach)
                .map(|room| room / options.stride[axis] + 1)
        };
        Some(Self {
            batch: x_shape[0],
            channels,
            in_h: x_shape[2],
            in_w: x_shape[3],
            k_h: weight_shape[2],
            k_w: weight_shape[3],
            out_h: side(x_shape[2], top, bottom, 0)?,
            out_w: side(x_shape[3], left, right, 1)?,
            stride: options.stride,
            pad: [top, left],
            dilation: options.dilation,
        })
    }

    /// As [`Self::new`], for a backward pass whose output gradient must have this shape.
    fn of(
        x_shape: &Shape,
        weight_shape: &Shape,
        output_grad: &FlexTensor,
        options: &ConvOptions<2>,
    ) -> Option<Self> {
        let d = Self::new(x_shape, weight_shape, options)?;
        let gs = output_grad.shape();
        let fits = output_grad.dtype() == DType::F32
            && gs[0] == d.batch
            && gs[1] == d.channels
            && gs[2] == d.out_h
            && gs[3] == d.out_w;
        fits.then_some(d)
    }

    /// Calls `visit(tap, output_start, input_start, count)` for every kernel tap and output
    /// row: the `count` output pixels from `output_start` on read, `stride[1]` apart, the input
    /// pixels from `input_start` on (taps in the padding read none and are left out). A run is
    /// a row, so its loops are contiguous for stride 1 and the compiler vectorizes them.
    fn for_each_run(&self, mut visit: impl FnMut(usize, usize, usize, usize)) {
        let stride_w = self.stride[1];
        for kh in 0..self.k_h {
            for kw in 0..self.k_w {
                let shift = (kw * self.dilation[1]) as isize - self.pad[1] as isize;
                // Output columns whose input column `ow·stride + shift` lies in the image.
                let first = if shift >= 0 {
                    0
                } else {
                    (-shift) as usize
                }
                .div_ceil(stride_w);
                let end = ((self.in_w as isize - shift).max(0) as usize)
                    .div_ceil(stride_w)
                    .min(self.out_w);
                if first >= end {
                    continue;
                }
                let column = (first * stride_w) as isize + shift;
                for oh in 0..self.out_h {
                    let ih = (oh * self.stride[0] + kh * self.dilation[0]) as isize
                        - self.pad[0] as isize;
                    if ih < 0 || ih >= self.in_h as isize {
                        continue;
                    }
                    visit(
                        kh * self.k_w + kw,
                        oh * self.out_w + first,
                        ih as usize * self.in_w + column as usize,
                        end - first,
                    );
                }
            }
        }
    }
}

/// A depthwise convolution, `[batch, channels, out_h, out_w]`: each output pixel the sum of
/// its taps' weights times the input pixels they read, plus the channel's bias. `None` where
/// the convolution is not depthwise f32.
pub(crate) fn conv2d(
    x: &FlexTensor,
    weight: &FlexTensor,
    bias: Option<&FlexTensor>,
    options: &ConvOptions<2>,
) -> Option<FlexTensor> {
    let f32_only = x.dtype() == DType::F32
        && weight.dtype() == DType::F32
        && bias.is_none_or(|b| b.dtype() == DType::F32);
    if !f32_only {
        return None;
    }
    let d = Depthwise::new(&x.shape(), &weight.shape(), options)?;
    let x = x.clone().to_contiguous();
    let weight = weight.clone().to_contiguous();
    let bias = bias.map(|b| b.clone().to_contiguous());
    let (x, weight): (&[f32], &[f32]) = (x.storage(), weight.storage());
    let bias: Option<&[f32]> = bias.as_ref().map(|b| b.storage());
    let (in_px, out_px, taps) = (d.in_h * d.in_w, d.out_h * d.out_w, d.k_h * d.k_w);
    let stride = d.stride[1];
    let mut y = vec![0.0f32; d.batch * d.channels * out_px];
    let mut planes: Vec<&mut [f32]> = y.chunks_exact_mut(out_px).collect();
    for_each_indexed(
        &mut planes,
        || (),
        |(), plane, y_bc| {
            let c = plane % d.channels;
            if let Some(bias) = bias {
                y_bc.fill(bias[c]);
            }
            let w_c = &weight[c * taps..(c + 1) * taps];
            let x_bc = &x[plane * in_px..(plane + 1) * in_px];
            d.for_each_run(|tap, out, input, count| {
                let w = w_c[tap];
                let y_run = &mut y_bc[out..out + count];
                if stride == 1 {
                    for (y, x) in y_run.iter_mut().zip(&x_bc[input..input + count]) {
                        *y += w * x;
                    }
                } else {
                    for (y, x) in y_run.iter_mut().zip(x_bc[input..].iter().step_by(stride)) {
                        *y += w * x;
                    }
                }
            });
        },
    );
    Some(FlexTensor::new(
        Bytes::from_elems(y),
        Layout::contiguous(Shape::new([d.batch, d.channels, d.out_h, d.out_w])),
        DType::F32,
    ))
}

/// The gradient of a depthwise convolution's weight, `[channels, 1, k_h, k_w]`: per channel,
/// each tap's input pixels times the output gradient, summed over images and pixels. `None`
/// where the convolution is not depthwise f32.
pub(crate) fn conv2d_weight_backward(
    x: &FlexTensor,
    weight_shape: &Shape,
    output_grad: &FlexTensor,
    options: &ConvOptions<2>,
) -> Option<FlexTensor> {
    if x.dtype() != DType::F32 {
        return None;
    }
    let d = Depthwise::of(&x.shape(), weight_shape, output_grad, options)?;
    let x = x.clone().to_contiguous();
    let dy = output_grad.clone().to_contiguous();
    let (x, dy): (&[f32], &[f32]) = (x.storage(), dy.storage());
    let (in_px, out_px, taps) = (d.in_h * d.in_w, d.out_h * d.out_w, d.k_h * d.k_w);
    let stride = d.stride[1];
    let mut grad = vec![0.0f32; d.channels * taps];
    let mut per_channel: Vec<&mut [f32]> = grad.chunks_exact_mut(taps).collect();
    for_each_indexed(
        &mut per_channel,
        || (),
        |(), c, sum| {
            for b in 0..d.batch {
                let plane = (b * d.channels + c) * in_px;
                let x_bc = &x[plane..plane + in_px];
                let out = (b * d.channels + c) * out_px;
                let dy_bc = &dy[out..out + out_px];
                d.for_each_run(|tap, out, input, count| {
                    let dy_run = &dy_bc[out..out + count];
                    sum[tap] += if stride == 1 {
                        dot(&x_bc[input..input + count], dy_run)
                    } else {
                        x_bc[input..]
                            .iter()
                            .step_by(stride)
                            .zip(dy_run)
                            .map(|(x, g)| x * g)
                            .sum::<f32>()
                    };
                });
            }
        },
    );
    Some(FlexTensor::new(
        Bytes::from_elems(grad),
        Layout::contiguous(weight_shape.clone()),
        DType::F32,
    ))
}

/// The gradient of a depthwise convolution's input, `[batch, channels, h, w]`: each output
/// gradient pixel times each tap's weight, added onto the input pixel that tap read. `None`
/// where the convolution is not depthwise f32.
pub(crate) fn conv2d_x_backward(
    x: &FlexTensor,
    weight: &FlexTensor,
    output_grad: &FlexTensor,
    options: &ConvOptions<2>,
) -> Option<FlexTensor> {
    if weight.dtype() != DType::F32 {
        return None;
    }
    let x_shape = x.shape();
    let d = Depthwise::of(&x_shape, &weight.shape(), output_grad, options)?;
    let weight = weight.clone().to_contiguous();
    let dy = output_grad.clone().to_contiguous();
    let (weight, dy): (&[f32], &[f32]) = (weight.storage(), dy.storage());
    let (in_px, out_px, taps) = (d.in_h * d.in_w, d.out_h * d.out_w, d.k_h * d.k_w);
    let stride = d.stride[1];
    let mut dx = vec![0.0f32; d.batch * d.channels * in_px];
    let mut planes: Vec<&mut [f32]> = dx.chunks_exact_mut(in_px).collect();
    for_each_indexed(
        &mut planes,
        || (),
        |(), plane, dx_bc| {
            let c = plane % d.channels;
            let w_c = &weight[c * taps..(c + 1) * taps];
            let dy_bc = &dy[plane * out_px..(plane + 1) * out_px];
            d.for_each_run(|tap, out, input, count| {
                let w = w_c[tap];
                let dy_run = &dy_bc[out..out + count];
                if stride == 1 {
                    for (dx, g) in dx_bc[input..input + count].iter_mut().zip(dy_run) {
                        *dx += w * g;
                    }
                } else {
                    for (dx, g) in dx_bc[input..].iter_mut().step_by(stride).zip(dy_run) {
                        *dx += w * g;
                    }
                }
            });
        },
    );
    Some(FlexTensor::new(
        Bytes::from_elems(dx),
        Layout::contiguous(x_shape),
        DType::F32,
    ))
}

/// `Σ aᵢ·bᵢ` in eight lanes summed at the end: a fixed order, which the compiler vectorizes.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let (a_body, a_tail) = a.split_at(a.len() - a.len() % 8);
    let (b_body, b_tail) = b.split_at(a_body.len());
    for (a8, b8) in a_body.chunks_exact(8).zip(b_body.chunks_exact(8)) {
        for lane in 0..8 {
            lanes[lane] += a8[lane] * b8[lane];
        }
    }
    let tail: f32 = a_tail.iter().zip(b_tail).map(|(a, b)| a * b).sum();
    lanes.iter().sum::<f32>() + tail
}
