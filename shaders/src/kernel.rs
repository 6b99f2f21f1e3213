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
    crop_scale: f32,
    max_radians: f32,
    brightness: f32,
    contrast: f32,
    resized_crop: bool,
    rotate: bool,
    jitter: bool,
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
            plan.crop_scale,
            plan.max_radians,
            plan.brightness,
            plan.contrast,
            resize || plan.resized_crop,
            plan.resized_crop,
            plan.rotate,
            plan.jitter,
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

/// The hash every word of sample `position` is salted from: `batch::choice_words`'s `base`.
#[cube]
fn choice_base(seed_lo: u32, seed_hi: u32, position: u32) -> u32 {
    mix32(seed_lo ^ mix32(seed_hi ^ (position * 0x9E37_79B9u32)))
}

/// `batch::unit`, on the device.
#[cube]
fn unit(word: u32) -> f32 {
    f32::cast_from(word >> 8) * 0.000_000_059_604_645f32
}

/// `batch::signed_unit`, on the device.
#[cube]
fn signed_unit(word: u32) -> f32 {
    unit(word) * 2.0 - 1.0
}

/// `batch::exp_small`, on the device, coefficient for coefficient.
#[cube]
fn exp_small(x: f32) -> f32 {
    1.0 + x
        * (1.0
            + x * (0.5
                + x * (0.166_666_67
                    + x * (0.041_666_668 + x * (0.008_333_334 + x * 0.001_388_888_9)))))
}

/// One side of a random resized crop: `batch::resized_crop_window`'s `side`.
#[cube]
fn window_side(value: f32, limit: u32) -> u32 {
    let mut side = u32::cast_from((value.sqrt() + 0.5).floor());
    if side < 1u32 {
        side = 1u32;
    }
    if side > limit {
        side = limit;
    }
    side
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
    let pad = i32::cast_from(pad);
    source_byte(
        c0,
        c1,
        c2,
        c3,
        chunk,
        base,
        i32::cast_from(y) - pad,
        i32::cast_from(x) - pad,
        rows,
        width,
    )
}

/// The byte at `(y, x)` of the unpadded plane starting at byte `base`, 0 outside it: the
/// rotated path's read, `reference::warp_taps`'s bounds.
#[cube]
#[allow(clippy::too_many_arguments)]
fn source_byte(
    c0: &[u32],
    c1: &[u32],
    c2: &[u32],
    c3: &[u32],
    chunk: u32,
    base: u32,
    y: i32,
    x: i32,
    rows: u32,
    width: u32,
) -> f32 {
    let mut value = 0.0f32;
    if y >= 0i32 && x >= 0i32 && y < i32::cast_from(rows) && x < i32::cast_from(width) {
        let at = base + u32::cast_from(y) * width + u32::cast_from(x);
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

/// One thread per output value of a `[B, C, OH, OW]` batch: `reference::batch_reference`, step
/// for step, with each sample's choices hashed here from the seed.
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
    crop_scale: f32,
    max_radians: f32,
    brightness: f32,
    contrast: f32,
    #[comptime] resize: bool,
    #[comptime] resized_crop: bool,
    #[comptime] rotate: bool,
    #[comptime] jitter: bool,
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
    let salt = choice_base(seed_lo, seed_hi, sample);
    let padded_h = height + 2 * pad;
    let padded_w = width + 2 * pad;
    let mut win_h = height;
    let mut win_w = width;
    let mut scale_y = scale_y;
    let mut scale_x = scale_x;
    if resized_crop {
        let share = crop_scale + (1.0 - crop_scale) * unit(mix32(salt ^ 0x2F8D_3A91u32));
        let area = f32::cast_from(padded_h * padded_w) * share;
        let ratio = exp_small(0.287_682_1 * signed_unit(mix32(salt ^ 0x94A1_5C07u32)));
        win_h = window_side(area / ratio, padded_h);
        win_w = window_side(area * ratio, padded_w);
        scale_y = f32::cast_from(win_h) / f32::cast_from(out_h);
        scale_x = f32::cast_from(win_w) / f32::cast_from(out_w);
    }
    let dy = mix32(salt ^ 0x68E3_1DA4u32) % (padded_h - win_h + 1);
    let dx = mix32(salt ^ 0xB529_7A4Du32) % (padded_w - win_w + 1);
    let mut flip = 0u32;
    if flip_on == 1u32 && (mix32(salt ^ 0x1B56_C4E9u32) >> 31) == 1u32 {
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

    let mut value = if rotate {
        let angle = max_radians * signed_unit(mix32(salt ^ 0xC3E2_7B5Du32));
        let x2 = angle * angle;
        let sin = angle
            * (1.0
                + x2 * (-0.166_666_67f32
                    + x2 * (0.008_333_334
                        + x2 * (-0.000_198_412_7f32 + x2 * 0.000_002_755_731_9))));
        let cos = 1.0
            + x2 * (-0.5f32
                + x2 * (0.041_666_668 + x2 * (-0.001_388_888_9f32 + x2 * 0.000_024_801_588)));
        let centre_x = (f32::cast_from(out_w) - 1.0) * 0.5;
        let centre_y = (f32::cast_from(out_h) - 1.0) * 0.5;
        let rx = f32::cast_from(ox) - centre_x;
        let ry = f32::cast_from(oy) - centre_y;
        let ux = cos * rx - sin * ry + centre_x;
        let uy = sin * rx + cos * ry + centre_y;
        let warp_x = f32::cast_from(win_w) / f32::cast_from(out_w);
        let warp_y = f32::cast_from(win_h) / f32::cast_from(out_h);
        let mut wx = (ux + 0.5) * warp_x - 0.5;
        let wy = (uy + 0.5) * warp_y - 0.5;
        if flip == 1u32 {
            wx = (f32::cast_from(win_w) - 1.0) - wx;
        }
        let x = wx + (f32::cast_from(dx) - f32::cast_from(pad));
        let y = wy + (f32::cast_from(dy) - f32::cast_from(pad));
        let x0 = x.floor();
        let y0 = y.floor();
        let fx = x - x0;
        let fy = y - y0;
        let xa = i32::cast_from(x0);
        let ya = i32::cast_from(y0);
        let p00 = source_byte(c0, c1, c2, c3, chunk, base, ya, xa, rows, width);
        let p01 = source_byte(c0, c1, c2, c3, chunk, base, ya, xa + 1i32, rows, width);
        let p10 = source_byte(c0, c1, c2, c3, chunk, base, ya + 1i32, xa, rows, width);
        let p11 = source_byte(
            c0,
            c1,
            c2,
            c3,
            chunk,
            base,
            ya + 1i32,
            xa + 1i32,
            rows,
            width,
        );
        (1.0 - fy) * ((1.0 - fx) * p00 + fx * p01) + fy * ((1.0 - fx) * p10 + fx * p11)
    } else if resize {
        let (y0, y1, h1) = taps(oy, scale_y, win_h);
        let (x0, x1, w1) = taps(ox, scale_x, win_w);
        let xa = mirrored(x0, flip, win_w) + dx;
        let xb = mirrored(x1, flip, win_w) + dx;
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
    if jitter {
        let bright = 1.0 + brightness * signed_unit(mix32(salt ^ 0x5A0F_E3C1u32));
        let spread = 1.0 + contrast * signed_unit(mix32(salt ^ 0xE19B_04D3u32));
        value = (value * bright).clamp(0.0, 255.0);
        value = ((value - 127.5) * spread + 127.5).clamp(0.0, 255.0);
    }
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
        crop_scale: options.crop_scale,
        max_radians: options.max_radians(),
        brightness: options.brightness,
        contrast: options.contrast,
        resized_crop: options.resized_crop(),
        rotate: options.rotates(),
        jitter: options.jitters(),
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
