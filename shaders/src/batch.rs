//! A split kept on the device as its raw bytes, and batches built from it on the device: gather
//! by index, crop, flip, bilinear resize and the affine map in one pass.

use std::sync::{Arc, Mutex};

use burn::backend::DispatchDevice;
use burn::tensor::{DType, Device, Int, Tensor, TensorCreationOptions, TensorData};

use crate::PixelTransform;

/// Channels, height and width of every image in a split (stored planar, C×H×W, row-major).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageShape {
    /// Colour planes per image.
    pub channels: usize,
    /// Rows per plane.
    pub height: usize,
    /// Columns per plane.
    pub width: usize,
}

impl ImageShape {
    /// A shape from its three sizes.
    pub fn new(channels: usize, height: usize, width: usize) -> Self {
        Self {
            channels,
            height,
            width,
        }
    }

    /// Pixels per plane (H×W).
    pub fn plane(&self) -> usize {
        self.height * self.width
    }

    /// Bytes per image (C×H×W).
    pub fn values(&self) -> usize {
        self.channels * self.plane()
    }
}

/// One sample's random choices: its crop window in the padded image, whether it is mirrored,
/// its rotation and its brightness and contrast factors.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleChoice {
    /// First row of the window in the padded image.
    pub dy: u32,
    /// First column of the window in the padded image.
    pub dx: u32,
    /// Rows of the window: the image's own unless a random resized crop is on.
    pub height: u32,
    /// Columns of the window: the image's own unless a random resized crop is on.
    pub width: u32,
    /// Whether the window is mirrored left to right.
    pub flip: bool,
    /// Rotation about the output's centre, in radians (0 when rotation is off).
    pub angle: f32,
    /// Factor the sampled bytes are multiplied by (1 when brightness jitter is off).
    pub brightness: f32,
    /// Factor the distance of each byte from mid-grey is multiplied by (1 when off).
    pub contrast: f32,
}

/// How a batch is built from the bytes of a split.
///
/// Order of operations, per sample, as torchvision's usual training pipeline:
/// 1. pad the image by `crop_padding` zero bytes on every side (`RandomCrop(size, padding)`
///    with fill 0, applied to the bytes);
/// 2. choose a window in the padded image: the image's own size at a random offset, or with
///    `crop_scale < 1` a random area in `crop_scale..1` of the padded image at an aspect ratio
///    in 3:4..4:3 (`RandomResizedCrop(scale=(crop_scale, 1))`, drawn once, not by rejection);
/// 3. mirror it left to right with probability ½ when `flip` is set (`RandomHorizontalFlip`);
/// 4. resize it to `output_size` bilinearly (PyTorch's `F.interpolate(mode="bilinear",
///    align_corners=False)`);
/// 5. with `rotation_degrees > 0`, rotate it about its centre by an angle drawn in
///    ±`rotation_degrees` (`RandomRotation`); steps 4 and 5 are then one bilinear warp of the
///    padded image, whose corners show the picture around the window, and zeros only past the
///    image's edge;
/// 6. jitter brightness (`b·f`, `f` in 1 ± `brightness`) and then contrast (about mid-grey 127.5
///    rather than the image's mean, so one pass needs no reduction), each clamped to 0..=255;
/// 7. map each value `b` to `(b - offset[c]) * scale[c]`. Because the bilinear weights sum to
///    one, resizing the bytes and then mapping equals mapping and then resizing, up to f32
///    rounding.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchOptions {
    /// The per-channel affine map applied last.
    pub transform: PixelTransform,
    /// `(height, width)` of the batch; `None` keeps the images' own size.
    pub output_size: Option<(usize, usize)>,
    /// Zero bytes added on every side before the random crop; 0 turns cropping off.
    pub crop_padding: usize,
    /// Smallest share of the padded image's area a random resized crop keeps; 1 turns it off.
    pub crop_scale: f32,
    /// Mirror each sample left to right with probability ½.
    pub flip: bool,
    /// Largest rotation either way, in degrees; 0 turns it off.
    pub rotation_degrees: f32,
    /// Largest change of brightness, as a fraction; 0 turns it off.
    pub brightness: f32,
    /// Largest change of contrast, as a fraction; 0 turns it off.
    pub contrast: f32,
    /// Drives the random choices. Pass a different value every step (see [`BatchOptions::step_seed`]):
    /// the same seed gives the same choices, so a run is reproducible.
    pub seed: u64,
}

/// Largest rotation accepted, in degrees: the kernel's sine and cosine are short polynomials,
/// exact to f32 rounding up to here, and "a few degrees" is what small photo sets want.
pub const MAX_ROTATION_DEGREES: f32 = 30.0;
/// Smallest crop scale accepted: torchvision's default lower bound.
pub const MIN_CROP_SCALE: f32 = 0.08;
/// Largest brightness or contrast jitter accepted: a factor of 0 would blank the image.
pub const MAX_JITTER: f32 = 0.9;

impl BatchOptions {
    /// The plain gather: the map only, the images' own size, no augmentation.
    pub fn new(transform: PixelTransform) -> Self {
        Self {
            transform,
            output_size: None,
            crop_padding: 0,
            crop_scale: 1.0,
            flip: false,
            rotation_degrees: 0.0,
            brightness: 0.0,
            contrast: 0.0,
            seed: 0,
        }
    }

    /// A seed for step `step` of a run seeded with `run_seed`, so that every step draws anew.
    pub fn step_seed(run_seed: u64, step: u64) -> u64 {
        splitmix64(run_seed ^ splitmix64(step))
    }

    /// `(height, width)` of the batch built from images of `shape`.
    pub fn output_size(&self, shape: ImageShape) -> (usize, usize) {
        self.output_size.unwrap_or((shape.height, shape.width))
    }

    /// Whether each sample's window is a random resized crop.
    pub fn resized_crop(&self) -> bool {
        self.crop_scale < 1.0
    }

    /// Whether samples are rotated, which makes the resampling one warp instead of two passes.
    pub fn rotates(&self) -> bool {
        self.rotation_degrees > 0.0
    }

    /// Whether brightness or contrast is jittered.
    pub fn jitters(&self) -> bool {
        self.brightness > 0.0 || self.contrast > 0.0
    }

    /// Whether the batch is a plain gather and map (no augmentation, no resize).
    pub fn is_plain(&self, shape: ImageShape) -> bool {
        self.crop_padding == 0
            && !self.flip
            && !self.resized_crop()
            && !self.rotates()
            && !self.jitters()
            && self.output_size(shape) == (shape.height, shape.width)
    }

    /// The largest rotation in radians, as the kernel takes it.
    pub(crate) fn max_radians(&self) -> f32 {
        self.rotation_degrees.to_radians()
    }

    /// The random choices of the sample at `position` in a batch of images of `shape`.
    ///
    /// Drawn from `(seed, position)` by a counter-based hash in 32-bit arithmetic, which the
    /// GPU kernel computes itself (`kernel::batch_kernel`, line for line): the kernel, the
    /// tensor-op path and the reference see the very same choices, and no step uploads them.
    pub fn choice(&self, position: usize, shape: ImageShape) -> SampleChoice {
        let (seed_lo, seed_hi) = self.seed_words();
        let words = choice_words(seed_lo, seed_hi, position as u32);
        let pad = self.crop_padding as u32;
        let (padded_h, padded_w) = (shape.height as u32 + 2 * pad, shape.width as u32 + 2 * pad);
        let (height, width) = if self.resized_crop() {
            resized_crop_window(padded_h, padded_w, self.crop_scale, words[3], words[4])
        } else {
            (shape.height as u32, shape.width as u32)
        };
        let factor = |amount: f32, word: u32| {
            if amount > 0.0 {
                1.0 + amount * signed_unit(word)
            } else {
                1.0
            }
        };
        SampleChoice {
            dy: words[0] % (padded_h - height + 1),
            dx: words[1] % (padded_w - width + 1),
            height,
            width,
            flip: self.flip && words[2] >> 31 == 1,
            angle: if self.rotates() {
                self.max_radians() * signed_unit(words[5])
            } else {
                0.0
            },
            brightness: factor(self.brightness, words[6]),
            contrast: factor(self.contrast, words[7]),
        }
    }

    /// The seed as two 32-bit words, low first, as the kernel takes it.
    pub(crate) fn seed_words(&self) -> (u32, u32) {
        (self.seed as u32, (self.seed >> 32) as u32)
    }

    /// Checks the options against the images they will be applied to.
    pub fn validate(&self, shape: ImageShape) -> Result<(), BatchError> {
        if self.transform.offset.len() != shape.channels
            || self.transform.scale.len() != shape.channels
        {
            return Err(BatchError::ChannelMismatch {
                transform: self.transform.scale.len(),
                images: shape.channels,
            });
        }
        let (height, width) = self.output_size(shape);
        if height == 0 || width == 0 || height > MAX_SIDE || width > MAX_SIDE {
            return Err(BatchError::OutputSize { height, width });
        }
        if self.crop_padding > MAX_SIDE {
            return Err(BatchError::Padding(self.crop_padding));
        }
        let within = |value: f32, low: f32, high: f32| (low..=high).contains(&value);
        if !within(self.crop_scale, MIN_CROP_SCALE, 1.0)
            || !within(self.rotation_degrees, 0.0, MAX_ROTATION_DEGREES)
            || !within(self.brightness, 0.0, MAX_JITTER)
            || !within(self.contrast, 0.0, MAX_JITTER)
        {
            return Err(BatchError::Augmentation);
        }
        Ok(())
    }
}

/// `ln(4/3)`: random resized crops draw their log aspect ratio in ±this (3:4 to 4:3).
pub(crate) const LOG_4_3: f32 = 0.287_682_1;

/// The top 24 bits of `word` as a float in `[0, 1)`, exact in f32 on every device.
pub(crate) fn unit(word: u32) -> f32 {
    (word >> 8) as f32 * 0.000_000_059_604_645
}

/// `word` as a float in `[-1, 1)`.
pub(crate) fn signed_unit(word: u32) -> f32 {
    unit(word) * 2.0 - 1.0
}

/// `e^x` for `|x| <= ln(4/3)`: a Taylor polynomial (error below 4e-8), so the kernel computes
/// the same window as the host instead of its device's own `exp`.
pub(crate) fn exp_small(x: f32) -> f32 {
    1.0 + x
        * (1.0
            + x * (0.5
                + x * (0.166_666_67
                    + x * (0.041_666_668 + x * (0.008_333_334 + x * 0.001_388_888_9)))))
}

/// `(sin x, cos x)` for `|x| <= 30°`: Taylor polynomials (error below 1e-8), for the reason
/// [`exp_small`] gives; the kernel's coefficients are these, digit for digit.
pub(crate) fn sin_cos_small(x: f32) -> (f32, f32) {
    let x2 = x * x;
    let sin = x
        * (1.0
            + x2 * (-0.166_666_67
                + x2 * (0.008_333_334 + x2 * (-0.000_198_412_7 + x2 * 0.000_002_755_731_9))));
    let cos =
        1.0 + x2 * (-0.5 + x2 * (0.041_666_668 + x2 * (-0.001_388_888_9 + x2 * 0.000_024_801_588)));
    (sin, cos)
}

/// `(height, width)` of a random resized crop of an image of `height × width`: an area share in
/// `min_scale..1` and a log aspect ratio in ±ln(4/3), rounded half up and kept inside the image.
pub(crate) fn resized_crop_window(
    height: u32,
    width: u32,
    min_scale: f32,
    area_word: u32,
    ratio_word: u32,
) -> (u32, u32) {
    let area = (height * width) as f32 * (min_scale + (1.0 - min_scale) * unit(area_word));
    let ratio = exp_small(LOG_4_3 * signed_unit(ratio_word));
    // `as u32` saturates and truncates; the value is positive, so this is round-half-up.
    let side = |value: f32, limit: u32| ((value.sqrt() + 0.5).floor() as u32).clamp(1, limit);
    (side(area / ratio, height), side(area * ratio, width))
}

/// Largest output side and crop padding: keeps every kernel coordinate well inside 32 bits.
const MAX_SIDE: usize = 1 << 14;

/// The salts of the eight words a sample draws: crop row, crop column, flip, crop area, crop
/// aspect, angle, brightness, contrast. The kernel uses the same constants.
pub(crate) const WORD_SALTS: [u32; 8] = [
    0x68E3_1DA4,
    0xB529_7A4D,
    0x1B56_C4E9,
    0x2F8D_3A91,
    0x94A1_5C07,
    0xC3E2_7B5D,
    0x5A0F_E3C1,
    0xE19B_04D3,
];

/// Eight hashed words for the sample at `position`; the kernel's `choice_base` and salts are
/// the same arithmetic (wrapping 32-bit multiplies), line for line.
pub(crate) fn choice_words(seed_lo: u32, seed_hi: u32, position: u32) -> [u32; 8] {
    let base = mix32(seed_lo ^ mix32(seed_hi ^ position.wrapping_mul(0x9E37_79B9)));
    WORD_SALTS.map(|salt| mix32(base ^ salt))
}

/// A 32-bit finalizer (Wellons's lowbias32): every input bit reaches every output bit.
pub(crate) fn mix32(x: u32) -> u32 {
    let mut x = x;
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846C_A68B);
    x ^ (x >> 16)
}

/// SplitMix64's finaliser: a cheap, well-mixed hash of a 64-bit counter.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What can be wrong with a split or a batch request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BatchError {
    /// The image bytes are not one whole image per label.
    #[error("the split has {bytes} image bytes for {labels} labels of {per_image} bytes each")]
    Length {
        /// Image bytes given.
        bytes: usize,
        /// Labels given.
        labels: usize,
        /// Bytes per image.
        per_image: usize,
    },
    /// An image has no pixels.
    #[error("images must have at least one channel, row and column")]
    EmptyImage,
    /// The split is past what the kernel's buffers hold.
    #[error(
        "the split has {bytes} bytes of images, more than the {limit} bytes the GPU input pipeline holds ({MAX_CHUNKS} buffers of at most {chunk} bytes); train on the CPU or with smaller images"
    )]
    TooLarge {
        /// Image bytes given.
        bytes: usize,
        /// What fits.
        limit: usize,
        /// Bytes per buffer.
        chunk: usize,
    },
    /// The affine map covers another number of channels than the images have.
    #[error("the pixel transform has {transform} channels but the images have {images}")]
    ChannelMismatch {
        /// Channels of the map.
        transform: usize,
        /// Channels of the images.
        images: usize,
    },
    /// The requested batch size in pixels is empty or too large.
    #[error("a batch of {height}×{width} pixels is not possible; use 1 to 16384 on each side")]
    OutputSize {
        /// Requested height.
        height: usize,
        /// Requested width.
        width: usize,
    },
    /// The crop padding is too large.
    #[error("a crop padding of {0} pixels is too large; use at most 16384")]
    Padding(usize),
    /// An augmentation's amount is outside what the pipeline does.
    #[error(
        "augmentation out of range: crop scale {MIN_CROP_SCALE} to 1, rotation 0 to {MAX_ROTATION_DEGREES} degrees, brightness and contrast 0 to {MAX_JITTER}"
    )]
    Augmentation,
    /// A contiguous batch reaches past the end of the split.
    #[error("rows {start}..{end} are not inside a split of {len}")]
    Range {
        /// First row asked for.
        start: usize,
        /// One past the last row asked for.
        end: usize,
        /// Rows in the split.
        len: usize,
    },
}

/// The largest buffer of image bytes: WebGPU's default limit on one storage binding, which every
/// adapter grants (Mesa's lavapipe grants no more; CIFAR-10's 154 MB of training bytes need two).
pub const MAX_CHUNK_BYTES: usize = 128 << 20;
/// Buffers of image bytes the kernel reads: with its index, parameter and output buffers that is
/// seven, inside WebGPU's default of eight storage buffers per shader.
pub const MAX_CHUNKS: usize = 4;

/// An affine map's words (offsets, then scales, as f32 bits) and their copy on the device.
type AffineOnDevice = (Vec<u32>, Tensor<1, Int>);

/// The bytes as they live on the device: what the batch builder of that backend reads best.
// One per split, made once and never moved in a loop: the size difference costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
enum Pixels {
    /// A CubeCL device (wgpu): four bytes per `u32` word, little-endian, images back to back,
    /// `rows_per_chunk` images per buffer. WGSL has no 8-bit type, so the kernel unpacks the
    /// words itself. Always [`MAX_CHUNKS`] buffers: the unused ones hold one word.
    Packed {
        /// The buffers, in image order.
        chunks: [Tensor<1, Int>; MAX_CHUNKS],
        /// Images in every buffer but the last used one.
        rows_per_chunk: usize,
        /// The last affine map uploaded, as the kernel reads it (offsets, then scales, as f32
        /// bits): a run uses one map, so after its first batch no batch uploads anything.
        affine: Arc<Mutex<Option<AffineOnDevice>>>,
    },
    /// Any other backend (the CPU's `flex`): one `u8` row per image, for Burn's tensor ops.
    Rows(Tensor<2, Int>),
}

/// A split resident on the device as its raw bytes (a quarter of the f32 size), labels as `[N]`.
///
/// Batches are built on the device by [`ByteSplit::batch`] and [`ByteSplit::range`]: on a CubeCL
/// device by one fused kernel, elsewhere by Burn tensor ops with the same result.
#[derive(Debug, Clone)]
pub struct ByteSplit {
    pixels: Pixels,
    labels: Tensor<1, Int>,
    len: usize,
    shape: ImageShape,
    device: Device,
}

impl ByteSplit {
    /// Uploads the bytes once, as they are: the map, crop, flip and resize happen per batch.
    ///
    /// `images` holds `labels.len()` planar images of `shape`. An autodiff `device` is accepted;
    /// the split lives on the device it wraps and batches come back with autodiff enabled.
    pub fn upload(
        images: &[u8],
        labels: &[u8],
        shape: ImageShape,
        device: &Device,
    ) -> Result<Self, BatchError> {
        Self::upload_in_chunks(images, labels, shape, device, MAX_CHUNK_BYTES)
    }

    /// [`ByteSplit::upload`] with buffers of at most `chunk_bytes` on a GPU, so that tests can
    /// exercise several buffers with a small split.
    pub fn upload_in_chunks(
        images: &[u8],
        labels: &[u8],
        shape: ImageShape,
        device: &Device,
        chunk_bytes: usize,
    ) -> Result<Self, BatchError> {
        let per_image = shape.values();
        if per_image == 0 {
            return Err(BatchError::EmptyImage);
        }
        if images.len() != labels.len() * per_image {
            return Err(BatchError::Length {
                bytes: images.len(),
                labels: labels.len(),
                per_image,
            });
        }
        let len = labels.len();
        let inner = device.clone().inner();
        let pixels = if is_cube(&inner) {
            // Whole images per buffer, a multiple of four of them so every buffer starts on a
            // word; the kernel finds an image's buffer by division.
            let rows_per_chunk = (chunk_bytes / per_image) / 4 * 4;
            let too_large = || BatchError::TooLarge {
                bytes: images.len(),
                limit: MAX_CHUNKS * rows_per_chunk * per_image,
                chunk: chunk_bytes,
            };
            if rows_per_chunk == 0 || len > MAX_CHUNKS * rows_per_chunk {
                return Err(too_large());
            }
            let options = TensorCreationOptions::new(inner.clone()).with_dtype(DType::U32);
            let upload_words = |bytes: &[u8]| {
                let words: Vec<u32> = bytes
                    .chunks(4)
                    .map(|chunk| {
                        let mut word = [0u8; 4];
                        word[..chunk.len()].copy_from_slice(chunk);
                        u32::from_le_bytes(word)
                    })
                    .collect();
                let count = words.len().max(1);
                let words = if words.is_empty() { vec![0] } else { words };
                Tensor::<1, Int>::from_data(TensorData::new(words, [count]), options.clone())
            };
            let chunks = std::array::from_fn(|chunk| {
                let start = (chunk * rows_per_chunk).min(len) * per_image;
                let end = ((chunk + 1) * rows_per_chunk).min(len) * per_image;
                upload_words(&images[start..end])
            });
            Pixels::Packed {
                chunks,
                rows_per_chunk,
                affine: Arc::default(),
            }
        } else {
            let options = TensorCreationOptions::new(inner.clone()).with_dtype(DType::U8);
            Pixels::Rows(Tensor::from_data(
                TensorData::new(images.to_vec(), [len, per_image]),
                options,
            ))
        };
        let labels: Vec<i32> = labels.iter().map(|&l| i32::from(l)).collect();
        let labels = Tensor::<1, Int>::from_data(TensorData::new(labels, [len]), &inner);
        Ok(Self {
            pixels,
            labels,
            len,
            shape,
            device: device.clone(),
        })
    }

    /// Number of images.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the split holds no image.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Shape of every image.
    pub fn shape(&self) -> ImageShape {
        self.shape
    }

    /// The batch of the images named by `indices` (on the device, each `< len`), built per
    /// `options`: `[B, C, H, W]` floats and `[B]` labels.
    ///
    /// The random choices of the sample at position `i` are `options.choice(i, shape)`.
    pub fn batch(
        &self,
        indices: Tensor<1, Int>,
        options: &BatchOptions,
    ) -> Result<(Tensor<4>, Tensor<1, Int>), BatchError> {
        options.validate(self.shape)?;
        let indices = indices.inner();
        let count = indices.dims()[0];
        let (out_h, out_w) = options.output_size(self.shape);
        let images = if count == 0 {
            Tensor::<4>::empty(
                [0, self.shape.channels, out_h, out_w],
                &self.device.clone().inner(),
            )
        } else {
            match &self.pixels {
                Pixels::Packed {
                    chunks,
                    rows_per_chunk,
                    affine,
                } => crate::kernel::batch(
                    chunks.clone(),
                    *rows_per_chunk,
                    self.affine_on_device(affine, &options.transform),
                    indices.clone(),
                    count,
                    self.len,
                    self.shape,
                    options,
                ),
                Pixels::Rows(rows) => {
                    let choices: Vec<SampleChoice> =
                        (0..count).map(|i| options.choice(i, self.shape)).collect();
                    crate::ops::batch(rows.clone(), indices.clone(), self.shape, options, &choices)
                }
            }
        };
        let labels = self.labels.clone().select(0, indices);
        Ok(self.onto_device(images, labels))
    }

    /// The contiguous images `start..end`, for evaluation in order, built per `options`.
    pub fn range(
        &self,
        start: usize,
        end: usize,
        options: &BatchOptions,
    ) -> Result<(Tensor<4>, Tensor<1, Int>), BatchError> {
        if start > end || end > self.len {
            return Err(BatchError::Range {
                start,
                end,
                len: self.len,
            });
        }
        // Made on the device: no upload for an evaluation step.
        let indices =
            Tensor::<1, Int>::arange(start as i64..end as i64, &self.device.clone().inner());
        self.batch(indices, options)
    }

    /// The kernel's copy of `transform` on the device, uploaded only when it differs from the
    /// last one.
    fn affine_on_device(
        &self,
        cache: &Mutex<Option<AffineOnDevice>>,
        transform: &PixelTransform,
    ) -> Tensor<1, Int> {
        let words = || {
            transform
                .offset
                .iter()
                .chain(&transform.scale)
                .map(|v| v.to_bits())
        };
        // A poisoned lock only means another batch panicked mid-upload: upload again.
        let mut cached = cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((known, tensor)) = cached.as_ref()
            && known.iter().copied().eq(words())
        {
            return tensor.clone();
        }
        let words: Vec<u32> = words().collect();
        let options =
            TensorCreationOptions::new(self.device.clone().inner()).with_dtype(DType::U32);
        let count = words.len();
        let tensor = Tensor::<1, Int>::from_data(TensorData::new(words.clone(), [count]), options);
        *cached = Some((words, tensor.clone()));
        tensor
    }

    /// Gives the batch the autodiff setting of the device the split was uploaded for.
    fn onto_device(
        &self,
        images: Tensor<4>,
        labels: Tensor<1, Int>,
    ) -> (Tensor<4>, Tensor<1, Int>) {
        if self.device.is_autodiff() {
            (images.autodiff(), labels.autodiff())
        } else {
            (images, labels)
        }
    }
}

/// Whether `device` (without autodiff) runs on a CubeCL runtime, where the fused kernel runs.
fn is_cube(device: &Device) -> bool {
    matches!(device.as_dispatch(), DispatchDevice::Cube(_))
}
