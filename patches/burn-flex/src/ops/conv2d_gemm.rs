//! 2D convolutions (f32, one group) and their gradients as im2col + one gemm per image.
//!
//! Kiln's patch (see `patches/README.md` in Kiln). Burn's default backward passes express the
//! weight gradient as a convolution of the input by the output gradient, with batch and
//! channels swapped: a "kernel" as large as the image and an output of `kh × kw` pixels, which
//! flex's im2col path turns into a gemm a few rows tall, mostly on one thread. Here:
//!
//! - weight: `dW[c_out, (kh, kw, c_in)] = Σ_b dY_b[c_out, pixels] · col(X_b)[pixels, (kh, kw, c_in)]`,
//!   the images cut into a fixed number of chunks summed in parallel, then added in chunk
//!   order, so a gradient's bits do not depend on how many threads computed it;
//! - input: `col(dX_b) = dY_bᵀ · W[c_out, (kh, kw, c_in)]`, scattered back onto the image
//!   (col2im), each image on its own.

use alloc::vec;
use alloc::vec::Vec;
use burn_backend::ops::ConvOptions;
use burn_backend::{DType, TensorMetadata};
use burn_std::{Bytes, Shape};

use crate::{FlexTensor, Layout};

/// Chunks the batch's images are cut into for the weight gradient; fixed, so that the order
/// of the sums is too.
const WEIGHT_GRAD_CHUNKS: usize = 8;

/// Sizes of one convolution, read from its input, weight and output gradient.
#[derive(Clone, Copy)]
struct Geometry {
    batch: usize,
    c_in: usize,
    in_h: usize,
    in_w: usize,
    c_out: usize,
    k_h: usize,
    k_w: usize,
    out_h: usize,
    out_w: usize,
    stride: [usize; 2],
    pad: [usize; 2],
    dilation: [usize; 2],
}

impl Geometry {
    /// `None` where this path does not apply: another float type, or groups.
    fn of(
        x: &FlexTensor,
        weight_shape: &Shape,
        output_grad: &FlexTensor,
        options: &ConvOptions<2>,
    ) -> Option<Self> {
        if x.dtype() != DType::F32 || output_grad.dtype() != DType::F32 || options.groups != 1 {
            return None;
        }
        let (xs, gs) = (x.shape(), output_grad.shape());
        let geometry = Self {
            batch: xs[0],
            c_in: xs[1],
            in_h: xs[2],
            in_w: xs[3],
            c_out: weight_shape[0],
            k_h: weight_shape[2],
            k_w: weight_shape[3],
            out_h: gs[2],
            out_w: gs[3],
            stride: options.stride,
            pad: options.padding_begin(),
            dilation: options.dilation,
        };
        (weight_shape[1] == geometry.c_in && gs[0] == geometry.batch && gs[1] == geometry.c_out)
            .then_some(geometry)
    }

    fn col_len(&self) -> usize {
        self.k_h * self.k_w * self.c_in
    }

    fn out_pixels(&self) -> usize {
        self.out_h * self.out_w
    }

    fn in_pixels(&self) -> usize {
        self.in_h * self.in_w
    }

    /// Calls `visit(pixel, kernel_tap, input_pixel)` for every output pixel and kernel tap, with
    /// no input pixel for a tap in the padding.
    fn for_each_tap(&self, mut visit: impl FnMut(usize, usize, Option<usize>)) {
        for oh in 0..self.out_h {
            for ow in 0..self.out_w {
                let pixel = oh * self.out_w + ow;
                for kh in 0..self.k_h {
                    let ih = (oh * self.stride[0] + kh * self.dilation[0]) as isize
                        - self.pad[0] as isize;
                    let row_inside = ih >= 0 && ih < self.in_h as isize;
                    for kw in 0..self.k_w {
                        let iw = (ow * self.stride[1] + kw * self.dilation[1]) as isize
                            - self.pad[1] as isize;
                        let inside = row_inside && iw >= 0 && iw < self.in_w as isize;
                        let input = inside.then(|| ih as usize * self.in_w + iw as usize);
                        visit(pixel, kh * self.k_w + kw, input);
                    }
                }
            }
        }
    }

    /// One image's patches, `[out_pixels, (kh, kw, c_in)]`, from its channels-last pixels;
    /// every element is written, so `col` need not start zeroed.
    fn im2col(&self, x_nhwc: &[f32], col: &mut [f32]) {
        let (c, len) = (self.c_in, self.col_len());
        self.for_each_tap(|pixel, tap, input| {
            let to = &mut col[pixel * len + tap * c..pixel * len + tap * c + c];
            match input {
                Some(input) => to.copy_from_slice(&x_nhwc[input * c..input * c + c]),
                None => to.fill(0.0),
            }
        });
    }

    /// One image's patches the other way round, `[(c_in, kh, kw), out_pixels]`, from its planar
    /// pixels: each row a shifted copy of the image's rows, so the forward gemm multiplies two
    /// row-major matrices.
    fn im2col_planar(&self, x: &[f32], col: &mut [f32]) {
        let (out_px, in_px) = (self.out_pixels(), self.in_pixels());
        for c in 0..self.c_in {
            let plane = &x[c * in_px..(c + 1) * in_px];
            for kh in 0..self.k_h {
                let off_h = (kh * self.dilation[0]) as isize - self.pad[0] as isize;
                for kw in 0..self.k_w {
                    let off_w = (kw * self.dilation[1]) as isize - self.pad[1] as isize;
                    let cols = inside(self.out_w, self.in_w, self.stride[1], off_w);
                    let row = ((c * self.k_h + kh) * self.k_w + kw) * out_px;
                    for oh in 0..self.out_h {
                        let dst = &mut col[row + oh * self.out_w..row + (oh + 1) * self.out_w];
                        let ih = (oh * self.stride[0]) as isize + off_h;
                        if ih < 0 || ih >= self.in_h as isize || cols.is_empty() {
                            dst.fill(0.0);
                            continue;
                        }
                        let src = &plane[ih as usize * self.in_w..(ih as usize + 1) * self.in_w];
                        dst[..cols.start].fill(0.0);
                        dst[cols.end..].fill(0.0);
                        let first = (cols.start * self.stride[1]) as isize + off_w;
                        if self.stride[1] == 1 {
                            let first = first as usize;
                            dst[cols.clone()].copy_from_slice(&src[first..first + cols.len()]);
                        } else {
                            for (i, ow) in cols.clone().enumerate() {
                                dst[ow] = src[first as usize + i * self.stride[1]];
                            }
                        }
                    }
                }
            }
        }
    }

    /// Adds one image's patch gradients back onto its channels-last pixels.
    fn col2im(&self, col: &[f32], dx_nhwc: &mut [f32]) {
        let (c, len) = (self.c_in, self.col_len());
        dx_nhwc.fill(0.0);
        self.for_each_tap(|pixel, tap, input| {
            let Some(input) = input else { return };
            let from = pixel * len + tap * c;
            for (to, value) in dx_nhwc[input * c..input * c + c]
                .iter_mut()
                .zip(&col[from..from + c])
            {
                *to += value;
            }
        });
    }
}

/// The outputs `o < out_len` whose input `o × stride + offset` lies in `0..in_len`.
fn inside(out_len: usize, in_len: usize, stride: usize, offset: isize) -> core::ops::Range<usize> {
    let stride = stride as isize;
    let first = if offset >= 0 {
        0
    } else {
        (-offset + stride - 1) / stride
    };
    let end = (in_len as isize - offset + stride - 1)
        .div_euclid(stride)
        .max(0);
    let (first, end) = (first as usize, (end as usize).min(out_len));
    first.min(end)..end
}

/// `[channels, pixels]` to `[pixels, channels]`.
fn to_channels_last(planar: &[f32], channels: usize, pixels: usize, out: &mut [f32]) {
    for c in 0..channels {
        for (p, value) in planar[c * pixels..(c + 1) * pixels].iter().enumerate() {
            out[p * channels + c] = *value;
        }
    }
}

/// `[pixels, channels]` to `[channels, pixels]`.
fn to_planar(channels_last: &[f32], channels: usize, pixels: usize, out: &mut [f32]) {
    for c in 0..channels {
        for (p, value) in out[c * pixels..(c + 1) * pixels].iter_mut().enumerate() {
            *value = channels_last[p * channels + c];
        }
    }
}

/// `dst[m, n] (+)= lhs[m, k] · rhs[k, n]`, row-major unless strides say otherwise, on the
/// calling thread.
#[allow(clippy::too_many_arguments)]
fn gemm_f32(
    (m, n, k): (usize, usize, usize),
    dst: &mut [f32],
    accumulate: bool,
    lhs: &[f32],
    (lhs_rs, lhs_cs): (isize, isize),
    rhs: &[f32],
    (rhs_rs, rhs_cs): (isize, isize),
) {
    debug_assert!(dst.len() >= m * n);
    // SAFETY: the slices hold every element the strides reach, as the callers size them.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            lhs.as_ptr(),
            lhs_cs,
            lhs_rs,
            rhs.as_ptr(),
            rhs_cs,
            rhs_rs,
            1.0f32,
            1.0f32,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// Runs `work(scratch, index, item)` over `items`, in parallel where flex has rayon; each
/// thread makes its scratch once with `scratch`, not once per item.
pub(crate) fn for_each_indexed<T: Send, S>(
    items: &mut [T],
    scratch: impl Fn() -> S + Send + Sync,
    work: impl Fn(&mut S, usize, &mut T) + Send + Sync,
) {
    #[cfg(feature = "rayon")]
    {
        use rayon::prelude::*;
        items
            .par_iter_mut()
            .enumerate()
            .for_each_init(scratch, |s, (i, item)| work(s, i, item));
    }
    #[cfg(not(feature = "rayon"))]
    {
        let mut s = scratch();
        for (i, item) in items.iter_mut().enumerate() {
            work(&mut s, i, item);
        }
    }
}

/// Patches narrower than this (a grey or RGB input, a 1×1 kernel) go to flex's own paths,
/// made for them; gemm gains nothing on a few columns.
const MIN_COL_LEN: usize = 32;

/// `[c_out, c_in, kh, kw]` to `[c_out, (kh, kw, c_in)]`, the patches' order.
fn weight_channels_last(g: &Geometry, weight: &[f32]) -> Vec<f32> {
    let (len, taps) = (g.col_len(), g.k_h * g.k_w);
    let mut w_flat = vec![0.0f32; g.c_out * len];
    for (from, to) in weight.chunks_exact(len).zip(w_flat.chunks_exact_mut(len)) {
        to_channels_last(from, g.c_in, taps, to);
    }
    w_flat
}

/// A convolution's output, `[batch, c_out, out_h, out_w]`, each image's patches multiplied by
/// the weights in one gemm; `None` where this path does not apply (see [`MIN_COL_LEN`]).
pub(crate) fn conv2d(
    x: &FlexTensor,
    weight: &FlexTensor,
    bias: Option<&FlexTensor>,
    options: &ConvOptions<2>,
) -> Option<FlexTensor> {
    if weight.dtype() != DType::F32 || options.is_asymmetric() {
        return None;
    }
    let xs = x.shape();
    let ws = weight.shape();
    let out_h = burn_backend::ops::conv::calculate_conv_output_size(
        ws[2],
        options.stride[0],
        options.padding[0].0,
        options.dilation[0],
        xs[2],
    );
    let out_w = burn_backend::ops::conv::calculate_conv_output_size(
        ws[3],
        options.stride[1],
        options.padding[1].0,
        options.dilation[1],
        xs[3],
    );
    let out_shape = Shape::from(vec![xs[0], ws[0], out_h, out_w]);
    let probe = FlexTensor::new(
        Bytes::from_elems(Vec::<f32>::new()),
        Layout::contiguous(out_shape.clone()),
        DType::F32,
    );
    let g = Geometry::of(x, &ws, &probe, options)?;
    if g.k_h * g.k_w == 1 {
        return None;
    }
    let x = x.clone().to_contiguous();
    let weight = weight.clone().to_contiguous();
    let (x, weight): (&[f32], &[f32]) = (x.storage(), weight.storage());
    let bias = bias.map(|b| b.clone().to_contiguous());
    let bias: Option<&[f32]> = bias.as_ref().map(|b| b.storage());
    let (len, out_px, in_px) = (g.col_len(), g.out_pixels(), g.in_pixels());
    let mut out = vec![0.0f32; g.batch * g.c_out * out_px];
    let mut images: Vec<&mut [f32]> = out.chunks_exact_mut(g.c_out * out_px).collect();
    let scratch = || vec![0.0f32; len * out_px];
    for_each_indexed(&mut images, scratch, |col, b, out_b| {
        g.im2col_planar(&x[b * g.c_in * in_px..(b + 1) * g.c_in * in_px], col);
        gemm_f32(
            (g.c_out, out_px, len),
            out_b,
            false,
            weight,
            (len as isize, 1),
            col,
            (out_px as isize, 1),
        );
        if let Some(bias) = bias {
            for (plane, b) in out_b.chunks_exact_mut(out_px).zip(bias) {
                plane.iter_mut().for_each(|v| *v += b);
            }
        }
    });
    Some(FlexTensor::new(
        Bytes::from_elems(out),
        Layout::contiguous(out_shape),
        DType::F32,
    ))
}

/// The gradient of `weight`, `[c_out, c_in, k_h, k_w]`; `None` where this path does not apply.
pub(crate) fn conv2d_weight_backward(
    x: &FlexTensor,
    weight_shape: &Shape,
    output_grad: &FlexTensor,
    options: &ConvOptions<2>,
) -> Option<FlexTensor> {
    let g = Geometry::of(x, weight_shape, output_grad, options)?;
    let x = x.clone().to_contiguous();
    let dy = output_grad.clone().to_contiguous();
    let (x, dy): (&[f32], &[f32]) = (x.storage(), dy.storage());
    let (len, out_px, in_px) = (g.col_len(), g.out_pixels(), g.in_pixels());
    let per_chunk = g.batch.div_ceil(WEIGHT_GRAD_CHUNKS).max(1);
    let mut partial = vec![Vec::<f32>::new(); g.batch.div_ceil(per_chunk)];
    let scratch = || (vec![0.0f32; in_px * g.c_in], vec![0.0f32; out_px * len]);
    for_each_indexed(&mut partial, scratch, |(x_nhwc, col), chunk, sum| {
        *sum = vec![0.0f32; g.c_out * len];
        let images = chunk * per_chunk..((chunk + 1) * per_chunk).min(g.batch);
        for (i, b) in images.enumerate() {
            let image = &x[b * g.c_in * in_px..(b + 1) * g.c_in * in_px];
            to_channels_last(image, g.c_in, in_px, x_nhwc);
            g.im2col(x_nhwc, col);
            let dy_b = &dy[b * g.c_out * out_px..(b + 1) * g.c_out * out_px];
            gemm_f32(
                (g.c_out, len, out_px),
                sum,
                i > 0,
                dy_b,
                (out_px as isize, 1),
                col,
                (len as isize, 1),
            );
        }
    });
    let mut chunks = partial.into_iter();
    let mut total = chunks.next()?;
    for chunk in chunks {
        for (t, v) in total.iter_mut().zip(&chunk) {
            *t += v;
        }
    }
    // [c_out, (kh, kw, c_in)] to [c_out, c_in, kh, kw]: each output channel is a
    // [taps, c_in] matrix to make planar.
    let taps = g.k_h * g.k_w;
    let mut grad = vec![0.0f32; g.c_out * len];
    for (from, to) in total.chunks_exact(len).zip(grad.chunks_exact_mut(len)) {
        to_planar(from, g.c_in, taps, to);
    }
    Some(FlexTensor::new(
        Bytes::from_elems(grad),
        Layout::contiguous(weight_shape.clone()),
        DType::F32,
    ))
}

/// The gradient of `x`, `[batch, c_in, h, w]`; `None` where this path does not apply.
pub(crate) fn conv2d_x_backward(
    x: &FlexTensor,
    weight: &FlexTensor,
    output_grad: &FlexTensor,
    options: &ConvOptions<2>,
) -> Option<FlexTensor> {
    if weight.dtype() != DType::F32 {
        return None;
    }
    let g = Geometry::of(x, &weight.shape(), output_grad, options)?;
    if g.col_len() < MIN_COL_LEN {
        return None;
    }
    let weight = weight.clone().to_contiguous();
    let dy = output_grad.clone().to_contiguous();
    let (weight, dy): (&[f32], &[f32]) = (weight.storage(), dy.storage());
    let (len, out_px, in_px) = (g.col_len(), g.out_pixels(), g.in_pixels());
    let w_flat = weight_channels_last(&g, weight);
    let mut dx = vec![0.0f32; g.batch * g.c_in * in_px];
    let mut images: Vec<&mut [f32]> = dx.chunks_exact_mut(g.c_in * in_px).collect();
    let scratch = || (vec![0.0f32; out_px * len], vec![0.0f32; in_px * g.c_in]);
    for_each_indexed(&mut images, scratch, |(col, dx_nhwc), b, dx_b| {
        let dy_b = &dy[b * g.c_out * out_px..(b + 1) * g.c_out * out_px];
        // dY_bᵀ: [pixels, c_out], read in place through its strides.
        gemm_f32(
            (out_px, len, g.c_out),
            col,
            false,
            dy_b,
            (1, out_px as isize),
            &w_flat,
            (len as isize, 1),
        );
        g.col2im(col, dx_nhwc);
        to_planar(dx_nhwc, g.c_in, in_px, dx_b);
    });
    Some(FlexTensor::new(
        Bytes::from_elems(dx),
        Layout::contiguous(x.shape()),
        DType::F32,
    ))
}

/// The gradient of the bias, `[c_out]`: the output gradient summed over images and pixels.
pub(crate) fn conv2d_bias_backward(output_grad: &FlexTensor) -> Option<FlexTensor> {
    if output_grad.dtype() != DType::F32 {
        return None;
    }
    let shape = output_grad.shape();
    let (batch, channels) = (shape[0], shape[1]);
    let pixels: usize = shape.iter().skip(2).product();
    let dy = output_grad.clone().to_contiguous();
    let dy: &[f32] = dy.storage();
    let mut grad = vec![0.0f32; channels];
    for_each_indexed(
        &mut grad,
        || (),
        |(), c, sum| {
            *sum = (0..batch)
                .map(|b| {
                    let at = (b * channels + c) * pixels;
                    dy[at..at + pixels].iter().sum::<f32>()
                })
                .sum();
        },
    );
    Some(FlexTensor::new(
        Bytes::from_elems(grad),
        Layout::contiguous(Shape::from(vec![channels])),
        DType::F32,
    ))
}

/// Burn 0.22.1's default backward passes (`burn-backend`'s `ops/modules/conv.rs`, private there),
/// which flex used for every case before this patch and still uses where the path above does
/// not apply: other float types and grouped convolutions.
pub mod upstream {
    use alloc::vec;
    use alloc::vec::Vec;
    use burn_backend::TensorMetadata;
    use burn_backend::ops::conv::{calculate_padding_out, pad_asymmetric_conv_input};
    use burn_backend::ops::{ConvOptions, ConvTransposeOptions, FloatTensorOps, ModuleOps};
    use burn_backend::tensor::FloatTensor;
    use burn_std::{Shape, Slice};

    use crate::Flex;

    fn crop_asymmetric_input_grad(
        grad: FloatTensor<Flex>,
        input_shape: &Shape,
        padding: &[(usize, usize); 2],
    ) -> FloatTensor<Flex> {
        let mut ranges = input_shape
            .iter()
            .map(|&size| Slice::from(0..size))
            .collect::<Vec<_>>();
        for (dim, (begin, _)) in padding.iter().enumerate() {
            ranges[dim + 2] = Slice::from(*begin..*begin + input_shape[dim + 2]);
        }
        Flex::float_slice(grad, &ranges)
    }

    /// `conv2d_x_backward` as a transposed convolution.
    pub fn conv2d_x_backward(
        x: FloatTensor<Flex>,
        weight: FloatTensor<Flex>,
        output_grad: FloatTensor<Flex>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Flex> {
        if options.is_asymmetric() {
            let input_shape = x.shape();
            let padding = options.padding;
            let (x, options) = pad_asymmetric_conv_input::<Flex, 2>(x, options);
            let grad = conv2d_x_backward_symmetric(x, weight, output_grad, options);
            return crop_asymmetric_input_grad(grad, &input_shape, &padding);
        }
        conv2d_x_backward_symmetric(x, weight, output_grad, options)
    }

    fn conv2d_x_backward_symmetric(
        x: FloatTensor<Flex>,
        weight: FloatTensor<Flex>,
        output_grad: FloatTensor<Flex>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Flex> {
        let weight_shape = weight.shape();
        let [_batch_size, _channels_in, height_in, width_in] = x.shape().dims();
        let [_, _, height_out, width_out] = output_grad.shape().dims();
        let [_channels_out, _, kernel_size_1, kernel_size_2] = weight_shape.dims();
        let padding_1_out = calculate_padding_out(
            kernel_size_1,
            options.stride[0],
            options.padding_begin()[0],
            options.dilation[0],
            height_in,
            height_out,
        );
        let padding_2_out = calculate_padding_out(
            kernel_size_2,
            options.stride[1],
            options.padding_begin()[1],
            options.dilation[1],
            width_in,
            width_out,
        );
        Flex::conv_transpose2d(
            output_grad,
            weight,
            None,
            ConvTransposeOptions::new(
                options.stride,
                options.padding_begin(),
                [padding_1_out, padding_2_out],
                options.dilation,
                options.groups,
            ),
        )
    }

    /// `conv2d_weight_backward` as a convolution of the input by the output gradient.
    pub fn conv2d_weight_backward(
        x: FloatTensor<Flex>,
        weight: FloatTensor<Flex>,
        output_grad: FloatTensor<Flex>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Flex> {
        let (x, options) = pad_asymmetric_conv_input::<Flex, 2>(x, options);
        let weight_dtype = weight.dtype();
        let weight_shape = weight.shape();
        match options.groups == 1 {
            true => weight_grad_no_groups(x, output_grad, weight_shape, options),
            false => weight_grad_groups(
                x,
                Flex::float_zeros(weight_shape, &Default::default(), weight_dtype.into()),
                output_grad,
                options,
            ),
        }
    }

    fn weight_grad_no_groups(
        x: FloatTensor<Flex>,
        output_grad: FloatTensor<Flex>,
        weight_shape: Shape,
        options: ConvOptions<2>,
    ) -> FloatTensor<Flex> {
        let x_swapped = Flex::float_swap_dims(x, 0, 1);
        let output_grad_swapped = Flex::float_swap_dims(output_grad, 0, 1);
        let weight_grad_swapped = Flex::conv2d(
            x_swapped,
            output_grad_swapped,
            None,
            ConvOptions::new(options.dilation, options.padding_begin(), options.stride, 1),
        );
        let mut weight_grad = Flex::float_swap_dims(weight_grad_swapped, 0, 1);
        if weight_grad.shape() != weight_shape {
            let slices = vec![
                Slice::from(0..weight_shape[0]),
                Slice::from(0..weight_shape[1]),
                Slice::from(0..weight_shape[2]),
                Slice::from(0..weight_shape[3]),
            ];
            weight_grad = Flex::float_slice(weight_grad, &slices);
        }
        weight_grad
    }

    fn weight_grad_groups(
        x: FloatTensor<Flex>,
        mut weight_grad: FloatTensor<Flex>,
        output_grad: FloatTensor<Flex>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Flex> {
        let [channels_out, increment_ci, kernel_size_1, kernel_size_2] = weight_grad.shape().dims();
        let increment_co = channels_out / options.groups;
        let x_swapped = Flex::float_swap_dims(x, 0, 1);
        let output_grad_swapped = Flex::float_swap_dims(output_grad, 0, 1);
        for g in 0..options.groups {
            let (start_ci, end_ci) = (g * increment_ci, (g + 1) * increment_ci);
            let (start_co, end_co) = (g * increment_co, (g + 1) * increment_co);
            let x = Flex::float_slice(x_swapped.clone(), &[Slice::from(start_ci..end_ci)]);
            let grad = Flex::float_slice(
                output_grad_swapped.clone(),
                &[Slice::from(start_co..end_co)],
            );
            let mut weight_grad_tmp = Flex::conv2d(
                x,
                grad,
                None,
                ConvOptions::new(options.dilation, options.padding_begin(), options.stride, 1),
            );
            weight_grad_tmp = Flex::float_swap_dims(weight_grad_tmp, 0, 1);
            let [_, _, k1, k2] = weight_grad_tmp.shape().dims();
            if k1 != kernel_size_1 || k2 != kernel_size_2 {
                let slices = vec![
                    Slice::from(0..increment_co),
                    Slice::from(0..increment_ci),
                    Slice::from(0..kernel_size_1),
                    Slice::from(0..kernel_size_2),
                ];
                weight_grad_tmp = Flex::float_slice(weight_grad_tmp, &slices);
            }
            weight_grad = Flex::float_slice_assign(
                weight_grad,
                &[
                    Slice::from(start_co..end_co),
                    Slice::from(0..increment_ci),
                    Slice::from(0..kernel_size_1),
                    Slice::from(0..kernel_size_2),
                ],
                weight_grad_tmp,
            );
        }
        weight_grad
    }

    /// `conv2d_bias_backward` as a sum over images and pixels of the channel-major gradient.
    pub fn conv2d_bias_backward(
        x: FloatTensor<Flex>,
        bias: FloatTensor<Flex>,
        output_grad: FloatTensor<Flex>,
    ) -> FloatTensor<Flex> {
        let [batch_size, _, _, _] = x.shape().dims();
        let [_, channels_out, height_out, width_out] = output_grad.shape().dims();
        let grad = Flex::float_swap_dims(output_grad, 0, 1);
        let grad = Flex::float_reshape(
            grad,
            Shape::new([channels_out, batch_size * height_out * width_out]),
        );
        let grad = Flex::float_sum_dim(grad, 1);
        Flex::float_reshape(grad, bias.shape())
    }
}
