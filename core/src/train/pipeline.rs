//! From the data set's bytes to batches on the device: the per-channel scaling, the seeded
//! epoch order, and every split uploaded once.

use burn::tensor::Device;
use kiln_shaders::{BatchOptions, ByteSplit, PixelTransform};

use super::TrainError;
use crate::config::{Experiment, InputScaling};
use crate::data::ImageDataset;

/// The per-channel map from bytes to network input that `scaling` asks for on this data.
pub fn pixel_transform(scaling: InputScaling, data: &ImageDataset) -> PixelTransform {
    let channels = data.shape.channels;
    match scaling {
        InputScaling::UnitRange => PixelTransform::uniform(channels, 0.0, 1.0 / 255.0),
        InputScaling::Raw => PixelTransform::uniform(channels, 0.0, 1.0),
        InputScaling::Standardize => {
            let plane = data.shape.height * data.shape.width;
            let mut sum = vec![0.0_f64; channels];
            let mut sum_sq = vec![0.0_f64; channels];
            for image in data
                .train
                .images
                .chunks_exact(data.shape.pixels_per_image().max(1))
            {
                for (c, values) in image.chunks_exact(plane.max(1)).enumerate() {
                    for &b in values {
                        let v = f64::from(b);
                        sum[c] += v;
                        sum_sq[c] += v * v;
                    }
                }
            }
            let count = (data.train.len() * plane).max(1) as f64;
            let mut offset = Vec::with_capacity(channels);
            let mut scale = Vec::with_capacity(channels);
            for c in 0..channels {
                let mean = sum[c] / count;
                let std = (sum_sq[c] / count - mean * mean).max(0.0).sqrt().max(1e-3);
                offset.push(mean as f32);
                scale.push((1.0 / std) as f32);
            }
            PixelTransform { offset, scale }
        }
    }
}

/// A small, fast, seedable generator for the per-epoch shuffle (splitmix64).
pub(crate) struct ShuffleRng(pub(crate) u64);

impl ShuffleRng {
    /// The next 64 random bits.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The order in which an epoch visits the training images; depends only on seed and epoch.
pub fn epoch_order(len: usize, seed: u64, epoch: usize) -> Vec<i32> {
    let mut rng = ShuffleRng(seed ^ (epoch as u64).wrapping_mul(0xD1B5_4A32_D192_ED03));
    let mut order: Vec<i32> = (0..len as i32).collect();
    for i in (1..len).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

/// The device seed of `epoch`: a fixed function of the run's seed, independent of what ran before.
pub(super) fn epoch_seed(seed: u64, epoch: usize) -> u64 {
    ShuffleRng(seed ^ (epoch as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)).next()
}

/// Every split as bytes on the device, and how their batches are built.
pub(super) struct InputPipeline {
    pub(super) train: ByteSplit,
    /// Empty when the run validates on test or not at all.
    pub(super) val: ByteSplit,
    pub(super) test: ByteSplit,
    /// The input scaling and, for a resizing model, the resize, done in the same pass as the
    /// gather: what evaluation sees.
    pub(super) plain: BatchOptions,
    /// `plain` plus the augmentation, for training batches only.
    pub(super) augmented: BatchOptions,
}

impl InputPipeline {
    /// Uploads every split and checks the batch options against the images once.
    pub(super) fn upload(
        experiment: &Experiment,
        data: &ImageDataset,
        transform: &PixelTransform,
        device: &Device,
    ) -> Result<Self, TrainError> {
        let shape =
            kiln_shaders::ImageShape::new(data.shape.channels, data.shape.height, data.shape.width);
        let train = ByteSplit::upload(&data.train.images, &data.train.labels, shape, device)?;
        let val = ByteSplit::upload(&data.val.images, &data.val.labels, shape, device)?;
        let test = ByteSplit::upload(&data.test.images, &data.test.labels, shape, device)?;
        let mut plain = BatchOptions::new(transform.clone());
        plain.output_size = experiment.model.input_resize().map(|side| (side, side));
        let augmented = BatchOptions {
            crop_padding: experiment.crop_padding,
            flip: experiment.flip,
            ..plain.clone()
        };
        plain.validate(shape)?;
        augmented.validate(shape)?;
        Ok(Self {
            train,
            val,
            test,
            plain,
            augmented,
        })
    }
}
