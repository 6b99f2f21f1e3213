//! One training step, the same for a run and for `kiln bench`: the optimizer the config names,
//! the loss, and the CPU threads the step runs on.

use web_time::Instant;

use burn::lr_scheduler::module_lr_scheduler::{ModuleLearningRate, ModuleLrScheduler};
use burn::module::ParamGroup;
use burn::nn::loss::{CrossEntropyLoss, CrossEntropyLossConfig};
use burn::optim::decay::WeightDecayConfig;
use burn::optim::momentum::MomentumConfig;
use burn::optim::{AdamConfig, AdamWConfig, ModuleOptimizer, SgdConfig};
use burn::tensor::activation::log_sigmoid;
use burn::tensor::{Device, Int, Tensor};

use super::decay::shrink_weights;
use super::parallel::{Shard, ShardOutput, StepGradients};
use super::precision::StepPrecision;
use super::store::RunStore;
use super::targets::Targets;
use super::threads::CpuThreads;
use super::{RunCounters, TrainError};
use crate::config::{ClassWeights, Experiment, LossInput, OptimizerSpec, WeightDecayMode};
use crate::data::ImageDataset;
use crate::model::Classifier;

/// The optimizer `spec` and `mode` name. Decoupled decay is Burn's AdamW for Adam and, for SGD
/// without momentum, the same update as L2; SGD with momentum leaves it to [`sgd_shrink`].
pub(super) fn build_optimizer(spec: &OptimizerSpec, mode: WeightDecayMode) -> ModuleOptimizer {
    if let (
        WeightDecayMode::Decoupled,
        OptimizerSpec::Adam {
            beta_1,
            beta_2,
            epsilon,
            weight_decay,
        },
    ) = (mode, spec)
    {
        let adamw = OptimizerSpec::AdamW {
            beta_1: *beta_1,
            beta_2: *beta_2,
            epsilon: *epsilon,
            weight_decay: *weight_decay,
        };
        return build_optimizer(&adamw, WeightDecayMode::L2);
    }
    match *spec {
        OptimizerSpec::Sgd {
            momentum,
            nesterov,
            weight_decay,
        } => {
            let mut config = SgdConfig::new();
            if momentum > 0.0 {
                // PyTorch semantics: no dampening, so momentum 0.9 means what people expect.
                config = config.with_momentum(Some(
                    MomentumConfig::new()
                        .with_momentum(momentum)
                        .with_dampening(0.0)
                        .with_nesterov(nesterov),
                ));
            }
            if weight_decay > 0.0 && sgd_shrink(spec, mode).is_none() {
                config =
                    config.with_weight_decay(Some(WeightDecayConfig::new(weight_decay as f32)));
            }
            config.init()
        }
        OptimizerSpec::Adam {
            beta_1,
            beta_2,
            epsilon,
            weight_decay,
        } => {
            let mut config = AdamConfig::new()
                .with_beta_1(beta_1 as f32)
                .with_beta_2(beta_2 as f32)
                .with_epsilon(epsilon as f32);
            if weight_decay > 0.0 {
                config =
                    config.with_weight_decay(Some(WeightDecayConfig::new(weight_decay as f32)));
            }
            config.init()
        }
        OptimizerSpec::AdamW {
            beta_1,
            beta_2,
            epsilon,
            weight_decay,
        } => AdamWConfig::new()
            .with_beta_1(beta_1 as f32)
            .with_beta_2(beta_2 as f32)
            .with_epsilon(epsilon as f32)
            .with_weight_decay(weight_decay as f32)
            .init(),
    }
}

/// The decay SGD's weights shrink by apart from its step: decoupled decay with momentum (without
/// momentum it is the same update as L2, which the optimizer then applies).
pub(super) fn sgd_shrink(spec: &OptimizerSpec, mode: WeightDecayMode) -> Option<f64> {
    match *spec {
        OptimizerSpec::Sgd {
            momentum,
            weight_decay,
            ..
        } if mode == WeightDecayMode::Decoupled && momentum > 0.0 && weight_decay > 0.0 => {
            Some(weight_decay)
        }
        _ => None,
    }
}

/// How a run and `kiln bench` train: the optimizer, the loss and the CPU threads of the steps.
pub(super) struct Stepper {
    pub(super) optimizer: ModuleOptimizer,
    loss_fn: CrossEntropyLoss,
    loss_input: LossInput,
    pub(super) threads: CpuThreads,
    /// A pretrained network's head and the share of the rate the rest learns at.
    head_rate: Option<(ParamGroup, f64)>,
    /// SGD's decoupled weight decay, applied before each step.
    shrink: Option<f64>,
}

/// The learning rate of every parameter in a step: `lr` throughout, or, for a pretrained
/// network, `lr` for its head and `lr × scale` for the backbone.
fn rates(head_rate: Option<&(ParamGroup, f64)>, lr: f64) -> ModuleLearningRate {
    match head_rate {
        None => lr.into(),
        Some((head, scale)) => ModuleLrScheduler::new(lr * scale)
            .with_group(head.clone(), lr)
            .step(),
    }
}

/// What one training step hands back.
pub(super) struct Stepped {
    /// The model after the optimizer step.
    pub(super) model: Classifier,
    /// For f16 steps: 1 on the device when the gradients overflowed and the step was skipped.
    pub(super) overflowed: Option<Tensor<1, Int>>,
    /// When the forward pass (and the metric sums) were recorded.
    pub(super) forward_done: Instant,
    /// When the gradients were.
    pub(super) backward_done: Instant,
}

impl Stepper {
    /// A fresh model on the autodiff device, and how to train it.
    pub(super) fn new(
        experiment: &Experiment,
        data: &ImageDataset,
        device: &Device,
    ) -> Result<(Classifier, Self), TrainError> {
        let autodiff = device.clone().autodiff();
        let classes = data.num_classes();
        let model = experiment
            .model
            .init(data.shape, classes, experiment.layers(), &autodiff)?;
        Ok((
            model,
            Self {
                optimizer: build_optimizer(&experiment.optimizer, experiment.weight_decay_mode),
                loss_fn: CrossEntropyLossConfig::new()
                    .with_weights(class_weights(experiment.class_weights, data))
                    .init(&autodiff),
                loss_input: experiment.loss,
                threads: CpuThreads::new(is_cpu(device)),
                head_rate: None,
                shrink: sgd_shrink(&experiment.optimizer, experiment.weight_decay_mode),
            },
        ))
    }

    /// Trains the backbone of a pretrained `model` at `scale` times the rate its head learns at.
    pub(super) fn scale_backbone_rate(&mut self, model: &Classifier, scale: f64) {
        self.head_rate = model
            .head()
            .map(|head| (ParamGroup::ids_from_module(head), scale));
    }

    /// Lets `store` load a resumed run's checkpoint into `model` and the optimizer; hands back
    /// the loop's counters at that checkpoint, none for a run that starts anew.
    pub(super) fn restore(
        self,
        model: Classifier,
        store: &mut dyn RunStore,
    ) -> Result<(Classifier, Self, Option<RunCounters>), TrainError> {
        let Self {
            optimizer,
            loss_fn,
            loss_input,
            threads,
            head_rate,
            shrink,
        } = self;
        let restored = store.restore(model, optimizer).map_err(TrainError::Store)?;
        let stepper = Self {
            optimizer: restored.optimizer,
            loss_fn,
            loss_input,
            threads,
            head_rate,
            shrink,
        };
        Ok((restored.model, stepper, restored.counters))
    }

    /// One optimizer step of `model` on a batch, on the chosen threads.
    ///
    /// `keep` takes the step's detached logits, mean loss and labels before the backward pass:
    /// a run adds them to its device sums, the naive bench loop reads them back. `settle` runs
    /// after each phase; it waits for the device only in profiling mode.
    pub(super) fn step(
        &mut self,
        model: Classifier,
        precision: &StepPrecision,
        (images, labels): (Tensor<4>, Targets),
        lr: f64,
        keep: impl FnOnce(Tensor<2>, Tensor<1>, Targets) -> Result<(), TrainError> + Send,
        settle: &(dyn Fn() -> Result<(), TrainError> + Sync),
    ) -> Result<Stepped, TrainError> {
        let Self {
            optimizer,
            loss_fn,
            loss_input,
            threads,
            head_rate,
            shrink,
        } = self;
        let loss_input = *loss_input;
        let shrink = shrink.map(|decay| (head_rate.as_ref(), lr, decay));
        let lr = rates(head_rate.as_ref(), lr);
        threads.run(move || {
            let logits = precision.forward(&model, images.autodiff());
            let loss = batch_loss(
                loss_fn,
                loss_input,
                logits.clone(),
                labels.clone().autodiff(),
            );
            keep(
                logits.detach().without_autodiff(),
                loss.clone().detach().without_autodiff(),
                labels,
            )?;
            settle()?;
            let forward_done = Instant::now();
            let (grads, overflowed) = precision.gradients(loss, &model);
            settle()?;
            let backward_done = Instant::now();
            let model = match shrink {
                Some((head_rate, rate, decay)) => shrink_weights(model, rate, decay, head_rate),
                None => model,
            };
            let model = optimizer.step(lr, model, grads);
            settle()?;
            Ok(Stepped {
                model,
                overflowed,
                forward_done,
                backward_done,
            })
        })
    }
}

impl Stepper {
    /// One optimizer step of `model` on a batch split into `shards` across devices (data
    /// parallel), its gradients summed by the collective all-reduce when `collective`; hands
    /// back the stepped model (its parameters spread over the devices, each where its gradients
    /// were summed, or all on the first device after an all-reduce) and each shard's detached
    /// logits, mean loss and labels.
    pub(super) fn step_parallel(
        &mut self,
        model: Classifier,
        shards: Vec<Shard>,
        lr: f64,
        collective: bool,
    ) -> (Classifier, Vec<ShardOutput>) {
        let (grads, outputs) =
            super::parallel::gradients(&model, &self.loss_fn, self.loss_input, shards, collective);
        let model = match self.shrink {
            Some(decay) => shrink_weights(model, lr, decay, self.head_rate.as_ref()),
            None => model,
        };
        let lr = rates(self.head_rate.as_ref(), lr);
        let model = match grads {
            StepGradients::PerDevice(grads) => self.optimizer.step_multi(lr, model, grads),
            StepGradients::Summed(grads) => self.optimizer.step(lr, model, grads),
        };
        (model, outputs)
    }
}

/// Whether `device` is the CPU backend, which computes each op as it is called.
pub(super) fn is_cpu(device: &Device) -> bool {
    matches!(device.as_dispatch(), burn::backend::DispatchDevice::Flex(_))
}

/// Keras's clipping bound for probabilities (`backend.epsilon()`), where it clips.
const PROBABILITY_EPSILON: f32 = 1e-7;

/// Per-class loss weights, `n / (classes × n_c)` over the training split, when asked for; a
/// class without training images (it then never weighs in) gets 1. In a multi-label set, each
/// label's positives weigh `negatives / positives` (PyTorch's `pos_weight`), 1 for a label no
/// training image has.
pub(super) fn class_weights(choice: ClassWeights, data: &ImageDataset) -> Option<Vec<f32>> {
    if choice == ClassWeights::None {
        return None;
    }
    let total = data.train.len() as f64;
    if data.is_multi_label() {
        let counts = data.train.label_counts(data.num_classes());
        return Some(
            counts
                .iter()
                .map(|&n| match n {
                    0 => 1.0,
                    n => ((total - n as f64) / n as f64) as f32,
                })
                .collect(),
        );
    }
    let counts = data.class_counts();
    let classes = counts.len() as f64;
    Some(
        counts
            .iter()
            .map(|&n| {
                if n == 0 {
                    1.0
                } else {
                    (total / (classes * n as f64)) as f32
                }
            })
            .collect(),
    )
}

/// Mean loss of a batch. Classes: cross-entropy taken on the logits or on clipped softmax
/// probabilities, weighted per class when the loss function carries weights (as PyTorch:
/// divided by the batch's summed weights). Label sets: binary cross-entropy per label on the
/// sigmoid (PyTorch's `BCEWithLogitsLoss`, its `pos_weight` the loss function's weights), or on
/// clipped sigmoid probabilities (Keras's `binary_crossentropy`), the mean over every
/// (image, label).
pub(super) fn batch_loss(
    loss_fn: &CrossEntropyLoss,
    input: LossInput,
    logits: Tensor<2>,
    targets: Targets,
) -> Tensor<1> {
    let labels = match targets {
        Targets::Classes(labels) => labels,
        Targets::Sets(sets) => return set_loss(loss_fn.weights.as_ref(), input, logits, sets),
    };
    match input {
        LossInput::Logits => loss_fn.forward(logits, labels),
        LossInput::Probabilities => {
            let batch = labels.dims()[0];
            let log_p = burn::tensor::activation::softmax(logits, 1)
                .clamp(PROBABILITY_EPSILON, 1.0 - PROBABILITY_EPSILON)
                .log()
                .gather(1, labels.clone().reshape([batch, 1]))
                .reshape([batch]);
            match &loss_fn.weights {
                Some(weights) => {
                    let weights = weights.clone().gather(0, labels);
                    (log_p * weights.clone()).sum().div(weights.sum()).neg()
                }
                None => log_p.mean().neg(),
            }
        }
    }
}

/// Binary cross-entropy of `logits` against the 0/1 `sets`, each positive weighed by
/// `pos_weight` of its label where given: −[w·y·log σ(x) + (1 − y)·log(1 − σ(x))], meaned.
fn set_loss(
    pos_weight: Option<&Tensor<1>>,
    input: LossInput,
    logits: Tensor<2>,
    sets: Tensor<2>,
) -> Tensor<1> {
    let [rows, labels] = logits.dims();
    let (log_p, log_not_p) = match input {
        // log(1 − σ(x)) = log σ(−x), exact for any logit.
        LossInput::Logits => (log_sigmoid(logits.clone()), log_sigmoid(logits.neg())),
        LossInput::Probabilities => {
            let p = burn::tensor::activation::sigmoid(logits)
                .clamp(PROBABILITY_EPSILON, 1.0 - PROBABILITY_EPSILON);
            (p.clone().log(), p.neg().add_scalar(1.0).log())
        }
    };
    let positive = match pos_weight {
        Some(weights) => sets.clone() * weights.clone().reshape([1, labels]).expand([rows, labels]),
        None => sets.clone(),
    };
    let negative = sets.neg().add_scalar(1.0);
    (positive * log_p + negative * log_not_p).mean().neg()
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;

    fn loss(weights: Option<Vec<f32>>, input: LossInput, first_logit: f32) -> f32 {
        let device = Device::flex();
        let logits = Tensor::<2>::from_data(
            TensorData::new(vec![first_logit, -1.0, 0.5, 3.0], [2, 2]),
            &device,
        );
        let sets = Tensor::<2>::from_data(
            TensorData::new(vec![1.0_f32, 0.0, 0.0, 1.0], [2, 2]),
            &device,
        );
        let loss_fn = CrossEntropyLossConfig::new()
            .with_weights(weights)
            .init(&device);
        batch_loss(&loss_fn, input, logits, Targets::Sets(sets))
            .into_data()
            .iter::<f32>()
            .next()
            .unwrap_or(f32::NAN)
    }

    /// The expected figures are `torch.nn.functional.binary_cross_entropy_with_logits` on the
    /// same logits and targets (with `pos_weight=[2, 0.5]` for the weighted one), and Keras's
    /// clipped `binary_crossentropy` on their sigmoid.
    #[test]
    fn a_label_sets_loss_is_binary_cross_entropy_per_label_as_pytorch_and_keras_take_it() {
        let close = |a: f32, b: f64| (f64::from(a) - b).abs() < 1e-6;
        let plain = loss(None, LossInput::Logits, 2.0);
        assert!(close(plain, 0.365_713_508_6), "{plain}");
        let weighted = loss(Some(vec![2.0, 0.5]), LossInput::Logits, 2.0);
        assert!(close(weighted, 0.391_372_092_4), "{weighted}");
        let clipped = loss(None, LossInput::Probabilities, 2.0);
        assert!(close(clipped, 0.365_713_508_6), "{clipped}");
        // A logit of 20 is a probability that rounds to 1 in f32: the logit form stays exact.
        let far = loss(None, LossInput::Logits, 20.0);
        assert!(close(far, 0.333_981_506_3), "{far}");
    }
}
