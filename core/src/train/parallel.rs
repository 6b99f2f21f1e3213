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
//!
//! CUDA devices (`cuda:N`, in builds with the `cuda` feature) where NCCL's library loads sum
//! gradients with Burn's collective all-reduce instead: each replica's trained parameters are
//! marked distributed, so the backward pass on each device sums every gradient across all
//! devices in place as soon as it is complete everywhere, and the first device's summed gradients
//! step the model there with the one-device optimizer step. A step that leaves a device without rows (a
//! last batch shorter than the device count) is summed by copies, since an all-reduce needs
//! every device.

use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};

use burn::backend::Dispatch;
use burn::backend::distributed::DistributedOps;
use burn::module::{Module, ModuleMapper, Param};
use burn::nn::loss::CrossEntropyLoss;
use burn::optim::{GradientsParams, MultiGradientsParams};
use burn::tensor::distributed::{DistributedConfig, DistributedContext, ReduceOperation};
use burn::tensor::{Device, Int, Tensor, TensorData};
use kiln_shaders::ByteSplit;

use super::TrainError;
use super::device_reads::{DeviceTotals, Sums};
use super::step::batch_loss;
use super::targets::Targets;
use crate::config::LossInput;
use crate::data::ImageDataset;
use crate::device::all_reduces;
use crate::model::Classifier;

/// The devices after the first of a data-parallel run, each with the training images on it.
pub(super) struct Replicas {
    devices: Vec<(Device, ByteSplit)>,
    /// Burn's communication server for all-reduces across every device of the run, when they
    /// all have one (CUDA devices with NCCL); dropping it closes the server.
    collective: Option<DistributedContext>,
}

impl Replicas {
    /// Uploads the training split to each of `devices` (none: a run on one device), the devices
    /// a run on `first` splits its steps with.
    pub(super) fn upload(
        first: &Device,
        devices: &[Device],
        data: &ImageDataset,
    ) -> Result<Self, TrainError> {
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
        let all: Vec<&Device> = std::iter::once(first).chain(devices).collect();
        let collective =
            (all.len() > 1 && all.iter().all(|device| all_reduces(device))).then(|| {
                let devices = all.iter().map(|device| (*device).clone().autodiff());
                // Kiln weighs each shard's loss by its share of the batch, so the sum is the mean.
                let config = DistributedConfig {
                    all_reduce_op: ReduceOperation::Sum,
                };
                DistributedContext::init(devices.collect(), config)
            });
        Ok(Self {
            devices: replicas,
            collective,
        })
    }

    /// Whether the run trains on one device.
    pub(super) fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }

    /// Whether a step on every device sums its gradients by Burn's collective all-reduce.
    pub(super) fn is_collective(&self) -> bool {
        self.collective.is_some()
    }

    /// Each replica's device and training images, in the order the run lists them.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&Device, &ByteSplit)> {
        self.devices.iter().map(|(device, train)| (device, train))
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
    pub(super) batch: (Tensor<4>, Targets),
    /// The device, without autodiff.
    pub(super) device: Device,
    /// The shard's rows over the batch's rows: its loss's weight in the step.
    pub(super) share: f64,
}

/// What one shard's forward pass left for the metrics: logits, mean loss and labels, detached.
pub(super) type ShardOutput = (Tensor<2>, Tensor<1>, Targets);

/// How a data-parallel step's gradients reach the optimizer.
pub(super) enum StepGradients {
    /// Each device's own, for Burn's multi-device step to sum.
    PerDevice(MultiGradientsParams),
    /// Summed across the devices by the collective all-reduce, as the first device holds them.
    Summed(GradientsParams),
}

/// Marks a replica's trained parameters for Burn's collective all-reduce: the backward pass then
/// sums each one's gradient across the run's devices in place.
struct MarkDistributed;

impl ModuleMapper for MarkDistributed {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        // A frozen parameter has no gradient: marked, the all-reduce would wait for it forever.
        if !param.is_require_grad() {
            return param;
        }
        let (id, tensor, mapper) = param.consume();
        Param::from_mapped_value(id, tensor.set_distributed(id), mapper)
    }
}

/// Computes every shard's gradients at once, each on its device and its own thread, summed by
/// the collective all-reduce when `collective` (one shard on each of the run's devices), else
/// gathered for Burn's multi-device optimizer step. Hands back each shard's output for the
/// metrics, in shard order. Give it no empty shard: a batch of no rows has no mean loss.
pub(super) fn gradients(
    model: &Classifier,
    loss_fn: &CrossEntropyLoss,
    loss_input: LossInput,
    shards: Vec<Shard>,
    collective: bool,
) -> (StepGradients, Vec<ShardOutput>) {
    let failed = AtomicBool::new(false);
    let results: Vec<Result<ShardGradients, Failure>> = std::thread::scope(|scope| {
        let handles: Vec<_> = shards
            .into_iter()
            .map(|shard| {
                let (model, loss_fn, failed) = (model.clone(), loss_fn.clone(), &failed);
                scope.spawn(move || {
                    let device = shard.device.clone();
                    let step = AssertUnwindSafe(|| {
                        shard_gradients(model, loss_fn, loss_input, shard, collective)
                    });
                    std::panic::catch_unwind(step).map_err(|payload| {
                        let first = !failed.swap(true, Ordering::SeqCst);
                        if collective && first {
                            abandon_all_reduce(&device);
                        }
                        Failure { payload, first }
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))
            })
            .collect()
    });
    // A device lost mid-step panics in its thread; the run's own catch turns the first such
    // panic (the cause, not the others' ends it brought about) into a sentence, as on one device.
    if results.iter().any(Result::is_err) {
        let mut failures: Vec<Failure> = results.into_iter().filter_map(Result::err).collect();
        let cause = failures.iter().position(|f| f.first).unwrap_or(0);
        std::panic::resume_unwind(failures.swap_remove(cause).payload);
    }
    let mut multi = MultiGradientsParams::default();
    let mut outputs = Vec::with_capacity(results.len());
    for (grads, device, output) in results.into_iter().flatten() {
        multi.grads.push((grads, device));
        outputs.push(output);
    }
    let grads = match collective {
        // Every device holds the same sums; the first device's step the model there.
        true => StepGradients::Summed(multi.grads.swap_remove(0).0),
        false => StepGradients::PerDevice(multi),
    };
    (grads, outputs)
}

/// One shard's gradients, the device they are on, and its output for the metrics.
type ShardGradients = (GradientsParams, Device, ShardOutput);

/// A shard's panic, and whether it was the step's first.
struct Failure {
    payload: Box<dyn std::any::Any + Send>,
    first: bool,
}

/// The forward and backward pass of one shard on its own replica of `model`.
fn shard_gradients(
    model: Classifier,
    loss_fn: CrossEntropyLoss,
    loss_input: LossInput,
    shard: Shard,
    collective: bool,
) -> ShardGradients {
    let device = shard.device.autodiff();
    let mut replica = model.fork(&device);
    if collective {
        replica = replica.map(&mut MarkDistributed);
    }
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
}

/// Closes the all-reduce's communication server after a device failed mid-step. The other
/// devices wait in their backward pass for that device's gradients; with the server gone their
/// wait ends (in a panic of their own), so the run fails with the cause instead of hanging. The
/// run's `DistributedContext`, dropped later, then finds nothing left to close.
fn abandon_all_reduce(device: &Device) {
    // A server already gone panics on the close; the cause being reported is the first panic.
    let _ = std::panic::catch_unwind(|| {
        <Dispatch as DistributedOps<Dispatch>>::close_communication_server(device.as_dispatch());
    });
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

    /// How many of `model`'s float parameters are marked for the all-reduce, out of how many.
    fn distributed_of(model: &Classifier) -> (usize, usize) {
        struct Count(usize, usize);
        impl burn::module::ModuleVisitor for Count {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
                self.0 += usize::from(param.is_distributed());
                self.1 += 1;
            }
        }
        let mut count = Count(0, 0);
        model.visit(&mut count);
        (count.0, count.1)
    }

    #[test]
    fn a_frozen_parameter_is_left_unmarked_for_the_all_reduce() {
        // Marked, a parameter without a gradient would keep the all-reduce waiting for one.
        // (A trained one cannot be marked here: Burn marks tensors of CubeCL devices only.)
        let shape = crate::data::ImageShape {
            channels: 1,
            height: 4,
            width: 4,
        };
        let device = Device::flex().autodiff();
        let model = "mlp:8"
            .parse::<crate::model::ModelSpec>()
            .unwrap()
            .init(shape, 2, crate::model::LayerDefaults::default(), &device)
            .unwrap();
        let frozen = model.no_grad().map(&mut MarkDistributed);
        // Two linear layers, each a weight and a bias.
        assert_eq!(distributed_of(&frozen), (0, 4));
    }
}
