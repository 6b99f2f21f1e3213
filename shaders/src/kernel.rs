//! The fused batch kernel for CubeCL devices (wgpu): one thread per output value reads its
//! taps straight from the packed bytes, so gather, crop, flip, resize and the affine map cost
//! one launch and one write of the batch.
//!
//! Burn 0.22's dispatch `Tensor` reaches a custom kernel through a backend extension: the
//! `#[backend_extension]` trait below routes `Dispatch` to `Fusion<CubeBackend>`, whose
//! generated implementation registers the call as an opaque operation on the fusion stream and
//! later runs `CubeBackend`'s implementation with the materialised `CubeTensor`s.

use burn::backend::fusion::custom::TensorSpec;
use burn::backend::ops::IntTensorOps;
use burn::backend::tensor::{FloatTensor, IntTensor};
use burn::backend::wgpu::{CubeBackend, CubeTensor};
use burn::backend::{Backend, Dispatch, backend_extension};
use burn::tensor::{DType, Int, IntDType, Shape, Tensor};
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::ops::numeric::empty_device_dtype;
use cubecl::prelude::*;

use crate::batch::{BatchOptions, ImageShape, MAX_CHUNKS};

/// Everything about one batch that is not a tensor: sizes and the seed of its random choices,
/// all passed as launch scalars, so a batch uploads nothing.
#[derive(Debug, Clone)]
pub struct BatchPlan {
    samples: u32,
    images: u32,
    /// Images in each buffer of bytes but the last used one.
    rows_per_chunk: u32,
    channels: u32,
    height: u32,
    width: u32,
    out_h: u32,
    out_w: u32,
    pad: u32,
    /// 1 when samples may be mirrored.
    flip: u32,
    seed_lo: u32,
    seed_hi: u32,
}

impl BatchPlan {
    /// `[B, C, OH, OW]` of the batch.
    fn output_shape(&self) -> Shape {
        Shape::from([
            self.samples as usize,
            self.channels as usize,
            self.out_h as usize,
            self.out_w as usize,
        ])
    }
}

/// The input pipeline as a backend operation, so it can be launched on the dispatch `Device`.
#[backend_extension(Cube, Fusion)]
pub trait InputPipelineBackend: Backend {
    /// Builds a batch from the four buffers of packed bytes and `indices` per `plan`; `affine`
    /// holds the per-channel offsets, then the scales, as f32 bits.
    #[fusion(meta = |_w0, _w1, _w2, _w3, _indices, _affine, plan| {
        TensorSpec::new(plan.output_shape(), DType::F32)
    })]
    fn gather_batch(
        words0: IntTensor<Self>,
        words1: IntTensor<Self>,
        words2: IntTensor<Self>,
        words3: IntTensor<Self>,
        indices: IntTensor<Self>,
        affine: IntTensor<Self>,
        plan: BatchPlan,
    ) -> FloatTensor<Self>;
}

impl InputPipelineBackend for CubeBackend {
    fn gather_batch(
        words0: CubeTensor,
        words1: CubeTensor,
        words2: CubeTensor,
        words3: CubeTensor,
        indices: CubeTensor,
        affine: CubeTensor,
        plan: BatchPlan,
    ) -> CubeTensor {
        // The kernel reads 32-bit indices; a slice of a shuffled order may be a strided view.
        let indices = match indices.dtype {
            DType::I32 | DType::U32 => indices,
            _ => CubeBackend::int_cast(indices, IntDType::I32),
        };
        let indices = into_contiguous(indices);
        let [words0, words1, words2, words3] =
            [words0, words1, words2, words3].map(into_contiguous);
        let client = words0.client.clone();
        let device = words0.device.clone();
        let output = empty_device_dtype(
            client.clone(),
            device.clone(),
            plan.output_shape(),
            DType::F32,
        );
        let affine = into_contiguous(affine);

        let total = plan.output_shape().num_elements();
        let cube_dim = CubeDim::new_1d(256);
        let cube_count = cubecl::calculate_cube_count_elemwise(&client, total, cube_dim);
        let resize = (plan.out_h, plan.out_w) != (plan.height, plan.width);
        let scale_y = plan.height as f32 / plan.out_h as f32;
        let scale_x = plan.width as f32 / plan.out_w as f32;
        batch_kernel::launch(
            &client,
            cube_count,
            cube_dim,
            words0.into_buffer_arg(),
            words1.into_buffer_arg(),
            words2.into_buffer_arg(),
            words3.into_buffer_arg(),
            indices.into_buffer_arg(),
            affine.into_buffer_arg(),
            output.clone().into_buffer_arg(),
            plan.images,
            plan.rows_per_chunk,
            plan.channels,
            plan.height,
            plan.width,
            plan.out_h,
            plan.out_w,
            plan.pad,
            plan.flip,
            plan.seed_lo,
            plan.seed_hi,
            scale_y,
            scale_x,
            resize,
        );
        output
    }
}

/// `batch::mix32`, on the device.
#[cube]
fn mix32(x: u32) -> u32 {
    let mut x = x;
    x ^= x >> 16;
    x *= 0x7FEB_352Du32;
    x ^= x >> 15;
    x *= 0x846C_A68Bu32;
    x ^ (x >> 16)
}

/// `batch::choice_words`, on the device: three hashed words for sample `position`.
#[cube]
fn choice_words(seed_lo: u32, seed_hi: u32, position: u32) -> (u32, u32, u32) {
    let base = mix32(seed_lo ^ mix32(seed_hi ^ (position * 0x9E37_79B9u32)));
    (
        mix32(base ^ 0x68E3_1DA4u32),
        mix32(base ^ 0xB529_7A4Du32),
        mix32(base ^ 0x1B56_C4E9u32),
    )
}

/// Word `index` of buffer `chunk` of the packed bytes.
#[cube]
fn word_at(c0: &[u32], c1: &[u32], c2: &[u32], c3: &[u32], chunk: u32, index: u32) -> u32 {
    let at = index as usize;
    if chunk == 0 {
        c0[at]
    } else if chunk == 1 {
        c1[at]
    } else if chunk == 2 {
        c2[at]
    } else {
        c3[at]
    }
}

/// The byte at padded coordinates `(y, x)` of the plane starting at byte `base` of buffer
/// `chunk`, 0 in the padding.
///
/// `rows` is 0 for an image that does not exist, so that every read is padding.
#[cube]
#[allow(clippy::too_many_arguments)]
fn padded_byte(
    c0: &[u32],
    c1: &[u32],
    c2: &[u32],
    c3: &[u32],
    chunk: u32,
    base: u32,
    y: u32,
    x: u32,
    pad: u32,
    rows: u32,
    width: u32,
) -> f32 {
    let mut value = 0.0f32;
    if y >= pad && x >= pad && y < pad + rows && x < pad + width {
        let at = base + (y - pad) * width + (x - pad);
        let word = word_at(c0, c1, c2, c3, chunk, at / 4);
        value = f32::cast_from((word >> ((at % 4) * 8)) & 255u32);
    }
    value
}

/// Column `x` of the crop window, mirrored when `flip` is 1.
#[cube]
fn mirrored(x: u32, flip: u32, width: u32) -> u32 {
    let mut column = x;
    if flip == 1u32 {
        column = width - 1 - x;
    }
    column
}

/// Where bilinear resampling reads for output coordinate `out`: PyTorch's `align_corners=False`
/// rule, as in `reference::source_taps`. Returns the first tap, the second, and the weight of the
/// second.
#[cube]
fn taps(out: u32, scale: f32, input: u32) -> (u32, u32, f32) {
    let mut real = scale * (f32::cast_from(out) + 0.5) - 0.5;
    if real < 0.0 {
        real = 0.0;
    }
    let mut first = u32::cast_from(real);
    if first > input - 1 {
        first = input - 1;
    }
    let lambda = real - f32::cast_from(first);
    let mut second = first;
    if first + 1 < input {
        second = first + 1;
    }
    (first, second, lambda)
}

/// One thread per output value of a `[B, C, OH, OW]` batch.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
fn batch_kernel(
    c0: &[u32],
    c1: &[u32],
    c2: &[u32],
    c3: &[u32],
    indices: &[u32],
    affine: &[u32],
    output: &mut [f32],
    images: u32,
    rows_per_chunk: u32,
    channels: u32,
    height: u32,
    width: u32,
    out_h: u32,
    out_w: u32,
    pad: u32,
    flip_on: u32,
    seed_lo: u32,
    seed_hi: u32,
    scale_y: f32,
    scale_x: f32,
    #[comptime] resize: bool,
) {
    if ABSOLUTE_POS >= output.len() {
        terminate!();
    }
    let pos = u32::cast_from(ABSOLUTE_POS);
    let ox = pos % out_w;
    let rest = pos / out_w;
    let oy = rest % out_h;
    let rest = rest / out_h;
    let channel = rest % channels;
    let sample = rest / channels;

    let image = indices[sample as usize];
    let (dy_word, dx_word, flip_word) = choice_words(seed_lo, seed_hi, sample);
    let span = 2 * pad + 1;
    let dy = dy_word % span;
    let dx = dx_word % span;
    let mut flip = 0u32;
    if flip_on == 1u32 && (flip_word >> 31) == 1u32 {
        flip = 1u32;
    }
    // An index past the end reads as an all-padding image rather than outside the buffer.
    let mut base = 0u32;
    let mut rows = 0u32;
    let mut chunk = 0u32;
    if image < images {
        chunk = image / rows_per_chunk;
        base = ((image % rows_per_chunk) * channels + channel) * height * width;
        rows = height;
    }

    let value = if resize {
        let (y0, y1, h1) = taps(oy, scale_y, height);
        let (x0, x1, w1) = taps(ox, scale_x, width);
        let xa = mirrored(x0, flip, width) + dx;
        let xb = mirrored(x1, flip, width) + dx;
        let ya = y0 + dy;
        let yb = y1 + dy;
        let h0 = 1.0 - h1;
        let w0 = 1.0 - w1;
        let p00 = padded_byte(c0, c1, c2, c3, chunk, base, ya, xa, pad, rows, width);
        let p01 = padded_byte(c0, c1, c2, c3, chunk, base, ya, xb, pad, rows, width);
        let p10 = padded_byte(c0, c1, c2, c3, chunk, base, yb, xa, pad, rows, width);
        let p11 = padded_byte(c0, c1, c2, c3, chunk, base, yb, xb, pad, rows, width);
        h0 * (w0 * p00 + w1 * p01) + h1 * (w0 * p10 + w1 * p11)
    } else {
        let x = mirrored(ox, flip, width) + dx;
        padded_byte(c0, c1, c2, c3, chunk, base, oy + dy, x, pad, rows, width)
    };
    let offset = f32::reinterpret(affine[channel as usize]);
    let scale = f32::reinterpret(affine[(channels + channel) as usize]);
    output[ABSOLUTE_POS] = (value - offset) * scale;
}

/// Builds a batch on a CubeCL device with the fused kernel.
#[allow(clippy::too_many_arguments)]
pub(crate) fn batch(
    chunks: [Tensor<1, Int>; MAX_CHUNKS],
    rows_per_chunk: usize,
    affine: Tensor<1, Int>,
    indices: Tensor<1, Int>,
    samples: usize,
    images: usize,
    shape: ImageShape,
    options: &BatchOptions,
) -> Tensor<4> {
    let (out_h, out_w) = options.output_size(shape);
    let (seed_lo, seed_hi) = options.seed_words();
    let plan = BatchPlan {
        // `ByteSplit::upload` keeps each buffer within 128 MiB, and `validate` the sizes.
        samples: samples as u32,
        images: images as u32,
        rows_per_chunk: rows_per_chunk as u32,
        channels: shape.channels as u32,
        height: shape.height as u32,
        width: shape.width as u32,
        out_h: out_h as u32,
        out_w: out_w as u32,
        pad: options.crop_padding as u32,
        flip: u32::from(options.flip),
        seed_lo,
        seed_hi,
    };
    let [c0, c1, c2, c3] = chunks.map(Tensor::into_dispatch);
    let out = Dispatch::gather_batch(
        c0,
        c1,
        c2,
        c3,
        indices.into_dispatch(),
        affine.into_dispatch(),
        plan,
    );
    Tensor::from_dispatch(out)
}
