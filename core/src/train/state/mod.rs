//! One run as a state and the steps [`super::train`] takes over it: prepare, train an epoch
//! (steps and readbacks), evaluate, end the epoch, checkpoint, finish. Evaluating and finishing
//! are in `evaluation`.

mod evaluation;

use std::ops::Range;
use std::time::Duration;

use web_time::Instant;

use burn::module::Module;
use burn::tensor::Tensor;
use kiln_shaders::{BatchOptions, PixelTransform};

use super::counters::{ReadbackWindow, ReadbackWindowKind, SpeedBook, step_profile};
use super::device_reads::{
    DeviceTotals, EvalSplit, Predicted, PredictionTensors, Sums, eval_spans,
};
use super::parallel::{Lane, Replicas, Shard, read_lanes, shards};
use super::pipeline::{BatchSource, InputPipeline, epoch_order, epoch_seed, pixel_transform};
use super::precision::StepPrecision;
use super::probe::Probe;
use super::step::{Stepper, is_cpu};
use super::store::RunStore;
use super::targets::Targets;
use super::threads::Awake;
use super::watch::LossWatch;
use super::{
    Control, ControlState, EpochRow, MetricsRow, Preparation, RunCounters, RunOutcome, RunSummary,
    SplitSizes, StartInfo, TestResult, TrainDevice, TrainError, TrainEvent, TrainWarning,
};
use crate::config::{ClassWeights, Experiment, Keep, Validation};
use crate::data::ImageDataset;
use crate::model::{Classifier, ModelCard};
use crate::results::{ClassReport, GalleryImage, TestPredictions};
use crate::selection::{EarlyStop, Selection, ValidatedOn, Verdict};

/// How many of the most confidently wrong test images a completed run hands out with pixels.
pub(super) const GALLERY_SIZE: usize = 12;

/// Everything a run holds between its steps, besides the model, which each step takes and
/// gives back (Burn's optimizer consumes it).
pub(super) struct RunState<'a> {
    experiment: &'a Experiment,
    data: &'a ImageDataset,
    target: &'a TrainDevice,
    store: Box<dyn RunStore>,
    transform: PixelTransform,
    pipeline: InputPipeline,
    /// The devices after the first of a data-parallel run, with the training images on each.
    replicas: Replicas,
    stepper: Stepper,
    precision: StepPrecision,
    /// The figures that survive a resume.
    counters: RunCounters,
    speed: SpeedBook,
    loss_watch: LossWatch,
    outcome: RunOutcome,
    /// What each epoch is evaluated on.
    validated_on: ValidatedOn,
    /// How the best epoch and early stopping are decided.
    selection: Selection,
    /// The best epoch's weights, held while later epochs train when the run keeps the best.
    best_model: Option<Classifier>,
    /// Set when patience ran out.
    stopped_early: Option<EarlyStop>,
    /// Asked after each evaluated epoch whether the run ends there.
    judge: Option<Box<dyn super::EpochJudge>>,
    /// Set when the judge ended the run.
    pruned: Option<super::Pruned>,
    /// The test split measured on the kept weights, once the run has ended.
    tested: Option<TestResult>,
    /// The kept weights' classification reports on the test and validation splits.
    reports: (Option<ClassReport>, Option<ClassReport>),
    /// In a multi-label set, the kept weights' report on the test split.
    label_report: Option<crate::results::multi_label::LabelReport>,
    /// The (0-based) epoch this launch starts at.
    pub(super) first_epoch: usize,
    steps_per_epoch: usize,
    /// Images per evaluation batch: no gradients, so larger than a training batch.
    eval_batch: usize,
    parameter_count: usize,
    /// What the weights file gave, for a run that started from one in this launch.
    pretrained: Option<crate::weights::Loaded>,
    /// A linear probe's frozen backbone, while only the head trains.
    probe: Option<Probe>,
    /// Seconds this launch's probe spent computing the features.
    features_secs: Option<f64>,
    load_secs: f64,
    upload_secs: f64,
    launch_started: Instant,
    /// Run wall seconds before this launch: a resumed run's rows continue the time axis.
    wall_before_launch: f64,
    /// Steps taken since this launch started (a resume is a new launch).
    launch_steps: usize,
    /// Whether this launch has met the epoch's short last batch.
    short_batch_met: bool,
    /// Per profiled step: data, forward, backward, optimizer, readback milliseconds.
    profile: Vec<[f64; 5]>,
}

/// One epoch's progress: its order and device sums on each device, the open readback window.
struct Epoch {
    index: usize,
    started: Instant,
    /// One per device the run trains on, the model's own first.
    lanes: Vec<Lane>,
    /// Overflowed f16 steps the loss scale has already been told about.
    overflows_seen: u64,
    window: ReadbackWindow,
    samples: u64,
    steps_done: usize,
    /// Learning rate of the last step.
    lr: f64,
}

/// A step's input: one batch, or one shard of it per device.
// One lives for a step and is moved once; boxing the batch would buy nothing.
#[allow(clippy::large_enum_variant)]
enum Batches {
    One((Tensor<4>, Targets)),
    Shards(Vec<(usize, Shard)>),
}

/// How the training part of an epoch ended.
pub(super) enum EpochEnd {
    /// Every step ran: the epoch's training loss and accuracy over all its images.
    Trained(TrainedEpoch),
    /// The run ends here, before evaluation.
    Stopped(RunOutcome),
}

/// The training figures of a whole epoch.
pub(super) struct TrainedEpoch {
    loss: f64,
    accuracy: f64,
    secs: f64,
    samples: u64,
}

/// One evaluation of the model after an epoch.
pub(super) struct Evaluation {
    loss: f64,
    accuracy: f64,
    /// The mean average precision over labels, where the run watches it (`val-map`).
    map: Option<f64>,
    secs: f64,
}

/// What a readback saw.
struct Readout {
    train_loss: f64,
    train_accuracy: f64,
    /// When the read finished: the next window starts there.
    done: Instant,
    /// Whether the loss says the run must stop.
    stops: bool,
}

/// Images per evaluation batch: no gradients, so larger than a training batch.
fn eval_batch_size(experiment: &Experiment) -> usize {
    if matches!(experiment.model, crate::model::ModelSpec::Mlp { .. }) {
        experiment.batch_size.max(1000)
    } else {
        experiment.batch_size * 2
    }
}

/// The model a launch trains from, before a checkpoint (if any) is loaded into it.
struct Start {
    /// The whole network, or a probing run's head.
    model: Classifier,
    /// A probing run's frozen backbone.
    probe: Option<Probe>,
    /// What the weights file gave, when this launch loaded one.
    pretrained: Option<crate::weights::Loaded>,
    /// Trainable scalars of the whole network.
    parameter_count: usize,
}

impl Start {
    /// Pretrained weights go into `model` when the run starts anew, or when it probes (a
    /// probe's checkpoint holds the head only); a probing run then trains the head alone.
    fn of(
        experiment: &Experiment,
        mut model: Classifier,
        resumes_after: Option<usize>,
    ) -> Result<Self, TrainError> {
        let epoch = Probe::starting_epoch(resumes_after);
        let pretrained = match &experiment.weights {
            Some(source) if super::loads_pretrained(experiment, resumes_after) => {
                let path = source.resolve(&experiment.model, experiment.data_dir.as_deref())?;
                Some(crate::weights::load_here(
                    &mut model,
                    &experiment.model,
                    &path,
                )?)
            }
            _ => None,
        };
        let parameter_count = model.num_params();
        let probe = Probe::at(experiment, epoch, &model);
        let model = match (&probe, model.head()) {
            (Some(_), Some(head)) => head,
            _ => model,
        };
        Ok(Self {
            model,
            probe,
            pretrained,
            parameter_count,
        })
    }
}

impl<'a> RunState<'a> {
    /// Uploads the data, builds (or restores) the model and its optimizer.
    pub(super) fn prepare(
        experiment: &'a Experiment,
        data: &'a ImageDataset,
        target: &'a TrainDevice,
        preparation: Preparation,
    ) -> Result<(Self, Classifier), TrainError> {
        let device = &target.device;
        if data.is_multi_label() && !target.replicas.is_empty() {
            return Err(TrainError::Unsupported(
                "a data set of several labels per image trains on one device for now; give one --device".to_owned(),
            ));
        }
        device.seed(experiment.seed);
        let transform = pixel_transform(experiment.input_scaling, data);
        let upload_started = Instant::now();
        let mut pipeline = InputPipeline::upload(experiment, data, &transform, device)?;
        let replicas = Replicas::upload(device, &target.replicas, data)?;
        let upload_secs = upload_started.elapsed().as_secs_f64();
        let Preparation {
            load_secs,
            mut store,
            judge,
        } = preparation;
        let (model, stepper) = Stepper::new(experiment, data, device)?;
        let start = Start::of(experiment, model, store.resumes_after())?;
        let (model, mut stepper, restored) = stepper.restore(start.model, store.as_mut())?;
        if experiment.weights.is_some() {
            stepper.scale_backbone_rate(&model, experiment.backbone_lr_scale);
        }
        let eval_batch = eval_batch_size(experiment);
        let first_epoch = restored.as_ref().map_or(0, |c| c.epochs_completed);
        // A run resumed where it unfreezes needs no features: its first epoch trains everything.
        let features_secs = match &start.probe {
            Some(probe) if !probe.unfreezes_at(first_epoch) => {
                let started = Instant::now();
                pipeline.probe(probe.backbone(), eval_batch)?;
                Some(started.elapsed().as_secs_f64())
            }
            _ => None,
        };
        let counters = restored.unwrap_or_default();
        let wall_before_launch = counters.wall_secs;
        let precision = StepPrecision::new(experiment.precision, counters.loss_scale.as_ref());
        let validated_on = match experiment.validation {
            Validation::Split if !data.val.is_empty() => ValidatedOn::Validation,
            Validation::Test if !data.test.is_empty() => ValidatedOn::Test,
            _ => ValidatedOn::Nothing,
        };
        let state = Self {
            validated_on,
            selection: Selection {
                monitor: experiment.monitor,
                min_delta: experiment.min_delta,
                patience: experiment.early_stop,
            },
            best_model: None,
            stopped_early: None,
            judge,
            pruned: None,
            tested: None,
            reports: (None, None),
            label_report: None,
            experiment,
            data,
            target,
            store,
            pipeline,
            replicas,
            stepper,
            precision,
            speed: SpeedBook::new(is_cpu(device), first_epoch == 0),
            // A label's binary cross-entropy at a coin's guess is ln 2, as two classes'; a coin's
            // label accuracy says nothing of being stuck, and two classes are not watched for it.
            loss_watch: LossWatch::new(
                if data.is_multi_label() {
                    2
                } else {
                    data.num_classes()
                },
                experiment.stop_on_non_finite_loss,
                counters.diverging_warned,
            ),
            counters,
            transform,
            outcome: RunOutcome::Completed,
            first_epoch,
            steps_per_epoch: experiment.steps_per_epoch(data.train.len()),
            eval_batch,
            parameter_count: start.parameter_count,
            pretrained: start.pretrained,
            features_secs,
            probe: start.probe,
            load_secs,
            upload_secs,
            launch_started: Instant::now(),
            wall_before_launch,
            launch_steps: 0,
            short_batch_met: false,
            profile: Vec::new(),
        };
        Ok((state, model))
    }

    /// What the listeners learn before the first step.
    pub(super) fn start_info(&self) -> StartInfo {
        StartInfo {
            device_name: self.target.name.clone(),
            device_id: self.target.id.clone(),
            parameter_count: self.parameter_count,
            steps_per_epoch: self.steps_per_epoch,
            epochs: self.experiment.epochs,
            train_len: self.pipeline.train.len(),
            val_len: self.val_len(),
            test_len: self.pipeline.test.len(),
            validated_on: self.validated_on,
            load_secs: self.load_secs,
            upload_secs: self.upload_secs,
            first_epoch: self.first_epoch,
            pretrained: self.pretrained.clone(),
            features_secs: self.features_secs,
        }
    }

    /// Validation images the run evaluates on: none unless it validates on a validation split.
    fn val_len(&self) -> usize {
        match self.validated_on {
            ValidatedOn::Validation => self.pipeline.val.len(),
            ValidatedOn::Test | ValidatedOn::Nothing => 0,
        }
    }

    /// Warns, before the first step, about what the data will do to the figures: classes of
    /// very different sizes, files of a folder that were left out.
    pub(super) fn warn_about_data(&self, on_event: &mut dyn FnMut(TrainEvent)) {
        let data = self.data;
        let counts = data.class_counts();
        let named = |class: usize| {
            let name = data.class_names.get(class).cloned().unwrap_or_default();
            (name, counts.get(class).copied().unwrap_or(0))
        };
        let largest = (0..counts.len()).max_by_key(|&c| counts[c]);
        let smallest = (0..counts.len()).min_by_key(|&c| counts[c]);
        if let (Some(largest), Some(smallest)) = (largest, smallest)
            && counts[largest] >= 3 * counts[smallest]
            && self.experiment.class_weights == ClassWeights::None
            // Label sets count an image once per label: sizes say less than of classes.
            && !data.is_multi_label()
        {
            on_event(TrainEvent::Warning(TrainWarning::Unbalanced {
                largest: named(largest),
                smallest: named(smallest),
            }));
        }
        for note in &data.notes {
            on_event(TrainEvent::Warning(TrainWarning::DataNote {
                note: note.clone(),
            }));
        }
        if let Some(first) = data.skipped.first() {
            on_event(TrainEvent::Warning(TrainWarning::FilesSkipped {
                count: data.skipped.len(),
                first: format!("{} ({})", first.path.display(), first.reason),
            }));
        }
    }

    /// Run wall seconds, counted across launches.
    fn wall_secs(&self) -> f64 {
        self.wall_before_launch + self.launch_started.elapsed().as_secs_f64()
    }

    /// Trains every step of `epoch`, reading metrics back a few times per second; the model
    /// comes back on the run's first device.
    pub(super) async fn train_epoch(
        &mut self,
        model: Classifier,
        epoch: usize,
        control: &Control,
        on_event: &mut dyn FnMut(TrainEvent),
    ) -> Result<(Classifier, EpochEnd), TrainError> {
        let (model, ended) = self.train_steps(model, epoch, control, on_event).await?;
        let model = match self.replicas.is_empty() {
            true => model,
            // Burn's multi-device step leaves each parameter where its gradients were summed.
            false => model.fork(&self.target.device.clone().autodiff()),
        };
        Ok((model, ended))
    }

    async fn train_steps(
        &mut self,
        mut model: Classifier,
        epoch: usize,
        control: &Control,
        on_event: &mut dyn FnMut(TrainEvent),
    ) -> Result<(Classifier, EpochEnd), TrainError> {
        if self
            .probe
            .as_ref()
            .is_some_and(|probe| probe.unfreezes_at(epoch))
        {
            model = self.leave_probe(model);
        }
        let mut current = self.begin_epoch(epoch);
        let readback_every = Duration::from_millis(self.experiment.readback_interval_ms);
        let mut awake = self.stepper.threads.keep_awake();
        #[cfg(target_arch = "wasm32")]
        let mut turns = crate::executor::PageTurns::default();
        for step in 0..self.steps_per_epoch {
            #[cfg(target_arch = "wasm32")]
            turns.give_if_due().await;
            if !self
                .wait_while_paused(control, &mut current.window, &mut awake)
                .await
            {
                return Ok((model, EpochEnd::Stopped(RunOutcome::Cancelled)));
            }
            // Profiling mode: after the warm-up step, a few steps wait for the device after each
            // phase so each phase's time is its own.
            let profiled =
                self.launch_steps >= 1 && self.profile.len() < self.experiment.profile_steps;
            let done;
            (model, done) = self.step(model, &mut current, step, profiled).await?;
            // The first step after a (re)start pays shader compilation and allocation; the last
            // step's window is read at the epoch's end.
            let due = self.launch_steps == 1
                || current
                    .window
                    .started
                    .is_some_and(|started| done - started >= readback_every);
            if profiled || !due || step + 1 == self.steps_per_epoch {
                continue;
            }
            let readout = self.readback(&mut current, false, on_event).await?;
            if readout.stops {
                return Ok((model, EpochEnd::Stopped(RunOutcome::Diverged)));
            }
            current.window = ReadbackWindow::starting(readout.done);
        }
        drop(awake);
        let readout = self.readback(&mut current, true, on_event).await?;
        let secs = current.started.elapsed().as_secs_f64();
        self.counters.train_secs_total += secs;
        if readout.stops {
            return Ok((model, EpochEnd::Stopped(RunOutcome::Diverged)));
        }
        let trained = TrainedEpoch {
            loss: readout.train_loss,
            accuracy: readout.train_accuracy,
            secs,
            samples: current.samples,
        };
        Ok((model, EpochEnd::Trained(trained)))
    }

    fn begin_epoch(&self, index: usize) -> Epoch {
        let (experiment, device) = (self.experiment, &self.target.device);
        // Dropout draws depend on the seed and the epoch only, so a run resumed at this epoch
        // draws what the uninterrupted run drew.
        device.seed(epoch_seed(experiment.seed, index));
        let started = Instant::now();
        let order = epoch_order(self.pipeline.train.len(), experiment.seed, index);
        let devices = std::iter::once(device).chain(self.replicas.iter().map(|(d, _)| d));
        Epoch {
            index,
            started,
            lanes: devices.map(|device| Lane::new(&order, device)).collect(),
            overflows_seen: 0,
            window: ReadbackWindow::default(),
            samples: 0,
            steps_done: 0,
            lr: experiment.lr,
        }
    }

    /// Ends a linear probe: the trained head goes onto the backbone, and batches are images
    /// again. Hands back the whole network; a run that is not probing keeps `model`.
    fn leave_probe(&mut self, model: Classifier) -> Classifier {
        match self.probe.take() {
            Some(probe) => {
                self.pipeline.unfreeze();
                // The best epoch so far may be a probe's: it is kept as a whole network too.
                self.best_model = self.best_model.take().map(|best| probe.assemble(&best));
                probe.assemble(&model)
            }
            None => model,
        }
    }

    /// Obeys a pause at a step boundary, with the CPU's workers (`awake`) at rest through it;
    /// false when the run was cancelled.
    async fn wait_while_paused(
        &self,
        control: &Control,
        window: &mut ReadbackWindow,
        awake: &mut Option<Awake>,
    ) -> bool {
        match control.state() {
            ControlState::Running => true,
            ControlState::Cancelled => false,
            ControlState::Paused => {
                // A paused run leaves the cores alone.
                *awake = None;
                let resumed = control.wait_out_pause().await;
                if resumed {
                    *awake = self.stepper.threads.keep_awake();
                }
                // Paused time is not training time: the window restarts after the wait.
                *window = ReadbackWindow::starting(Instant::now());
                resumed
            }
        }
    }

    /// One optimizer step on batch `step` of the epoch; hands back the model and when its work
    /// was recorded.
    async fn step(
        &mut self,
        model: Classifier,
        epoch: &mut Epoch,
        step: usize,
        profiled: bool,
    ) -> Result<(Classifier, Instant), TrainError> {
        let experiment = self.experiment;
        let device = &self.target.device;
        let step_started = Instant::now();
        epoch.window.started.get_or_insert(step_started);
        let settle = || -> Result<(), TrainError> {
            if profiled {
                device
                    .sync()
                    .map_err(|e| TrainError::Readback(format!("{e:?}")))?;
            }
            Ok(())
        };
        let start = step * experiment.batch_size;
        let end = (start + experiment.batch_size).min(self.pipeline.train.len());
        let rows = (end - start) as u64;
        // Each step draws its own crops and flips from the seed and the step alone.
        let options = &mut self.pipeline.augmented;
        options.seed = BatchOptions::step_seed(experiment.seed, self.counters.steps as u64);
        let batches = match self.replicas.is_empty() {
            true => Batches::One(
                self.pipeline
                    .train
                    .batch(epoch.lanes[0].order.clone().slice(start..end), options)?,
            ),
            false => Batches::Shards(self.shards(epoch, start..end)?),
        };
        settle()?;
        let data_done = Instant::now();
        epoch.lr = experiment.schedule.lr_at(
            experiment.lr,
            epoch.index,
            self.counters.steps,
            self.steps_per_epoch * experiment.epochs,
        );
        let stepped = match batches {
            Batches::One(batch) => {
                let totals = &mut epoch.lanes[0].totals;
                let stepped = self.stepper.step(
                    model,
                    &self.precision,
                    batch,
                    epoch.lr,
                    |logits, loss, labels| {
                        totals.add(logits, labels, loss);
                        Ok(())
                    },
                    &settle,
                )?;
                epoch.lanes[0].totals.add_overflow(stepped.overflowed);
                (stepped.model, stepped.forward_done, stepped.backward_done)
            }
            Batches::Shards(shards) => {
                let lanes: Vec<usize> = shards.iter().map(|(lane, _)| *lane).collect();
                let shards = shards.into_iter().map(|(_, shard)| shard).collect();
                let collective = self.replicas.is_collective() && lanes.len() == epoch.lanes.len();
                let (model, outputs) = self
                    .stepper
                    .step_parallel(model, shards, epoch.lr, collective);
                for (lane, (logits, loss, labels)) in lanes.into_iter().zip(outputs) {
                    epoch.lanes[lane].totals.add(logits, labels, loss);
                }
                settle()?;
                let done = Instant::now();
                (model, done, done)
            }
        };
        let (model, forward_done, backward_done) = stepped;
        let compute_done = Instant::now();

        let window = &mut epoch.window;
        window.data += data_done - step_started;
        window.compute += compute_done - data_done;
        window.steps += 1;
        window.samples += rows;
        epoch.samples += rows;
        epoch.steps_done = step + 1;
        self.counters.steps += 1;
        self.counters.samples_seen += rows;
        self.launch_steps += 1;

        if profiled {
            let read_started = Instant::now();
            read_lanes(&epoch.lanes).await?;
            let ms = |from: Instant, to: Instant| (to - from).as_secs_f64() * 1e3;
            self.profile.push([
                ms(step_started, data_done),
                ms(data_done, forward_done),
                ms(forward_done, backward_done),
                ms(backward_done, compute_done),
                ms(read_started, Instant::now()),
            ]);
            // A synced step is not a normal step: keep it out of every throughput figure.
            epoch.window = ReadbackWindow::starting(Instant::now());
        }
        Ok((model, compute_done))
    }

    /// Each device's shard of rows `rows` of the epoch's order, built on that device; devices
    /// left without rows by a short last batch sit the step out.
    fn shards(&self, epoch: &Epoch, rows: Range<usize>) -> Result<Vec<(usize, Shard)>, TrainError> {
        let options = &self.pipeline.augmented;
        let batch_rows = rows.len() as f64;
        let devices = std::iter::once((&self.target.device, self.pipeline.train.images()))
            .chain(self.replicas.iter());
        let mut built = Vec::new();
        for (lane, ((device, images), rows)) in
            devices.zip(shards(rows, epoch.lanes.len())).enumerate()
        {
            if rows.is_empty() {
                continue;
            }
            // Each device draws its own crops and flips, from the step's seed and its place.
            let mut options = options.clone();
            options.seed ^= (lane as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let share = rows.len() as f64 / batch_rows;
            let (batch, classes) =
                images.batch(epoch.lanes[lane].order.clone().slice(rows), &options)?;
            let batch = (batch, Targets::Classes(classes));
            built.push((
                lane,
                Shard {
                    batch,
                    device: device.clone(),
                    share,
                },
            ));
        }
        Ok(built)
    }

    /// Reads the epoch's sums back (the only sync), counts the window by its kind, tells the
    /// listeners, and asks the loss watch whether to stop.
    async fn readback(
        &mut self,
        epoch: &mut Epoch,
        epoch_end: bool,
        on_event: &mut dyn FnMut(TrainEvent),
    ) -> Result<Readout, TrainError> {
        let sync_started = Instant::now();
        let sums = read_lanes(&epoch.lanes).await?;
        let done = Instant::now();
        let window = &epoch.window;
        self.precision
            .observe(sums.overflowed - epoch.overflows_seen, window.steps as u64);
        epoch.overflows_seen = sums.overflowed;
        let Sums {
            loss_sum, correct, ..
        } = sums;
        let window_secs = window.secs_until(done);
        let short_last = epoch_end
            && !self
                .pipeline
                .train
                .len()
                .is_multiple_of(self.experiment.batch_size);
        let first_short = short_last && !self.short_batch_met;
        self.short_batch_met |= short_last;
        let kind = ReadbackWindowKind::of(window.steps, self.launch_steps, first_short);
        self.speed
            .count(&mut self.counters, kind, window_secs, window.samples);
        let samples = epoch.samples.max(1) as f64;
        let (train_loss, train_accuracy) = (loss_sum / samples, correct / samples);
        if window.steps > 0 {
            on_event(TrainEvent::Progress(MetricsRow {
                wall_secs: self.wall_secs(),
                epoch: epoch.index + 1,
                step: epoch.steps_done,
                global_step: self.counters.steps,
                samples_seen: self.counters.samples_seen,
                train_loss,
                train_accuracy,
                samples_per_sec: window.samples as f64 / window_secs.max(1e-9),
                step_ms: window_secs * 1e3 / window.steps as f64,
                data_ms: window.data.as_secs_f64() * 1e3,
                compute_ms: window.compute.as_secs_f64() * 1e3,
                sync_ms: (done - sync_started).as_secs_f64() * 1e3,
                lr: epoch.lr,
            }));
        }
        let stops = self.loss_watch.stops(train_loss, epoch.index, on_event);
        Ok(Readout {
            train_loss,
            train_accuracy,
            done,
            stops,
        })
    }

    /// Records an epoch and its evaluation, tells the listeners, and asks the selection rule
    /// whether it is the best so far and whether the run stops here.
    pub(super) fn end_epoch(
        &mut self,
        epoch: usize,
        trained: &TrainedEpoch,
        evaluation: Option<&Evaluation>,
        model: &Classifier,
        on_event: &mut dyn FnMut(TrainEvent),
    ) -> Verdict {
        let counters = &mut self.counters;
        let held_out = evaluation.map(|e| (e.loss, e.accuracy));
        let watched = evaluation.map(|e| (e.loss, e.map.unwrap_or(e.accuracy)));
        let verdict = self
            .selection
            .observe(&mut counters.selection, epoch + 1, watched);
        if let Some((loss, accuracy)) = held_out {
            if counters.epochs_completed == 0 || accuracy > counters.best_eval_accuracy {
                counters.best_eval_accuracy = accuracy;
            }
            counters.eval_loss = loss;
            counters.eval_accuracy = accuracy;
        }
        counters.epochs_completed = epoch + 1;
        counters.train_loss = trained.loss;
        counters.train_accuracy = trained.accuracy;
        // Later epochs move the weights on; the best ones are held (a clone shares the
        // tensors, so this costs one set of weights on the device, not a copy now).
        if verdict.best && self.experiment.keep == Keep::Best && held_out.is_some() {
            self.best_model = Some(model.clone());
        }
        let split = |on: ValidatedOn| {
            let pick = |value: fn(&Evaluation) -> f64| {
                evaluation.filter(|_| self.validated_on == on).map(value)
            };
            (pick(|e| e.loss), pick(|e| e.accuracy))
        };
        let ((val_loss, val_accuracy), (test_loss, test_accuracy)) =
            (split(ValidatedOn::Validation), split(ValidatedOn::Test));
        on_event(TrainEvent::EpochEnd(EpochRow {
            epoch: epoch + 1,
            train_loss: Some(trained.loss),
            train_accuracy: Some(trained.accuracy),
            val_loss,
            val_accuracy,
            test_loss,
            test_accuracy,
            epoch_secs: Some(trained.secs),
            eval_secs: Some(evaluation.map_or(0.0, |e| e.secs)),
            samples_per_sec: Some(trained.samples as f64 / trained.secs.max(1e-9)),
        }));
        verdict
    }

    /// Hands the epoch to the store; a checkpoint that cannot be kept is a warning, not an end.
    pub(super) async fn checkpoint(
        &mut self,
        model: &Classifier,
        best: bool,
        on_event: &mut dyn FnMut(TrainEvent),
    ) {
        self.counters.wall_secs = self.wall_secs();
        self.counters.diverging_warned = self.loss_watch.diverging_warned;
        self.counters.loss_scale = self.precision.loss_scale();
        if !self.store.keeps_checkpoints() {
            return;
        }
        let saved =
            match super::device_reads::checkpoint_files(model, &self.stepper.optimizer).await {
                Ok(files) => self.store.save_checkpoint(&files, &self.counters, best),
                Err(reason) => Err(reason),
            };
        if let Err(reason) = saved {
            on_event(TrainEvent::Warning(TrainWarning::CheckpointNotSaved {
                reason,
            }));
        }
    }

    /// Warns when the epoch's evaluation is no better than guessing.
    pub(super) fn check_progress(
        &self,
        epoch: usize,
        evaluation: Option<&Evaluation>,
        on_event: &mut dyn FnMut(TrainEvent),
    ) {
        if let Some(evaluation) = evaluation {
            self.loss_watch
                .check_accuracy(evaluation.accuracy, self.validated_on, epoch, on_event);
        }
    }

    /// Ends the run after `epoch` because the monitored figure stopped improving; a run that
    /// ends so has completed.
    pub(super) fn stop_early(&mut self, epoch: usize) {
        self.stopped_early = Some(EarlyStop {
            after_epoch: epoch + 1,
            best_epoch: self.counters.selection.best_epoch,
            monitor: self.selection.monitor,
            patience: self.selection.patience,
        });
    }

    /// Asks the judge, if any, about `epoch` (0-based); true when it ends the run there, which
    /// then has completed, its summary naming the judge's rule.
    pub(super) fn judged_over(&mut self, epoch: usize, evaluation: Option<&Evaluation>) -> bool {
        let Some(judge) = self.judge.as_mut() else {
            return false;
        };
        // The last epoch ends the run anyway: nothing is saved by pruning it.
        if epoch + 1 >= self.experiment.epochs {
            return false;
        }
        self.pruned = judge.judge(epoch + 1, evaluation.map(|e| (e.loss, e.accuracy)));
        self.pruned.is_some()
    }

    /// Ends the run as `outcome` says.
    pub(super) fn stop(&mut self, outcome: RunOutcome) {
        self.outcome = outcome;
    }
}
