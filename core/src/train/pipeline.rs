//! From the data set's bytes to batches on the device: the per-channel scaling, the seeded
//! epoch order, and every split uploaded once.

use crate::shuffle::ShuffleRng;
use burn::tensor::{Device, Int, Tensor, Transaction};
use kiln_shaders::{BatchOptions, ByteSplit, PixelTransform};

use super::TrainError;
use super::targets::{Targets, label_matrix};
use crate::config::{Experiment, InputScaling};
use crate::data::ImageDataset;
use crate::model::Classifier;

/// The per-channel map from bytes to network input that `scaling` asks for on this data.
pub fn pixel_transform(scaling: InputScaling, data: &ImageDataset) -> PixelTransform {
    let channels = data.shape.channels;
    match scaling {
        InputScaling::UnitRange => PixelTransform::uniform(channels, 0.0, 1.0 / 255.0),
        InputScaling::Raw => PixelTransform::uniform(channels, 0.0, 1.0),
        InputScaling::ImageNet => imagenet_transform(channels),
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

/// (byte − 255·mean) · 1/(255·std) per channel: torchvision's `Normalize` after `ToTensor`.
/// Grey images use the mean of the three channels' figures.
fn imagenet_transform(channels: usize) -> PixelTransform {
    let (mean, std) = (InputScaling::IMAGENET_MEAN, InputScaling::IMAGENET_STD);
    let channel = |c: usize| {
        if channels == 3 {
            (mean[c], std[c])
        } else {
            (
                mean.iter().sum::<f32>() / 3.0,
                std.iter().sum::<f32>() / 3.0,
            )
        }
    };
    let (offset, scale) = (0..channels)
        .map(|c| {
            let (m, s) = channel(c);
            (255.0 * m, 1.0 / (255.0 * s))
        })
        .unzip();
    PixelTransform { offset, scale }
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

/// How `experiment` builds its batches with `transform`: evaluation's (the map and the model's
/// resize) and training's (those plus the augmentation).
fn batch_options(
    experiment: &Experiment,
    transform: &PixelTransform,
) -> (BatchOptions, BatchOptions) {
    let mut plain = BatchOptions::new(transform.clone());
    plain.output_size = experiment.model.input_resize().map(|side| (side, side));
    let augmented = BatchOptions {
        crop_padding: experiment.crop_padding,
        flip: experiment.flip,
        crop_scale: experiment.crop_scale as f32,
        rotation_degrees: experiment.rotation_degrees as f32,
        brightness: experiment.brightness as f32,
        contrast: experiment.contrast as f32,
        ..plain.clone()
    };
    (plain, augmented)
}

/// Training images as `experiment`'s training batches show them, laid out for the eye: one
/// column per image, the first row as evaluation sees them, then one row per step of `draws`.
///
/// The batches are built by [`ByteSplit::batch`] on `device` with the options the loop builds,
/// so what is shown is what the model is fed, before the input scaling (which the eye cannot
/// read). Returns RGBA pixels with the grid's width and height; cells are one pixel apart.
pub fn augmentation_preview(
    experiment: &Experiment,
    shape: crate::data::ImageShape,
    images: &[u8],
    draws: usize,
    device: &Device,
) -> Result<(Vec<u8>, usize, usize), TrainError> {
    let bytes = PixelTransform::uniform(shape.channels, 0.0, 1.0);
    let (plain, augmented) = batch_options(experiment, &bytes);
    let input = kiln_shaders::ImageShape::new(shape.channels, shape.height, shape.width);
    let count = images.len() / shape.pixels_per_image().max(1);
    let labels = vec![0u8; count];
    let split = ByteSplit::upload(
        &images[..count * shape.pixels_per_image()],
        &labels,
        input,
        device,
    )?;
    let (out_h, out_w) = plain.output_size(input);
    let (cell_w, cell_h) = (out_w + 1, out_h + 1);
    let (grid_w, grid_h) = (count * cell_w, (draws + 1) * cell_h);
    let mut rgba = vec![0u8; grid_w * grid_h * 4];
    for row in 0..=draws {
        let mut options = if row == 0 {
            plain.clone()
        } else {
            augmented.clone()
        };
        options.seed = BatchOptions::step_seed(experiment.seed, row as u64);
        let (batch, _) = split.range(0, count, &options)?;
        let values: Vec<f32> =
            super::device_reads::read_back_now(Transaction::default().register(batch))?
                .into_iter()
                .next()
                .ok_or_else(|| {
                    TrainError::Readback("the preview batch came back empty".to_owned())
                })?
                .convert::<f32>()
                .try_to_vec()
                .map_err(|e| TrainError::Readback(format!("{e:?}")))?;
        let per_image = shape.channels * out_h * out_w;
        for (column, image) in values.chunks_exact(per_image.max(1)).enumerate() {
            let image: Vec<u8> = image
                .iter()
                .map(|v| v.round().clamp(0.0, 255.0) as u8)
                .collect();
            let cell = crate::pixels::planar_to_rgba([shape.channels, out_h, out_w], &image);
            for y in 0..out_h {
                let start = ((row * cell_h + y) * grid_w + column * cell_w) * 4;
                rgba[start..start + out_w * 4]
                    .copy_from_slice(&cell[y * out_w * 4..(y + 1) * out_w * 4]);
            }
        }
    }
    Ok((rgba, grid_w, grid_h))
}

/// A split as a frozen backbone sees it: one row of pooled features per image, computed once,
/// on the device.
pub(super) struct FeatureSplit {
    features: Tensor<2>,
    labels: Tensor<1, Int>,
}

impl FeatureSplit {
    /// The features `backbone` gives every image of `images` (built per `options`), in batches
    /// of `batch_size`, left on the device.
    fn compute(
        backbone: &Classifier,
        images: &ByteSplit,
        options: &BatchOptions,
        batch_size: usize,
    ) -> Result<Self, TrainError> {
        let backbone = backbone.for_eval();
        let (mut features, mut labels) = (Vec::new(), Vec::new());
        let mut start = 0;
        while start < images.len() {
            let end = (start + batch_size.max(1)).min(images.len());
            let (batch, batch_labels) = images.range(start, end, options)?;
            let batch = backbone.features(batch).ok_or_else(|| {
                TrainError::Crashed("a linear probe needs a pretrained backbone".to_owned())
            })?;
            features.push(batch);
            labels.push(batch_labels);
            start = end;
        }
        if features.is_empty() {
            let (_, labels) = images.range(0, 0, options)?;
            return Ok(Self {
                features: Tensor::empty([0, 1], &labels.device()),
                labels,
            });
        }
        Ok(Self {
            features: Tensor::cat(features, 0),
            labels: Tensor::cat(labels, 0),
        })
    }

    /// Rows named by `indices`, shaped `[batch, features, 1, 1]` as a head takes them.
    fn batch(&self, indices: Tensor<1, Int>) -> (Tensor<4>, Tensor<1, Int>) {
        let indices = indices.inner();
        let rows = self.features.clone().select(0, indices.clone());
        let [count, width] = rows.dims();
        (
            rows.reshape([count, width, 1, 1]),
            self.labels.clone().select(0, indices),
        )
    }
}

/// Where a split's batches come from: its images, or (in a linear probe) the features the
/// frozen backbone computed from them once; and their truth.
pub(super) struct BatchSource {
    /// The images on the device, built into batches per the options; kept while features
    /// stand in for them, for when the backbone unfreezes.
    images: ByteSplit,
    /// A probe's cached features, one row per image.
    features: Option<FeatureSplit>,
    /// In a multi-label set, each image's labels as a 0/1 row (else the images' classes are
    /// the truth).
    sets: Option<Tensor<2>>,
}

impl BatchSource {
    /// `images`, whose truth is `sets` where given, else their classes.
    fn new(images: ByteSplit, sets: Option<Tensor<2>>) -> Self {
        Self {
            images,
            features: None,
            sets,
        }
    }

    /// The images of the split.
    pub(super) fn images(&self) -> &ByteSplit {
        &self.images
    }

    /// Images in the split.
    pub(super) fn len(&self) -> usize {
        self.images.len()
    }

    /// Whether the split holds no image.
    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The truth of the images named by `indices`, given their `classes`.
    fn targets(&self, classes: Tensor<1, Int>, indices: Tensor<1, Int>) -> Targets {
        match &self.sets {
            Some(sets) => Targets::Sets(sets.clone().select(0, indices)),
            None => Targets::Classes(classes),
        }
    }

    /// The batch of the images named by `indices`; features ignore `options`, which they were
    /// computed with (unaugmented).
    pub(super) fn batch(
        &self,
        indices: Tensor<1, Int>,
        options: &BatchOptions,
    ) -> Result<(Tensor<4>, Targets), TrainError> {
        let (batch, classes) = match &self.features {
            None => self.images.batch(indices.clone(), options)?,
            Some(features) => features.batch(indices.clone()),
        };
        Ok((batch, self.targets(classes, indices)))
    }

    /// The contiguous images `start..end`, for evaluation in order.
    pub(super) fn range(
        &self,
        start: usize,
        end: usize,
        options: &BatchOptions,
    ) -> Result<(Tensor<4>, Targets), TrainError> {
        let end = end.min(self.images.len());
        let start = start.min(end);
        let indices = |device: &Device| Tensor::<1, Int>::arange(start as i64..end as i64, device);
        let (batch, classes) = match &self.features {
            None => self.images.range(start, end, options)?,
            Some(features) => features.batch(indices(&features.labels.device())),
        };
        let targets = match &self.sets {
            Some(sets) => Targets::Sets(sets.clone().select(0, indices(&sets.device()))),
            None => Targets::Classes(classes),
        };
        Ok((batch, targets))
    }
}

/// Every split on the device, and how their batches are built.
pub(super) struct InputPipeline {
    pub(super) train: BatchSource,
    /// Empty when the run validates on test or not at all.
    pub(super) val: BatchSource,
    pub(super) test: BatchSource,
    /// The input scaling and, for a resizing model, the resize, done in the same pass as the
    /// gather: what evaluation sees.
    pub(super) plain: BatchOptions,
    /// `plain` plus the augmentation, for training batches only.
    pub(super) augmented: BatchOptions,
}

impl InputPipeline {
    /// The options evaluation's batches are built with for `experiment` (the map and the
    /// model's resize), for batches made outside a pipeline (`kiln bench`'s uploads).
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn plain_options(
        experiment: &Experiment,
        transform: &PixelTransform,
    ) -> BatchOptions {
        batch_options(experiment, transform).0
    }

    /// Uploads every split and checks the batch options against the images once.
    pub(super) fn upload(
        experiment: &Experiment,
        data: &ImageDataset,
        transform: &PixelTransform,
        device: &Device,
    ) -> Result<Self, TrainError> {
        let shape =
            kiln_shaders::ImageShape::new(data.shape.channels, data.shape.height, data.shape.width);
        let source = |split: &crate::data::Split| -> Result<BatchSource, TrainError> {
            let images = ByteSplit::upload(&split.images, &split.labels, shape, device)?;
            let sets = label_matrix(split, data.num_classes(), device);
            Ok(BatchSource::new(images, sets))
        };
        let (train, val, test) = (
            source(&data.train)?,
            source(&data.val)?,
            source(&data.test)?,
        );
        let (plain, augmented) = batch_options(experiment, transform);
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

    /// Computes every split's features with the frozen `backbone` once; batches then come from
    /// them until [`InputPipeline::unfreeze`].
    pub(super) fn probe(
        &mut self,
        backbone: &Classifier,
        batch_size: usize,
    ) -> Result<(), TrainError> {
        for source in [&mut self.train, &mut self.val, &mut self.test] {
            let features =
                FeatureSplit::compute(backbone, &source.images, &self.plain, batch_size)?;
            source.features = Some(features);
        }
        Ok(())
    }

    /// Back to batches of images: the whole network trains from here on.
    pub(super) fn unfreeze(&mut self) {
        for source in [&mut self.train, &mut self.val, &mut self.test] {
            source.features = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ExperimentDraft;

    /// Two 1×3×4 images whose left and right halves differ, so a flip shows.
    fn images() -> Vec<u8> {
        [10u8, 10, 200, 200]
            .repeat(3)
            .into_iter()
            .chain([50u8, 0, 0, 250].repeat(3))
            .collect()
    }

    fn preview(draft: ExperimentDraft) -> (Vec<u8>, usize, usize) {
        let experiment = draft.validate().expect("valid");
        let shape = crate::data::ImageShape {
            channels: 1,
            height: 3,
            width: 4,
        };
        augmentation_preview(&experiment, shape, &images(), 6, &Device::flex()).expect("preview")
    }

    /// Row `row`, column `column` of the grid's cells, one byte per pixel.
    fn cell(grid: &(Vec<u8>, usize, usize), row: usize, column: usize) -> Vec<u8> {
        let (rgba, width, _) = grid;
        (0..3)
            .flat_map(|y| (0..4).map(move |x| (y, x)))
            .map(|(y, x)| rgba[((row * 4 + y) * width + column * 5 + x) * 4])
            .collect()
    }

    #[test]
    fn the_preview_shows_the_images_as_evaluated_then_one_row_per_training_step() {
        let flipped = preview(ExperimentDraft {
            flip: true,
            ..ExperimentDraft::default()
        });
        // Two columns of 4 + 1 pixels, seven rows of 3 + 1.
        assert_eq!((flipped.1, flipped.2), (10, 28));
        assert_eq!(cell(&flipped, 0, 0), [10, 10, 200, 200].repeat(3));
        let mirrored = [200u8, 200, 10, 10].repeat(3);
        let rows: Vec<Vec<u8>> = (1..7).map(|row| cell(&flipped, row, 0)).collect();
        assert!(
            rows.iter()
                .all(|r| *r == cell(&flipped, 0, 0) || *r == mirrored)
        );
        assert!(rows.contains(&mirrored), "six draws and no flip");

        let plain = preview(ExperimentDraft::default());
        for row in 1..7 {
            assert_eq!(
                cell(&plain, row, 1),
                cell(&plain, 0, 1),
                "no augmentation, no change"
            );
        }
        let jittered = preview(ExperimentDraft {
            brightness: 0.5,
            ..ExperimentDraft::default()
        });
        assert!((1..7).any(|row| cell(&jittered, row, 1) != cell(&jittered, 0, 1)));
    }
}
