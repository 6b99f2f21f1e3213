//! The gradients of a depthwise 2D convolution (f32, one filter per channel: groups equal to
//! the input and output channels, as MobileNet's and EfficientNet's 3×3 and ConvNeXt's 7×7),
//! computed directly, a channel plane at a time in parallel.
//!
//! Kiln's patch (see `patches/README.md` in Kiln). Burn's default backward passes take a
//! grouped convolution's gradients one group at a time (the weight) and through a grouped
//! transposed convolution (the input): for a depthwise layer that is hundreds of one-channel
//! convolutions per step. Measured before this change, 2 threads, batch 16 at 224×224:
//! MobileNetV2's backward pass took 1668 ms in Kiln against 313 ms in PyTorch.
//!
//! Both gradients visit the taps in a fixed order per plane and sum a channel's images in
//! image order, so their bits do not depend on how many threads computed them.

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
    /// `None` unless an f32 convolution of `x_shape` by a weight of `weight_shape` giving
    /// `output_grad` is depthwise.
    fn of(
        x_shape: &Shape,
        weight_shape: &Shape,
        output_grad: &FlexTensor,
        options: &ConvOptions<2>,
    ) -> Option<Self> {
        let gs = output_grad.shape();
        let channels = x_shape[1];
        let depthwise = output_grad.dtype() == DType::F32
            && options.groups == channels
            && channels > 1
            && weight_shape[0] == channels
            && weight_shape[1] == 1
            && gs[0] == x_shape[0]
            && gs[1] == channels;
        depthwise.then(|| Self {
            batch: x_shape[0],
            channels,
            in_h: x_shape[2],
            in_w: x_shape[3],
            k_h: weight_shape[2],
            k_w: weight_shape[3],
            out_h: gs[2],
            out_w: gs[3],
            stride: options.stride,
            pad: options.padding_begin(),
            dilation: options.dilation,
        })
    }

    /// Calls `visit(output_pixel, tap, input_pixel)` for every output pixel and kernel tap
    /// that reads an input pixel (taps in the padding read none and are left out).
    fn for_each_tap(&self, mut visit: impl FnMut(usize, usize, usize)) {
        for oh in 0..self.out_h {
            for kh in 0..self.k_h {
                let ih = (oh * self.stride[0] + kh * self.dilation[0]) as isize
                    - self.pad[0] as isize;
                if ih < 0 || ih >= self.in_h as isize {
                    continue;
                }
                for ow in 0..self.out_w {
                    for kw in 0..self.k_w {
                        let iw = (ow * self.stride[1] + kw * self.dilation[1]) as isize
                            - self.pad[1] as isize;
                        if iw >= 0 && iw < self.in_w as isize {
                            visit(
                                oh * self.out_w + ow,
                                kh * self.k_w + kw,
                                ih as usize * self.in_w + iw as usize,
                            );
                        }
                    }
                }
            }
        }
    }
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
                d.for_each_tap(|pixel, tap, input| sum[tap] += x_bc[input] * dy_bc[pixel]);
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
    let mut dx = vec![0.0f32; d.batch * d.channels * in_px];
    let mut planes: Vec<&mut [f32]> = dx.chunks_exact_mut(in_px).collect();
    for_each_indexed(
        &mut planes,
        || (),
        |(), plane, dx_bc| {
            let c = plane % d.channels;
            let w_c = &weight[c * taps..(c + 1) * taps];
            let dy_bc = &dy[plane * out_px..(plane + 1) * out_px];
            d.for_each_tap(|pixel, tap, input| dx_bc[input] += w_c[tap] * dy_bc[pixel]);
        },
    );
    Some(FlexTensor::new(
        Bytes::from_elems(dx),
        Layout::contiguous(x_shape),
        DType::F32,
    ))
}
