//! Every read from the device goes through this module: the metric sums of a readback, the
//! evaluation sums of an epoch and the predictions at the end through [`read_back`] (one
//! transaction, so one host sync), and the weights and optimizer state a run keeps through
//! [`weights_bytes`] and [`checkpoint_files`].
//!
//! A browser cannot block on the GPU (a synchronous read panics there), so the loop's reads are
//! `async`: the loop is one `async fn` on every target, which a native caller runs to the end
//! with [`crate::executor::block_on`] and a web page spawns on its event loop. Burn's own
//! synchronous reads are the same futures under its `block_on`, so native speed is unchanged.
//! Reads outside the loop (a preview, *Try*, a weights check) still use [`read_back_now`].

use std::ops::Range;

use burn::module::Module;
#[cfg(any(target_arch = "wasm32", test))]
use burn::module::{ModuleMapper, ModuleVisitor, Param};
use burn::optim::ModuleOptimizer;
use burn::tensor::{Bytes, Device, Int, Tensor, TensorData, Transaction};
use kiln_shaders::BatchOptions;

use super::TrainError;
use super::pipeline::BatchSource;
use super::step::batch_loss;
use super::targets::Targets;
use crate::config::LossInput;
use crate::model::Classifier;

/// Reads every tensor registered in `transaction` back to the host in one sync, without
/// blocking the thread while the device works.
pub(crate) async fn read_back(transaction: Transaction) -> Result<Vec<TensorData>, TrainError> {
    transaction
        .execute_async()
        .await
        .map_err(|e| TrainError::Readback(format!("{e:?}")))
}

/// [`read_back`], blocking this thread until the data is back: for reads outside the training
/// loop, which do not run in a browser yet.
pub(crate) fn read_back_now(transaction: Transaction) -> Result<Vec<TensorData>, TrainError> {
    transaction
        .try_execute()
        .map_err(|e| TrainError::Readback(format!("{e:?}")))
}

/// `model`'s weights read back from the device, packed as a burnpack file's bytes.
pub(crate) fn weights_bytes(model: &Classifier) -> Result<Bytes, String> {
    model
        .clone()
        .into_record()
        .into_bytes()
        .map_err(|e| format!("could not read the weights back from the device: {e:?}"))
}

#[cfg(any(target_arch = "wasm32", test))]
/// `model` on the CPU (Flex), its weights read back without blocking: how a page keeps a model
/// it trained on WebGPU, where a blocking read panics; the copy's own reads are then immediate.
/// Batch norm's running statistics are state `model` shares with the copy, so they move too:
/// hand over a model that is done with.
pub(crate) async fn on_cpu_async(model: Classifier) -> Result<Classifier, String> {
    let mut reads = ParamReads::default();
    model.visit(&mut reads);
    let mut values = std::collections::VecDeque::with_capacity(reads.pending.len());
    for read in reads.pending {
        values.push_back(
            read.await
                .map_err(|e| format!("could not read the weights back from the device: {e}"))?,
        );
    }
    Ok(model.map(&mut PlaceOnCpu {
        values,
        device: Device::flex(),
    }))
}

#[cfg(any(target_arch = "wasm32", test))]
/// Each float parameter's read, started in visiting order.
#[derive(Default)]
struct ParamReads {
    pending: Vec<PendingRead>,
}

#[cfg(any(target_arch = "wasm32", test))]
type PendingRead = std::pin::Pin<Box<dyn Future<Output = Result<TensorData, String>>>>;

#[cfg(any(target_arch = "wasm32", test))]
impl ModuleVisitor for ParamReads {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let read = param.val().into_data_async();
        self.pending.push(Box::pin(
            async move { read.await.map_err(|e| format!("{e:?}")) },
        ));
    }
}

#[cfg(any(target_arch = "wasm32", test))]
/// Puts the values [`ParamReads`] read back in place of the parameters, in the same order.
struct PlaceOnCpu {
    values: std::collections::VecDeque<TensorData>,
    device: Device,
}

#[cfg(any(target_arch = "wasm32", test))]
impl ModuleMapper for PlaceOnCpu {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        match self.values.pop_front() {
            Some(value) => param.map(|_| Tensor::from_data(value, &self.device)),
            None => param,
        }
    }
}

/// Every tensor of `model` read back as `(path, dtype, shape, little-endian bytes)`, paths in
/// Kiln's field names (enum variants left out) after `adapter` (PyTorch's layouts, say).
pub(crate) fn module_tensors(
    model: &Classifier,
    adapter: Box<dyn burn_store::ModuleAdapter>,
) -> Result<TensorBytes, String> {
    use burn_store::ModuleSnapshot;
    model
        .for_eval()
        .collect(None, Some(adapter), true)
        .into_iter()
        .map(|tensor| {
            let bytes = tensor.to_bytes().map_err(|e| {
                format!(
                    "could not read `{}` back from the device: {e:?}",
                    tensor.name
                )
            })?;
            Ok((
                tensor.name,
                tensor.dtype,
                tensor.shape.to_vec(),
                bytes.to_vec(),
            ))
        })
        .collect()
}

/// Named tensors as [`module_tensors`] reads them back.
pub(crate) type TensorBytes = Vec<(String, burn::tensor::DType, Vec<usize>, Vec<u8>)>;

/// The two files of a checkpoint, read back from the device.
#[derive(Debug, Clone)]
pub struct CheckpointFiles {
    /// The weights (`model.bpk`), batch norm's running statistics included.
    pub weights: Bytes,
    /// The optimizer's state (`optimizer.bpk`): moments, step counts.
    pub optimizer: Bytes,
}

/// `model`'s weights and `optimizer`'s state read back without blocking the thread, each
/// packed as a burnpack file's bytes: a page keeps checkpoints too.
pub(crate) async fn checkpoint_files(
    model: &Classifier,
    optimizer: &ModuleOptimizer,
) -> Result<CheckpointFiles, String> {
    // `valid` gives batch norm's running statistics a state of the copy's own, so moving the
    // copy to the CPU leaves the training model's where they are.
    #[cfg(target_arch = "wasm32")]
    let weights = weights_bytes(&on_cpu_async(model.valid()).await?)?;
    #[cfg(not(target_arch = "wasm32"))]
    let weights = weights_bytes(&model.valid())?;
    let optimizer = match optimizer.to_record_async().await {
        Ok(record) => record.into_bytes(),
        Err(e) => Err(e),
    }
    .map_err(|e| format!("could not read the optimizer state back from the device: {e}"))?;
    Ok(CheckpointFiles { weights, optimizer })
}

/// The first value of each tensor, read back together; an error when any came back empty.
fn first_values(tensors: Vec<TensorData>, count: usize) -> Result<Vec<f64>, TrainError> {
    let values: Vec<f64> = tensors
        .iter()
        .filter_map(|d| d.iter::<f64>().next())
        .collect();
    if values.len() == count {
        Ok(values)
    } else {
        Err(TrainError::Readback(
            "the readback returned no value".to_owned(),
        ))
    }
}

/// The one value of `tensor`, read back to the host: what `.item()` does in a PyTorch loop (for
/// `kiln bench`'s naive loop, which is native only).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) async fn read_scalar(tensor: Tensor<1>) -> Result<f64, TrainError> {
    let data = read_back(Transaction::default().register(tensor)).await?;
    Ok(first_values(data, 1)?[0])
}

/// Running sums of one epoch, kept on the device so reading them is the only sync.
pub(super) struct DeviceTotals {
    loss_sum: Tensor<1>,
    /// Images right; a multi-label image counts its share of labels decided right.
    correct: Tensor<1>,
    /// f16 steps whose gradients overflowed.
    overflowed: Tensor<1, Int>,
}

/// What one readback of [`DeviceTotals`] holds.
#[derive(Default)]
pub(super) struct Sums {
    /// Loss summed over every image (the batch means times the batch sizes).
    pub(super) loss_sum: f64,
    /// Images classified right (in a multi-label set, labels decided right over labels per
    /// image).
    pub(super) correct: f64,
    /// f16 steps skipped because their gradients overflowed.
    pub(super) overflowed: u64,
}

impl DeviceTotals {
    /// Sums of nothing yet, on `device`.
    pub(super) fn zeros(device: &Device) -> Self {
        Self {
            loss_sum: Tensor::zeros([1], device),
            correct: Tensor::zeros([1], device),
            overflowed: Tensor::zeros([1], device),
        }
    }

    /// Counts an f16 step's overflow flag, when the step has one.
    pub(super) fn add_overflow(&mut self, overflowed: Option<Tensor<1, Int>>) {
        if let Some(overflowed) = overflowed {
            self.overflowed = self.overflowed.clone() + overflowed;
        }
    }

    /// Adds a batch's loss and correct count, on the device.
    pub(super) fn add(&mut self, logits: Tensor<2>, targets: Targets, mean_loss: Tensor<1>) {
        let batch = targets.rows();
        self.correct = self.correct.clone() + targets.right(logits);
        self.loss_sum = self.loss_sum.clone() + mean_loss.mul_scalar(batch as f64);
    }

    /// One transaction for every sum: a single sync.
    pub(super) async fn read(&self) -> Result<Sums, TrainError> {
        let data = read_back(
            Transaction::default()
                .register(self.loss_sum.clone())
                .register(self.correct.clone())
                .register(self.overflowed.clone()),
        )
        .await?;
        let values = first_values(data, 3)?;
        Ok(Sums {
            loss_sum: values[0],
            correct: values[1],
            overflowed: values[2] as u64,
        })
    }

    /// Mean loss and accuracy over `samples` images, read back in one sync.
    pub(super) async fn means(&self, samples: usize) -> Result<(f64, f64), TrainError> {
        let Sums {
            loss_sum, correct, ..
        } = self.read().await?;
        let n = samples.max(1) as f64;
        Ok((loss_sum / n, correct / n))
    }
}

/// Batches a page evaluates between its turns: the CPU backend computes as it is asked, so a
/// whole split at once would hold the page's one thread (and freeze its window) for seconds.
const PAGE_EVAL_BATCHES: usize = 4;

/// The spans of a split, in images, evaluated between two of the page's turns: the whole split
/// natively, a few batches at a time in a page.
pub(super) fn eval_spans(len: usize, batch_size: usize) -> impl Iterator<Item = Range<usize>> {
    let span = if cfg!(target_arch = "wasm32") {
        batch_size.saturating_mul(PAGE_EVAL_BATCHES)
    } else {
        len
    }
    .max(1);
    (0..len)
        .step_by(span)
        .map(move |start| start..(start + span).min(len))
}

/// A split as evaluation reads it: unaugmented batches of one size.
pub(super) struct EvalSplit<'a> {
    /// The split evaluated.
    pub(super) split: &'a BatchSource,
    /// How its images become a batch (unaugmented).
    pub(super) options: &'a BatchOptions,
    /// Images per batch.
    pub(super) batch_size: usize,
}

impl EvalSplit<'_> {
    /// Adds the loss and correct sums of `model` over the images `span`, batch by batch, to
    /// `totals` on the device: the work runs here (on the CPU's threads where the caller runs
    /// it), the one read in [`DeviceTotals::means`].
    pub(super) fn add_totals(
        &self,
        totals: &mut DeviceTotals,
        model: &Classifier,
        span: Range<usize>,
        loss_input: LossInput,
        device: &Device,
    ) -> Result<(), TrainError> {
        let model = model.valid();
        let loss_fn = burn::nn::loss::CrossEntropyLossConfig::new().init(device);
        for (start, end) in self.batches(span) {
            let (images, targets) = self.split.range(start, end, self.options)?;
            let logits = model.forward(images);
            let loss = batch_loss(&loss_fn, loss_input, logits.clone(), targets.clone());
            totals.add(logits, targets, loss);
        }
        Ok(())
    }

    /// Adds every image's predicted class, its probability and the true class's rank over the
    /// images `span` to `predicted`, still on the device; the one read in
    /// [`PredictionTensors::read`].
    pub(super) fn add_predictions(
        &self,
        predicted: &mut PredictionTensors,
        model: &Classifier,
        span: Range<usize>,
    ) -> Result<(), TrainError> {
        let model = model.valid();
        for (start, end) in self.batches(span) {
            let rows = end - start;
            let (images, targets) = self.split.range(start, end, self.options)?;
            let logits = model.forward(images);
            let labels = match targets {
                Targets::Classes(labels) => labels,
                Targets::Sets(_) => {
                    predicted
                        .label_probabilities
                        .push(burn::tensor::activation::sigmoid(logits));
                    continue;
                }
            };
            let probabilities = burn::tensor::activation::softmax(logits, 1);
            let classes = probabilities.dims()[1];
            let of_label = probabilities.clone().gather(1, labels.reshape([rows, 1]));
            let above = probabilities
                .clone()
                .greater(of_label.expand([rows, classes]));
            predicted
                .label_rank
                .push(above.int().sum_dim(1).reshape([rows]));
            predicted
                .confidence
                .push(probabilities.clone().max_dim(1).reshape([rows]));
            predicted
                .classes
                .push(probabilities.argmax(1).reshape([rows]));
        }
        Ok(())
    }

    /// `(start, end)` of each batch of `span`.
    fn batches(&self, span: Range<usize>) -> impl Iterator<Item = (usize, usize)> {
        let batch = self.batch_size.max(1);
        let end = span.end.min(self.split.len());
        (span.start..end)
            .step_by(batch)
            .map(move |start| (start, (start + batch).min(end)))
    }
}

/// What a model said about every image of a split.
#[derive(Default)]
pub(super) struct Predicted {
    /// The class it gave each image.
    pub(super) classes: Vec<u8>,
    /// The softmax probability of that class.
    pub(super) confidence: Vec<f32>,
    /// How many classes it scored above the true one (0: right, below 5: in its top 5).
    pub(super) label_rank: Vec<u8>,
    /// In a multi-label set (where the fields above stay empty), image by image, the sigmoid
    /// probability of each label.
    pub(super) label_probabilities: Vec<f32>,
}

/// A split's predictions, batch by batch, still on the device.
#[derive(Default)]
pub(super) struct PredictionTensors {
    classes: Vec<Tensor<1, Int>>,
    confidence: Vec<Tensor<1>>,
    label_rank: Vec<Tensor<1, Int>>,
    /// A multi-label set's sigmoid probabilities, `[rows, labels]` per batch.
    label_probabilities: Vec<Tensor<2>>,
}

impl PredictionTensors {
    /// The predictions, read back in one transaction.
    pub(super) async fn read(self) -> Result<Predicted, TrainError> {
        if !self.label_probabilities.is_empty() {
            let data = read_back(
                Transaction::default().register(Tensor::cat(self.label_probabilities, 0)),
            )
            .await?;
            let probabilities = data.first().ok_or_else(|| {
                TrainError::Readback("the probability readback returned no value".to_owned())
            })?;
            return Ok(Predicted {
                label_probabilities: probabilities.iter::<f32>().collect(),
                ..Predicted::default()
            });
        }
        if self.classes.is_empty() {
            return Ok(Predicted::default());
        }
        let data = read_back(
            Transaction::default()
                .register(Tensor::cat(self.classes, 0))
                .register(Tensor::cat(self.confidence, 0))
                .register(Tensor::cat(self.label_rank, 0)),
        )
        .await?;
        let as_bytes = |data: &burn::tensor::TensorData| -> Vec<u8> {
            data.iter::<i64>()
                .map(|p| u8::try_from(p).unwrap_or(u8::MAX))
                .collect()
        };
        match (data.first(), data.get(1), data.get(2)) {
            (Some(predicted), Some(confidence), Some(ranks)) => Ok(Predicted {
                classes: as_bytes(predicted),
                confidence: confidence.iter::<f32>().collect(),
                label_rank: as_bytes(ranks),
                label_probabilities: Vec::new(),
            }),
            _ => Err(TrainError::Readback(
                "the prediction readback returned no value".to_owned(),
            )),
        }
    }
}
