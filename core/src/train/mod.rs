//! The training loop, written on Burn's modules and optimizers.
//!
//! How it stays fast (DESIGN.md): the data set is on the device and batches are gathered there by
//! a per-epoch shuffled index uploaded once per epoch; the loss sum and the correct count
//! accumulate on the device and are read back together a few times per second, which is the only
//! host sync inside an epoch; evaluation follows the same rules; every metric is over samples.

pub mod bench;
mod control;
mod events;
pub mod precision;
mod threads;

pub use control::{Control, ControlState};
pub use events::{
    EpochSummary, GalleryImage, Progress, RunOutcome, RunSummary, StartInfo, StepProfile,
    TestPredictions, TrainEvent, TrainWarning, planar_to_rgba,
};

use std::time::{Duration, Instant};

use burn::module::Module;
use burn::nn::loss::{CrossEntropyLoss, CrossEntropyLossConfig};
use burn::optim::decay::WeightDecayConfig;
use burn::optim::momentum::MomentumConfig;
use burn::optim::{AdamConfig, AdamWConfig, ModuleOptimizer, SgdConfig};
use burn::tensor::{Device, Int, Tensor, TensorData, Transaction};
use kiln_shaders::{BatchOptions, ByteSplit, PixelTransform};

use crate::checkpoint::{self, CheckpointState, Slot};
use crate::config::{Experiment, InputScaling, LossInput, OptimizerSpec};
use crate::data::ImageDataset;
use crate::model::Classifier;
use precision::StepPrecision;
pub use threads::CpuThreadChoice;
use threads::CpuThreads;

/// Why training could not run or go on.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// The model could not be built for this data.
    #[error("{0}")]
    Model(#[from] crate::model::ModelError),
    /// The checkpoint to resume from could not be used.
    #[error(transparent)]
    Checkpoint(#[from] checkpoint::CheckpointError),
    /// The device had no memory left for the model, its activations and the data set.
    #[error(
        "the device ran out of memory ({0}). Try a smaller batch, a smaller input size or model, or the CPU; the run folder keeps everything up to this point."
    )]
    OutOfMemory(String),
    /// The GPU stopped answering (driver reset, unplugged, or the OS took it back).
    #[error(
        "the GPU was lost during training ({0}). The run folder keeps everything up to this point; `kiln train --resume` goes on from the last finished epoch."
    )]
    DeviceLost(String),
    /// Something inside the engine failed that Kiln has no better sentence for.
    #[error(
        "training stopped on an internal error ({0}). The run folder keeps everything up to this point."
    )]
    Crashed(String),
    /// The input pipeline refused the data or its options.
    #[error("the input pipeline cannot build batches: {0}")]
    Pipeline(#[from] kiln_shaders::BatchError),
    /// Reading metrics back from the device failed (device lost or out of memory).
    #[error(
        "the device stopped answering while reading metrics back ({0}); it may be out of memory or lost. Try a smaller batch or model."
    )]
    Readback(String),
}

impl TrainError {
    /// The error a panic inside Burn or the GPU runtime stands for, told as what to do about it.
    pub fn from_panic(payload: &(dyn std::any::Any + Send)) -> Self {
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("no message");
        // The runtime's own text carries a backtrace; the first line says what happened.
        let first_line = message.lines().next().unwrap_or(message).trim().to_owned();
        let lower = message.to_lowercase();
        if [
            "out of memory",
            "out-of-memory",
            "outofmemory",
            "out of device memory",
            "buffertoobig",
        ]
        .iter()
        .any(|needle| lower.contains(needle))
        {
            Self::OutOfMemory(first_line)
        } else if lower.contains("device lost") || lower.contains("devicelost") {
            Self::DeviceLost(first_line)
        } else {
            Self::Crashed(first_line)
        }
    }
}

/// Where to train: the Burn device and how to name it to a person.
#[derive(Debug, Clone)]
pub struct TrainDevice {
    /// The device tensors are created on (without autodiff; the loop adds it).
    pub device: Device,
    /// `cpu` or `gpu:N`.
    pub id: String,
    /// Adapter or CPU name.
    pub name: String,
}

/// What the caller did before the loop and where the loop may keep what it makes.
#[derive(Debug, Clone, Default)]
pub struct Preparation {
    /// Seconds spent reading or generating the data set.
    pub load_secs: f64,
    /// The run folder: each epoch's checkpoints go there, and a completed run's model
    /// (`model.bpk`, `model.json`).
    pub run_folder: Option<std::path::PathBuf>,
    /// A checkpoint to go on from instead of starting at epoch 0.
    pub resume: Option<ResumePoint>,
}

/// Where a resumed run picks up: a checkpoint folder and the loop state saved with it.
#[derive(Debug, Clone)]
pub struct ResumePoint {
    /// The checkpoint slot folder holding `model.bpk` and `optimizer.bpk`.
    pub folder: std::path::PathBuf,
    /// The loop's figures at the end of that epoch.
    pub state: CheckpointState,
}

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

fn build_optimizer(spec: &OptimizerSpec) -> ModuleOptimizer {
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
            if weight_decay > 0.0 {
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

/// A small, fast, seedable generator for the per-epoch shuffle (splitmix64).
struct ShuffleRng(u64);

impl ShuffleRng {
    fn next(&mut self) -> u64 {
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
fn epoch_seed(seed: u64, epoch: usize) -> u64 {
    ShuffleRng(seed ^ (epoch as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)).next()
}

/// The median of each phase over the profiled steps; none when nothing was profiled.
fn step_profile(samples: &[[f64; 5]]) -> Option<StepProfile> {
    if samples.is_empty() {
        return None;
    }
    let median = |phase: usize| {
        let mut values: Vec<f64> = samples.iter().map(|s| s[phase]).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    Some(StepProfile {
        mode: format!(
            "profiling: {} steps after warm-up, device synced after every phase; medians in ms; these steps are left out of samples/s",
            samples.len()
        ),
        steps: samples.len(),
        data_ms: median(0),
        forward_ms: median(1),
        backward_ms: median(2),
        optimizer_ms: median(3),
        host_sync_ms: median(4),
    })
}

/// Watches the running training loss: warns once about a NaN or infinite loss and once about
/// divergence, and says when the run must stop.
struct LossWatch {
    /// The accuracy of uniform guessing, 1 / classes.
    chance: f64,
    stop_on_non_finite: bool,
    non_finite_warned: bool,
    diverging_warned: bool,
}

impl LossWatch {
    /// Looks at the running `train_loss` of `epoch`; true when the run must stop because of it.
    fn stops(
        &mut self,
        train_loss: f64,
        epoch: usize,
        on_event: &mut dyn FnMut(TrainEvent),
    ) -> bool {
        if !train_loss.is_finite() {
            if !self.non_finite_warned {
                self.non_finite_warned = true;
                on_event(TrainEvent::Warning(TrainWarning::NonFiniteLoss {
                    epoch,
                    stopped: self.stop_on_non_finite,
                }));
            }
            if self.stop_on_non_finite {
                return true;
            }
        }
        if !self.diverging_warned && is_diverging(train_loss, self.chance) {
            self.diverging_warned = true;
            on_event(TrainEvent::Warning(TrainWarning::Diverging {
                epoch,
                loss: train_loss,
            }));
        }
        false
    }
}

/// Uniform guessing costs ln(classes); a running loss four times that means the run blows up.
fn is_diverging(train_loss: f64, chance: f64) -> bool {
    train_loss > 4.0 * chance.recip().ln().max(0.1)
}

/// Both splits as bytes on the device, and how their batches are built.
struct InputPipeline {
    train: ByteSplit,
    test: ByteSplit,
    /// The input scaling and, for a resizing model, the resize, done in the same pass as the
    /// gather: what evaluation sees.
    plain: BatchOptions,
    /// `plain` plus the augmentation, for training batches only.
    augmented: BatchOptions,
}

impl InputPipeline {
    /// Uploads both splits and checks the batch options against the images once.
    fn upload(
        experiment: &Experiment,
        data: &ImageDataset,
        transform: &PixelTransform,
        device: &Device,
    ) -> Result<Self, TrainError> {
        let shape =
            kiln_shaders::ImageShape::new(data.shape.channels, data.shape.height, data.shape.width);
        let train = ByteSplit::upload(&data.train.images, &data.train.labels, shape, device)?;
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
            test,
            plain,
            augmented,
        })
    }
}

/// How a run and `kiln bench` train: the optimizer, the loss and the CPU threads of the steps.
struct Trainee {
    optimizer: ModuleOptimizer,
    loss_fn: CrossEntropyLoss,
    loss_input: LossInput,
    threads: CpuThreads,
}

/// What one training step hands back.
struct Stepped {
    /// The model after the optimizer step.
    model: Classifier,
    /// For f16 steps: 1 on the device when the gradients overflowed and the step was skipped.
    overflowed: Option<Tensor<1, Int>>,
    forward_done: Instant,
    backward_done: Instant,
}

impl Trainee {
    /// A fresh model on the autodiff device, and how to train it.
    fn new(
        experiment: &Experiment,
        data: &ImageDataset,
        device: &Device,
    ) -> Result<(Classifier, Self), TrainError> {
        let autodiff = device.clone().autodiff();
        let classes = data.num_classes();
        let model = experiment
            .model
            .init(data.shape, classes, experiment.init, &autodiff)?;
        Ok((
            model,
            Self {
                optimizer: build_optimizer(&experiment.optimizer),
                loss_fn: CrossEntropyLossConfig::new().init(&autodiff),
                loss_input: experiment.loss,
                threads: CpuThreads::new(is_cpu(device), experiment, data.shape, classes),
            },
        ))
    }

    /// One optimizer step of `model` on a batch, on the chosen threads.
    ///
    /// `keep` takes the step's detached logits, mean loss and labels before the backward pass:
    /// a run adds them to its device sums, the naive bench loop reads them back. `settle` runs
    /// after each phase; it waits for the device only in profiling mode.
    fn step(
        &mut self,
        model: Classifier,
        precision: &StepPrecision,
        (images, labels): (Tensor<4>, Tensor<1, Int>),
        lr: f64,
        keep: impl FnOnce(Tensor<2>, Tensor<1>, Tensor<1, Int>) -> Result<(), TrainError> + Send,
        settle: &(dyn Fn() -> Result<(), TrainError> + Sync),
    ) -> Result<Stepped, TrainError> {
        let Self {
            optimizer,
            loss_fn,
            loss_input,
            threads,
        } = self;
        let loss_input = *loss_input;
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

/// Whether `device` is the CPU backend, which computes each op as it is called.
fn is_cpu(device: &Device) -> bool {
    matches!(device.as_dispatch(), burn::backend::DispatchDevice::Flex(_))
}

/// Host-side timing of one readback window.
#[derive(Default)]
struct Window {
    started: Option<Instant>,
    steps: usize,
    samples: u64,
    data: Duration,
    compute: Duration,
}

/// Running sums of one epoch, kept on the device so reading them is the only sync.
struct DeviceTotals {
    loss_sum: Tensor<1>,
    correct: Tensor<1, Int>,
    /// f16 steps whose gradients overflowed.
    overflowed: Tensor<1, Int>,
}

/// What one readback of [`DeviceTotals`] holds.
struct Sums {
    loss_sum: f64,
    correct: f64,
    overflowed: u64,
}

impl DeviceTotals {
    fn zeros(device: &Device) -> Self {
        Self {
            loss_sum: Tensor::zeros([1], device),
            correct: Tensor::zeros([1], device),
            overflowed: Tensor::zeros([1], device),
        }
    }

    fn add_overflow(&mut self, overflowed: Option<Tensor<1, Int>>) {
        if let Some(overflowed) = overflowed {
            self.overflowed = self.overflowed.clone() + overflowed;
        }
    }

    fn add(&mut self, logits: Tensor<2>, labels: Tensor<1, Int>, mean_loss: Tensor<1>) {
        let batch = labels.dims()[0];
        let predicted = logits.argmax(1).reshape([batch]);
        let correct = predicted.equal(labels).int().sum();
        self.correct = self.correct.clone() + correct;
        self.loss_sum = self.loss_sum.clone() + mean_loss.mul_scalar(batch as f64);
    }

    /// One transaction for every sum: a single sync.
    fn read(&self) -> Result<Sums, TrainError> {
        let data = Transaction::default()
            .register(self.loss_sum.clone())
            .register(self.correct.clone())
            .register(self.overflowed.clone())
            .try_execute()
            .map_err(|e| TrainError::Readback(format!("{e:?}")))?;
        let first = |d: Option<&TensorData>| d.and_then(|d| d.iter::<f64>().next());
        match (first(data.first()), first(data.get(1)), first(data.get(2))) {
            (Some(loss_sum), Some(correct), Some(overflowed)) => Ok(Sums {
                loss_sum,
                correct,
                overflowed: overflowed as u64,
            }),
            _ => Err(TrainError::Readback(
                "the readback returned no value".to_owned(),
            )),
        }
    }
}

/// How many of the most confidently wrong test images a completed run hands out with pixels.
const GALLERY_SIZE: usize = 12;

/// Keras's clipping bound for probabilities (`backend.epsilon()`), where it clips.
const PROBABILITY_EPSILON: f32 = 1e-7;

/// Mean cross-entropy of a batch, taken on the logits or on clipped softmax probabilities.
fn batch_loss(
    loss_fn: &CrossEntropyLoss,
    input: LossInput,
    logits: Tensor<2>,
    labels: Tensor<1, Int>,
) -> Tensor<1> {
    match input {
        LossInput::Logits => loss_fn.forward(logits, labels),
        LossInput::Probabilities => {
            let batch = labels.dims()[0];
            burn::tensor::activation::softmax(logits, 1)
                .clamp(PROBABILITY_EPSILON, 1.0 - PROBABILITY_EPSILON)
                .log()
                .gather(1, labels.reshape([batch, 1]))
                .mean()
                .neg()
        }
    }
}

fn evaluate(
    model: &Classifier,
    split: &ByteSplit,
    options: &BatchOptions,
    batch_size: usize,
    loss_input: LossInput,
    device: &Device,
) -> Result<(f64, f64), TrainError> {
    let model = model.valid();
    let loss_fn = CrossEntropyLossConfig::new().init(device);
    let mut totals = DeviceTotals::zeros(device);
    let mut start = 0;
    while start < split.len() {
        let end = (start + batch_size).min(split.len());
        let (images, labels) = split.range(start, end, options)?;
        let logits = model.forward(images);
        let loss = batch_loss(&loss_fn, loss_input, logits.clone(), labels.clone());
        totals.add(logits, labels, loss);
        start = end;
    }
    let Sums {
        loss_sum, correct, ..
    } = totals.read()?;
    let n = split.len().max(1) as f64;
    Ok((loss_sum / n, correct / n))
}

/// Trains `experiment` on `data` on `target`, telling `on_event` everything as it happens.
///
/// Returns the summary for every ending a person chose or the data caused (completed, cancelled,
/// diverged); returns an error only when the device failed.
pub fn train(
    experiment: &Experiment,
    data: &ImageDataset,
    target: &TrainDevice,
    preparation: Preparation,
    control: &Control,
    on_event: &mut dyn FnMut(TrainEvent),
) -> Result<RunSummary, TrainError> {
    let device = &target.device;
    device.seed(experiment.seed);
    let shape = [data.shape.channels, data.shape.height, data.shape.width];
    let values_per_image = data.shape.pixels_per_image();
    let transform = pixel_transform(experiment.input_scaling, data);

    let upload_started = Instant::now();
    let InputPipeline {
        train: train_split,
        test: test_split,
        plain: batch_options,
        augmented: mut train_options,
    } = InputPipeline::upload(experiment, data, &transform, device)?;
    let upload_secs = upload_started.elapsed().as_secs_f64();

    let (mut model, mut trainee) = Trainee::new(experiment, data, device)?;
    let first_epoch = match &preparation.resume {
        Some(resume) => {
            model = checkpoint::load_model(&resume.folder, model)?;
            trainee.optimizer = checkpoint::load_optimizer(&resume.folder, trainee.optimizer)?;
            resume.state.epochs_completed
        }
        None => 0,
    };
    let parameter_count = model.num_params();
    let mut precision = StepPrecision::new(
        experiment.precision,
        preparation
            .resume
            .as_ref()
            .and_then(|resume| resume.state.loss_scale.as_ref()),
    );

    let batch_size = experiment.batch_size;
    let train_len = train_split.len();
    let steps_per_epoch = experiment.steps_per_epoch(train_len);
    let total_steps = steps_per_epoch * experiment.epochs;
    let eval_batch = if matches!(experiment.model, crate::model::ModelSpec::Mlp { .. }) {
        batch_size.max(1000)
    } else {
        batch_size * 2
    };
    let readback_every = Duration::from_millis(experiment.readback_interval_ms);

    on_event(TrainEvent::Started(StartInfo {
        device_name: target.name.clone(),
        device_id: target.id.clone(),
        parameter_count,
        steps_per_epoch,
        epochs: experiment.epochs,
        train_len,
        test_len: test_split.len(),
        load_secs: preparation.load_secs,
        upload_secs,
        first_epoch,
    }));

    let mut summary = RunSummary::new(
        &target.name,
        parameter_count,
        preparation.load_secs,
        upload_secs,
    );

    let run_started = Instant::now();
    let mut steady_secs = 0.0;
    let mut steady_samples: u64 = 0;
    // On the CPU, the first short batch's window: out of the rate, but the only figure a run too
    // short for any other window after warm-up (and profiling) has.
    let mut short_window: Option<(f64, u64)> = None;
    let on_cpu = is_cpu(device);
    let mut train_secs_total = 0.0;
    let mut loss_watch = LossWatch {
        chance: 1.0 / data.num_classes().max(1) as f64,
        stop_on_non_finite: experiment.stop_on_non_finite_loss,
        non_finite_warned: false,
        diverging_warned: false,
    };
    // Rows of a resumed run continue the time axis of the rows before the stop.
    let mut wall_offset_secs = 0.0;
    if let Some(resume) = &preparation.resume {
        let state = &resume.state;
        summary.steps = state.steps;
        summary.samples_seen = state.samples_seen;
        summary.epochs_completed = state.epochs_completed;
        summary.warmup_secs = state.warmup_secs;
        summary.final_train_loss = Some(state.train_loss);
        summary.final_train_accuracy = Some(state.train_accuracy);
        summary.final_test_loss = Some(state.test_loss);
        summary.final_test_accuracy = Some(state.test_accuracy);
        summary.best_test_accuracy = Some(state.best_test_accuracy);
        steady_secs = state.steady_secs;
        steady_samples = state.steady_samples;
        train_secs_total = state.train_secs_total;
        loss_watch.diverging_warned = state.diverging_warned;
        wall_offset_secs = state.wall_secs;
    }
    let wall_secs = || wall_offset_secs + run_started.elapsed().as_secs_f64();
    let mut launch_steps = 0_usize;
    // Whether this launch has met the epoch's short last batch, whose new shape compiles and
    // autotunes kernels once (40 s on lavapipe's first launch, measured).
    let mut short_batch_met = false;
    // Per profiled step: data, forward, backward, optimizer, readback milliseconds.
    let mut profile: Vec<[f64; 5]> = Vec::new();

    'epochs: for epoch in first_epoch..experiment.epochs {
        // Dropout draws depend on the seed and the epoch only, so a run resumed at this epoch
        // draws what the uninterrupted run drew.
        device.seed(epoch_seed(experiment.seed, epoch));
        let epoch_started = Instant::now();
        let order = epoch_order(train_len, experiment.seed, epoch);
        let order = Tensor::<1, Int>::from_data(TensorData::new(order, [train_len]), device);
        let mut totals = DeviceTotals::zeros(device);
        // Overflowed f16 steps of this epoch the loss scale has already been told about.
        let mut overflows_seen = 0;
        let mut window = Window::default();
        let mut epoch_samples: u64 = 0;
        let mut lr = experiment.lr;
        let mut steps_done = 0;

        for step in 0..steps_per_epoch {
            match control.state() {
                ControlState::Running => {}
                ControlState::Cancelled => {
                    summary.outcome = RunOutcome::Cancelled;
                    break 'epochs;
                }
                ControlState::Paused => {
                    // Paused time is not training time: restart the window after the wait.
                    if !control.wait_while_paused() {
                        summary.outcome = RunOutcome::Cancelled;
                        break 'epochs;
                    }
                    window.started = Some(Instant::now());
                    window.data = Duration::ZERO;
                    window.compute = Duration::ZERO;
                    window.steps = 0;
                    window.samples = 0;
                }
            }
            let step_started = Instant::now();
            window.started.get_or_insert(step_started);
            // Profiling mode: after the warm-up step, a few steps wait for the device after each
            // phase so each phase's time is its own.
            let profile_this = launch_steps >= 1 && profile.len() < experiment.profile_steps;
            let settle = || -> Result<(), TrainError> {
                if profile_this {
                    device
                        .sync()
                        .map_err(|e| TrainError::Readback(format!("{e:?}")))?;
                }
                Ok(())
            };
            let start = step * batch_size;
            let end = (start + batch_size).min(train_len);
            let rows = end - start;
            // Each step draws its own crops and flips from the seed and the step alone.
            train_options.seed = BatchOptions::step_seed(experiment.seed, summary.steps as u64);
            let (images, labels) =
                train_split.batch(order.clone().slice(start..end), &train_options)?;
            settle()?;
            let data_done = Instant::now();

            lr = experiment
                .schedule
                .lr_at(experiment.lr, epoch, summary.steps, total_steps);
            let stepped = trainee.step(
                model,
                &precision,
                (images, labels),
                lr,
                |logits, loss, labels| {
                    totals.add(logits, labels, loss);
                    Ok(())
                },
                &settle,
            )?;
            model = stepped.model;
            totals.add_overflow(stepped.overflowed);
            let (forward_done, backward_done) = (stepped.forward_done, stepped.backward_done);
            let compute_done = Instant::now();

            window.data += data_done - step_started;
            window.compute += compute_done - data_done;
            window.steps += 1;
            window.samples += rows as u64;
            epoch_samples += rows as u64;
            summary.steps += 1;
            launch_steps += 1;
            summary.samples_seen += rows as u64;
            steps_done = step + 1;

            if profile_this {
                let read_started = Instant::now();
                totals.read()?;
                let ms = |from: Instant, to: Instant| (to - from).as_secs_f64() * 1e3;
                profile.push([
                    ms(step_started, data_done),
                    ms(data_done, forward_done),
                    ms(forward_done, backward_done),
                    ms(backward_done, compute_done),
                    ms(read_started, Instant::now()),
                ]);
                // A synced step is not a normal step: keep it out of every throughput figure.
                window = Window {
                    started: Some(Instant::now()),
                    ..Window::default()
                };
                continue;
            }
            // The first step after a (re)start pays shader compilation and allocation.
            let first_step = launch_steps == 1;
            let last_step = step + 1 == steps_per_epoch;
            let due = window
                .started
                .is_some_and(|started| compute_done - started >= readback_every);
            if !(first_step || due) || last_step {
                continue;
            }
            let sync_started = Instant::now();
            let sums = totals.read()?;
            let now = Instant::now();
            let sync = now - sync_started;
            precision.observe(sums.overflowed - overflows_seen, window.steps as u64);
            overflows_seen = sums.overflowed;
            let Sums {
                loss_sum, correct, ..
            } = sums;
            let window_secs = window
                .started
                .map_or(0.0, |started| (now - started).as_secs_f64());
            if first_step {
                if first_epoch == 0 {
                    summary.warmup_secs = window_secs;
                }
            } else {
                steady_secs += window_secs;
                steady_samples += window.samples;
            }
            let train_loss = loss_sum / epoch_samples as f64;
            on_event(TrainEvent::Progress(Progress {
                wall_secs: wall_secs(),
                epoch,
                step_in_epoch: step + 1,
                global_step: summary.steps,
                samples_seen: summary.samples_seen,
                train_loss,
                train_accuracy: correct / epoch_samples as f64,
                samples_per_sec: window.samples as f64 / window_secs.max(1e-9),
                step_ms: window_secs * 1e3 / window.steps.max(1) as f64,
                data_ms: window.data.as_secs_f64() * 1e3,
                compute_ms: window.compute.as_secs_f64() * 1e3,
                sync_ms: sync.as_secs_f64() * 1e3,
                lr,
            }));
            if loss_watch.stops(train_loss, epoch, on_event) {
                summary.outcome = RunOutcome::Diverged;
                break 'epochs;
            }
            window = Window {
                started: Some(now),
                ..Window::default()
            };
        }

        // End of epoch: the last window, then evaluation, each one readback.
        let sync_started = Instant::now();
        let sums = totals.read()?;
        let now = Instant::now();
        precision.observe(sums.overflowed - overflows_seen, window.steps as u64);
        let Sums {
            loss_sum, correct, ..
        } = sums;
        let window_secs = window
            .started
            .map_or(0.0, |started| (now - started).as_secs_f64());
        let short_last = steps_done == steps_per_epoch && train_len % batch_size != 0;
        let first_short = short_last && !short_batch_met;
        short_batch_met |= short_last;
        if launch_steps > 1 && window.steps > 0 {
            if first_short {
                // One-time kernel compilation is warm-up, not steady state. The CPU compiles
                // nothing, so there the window only stays out of the rate.
                if on_cpu {
                    short_window = Some((window_secs, window.samples));
                } else if first_epoch == 0 {
                    summary.warmup_secs += window_secs;
                }
            } else {
                steady_secs += window_secs;
                steady_samples += window.samples;
            }
        }
        let epoch_train_secs = epoch_started.elapsed().as_secs_f64();
        train_secs_total += epoch_train_secs;
        let samples = epoch_samples.max(1) as f64;
        let train_loss = loss_sum / samples;
        let train_accuracy = correct / samples;
        if window.steps > 0 {
            on_event(TrainEvent::Progress(Progress {
                wall_secs: wall_secs(),
                epoch,
                step_in_epoch: steps_done,
                global_step: summary.steps,
                samples_seen: summary.samples_seen,
                train_loss,
                train_accuracy,
                samples_per_sec: window.samples as f64 / window_secs.max(1e-9),
                step_ms: window_secs * 1e3 / window.steps as f64,
                data_ms: window.data.as_secs_f64() * 1e3,
                compute_ms: window.compute.as_secs_f64() * 1e3,
                sync_ms: (now - sync_started).as_secs_f64() * 1e3,
                lr,
            }));
        }
        if loss_watch.stops(train_loss, epoch, on_event) {
            summary.outcome = RunOutcome::Diverged;
            break;
        }
        if steps_done < steps_per_epoch {
            break;
        }

        let eval_started = Instant::now();
        let (test_loss, test_accuracy) = evaluate(
            &model,
            &test_split,
            &batch_options,
            eval_batch,
            experiment.loss,
            device,
        )?;
        let eval_secs = eval_started.elapsed().as_secs_f64();
        let improved = summary
            .best_test_accuracy
            .is_none_or(|best| test_accuracy > best);
        summary.epochs_completed = epoch + 1;
        summary.final_train_loss = Some(train_loss);
        summary.final_train_accuracy = Some(train_accuracy);
        summary.final_test_loss = Some(test_loss);
        summary.final_test_accuracy = Some(test_accuracy);
        summary.best_test_accuracy = Some(
            summary
                .best_test_accuracy
                .map_or(test_accuracy, |best| best.max(test_accuracy)),
        );
        on_event(TrainEvent::EpochEnd(EpochSummary {
            epoch,
            train_loss,
            train_accuracy,
            test_loss,
            test_accuracy,
            train_secs: epoch_train_secs,
            eval_secs,
            samples_per_sec: epoch_samples as f64 / epoch_train_secs.max(1e-9),
        }));
        if let Some(folder) = &preparation.run_folder {
            let state = CheckpointState {
                steps: summary.steps,
                samples_seen: summary.samples_seen,
                wall_secs: wall_secs(),
                train_secs_total,
                steady_secs,
                steady_samples,
                warmup_secs: summary.warmup_secs,
                diverging_warned: loss_watch.diverging_warned,
                train_loss,
                train_accuracy,
                test_loss,
                test_accuracy,
                best_test_accuracy: summary.best_test_accuracy.unwrap_or(test_accuracy),
                loss_scale: precision.loss_scale(),
                ..CheckpointState::new(epoch + 1)
            };
            let saved = checkpoint::save(folder, Slot::Last, &model, &trainee.optimizer, &state)
                .and_then(|()| {
                    if improved {
                        checkpoint::copy_slot(folder, Slot::Last, Slot::Best)
                    } else {
                        Ok(())
                    }
                });
            if let Err(e) = saved {
                on_event(TrainEvent::Warning(TrainWarning::CheckpointNotSaved {
                    reason: e.to_string(),
                }));
            }
        }
        if !test_split.is_empty()
            && test_accuracy <= loss_watch.chance + 0.02
            && loss_watch.chance < 0.5
        {
            on_event(TrainEvent::Warning(TrainWarning::StuckAtChance {
                epoch,
                accuracy: test_accuracy,
            }));
        }
    }

    summary.total_secs = wall_secs();
    summary.profile = step_profile(&profile);
    summary.precision = experiment.precision;
    summary.cpu_threads = trainee.threads.choice().cloned();
    summary.loss_scale = precision.report();
    if steady_samples == 0
        && let Some((secs, samples)) = short_window
    {
        (steady_secs, steady_samples) = (secs, samples);
    }
    summary.steady_samples_per_sec = if steady_secs > 0.0 {
        steady_samples as f64 / steady_secs
    } else {
        0.0
    };
    summary.mean_epoch_train_secs = if summary.epochs_completed > 0 {
        train_secs_total / summary.epochs_completed as f64
    } else {
        train_secs_total
    };
    if summary.outcome == RunOutcome::Completed && !test_split.is_empty() {
        let (predicted, confidence) = predict(&model, &test_split, &batch_options, eval_batch)?;
        let mut predictions = TestPredictions {
            class_names: data.class_names.clone(),
            labels: data.test.labels.clone(),
            predicted,
            confidence,
            gallery: Vec::new(),
        };
        predictions.gallery = predictions
            .confidently_wrong(GALLERY_SIZE)
            .into_iter()
            .map(|index| GalleryImage {
                index,
                shape,
                pixels: data
                    .test
                    .images
                    .get(index * values_per_image..(index + 1) * values_per_image)
                    .unwrap_or_default()
                    .to_vec(),
            })
            .collect();
        on_event(TrainEvent::Predictions(predictions));
        if let Some(folder) = &preparation.run_folder {
            let card = crate::predict::ModelCard {
                shape,
                class_names: data.class_names.clone(),
                offset: transform.offset.clone(),
                scale: transform.scale.clone(),
            };
            // A model that cannot be written costs the person the model, not the run.
            if let Err(reason) = crate::predict::save_model(&model, &card, folder) {
                on_event(TrainEvent::Warning(TrainWarning::ModelNotSaved { reason }));
            }
        }
    }
    on_event(TrainEvent::Finished(Box::new(summary.clone())));
    Ok(summary)
}

/// Every image's predicted class and its probability, read back in one transaction at the end.
fn predict(
    model: &Classifier,
    split: &ByteSplit,
    options: &BatchOptions,
    batch_size: usize,
) -> Result<(Vec<u8>, Vec<f32>), TrainError> {
    let model = model.valid();
    let mut predicted = Vec::new();
    let mut confidence = Vec::new();
    let mut start = 0;
    while start < split.len() {
        let end = (start + batch_size).min(split.len());
        let (images, _) = split.range(start, end, options)?;
        let probabilities = burn::tensor::activation::softmax(model.forward(images), 1);
        confidence.push(probabilities.clone().max_dim(1).reshape([end - start]));
        predicted.push(probabilities.argmax(1).reshape([end - start]));
        start = end;
    }
    let data = Transaction::default()
        .register(Tensor::cat(predicted, 0))
        .register(Tensor::cat(confidence, 0))
        .try_execute()
        .map_err(|e| TrainError::Readback(format!("{e:?}")))?;
    match (data.first(), data.get(1)) {
        (Some(predicted), Some(confidence)) => Ok((
            predicted
                .iter::<i64>()
                .map(|p| u8::try_from(p).unwrap_or(u8::MAX))
                .collect(),
            confidence.iter::<f32>().collect(),
        )),
        _ => Err(TrainError::Readback(
            "the prediction readback returned no value".to_owned(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ExperimentDraft;
    use crate::data::{ImageShape, Split};

    /// Two classes of 4x4 images: bright left half or bright right half, with noise.
    fn halves(len: usize) -> Split {
        let mut rng = ShuffleRng(3);
        let mut split = Split::default();
        for i in 0..len {
            let label = (i % 2) as u8;
            for row in 0..4 {
                for col in 0..4 {
                    let bright = (col < 2) == (label == 0);
                    let noise = (rng.next() % 60) as u8;
                    split.images.push(if bright { 180 + noise } else { noise });
                    let _ = row;
                }
            }
            split.labels.push(label);
        }
        split
    }

    pub(super) fn tiny_dataset() -> ImageDataset {
        ImageDataset {
            name: "halves".into(),
            shape: ImageShape {
                channels: 1,
                height: 4,
                width: 4,
            },
            class_names: vec!["left".into(), "right".into()],
            train: halves(200),
            test: halves(50),
        }
    }

    #[test]
    fn probability_loss_matches_logit_loss_until_it_clips() {
        let device = Device::flex();
        let loss_fn = CrossEntropyLossConfig::new().init(&device);
        let labels = || Tensor::<1, Int>::from_data(TensorData::new(vec![0i32, 2], [2]), &device);
        let read = |t: Tensor<1>| t.into_data().try_to_vec::<f32>().unwrap()[0];
        // Moderate logits: both forms are the same cross-entropy.
        let moderate = || {
            Tensor::<2>::from_data(
                TensorData::new(vec![1.0f32, 0.5, -0.5, 0.2, 0.1, 2.0], [2, 3]),
                &device,
            )
        };
        let from_logits = read(batch_loss(
            &loss_fn,
            LossInput::Logits,
            moderate(),
            labels(),
        ));
        let from_probs = read(batch_loss(
            &loss_fn,
            LossInput::Probabilities,
            moderate(),
            labels(),
        ));
        assert!(
            (from_logits - from_probs).abs() < 1e-5,
            "{from_logits} vs {from_probs}"
        );
        // A confidently wrong answer: the logit loss grows without bound, Keras's clipped
        // probabilities cap it at -ln(1e-7) ≈ 16.1.
        let wrong = || {
            Tensor::<2>::from_data(
                TensorData::new(vec![-50.0f32, 50.0, 0.0, 0.0, 50.0, -50.0], [2, 3]),
                &device,
            )
        };
        let from_logits = read(batch_loss(&loss_fn, LossInput::Logits, wrong(), labels()));
        let from_probs = read(batch_loss(
            &loss_fn,
            LossInput::Probabilities,
            wrong(),
            labels(),
        ));
        assert!(from_logits > 90.0, "{from_logits}");
        assert!((from_probs - 16.118).abs() < 0.01, "{from_probs}");
    }

    #[test]
    fn predictions_agree_with_the_final_test_accuracy() {
        let control = Control::new();
        let mut predictions = None;
        let summary = train(
            &tiny_experiment(2),
            &tiny_dataset(),
            &cpu(),
            Preparation::default(),
            &control,
            &mut |event| {
                if let TrainEvent::Predictions(p) = event {
                    predictions = Some(p);
                }
            },
        )
        .unwrap();
        let predictions = predictions.expect("a completed run reports its predictions");
        assert_eq!(predictions.predicted.len(), 50);
        assert_eq!(predictions.labels, tiny_dataset().test.labels);
        let confusion = predictions.confusion();
        let total: u64 = confusion.iter().flatten().sum();
        let correct: u64 = (0..2).map(|c| confusion[c][c]).sum();
        assert_eq!(total, 50);
        let accuracy = summary.final_test_accuracy.unwrap();
        assert!(
            (correct as f64 / 50.0 - accuracy).abs() < 1e-9,
            "{correct} vs {accuracy}"
        );
        assert!(
            predictions
                .confidence
                .iter()
                .all(|c| (0.5..=1.0).contains(c))
        );
        // The gallery is the wrong answers, surest first, each with its own pixels.
        let wrong = predictions.confidently_wrong(GALLERY_SIZE);
        let shown: Vec<usize> = predictions.gallery.iter().map(|g| g.index).collect();
        assert_eq!(shown, wrong);
        let test = tiny_dataset().test;
        for image in &predictions.gallery {
            assert_eq!(image.shape, [1, 4, 4]);
            assert_eq!(
                image.pixels,
                test.images[image.index * 16..(image.index + 1) * 16]
            );
            assert_ne!(test.labels[image.index], predictions.predicted[image.index]);
        }
    }

    #[test]
    fn a_completed_run_keeps_a_model_that_predicts_as_it_did() {
        let folder = crate::data::test_dir("saved-model");
        let experiment = tiny_experiment(2);
        std::fs::write(folder.join("config.toml"), experiment.to_toml()).unwrap();
        let control = Control::new();
        let mut predictions = None;
        train(
            &experiment,
            &tiny_dataset(),
            &cpu(),
            Preparation {
                load_secs: 0.0,
                run_folder: Some(folder.clone()),
                resume: None,
            },
            &control,
            &mut |event| {
                if let TrainEvent::Predictions(p) = event {
                    predictions = Some(p);
                }
            },
        )
        .unwrap();
        let predictions = predictions.unwrap();
        assert!(!folder.join("partial-model.bpk").exists());
        let predictor = crate::predict::Predictor::load(&folder).expect("the model loads back");
        let test = tiny_dataset().test;
        for index in [0, 1, 7] {
            let ranked = predictor.classify_pixels(&test.images[index * 16..(index + 1) * 16]);
            let expected = &predictions.class_names[usize::from(predictions.predicted[index])];
            assert_eq!(&ranked[0].0, expected, "image {index}");
            assert!((ranked[0].1 - predictions.confidence[index]).abs() < 1e-4);
            let total: f32 = ranked.iter().map(|(_, p)| p).sum();
            assert!((total - 1.0).abs() < 1e-4);
        }
        // A folder without a model says so instead of failing obscurely.
        let empty = crate::data::test_dir("no-model");
        assert!(matches!(
            crate::predict::Predictor::load(&empty),
            Err(crate::predict::PredictError::NoModel(_))
        ));
    }

    #[test]
    fn the_loop_learns_with_the_probability_loss() {
        let mut experiment = tiny_experiment(3).draft().clone();
        experiment.loss = LossInput::Probabilities;
        let experiment = experiment.validate().unwrap();
        let control = Control::new();
        let summary = train(
            &experiment,
            &tiny_dataset(),
            &cpu(),
            Preparation::default(),
            &control,
            &mut |_| {},
        )
        .unwrap();
        assert!(summary.final_test_accuracy.unwrap() > 0.9, "{summary:?}");
    }

    /// Regression: the Keras flavour took its loss on clipped probabilities. On raw 0–255 inputs
    /// most of them start clipped and pass no gradient, so `fashion-mlp-keras` sat at 28 % for
    /// epochs where Keras on TensorFlow, which takes that loss from the logits, reached 72 %
    /// after one (both measured side by side on Fashion-MNIST).
    #[test]
    fn the_keras_flavour_learns_in_its_first_epoch_as_keras_does() {
        let mut draft = crate::config::preset("fashion-mlp-keras").unwrap();
        draft.epochs = 1;
        let experiment = draft.validate().unwrap();
        let data = crate::data::synthetic();
        let summary = train(
            &experiment,
            &data,
            &cpu(),
            Preparation::default(),
            &Control::new(),
            &mut |_| {},
        )
        .unwrap();
        assert!(summary.final_test_accuracy.unwrap() > 0.6, "{summary:?}");
    }

    fn tiny_experiment(epochs: usize) -> Experiment {
        ExperimentDraft {
            model: "mlp:16".parse().unwrap(),
            batch_size: 32,
            epochs,
            lr: 0.01,
            ..ExperimentDraft::default()
        }
        .validate()
        .unwrap()
    }

    pub(super) fn cpu() -> TrainDevice {
        TrainDevice {
            device: Device::flex(),
            id: "cpu".into(),
            name: "CPU".into(),
        }
    }

    #[test]
    fn a_tiny_run_learns_and_counts_every_sample_once_per_epoch() {
        let data = tiny_dataset();
        let experiment = tiny_experiment(3);
        let mut events = Vec::new();
        let summary = train(
            &experiment,
            &data,
            &cpu(),
            Preparation::default(),
            &Control::new(),
            &mut |e| events.push(e),
        )
        .unwrap();
        assert_eq!(summary.outcome, RunOutcome::Completed);
        assert_eq!(summary.epochs_completed, 3);
        // 200 images in batches of 32: 7 steps, the last one of 8 images, none dropped.
        assert_eq!(summary.steps, 21);
        assert_eq!(summary.samples_seen, 600);
        assert!(summary.final_test_accuracy.unwrap() > 0.9, "{summary:?}");
        assert!(matches!(events.first(), Some(TrainEvent::Started(s)) if s.steps_per_epoch == 7));
        assert!(matches!(events.last(), Some(TrainEvent::Finished(_))));
        let epoch_ends: Vec<&EpochSummary> = events
            .iter()
            .filter_map(|e| match e {
                TrainEvent::EpochEnd(s) => Some(s),
                _ => None,
            })
            .collect();
        assert_eq!(epoch_ends.len(), 3);
        for e in &epoch_ends {
            assert!((0.0..=1.0).contains(&e.train_accuracy));
            assert!((0.0..=1.0).contains(&e.test_accuracy));
        }
        // The last readback of each epoch covers all of its samples.
        let last_progress = events.iter().rev().find_map(|e| match e {
            TrainEvent::Progress(p) => Some(p),
            _ => None,
        });
        assert_eq!(last_progress.map(|p| p.samples_seen), Some(600));
        // A tiny MLP step is far below the one-thread bound.
        let choice = summary
            .cpu_threads
            .as_ref()
            .expect("a CPU run reports its threads");
        assert_eq!(choice.threads, 1);
        assert_eq!(choice.forward_multiply_adds, Some(32 * (16 * 16 + 16 * 2)));
        assert_eq!(summary.precision, crate::config::Precision::F32);
        assert_eq!(summary.loss_scale, None);
    }

    #[test]
    fn a_cancelled_run_stops_at_a_step_boundary_and_says_so() {
        let data = tiny_dataset();
        let experiment = tiny_experiment(5);
        let control = Control::new();
        control.cancel();
        let summary = train(
            &experiment,
            &data,
            &cpu(),
            Preparation::default(),
            &control,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(summary.outcome, RunOutcome::Cancelled);
        assert_eq!(summary.steps, 0);
    }

    #[test]
    fn a_huge_learning_rate_is_caught_as_divergence() {
        let mut data = tiny_dataset();
        // Raw 0-255 inputs and lr 10 blow the loss up within a step or two.
        data.train = halves(256);
        let mut draft = tiny_experiment(2).draft().clone();
        draft.lr = 10.0;
        draft.input_scaling = InputScaling::Raw;
        draft.optimizer = OptimizerSpec::from_name("sgd").unwrap();
        draft.readback_interval_ms = 10;
        let experiment = draft.validate().unwrap();
        let mut warnings = Vec::new();
        let summary = train(
            &experiment,
            &data,
            &cpu(),
            Preparation::default(),
            &Control::new(),
            &mut |e| {
                if let TrainEvent::Warning(w) = e {
                    warnings.push(w);
                }
            },
        )
        .unwrap();
        assert!(!warnings.is_empty(), "{summary:?}");
    }

    #[test]
    fn profiling_mode_breaks_a_step_into_phases_only_when_asked() {
        let data = tiny_dataset();
        let mut draft = tiny_experiment(1).draft().clone();
        let run = |draft: &ExperimentDraft| {
            train(
                &draft.clone().validate().unwrap(),
                &data,
                &cpu(),
                Preparation::default(),
                &Control::new(),
                &mut |_| {},
            )
            .unwrap()
        };
        assert!(run(&draft).profile.is_none());
        draft.profile_steps = 3;
        let summary = run(&draft);
        // Regression: the profiled steps and the short last batch left no window to measure,
        // and the run reported 0 samples/s; on the CPU that last window is the figure.
        assert!(
            summary.steady_rate().is_some_and(|r| r > 0.0),
            "{summary:?}"
        );
        let profile = summary.profile.expect("a profile");
        assert_eq!(profile.steps, 3);
        assert!(
            profile.mode.contains("synced after every phase"),
            "{}",
            profile.mode
        );
        for ms in [
            profile.data_ms,
            profile.forward_ms,
            profile.backward_ms,
            profile.optimizer_ms,
            profile.host_sync_ms,
        ] {
            assert!(ms.is_finite() && ms >= 0.0, "{profile:?}");
        }
        assert!(
            profile.forward_ms + profile.backward_ms > 0.0,
            "{profile:?}"
        );
        // Profiled steps are still training steps.
        assert_eq!(summary.steps, 7);
        assert_eq!(summary.outcome, RunOutcome::Completed);
    }

    #[test]
    fn epoch_order_is_a_seeded_permutation() {
        let a = epoch_order(1000, 7, 0);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<_>>());
        assert_eq!(a, epoch_order(1000, 7, 0));
        assert_ne!(a, epoch_order(1000, 7, 1));
        assert_ne!(a, epoch_order(1000, 8, 0));
    }
}
