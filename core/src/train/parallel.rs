//! Data parallel steps: each step's batch is split into one shard per device; each device
//! computes its shard's gradients on its own copy of the model, on a thread of its own (as
//! burn-train's multi-device step does), and Burn's multi-device optimizer step
//! (`MultiGradientsParams` / `step_multi`) sums each parameter's gradients on one of the devices,
//! which then steps that parameter and keeps its optimizer state. The model comes back to the
//! first device when an epoch's steps end, for evaluation and checkpoints there.
//!
//! The global batch keeps its meaning: each shard's mean loss is weighed by the shard's share of
//! the batch, so the summed gradients are the mean gradient over the whole batch and a learning
//! rate means on two devices what it means on one. Every device keeps its own copy of the
//! training images (uploaded once) and its own metric sums, which a readback adds up.

use std::ops::Range;

use burn::module::Module;
use burn::nn::loss::CrossEntropyLoss;
use burn::optim::{GradientsParams, MultiGradientsParams};
use burn::tensor::{Device, Int, Tensor, TensorData};
use kiln_shaders::ByteSplit;

use super::TrainError;
use super::reads::{DeviceTotals, Sums};
use super::trainee::batch_loss;
use crate::config::LossInput;
use crate::data::ImageDataset;
use crate::model::Classifier;

/// The devices after the first of a data-parallel run, each with the training images on it.
pub(super) struct Replicas(Vec<(Device, ByteSplit)>);

impl Replicas {
    /// Uploads the training split to each of `devices` (none: a run on one device).
    pub(super) fn upload(devices: &[Device], data: &ImageDataset) -> Result<Self, TrainError> {
        let shape =
            kiln_shaders::ImageShape::new(data.shape.channels, data.shape.height, data.shape.width);
        let replicas = devices
            .iter()
            .map(|device| {
                let train =
                    ByteSplit::upload(&data.train.images, &data.train.labels, shape, device)?;
                Ok((device.clone(), train))
            })
            .collect::<Result<_, TrainError>>()?;
        Ok(Self(replicas))
    }

    /// Whether the run trains on one device.
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Each replica's device and training images, in the order the run lists them.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&Device, &ByteSplit)> {
        self.0.iter().map(|(device, train)| (device, train))
    }
}

/// One device's part of an epoch: the epoch's order and its metric sums, both on that device.
pub(super) struct Lane {
    /// The epoch's visiting order of the training images.
    pub(super) order: Tensor<1, Int>,
    /// Loss and correct count of the samples this device trained on.
    pub(super) totals: DeviceTotals,
}

impl Lane {
    /// `order` uploaded to `device`, with sums of nothing yet.
    pub(super) fn new(order: &[i32], device: &Device) -> Self {
        Self {
            order: Tensor::<1, Int>::from_data(
                TensorData::new(order.to_vec(), [order.len()]),
                device,
            ),
            totals: DeviceTotals::zeros(device),
        }
    }
}

/// Every lane's sums added up: one sync per device.
pub(super) async fn read_lanes(lanes: &[Lane]) -> Result<Sums, TrainError> {
    let mut sums = Sums::default();
    for lane in lanes {
        let lane = lane.totals.read().await?;
        sums.loss_sum += lane.loss_sum;
        sums.correct += lane.correct;
        sums.overflowed += lane.overflowed;
    }
    Ok(sums)
}

/// Rows `rows` of the epoch's order cut into `parts` contiguous shards, as even as they come (the
/// first ones a row longer); a shard may be empty when the last batch is shorter than `parts`.
pub(super) fn shards(rows: Range<usize>, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.max(1);
    let (len, start) = (rows.len(), rows.start);
    let (base, longer) = (len / parts, len % parts);
    let mut from = start;
    (0..parts)
        .map(|part| {
            let to = from + base + usize::from(part < longer);
            let shard = from..to;
            from = to;
            shard
        })
        .collect()
}

/// One device's shard of a step: its batch, where it is, and its share of the whole batch.
pub(super) struct Shard {
    /// The images and labels, on `device`.
    pub(super) batch: (Tensor<4>, Tensor<1, Int>),
    /// The device, without autodiff.
    pub(super) device: Device,
    /// The shard's rows over the batch's rows: its loss's weight in the step.
    pub(super) share: f64,
}

/// What one shard's forward pass left for the metrics: logits, mean loss and labels, detached.
pub(super) type ShardOutput = (Tensor<2>, Tensor<1>, Tensor<1, Int>);

/// Computes every shard's gradients at once, each on its device and its own thread, and
/// gathers them for Burn's multi-device optimizer step. Hands back each shard's output for the
/// metrics, in shard order. Give it no empty shard: a batch of no rows has no mean loss.
pub(super) fn gradients(
    model: &Classifier,
    loss_fn: &CrossEntropyLoss,
    loss_input: LossInput,
    shards: Vec<Shard>,
) -> (MultiGradientsParams, Vec<ShardOutput>) {
    let results: Vec<std::thread::Result<(GradientsParams, Device, ShardOutput)>> =
        std::thread::scope(|scope| {
            let handles: Vec<_> = shards
                .into_iter()
                .map(|shard| {
                    let (model, loss_fn) = (model.clone(), loss_fn.clone());
                    scope.spawn(move || {
                        let device = shard.device.autodiff();
                        let replica = model.fork(&device);
                        let loss_fn = loss_fn.fork(&device);
                        let (images, labels) = shard.batch;
                        let logits = replica.forward(images.autodiff());
                        let loss = batch_loss(
                            &loss_fn,
                            loss_input,
                            logits.clone(),
                            labels.clone().autodiff(),
                        );
                        let output = (
                            logits.detach().without_autodiff(),
                            loss.clone().detach().without_autodiff(),
                            labels,
                        );
                        let grads = loss.mul_scalar(shard.share).backward();
                        let grads = GradientsParams::from_grads(grads, &replica);
                        (grads, device, output)
                    })
                })
                .collect();
            handles.into_iter().map(|handle| handle.join()).collect()
        });
    let mut multi = MultiGradientsParams::default();
    let mut outputs = Vec::with_capacity(results.len());
    for result in results {
        // A device lost mid-step panics in its thread; the run's own catch turns it into a
        // sentence, as on one device.
        let (grads, device, output) =
            result.unwrap_or_else(|payload| std::panic::resume_unwind(payload));
        multi.grads.push((grads, device));
        outputs.push(output);
    }
    (multi, outputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_the_batch_in_order_and_differ_by_at_most_a_row() {
        assert_eq!(shards(64..128, 2), vec![64..96, 96..128]);
        assert_eq!(shards(0..7, 3), vec![0..3, 3..5, 5..7]);
        // A last batch shorter than the device count leaves a device without rows.
        assert_eq!(shards(10..11, 2), vec![10..11, 11..11]);
        assert_eq!(shards(0..5, 1), vec![0..5]);
    }
}
