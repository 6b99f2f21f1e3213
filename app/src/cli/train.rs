//! `kiln train`: flags over a preset or a config file, checked once, then one run.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Context;
use clap::Args;
use kiln_core::config::{
    self, ClassWeights, ExperimentDraft, InputScaling, Keep, LossInput, Monitor, OptimizerSpec,
    Precision, Schedule, Setting, Validation,
};
use kiln_core::data::DatasetSpec;
use kiln_core::device::DeviceChoice;
use kiln_core::model::{InitScheme, ModelSpec};
use kiln_core::run::{self, Stage};
use kiln_core::train::{Control, RunOutcome, TrainEvent};

use super::progress::Reporter;

/// Options of `kiln train`; each flag overrides the preset or config file.
#[derive(Debug, Args)]
pub struct TrainArgs {
    /// Continue a stopped run from its last checkpoint, in its own folder, with its own config.
    #[arg(
        long,
        value_name = "RUN_DIR",
        conflicts_with_all = [
            "preset", "config", "dataset", "data_dir", "model", "optimizer", "lr", "momentum",
            "nesterov", "weight_decay", "schedule", "batch", "epochs", "seed", "device",
            "input_scaling", "init", "loss", "name", "keep_going_on_nan", "profile_steps", "crop_padding", "flip",
            "precision", "validation", "val_split", "test_split", "early_stop", "monitor",
            "min_delta", "keep", "class_weights",
        ]
    )]
    resume: Option<PathBuf>,
    /// Start from a shipped preset (see `kiln presets`).
    #[arg(long, conflicts_with = "config")]
    preset: Option<String>,
    /// Start from a config file, e.g. a run's config.toml to rerun it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// synthetic, mnist, fashion-mnist, cifar10, or folder:PATH[@SIZE].
    #[arg(long)]
    dataset: Option<DatasetSpec>,
    /// Folder holding the data set's files, or a parent of mnist/, fashion-mnist/, cifar-10-batches-bin/.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// mlp:512,512 (widths[:relu|tanh|gelu[:dropout]]), cnn, vgg16, vgg16-bn, vgg16@224, resnet18.
    #[arg(long)]
    model: Option<ModelSpec>,
    /// sgd, adam or adamw.
    #[arg(long)]
    optimizer: Option<String>,
    /// Base learning rate.
    #[arg(long)]
    lr: Option<f64>,
    /// SGD momentum factor.
    #[arg(long)]
    momentum: Option<f64>,
    /// Use Nesterov momentum (SGD).
    #[arg(long)]
    nesterov: bool,
    /// Weight decay (L2 for sgd and adam, decoupled for adamw).
    #[arg(long)]
    weight_decay: Option<f64>,
    /// constant, step:EVERY_EPOCHS:GAMMA, cosine or cosine:MIN_LR.
    #[arg(long)]
    schedule: Option<Schedule>,
    /// Images per step.
    #[arg(long)]
    batch: Option<usize>,
    /// Passes over the training images.
    #[arg(long)]
    epochs: Option<usize>,
    /// Seed for init, shuffling and dropout.
    #[arg(long)]
    seed: Option<u64>,
    /// auto, cpu or gpu:N (see `kiln devices`).
    #[arg(long)]
    device: Option<DeviceChoice>,
    /// unit-range (x/255), raw (0-255) or standardize.
    #[arg(long)]
    input_scaling: Option<InputScaling>,
    /// pytorch-default or glorot-uniform.
    #[arg(long)]
    init: Option<InitScheme>,
    /// logits (PyTorch; Keras on TensorFlow) or probabilities (softmax clipped at 1e-7: Keras on JAX or PyTorch).
    #[arg(long)]
    loss: Option<LossInput>,
    /// Augment training batches: pad each side by N zero pixels, then crop back at random.
    #[arg(long, value_name = "N")]
    crop_padding: Option<usize>,
    /// Augment training batches: mirror each image left to right with probability 1/2.
    #[arg(long)]
    flip: bool,
    /// f32, or f16: mixed precision (f32 master weights, f16 arithmetic, a dynamic loss scale) on
    /// a GPU whose adapter has 16-bit float shaders.
    #[arg(long)]
    precision: Option<Precision>,
    /// Profiling mode: time N steps after warm-up phase by phase (data, forward, backward,
    /// optimizer, host sync), syncing the device after each; the medians go into summary.json.
    #[arg(long, value_name = "N")]
    profile_steps: Option<usize>,
    // The flags below take their help from the settings table the window's tooltips use.
    #[arg(long, value_name = "split|test", help = Setting::Validation.help())]
    validation: Option<Validation>,
    #[arg(long, value_name = "FRACTION", help = Setting::ValSplit.help())]
    val_split: Option<f64>,
    #[arg(long, value_name = "FRACTION", help = Setting::TestSplit.help())]
    test_split: Option<f64>,
    #[arg(long, value_name = "PATIENCE", help = Setting::EarlyStop.help())]
    early_stop: Option<usize>,
    #[arg(long, value_name = "val-loss|val-accuracy", help = Setting::Monitor.help())]
    monitor: Option<Monitor>,
    #[arg(long, value_name = "DELTA", help = Setting::MinDelta.help())]
    min_delta: Option<f64>,
    #[arg(long, value_name = "best|last", help = Setting::Keep.help())]
    keep: Option<Keep>,
    #[arg(long, value_name = "none|balanced", help = Setting::ClassWeights.help())]
    class_weights: Option<ClassWeights>,
    /// Go on training after the loss becomes NaN or infinite (by default the run stops).
    #[arg(long)]
    keep_going_on_nan: bool,
    /// Where run folders go.
    #[arg(long, value_name = "DIR", default_value = "runs")]
    runs_dir: PathBuf,
    /// Name of the run (part of its folder's name).
    #[arg(long)]
    name: Option<String>,
}

impl TrainArgs {
    /// Whether `--resume` was given, which only `kiln train` understands.
    pub(super) fn is_resume(&self) -> bool {
        self.resume.is_some()
    }

    /// Layers flags over the starting draft; the result still goes through `validate`.
    pub(super) fn into_draft(self) -> anyhow::Result<(ExperimentDraft, PathBuf)> {
        let mut draft = match (&self.preset, &self.config) {
            (Some(name), _) => config::preset(name)?,
            (None, Some(path)) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("could not read {}", path.display()))?;
                ExperimentDraft::from_toml(&text, &path.display().to_string())?
            }
            (None, None) => ExperimentDraft::default(),
        };
        if let Some(v) = self.dataset {
            draft.dataset = v;
        }
        if let Some(v) = self.data_dir {
            draft.data_dir = Some(v);
        }
        if let Some(v) = self.model {
            draft.model = v;
        }
        if let Some(name) = &self.optimizer {
            draft.optimizer = OptimizerSpec::from_name(name)?;
        }
        if self.momentum.is_some() || self.nesterov {
            match &mut draft.optimizer {
                OptimizerSpec::Sgd {
                    momentum, nesterov, ..
                } => {
                    if let Some(v) = self.momentum {
                        *momentum = v;
                    }
                    *nesterov |= self.nesterov;
                }
                other => anyhow::bail!(
                    "--momentum and --nesterov apply to sgd, but the optimizer is {}; add --optimizer sgd",
                    other.name()
                ),
            }
        }
        if let Some(v) = self.weight_decay {
            draft.optimizer.set_weight_decay(v);
        }
        if let Some(v) = self.lr {
            draft.lr = v;
        }
        if let Some(v) = self.schedule {
            draft.schedule = v;
        }
        if let Some(v) = self.batch {
            draft.batch_size = v;
        }
        if let Some(v) = self.epochs {
            draft.epochs = v;
        }
        if let Some(v) = self.seed {
            draft.seed = v;
        }
        if let Some(v) = self.device {
            draft.device = v;
        }
        if let Some(v) = self.input_scaling {
            draft.input_scaling = v;
        }
        if let Some(v) = self.init {
            draft.init = v;
        }
        if let Some(v) = self.loss {
            draft.loss = v;
        }
        if let Some(v) = self.crop_padding {
            draft.crop_padding = v;
        }
        if self.flip {
            draft.flip = true;
        }
        if let Some(v) = self.precision {
            draft.precision = v;
        }
        if let Some(v) = self.profile_steps {
            draft.profile_steps = v;
        }
        if let Some(v) = self.validation {
            draft.validation = v;
        }
        if let Some(v) = self.val_split {
            // A fraction asks for a validation split, also over a preset validated on test.
            draft.validation = Validation::Split;
            draft.val_split = v;
        }
        if let Some(v) = self.test_split {
            draft.test_split = v;
        }
        if let Some(v) = self.early_stop {
            draft.early_stop = v;
        }
        if let Some(v) = self.monitor {
            draft.monitor = v;
        }
        if let Some(v) = self.min_delta {
            draft.min_delta = v;
        }
        if let Some(v) = self.keep {
            draft.keep = v;
        }
        if let Some(v) = self.class_weights {
            draft.class_weights = v;
        }
        if self.keep_going_on_nan {
            draft.stop_on_non_finite_loss = false;
        }
        if let Some(v) = self.name {
            draft.name = v;
        }
        Ok((draft, self.runs_dir))
    }
}

/// Runs `kiln train`; the first Ctrl-C cancels at the next step boundary so the run ends with a
/// complete folder and summary.json, a second one ends the process at once.
pub fn run(args: TrainArgs) -> anyhow::Result<()> {
    let resume_folder = args.resume.clone();
    let (experiment, runs_dir) = match &resume_folder {
        Some(folder) => (run::resume_plan(folder)?.0, PathBuf::new()),
        None => {
            let (draft, runs_dir) = args.into_draft()?;
            (draft.validate()?, runs_dir)
        }
    };
    let control = Arc::new(Control::new());
    cancel_on_interrupt(&control);
    let mut reporter = Reporter::new(&experiment);
    let reporter_ref = &reporter;
    let mut on_stage = |stage| match stage {
        Stage::LoadingData => reporter_ref.line(&format!("loading {}…", experiment.dataset)),
        loaded @ Stage::DataLoaded { .. } => reporter_ref.line(&loaded.to_string()),
        Stage::FolderCreated(path) => reporter_ref.line(&format!("run folder {}", path.display())),
    };
    let mut on_event = |event: &TrainEvent| reporter_ref.event(event);
    let record = match &resume_folder {
        Some(folder) => run::resume(folder, &control, &mut on_stage, &mut on_event),
        None => run::execute(
            &experiment,
            &runs_dir,
            &control,
            &mut on_stage,
            &mut on_event,
        ),
    };
    reporter.finish();
    let record = record?;
    match record.summary.outcome {
        RunOutcome::Completed => Ok(()),
        RunOutcome::Cancelled => {
            eprintln!(
                "cancelled; {} keeps everything up to the last step. `kiln train --resume {}` goes on from the last finished epoch",
                record.path.display(),
                record.path.display()
            );
            // Scripts must not mistake an interrupted run for a finished one.
            Err(anyhow::anyhow!(
                "the run was cancelled before its last epoch"
            ))
        }
        RunOutcome::Diverged => anyhow::bail!(
            "the run diverged (the loss became NaN or infinite); try a lower learning rate. Its folder is {}",
            record.path.display()
        ),
        RunOutcome::Failed => anyhow::bail!(
            "the run failed: {}",
            record.summary.error.unwrap_or_default()
        ),
    }
}

/// Turns Ctrl-C into a cancel of `control`; a second Ctrl-C exits with the usual 130.
fn cancel_on_interrupt(control: &Arc<Control>) {
    let control = Arc::clone(control);
    let presses = AtomicUsize::new(0);
    let installed = ctrlc::set_handler(move || {
        if presses.fetch_add(1, Ordering::SeqCst) == 0 {
            eprintln!("\ncancelling at the next step (Ctrl-C again to quit at once)…");
            control.cancel();
        } else {
            std::process::exit(130);
        }
    });
    if let Err(e) = installed {
        // Training still works; only the graceful stop on Ctrl-C is lost.
        eprintln!("warning: Ctrl-C will end the run abruptly: {e}");
    }
}
