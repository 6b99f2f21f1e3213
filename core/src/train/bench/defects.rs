//! The habits of the slow user loops, each of which Kiln's own loop can take up alone
//! (`kiln explain --loop`) or all at once (`kiln bench --naive`), and how a step's batch and an
//! evaluation are made under them.

use burn::tensor::{Device, Int, Tensor, TensorData};
use kiln_shaders::{BatchOptions, ByteSplit, PixelTransform};
use serde::Serialize;

use super::super::TrainError;
use super::super::device_reads::read_scalar;
use super::super::pipeline::InputPipeline;
use super::super::targets::Targets;
use crate::data::{ImageDataset, Split};
use crate::executor::block_on;
use crate::model::Classifier;

/// Which of the user loops' habits a bench's loop takes up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct LoopDefects {
    /// Each image converted to floats on the host one at a time (a `Dataset`'s `__getitem__`
    /// with `ToTensor`), and the batch uploaded.
    pub host_transforms: bool,
    /// The batch's raw bytes gathered on the host and uploaded every step, then converted on
    /// the device.
    pub upload_per_batch: bool,
    /// The step's image indices taken from a host-side shuffle and uploaded every step.
    pub host_shuffle: bool,
    /// The loss read back every step (`running_loss += loss.item()`).
    pub read_loss: bool,
    /// The correct count read back every step (`correct += (…).sum().item()`).
    pub read_correct: bool,
    /// Evaluation reading its correct count back after every batch.
    pub eval_synced: bool,
}

impl LoopDefects {
    /// Kiln's loop: none of them.
    pub const NONE: Self = Self {
        host_transforms: false,
        upload_per_batch: false,
        host_shuffle: false,
        read_loss: false,
        read_correct: false,
        eval_synced: false,
    };

    /// The naive loop: all of them.
    pub const ALL: Self = Self {
        host_transforms: true,
        upload_per_batch: true,
        host_shuffle: true,
        read_loss: true,
        read_correct: true,
        eval_synced: true,
    };

    /// Each habit alone, with the words a table names it by.
    pub fn each() -> [(&'static str, Self); 6] {
        let alone = |set: fn(&mut Self)| {
            let mut defects = Self::NONE;
            set(&mut defects);
            defects
        };
        [
            (
                "per-image host transforms and their upload",
                alone(|d| d.host_transforms = true),
            ),
            (
                "an upload of raw bytes per batch",
                alone(|d| d.upload_per_batch = true),
            ),
            (
                "a host-side shuffle, indices uploaded per step",
                alone(|d| d.host_shuffle = true),
            ),
            ("the loss read every step", alone(|d| d.read_loss = true)),
            (
                "the correct count read every step",
                alone(|d| d.read_correct = true),
            ),
            (
                "evaluation synced per batch",
                alone(|d| d.eval_synced = true),
            ),
        ]
    }

    /// Its name in a bench report's `style`: `kiln`, `naive`, or `kiln+` and the habits taken.
    pub fn style_name(&self) -> String {
        if *self == Self::NONE {
            return "kiln".into();
        }
        if *self == Self::ALL {
            return "naive".into();
        }
        let words = [
            (self.host_transforms, "host-transforms"),
            (self.upload_per_batch, "upload-per-batch"),
            (self.host_shuffle, "host-shuffle"),
            (self.read_loss, "read-loss"),
            (self.read_correct, "read-correct"),
            (self.eval_synced, "eval-synced"),
        ];
        let taken: Vec<&str> = words.iter().filter(|w| w.0).map(|w| w.1).collect();
        format!("kiln+{}", taken.join("+"))
    }

    /// Whether batches come from the host rather than from the data set kept on the device.
    pub(super) fn batches_from_host(&self) -> bool {
        self.host_transforms || self.upload_per_batch
    }
}

/// Where a bench's batches come from under its habits.
pub(super) struct Batches<'a> {
    pub(super) data: &'a ImageDataset,
    pub(super) transform: &'a PixelTransform,
    /// The options evaluation builds batches with, for batches uploaded as bytes.
    pub(super) plain: BatchOptions,
    /// The data set on the device, unless the loop builds every batch on the host.
    pub(super) pipeline: Option<InputPipeline>,
    pub(super) defects: LoopDefects,
    pub(super) device: &'a Device,
}

impl Batches<'_> {
    /// The training batch of `rows` images from `start` in the epoch's `order` (on the host,
    /// and on the device where the loop keeps it there).
    pub(super) fn train(
        &self,
        order: (&[i32], Option<&Tensor<1, Int>>),
        start: usize,
        rows: usize,
    ) -> Result<(Tensor<4>, Targets), TrainError> {
        let (host, device_order) = order;
        let indices = &host[start..start + rows];
        if self.defects.host_transforms {
            return Ok(self.converted_on_host(&self.data.train, indices));
        }
        if self.defects.upload_per_batch {
            return self.uploaded_bytes(&self.data.train, indices);
        }
        let Some(pipeline) = &self.pipeline else {
            return Err(TrainError::Crashed(
                "the bench kept no data set on the device".into(),
            ));
        };
        let indices = match (self.defects.host_shuffle, device_order) {
            (false, Some(order)) => order.clone().slice(start..start + rows),
            _ => Tensor::from_data(TensorData::new(indices.to_vec(), [rows]), self.device),
        };
        pipeline.train.batch(indices, &pipeline.plain)
    }

    /// One pass of `model` over the validation split (the test split where there is none), in
    /// batches of `batch_size`; its accuracy, read back once or, evaluation synced, per batch.
    pub(super) fn evaluate(
        &self,
        model: &Classifier,
        batch_size: usize,
    ) -> Result<(usize, f64), TrainError> {
        let model = model.for_eval();
        let on_val = !self.data.val.is_empty();
        let split = if on_val {
            &self.data.val
        } else {
            &self.data.test
        };
        let len = split.labels.len();
        let mut correct_on_host = 0.0;
        let mut correct: Option<Tensor<1>> = None;
        let mut start = 0;
        while start < len {
            let end = (start + batch_size.max(1)).min(len);
            let (images, targets) = self.eval_batch(split, on_val, start, end)?;
            let hits = targets.right(model.forward(images));
            if self.defects.eval_synced {
                correct_on_host += block_on(read_scalar(hits))?;
            } else {
                correct = Some(match correct {
                    Some(sum) => sum + hits,
                    None => hits,
                });
            }
            start = end;
        }
        if let Some(sum) = correct {
            correct_on_host = block_on(read_scalar(sum))?;
        }
        Ok((len, correct_on_host / len.max(1) as f64))
    }

    /// Evaluation's batch `start..end` of `split`, made as training's batches are.
    fn eval_batch(
        &self,
        split: &Split,
        on_val: bool,
        start: usize,
        end: usize,
    ) -> Result<(Tensor<4>, Targets), TrainError> {
        let indices: Vec<i32> = (start as i32..end as i32).collect();
        if self.defects.host_transforms {
            return Ok(self.converted_on_host(split, &indices));
        }
        if self.defects.upload_per_batch {
            return self.uploaded_bytes(split, &indices);
        }
        let Some(pipeline) = &self.pipeline else {
            return Err(TrainError::Crashed(
                "the bench kept no data set on the device".into(),
            ));
        };
        let source = if on_val {
            &pipeline.val
        } else {
            &pipeline.test
        };
        source.range(start, end, &pipeline.plain)
    }

    /// The user loop's batch: every image converted on the host one at a time, as a
    /// `Dataset`'s `__getitem__` with `ToTensor` does, collated, then uploaded.
    fn converted_on_host(&self, split: &Split, indices: &[i32]) -> (Tensor<4>, Targets) {
        let shape = self.data.shape;
        let values = shape.pixels_per_image();
        let plane = shape.height * shape.width;
        let mut pixels = Vec::with_capacity(indices.len() * values);
        let mut labels = Vec::with_capacity(indices.len());
        for &index in indices {
            let index = usize::try_from(index).unwrap_or(0);
            let image = &split.images[index * values..(index + 1) * values];
            pixels.extend(self.transform.apply_reference(image, plane));
            labels.push(i32::from(split.labels[index]));
        }
        let rows = indices.len();
        let [c, h, w] = shape.chw();
        (
            Tensor::<1>::from_data(TensorData::new(pixels, [rows * values]), self.device)
                .reshape([rows, c, h, w]),
            Targets::Classes(Tensor::<1, Int>::from_data(
                TensorData::new(labels, [rows]),
                self.device,
            )),
        )
    }

    /// The images named by `indices` gathered as raw bytes on the host, uploaded, and converted
    /// on the device as Kiln's batches are.
    fn uploaded_bytes(
        &self,
        split: &Split,
        indices: &[i32],
    ) -> Result<(Tensor<4>, Targets), TrainError> {
        let shape = self.data.shape;
        let values = shape.pixels_per_image();
        let mut bytes = Vec::with_capacity(indices.len() * values);
        let mut labels = Vec::with_capacity(indices.len());
        for &index in indices {
            let index = usize::try_from(index).unwrap_or(0);
            bytes.extend_from_slice(&split.images[index * values..(index + 1) * values]);
            labels.push(split.labels[index]);
        }
        let input = kiln_shaders::ImageShape::new(shape.channels, shape.height, shape.width);
        let batch = ByteSplit::upload(&bytes, &labels, input, self.device)?;
        let (images, classes) = batch.range(0, indices.len(), &self.plain)?;
        Ok((images, Targets::Classes(classes)))
    }
}
