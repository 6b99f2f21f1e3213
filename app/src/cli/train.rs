//! `kiln train`: flags over a preset or a config file, checked once, then one run.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Context;
use clap::{ArgMatches, Args, Command, FromArgMatches};
use kiln_core::config::{self, ExperimentDraft, OptimizerSpec, Schedule, Setting, Validation};
use kiln_core::data::DatasetSpec;
use kiln_core::device::DeviceChoice;
use kiln_core::model::ModelSpec;
use kiln_core::run::{self, Stage};
use kiln_core::train::{Control, RunOutcome, TrainEvent};

use super::progress::Reporter;
use super::setting_flags::{Augmentation, SettingFlags, Training};

/// Options of `kiln train`; each flag overrides the preset or config file. `--resume` refuses
/// every flag that would change the run's config, whichever flags exist (see `augment_args`).
#[derive(Debug)]
pub struct TrainArgs(TrainFlags);

/// The flags a resumed run still takes: where it goes on.
const RESUME_TAKES: &[&str] = &["resume", "device", "devices", "runs_dir"];

impl Args for TrainArgs {
    fn augment_args(command: Command) -> Command {
        let before: Vec<clap::Id> = command
            .get_arguments()
            .map(|a| a.get_id().clone())
            .collect();
        let command = TrainFlags::augment_args(command);
        // Every flag these add, the settings table's included, changes the config a resumed
        // run keeps; only the ones that say where it goes on are left to it.
        let changes_config: Vec<clap::Id> = command
            .get_arguments()
            .map(|a| a.get_id().clone())
            .filter(|id| !before.contains(id) && !RESUME_TAKES.contains(&id.as_str()))
            .collect();
        command.mut_arg("resume", |resume| resume.conflicts_with_all(changes_config))
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

impl FromArgMatches for TrainArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        TrainFlags::from_arg_matches(matches).map(TrainArgs)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }
}

/// The flags of `kiln train`, as clap reads them.
#[derive(Debug, Args)]
struct TrainFlags {
    /// Continue a stopped run from its last checkpoint, in its own folder, with its own config
    /// (and on other devices with --device or --devices).
    #[arg(long, value_name = "RUN_DIR")]
    resume: Option<PathBuf>,
    /// Start from a shipped preset (see `kiln presets`).
    #[arg(long, conflicts_with = "config")]
    preset: Option<String>,
    /// Start from a config file, e.g. a run's config.toml to rerun it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Lay that framework's defaults over the preset or config (init, input scaling, loss,
    /// batch norm, padding, decay, resize, Adam's ε), as its `-pytorch`/`-keras` preset has
    /// them; the other flags still apply after it.
    #[arg(long, value_name = "pytorch|keras", value_parser = config::Flavour::from_word)]
    flavour: Option<config::Flavour>,
    // Every flag that sets a setting takes its help from the settings table the window's
    // tooltips use, so the two never say different things; the value's syntax is its name.
    #[arg(long, value_name = "synthetic|mnist|fashion-mnist|cifar10|folder:PATH[@SIZE]|csv:PATH[@SIZE]", help = Setting::Dataset.help())]
    dataset: Option<DatasetArg>,
    #[command(flatten)]
    columns: super::label_columns::LabelColumnFlags,
    /// Folder holding the data set's files, or a parent of mnist/, fashion-mnist/, cifar-10-batches-bin/.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    #[arg(long, value_name = "mlp:W,W[:relu|tanh|gelu[:DROPOUT]]|cnn|vgg16[-bn][@SIZE]|resnet18|ARCH (kiln weights list)", help = Setting::Model.help())]
    model: Option<ModelSpec>,
    /// Pretrained weights to start from, for torchvision's architectures (`kiln weights list`
    /// names them): `imagenet` (torchvision's, after `kiln weights fetch`) or a .pth or
    /// .safetensors file. Input scaling becomes imagenet unless --input-scaling says otherwise,
    /// and a folder's image size the weights' own (224; 240–300 for EfficientNet-B1–B3) unless
    /// --dataset gives it (`folder:PATH@SIZE`).
    #[arg(long, value_name = "imagenet|FILE")]
    weights: Option<kiln_core::weights::WeightsSource>,
    #[arg(long, value_name = "sgd|adam|adamw", help = Setting::Optimizer.help())]
    optimizer: Option<String>,
    #[arg(long, value_name = "FACTOR", help = Setting::Momentum.help())]
    momentum: Option<f64>,
    #[arg(long, help = Setting::Nesterov.help())]
    nesterov: bool,
    #[arg(long, value_name = "DECAY", help = Setting::WeightDecay.help())]
    weight_decay: Option<f64>,
    #[arg(long, value_name = "constant|step:EVERY:GAMMA|cosine[:MIN_LR]", help = Setting::Schedule.help())]
    schedule: Option<Schedule>,
    #[arg(long, value_name = "auto|cpu|gpu:N|cuda:N|remote:HOST:PORT/N", help = Setting::Device.help())]
    device: Option<DeviceChoice>,
    /// Train data parallel: each step's batch is split across these devices (GPUs of this
    /// machine, or devices of one box) and their gradients are summed by Burn's multi-device
    /// optimizer step, or on CUDA devices by Burn's collective all-reduce (NCCL); the learning
    /// rate is the whole batch's. The first device evaluates.
    #[arg(
        long,
        value_name = "gpu:0,gpu:1|cuda:0,cuda:1|remote:HOST:PORT/0,remote:HOST:PORT/1",
        conflicts_with = "device"
    )]
    devices: Option<String>,
    #[command(flatten)]
    settings: SettingFlags<Training>,
    #[command(flatten)]
    augmentation: SettingFlags<Augmentation>,
    /// Go on training after the loss becomes NaN or infinite (by default the run stops).
    #[arg(long)]
    keep_going_on_nan: bool,
    /// Where run folders go.
    #[arg(long, value_name = "DIR", default_value = "runs")]
    runs_dir: PathBuf,
    #[arg(long, help = Setting::Name.help())]
    name: Option<String>,
}

impl TrainArgs {
    /// Whether `--resume` was given, which only `kiln train` understands.
    pub(super) fn is_resume(&self) -> bool {
        self.0.resume.is_some()
    }

    /// Layers flags over the starting draft; the result still goes through `validate`.
    pub(super) fn into_draft(self) -> anyhow::Result<(ExperimentDraft, PathBuf)> {
        self.0.into_draft()
    }
}

/// `--dataset` as given: the set, and whether the text named its image size (`@224`).
#[derive(Debug, Clone)]
struct DatasetArg {
    spec: DatasetSpec,
    gives_size: bool,
}

impl std::str::FromStr for DatasetArg {
    type Err = kiln_core::data::DataError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(DatasetArg {
            spec: text.parse()?,
            gives_size: DatasetSpec::text_gives_size(text),
        })
    }
}

impl TrainFlags {
    /// The devices `--device` or `--devices` names, if either was given.
    fn devices(&self) -> anyhow::Result<Option<Vec<DeviceChoice>>> {
        match (&self.device, &self.devices) {
            (Some(device), _) => Ok(Some(vec![device.clone()])),
            (None, Some(list)) => Ok(Some(
                kiln_core::device::parse_devices(list).context("--devices")?,
            )),
            (None, None) => Ok(None),
        }
    }

    /// Layers flags over the starting draft; the result still goes through `validate`.
    fn into_draft(self) -> anyhow::Result<(ExperimentDraft, PathBuf)> {
        let devices = self.devices()?;
        let mut draft = match (&self.preset, &self.config) {
            (Some(name), _) => config::preset(name)?,
            (None, Some(path)) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("could not read {}", path.display()))?;
                ExperimentDraft::from_toml(&text, &path.display().to_string())?
            }
            (None, None) => ExperimentDraft::default(),
        };
        if let Some(flavour) = self.flavour {
            draft = flavour.apply(&draft);
        }
        let dataset_sized = self.dataset.as_ref().is_some_and(|arg| arg.gives_size);
        if let Some(arg) = self.dataset {
            draft.dataset = arg.spec;
        }
        self.columns.apply(&mut draft.dataset)?;
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
        if let Some(v) = self.schedule {
            draft.schedule = v;
        }
        if let Some(devices) = devices {
            draft.set_devices(devices);
        }
        if let Some(source) = self.weights {
            draft.weights = Some(source);
            // torchvision's weights were trained on ImageNet-normalized pixels, at a size of
            // their own; a folder whose size the command line leaves open takes it.
            draft.input_scaling = kiln_core::config::InputScaling::ImageNet;
            if let Some(arch) = draft.model.torchvision()
                && !dataset_sized
                && draft.dataset.own_files().is_some()
            {
                draft.dataset = draft
                    .dataset
                    .clone()
                    .with_image_size(arch.weights_side() as u32);
            }
        }
        let validated_on = draft.validation;
        self.augmentation.apply(&mut draft)?;
        self.settings.apply(&mut draft)?;
        if self.settings.gave(Setting::ValSplit) {
            // A fraction asks for a validation split, also over a preset validated on test.
            draft.validation = Validation::Split;
        }
        if let Some(keep) = validated_on.keep_after_switch_to(draft.validation)
            && !self.settings.gave(Setting::Keep)
        {
            draft.keep = keep;
        }
        if self.keep_going_on_nan {
            draft.stop_on_non_finite_loss = false;
        }
        if let Some(v) = self.name {
            draft.name = v;
        }
        draft.anchor_paths();
        Ok((draft, self.runs_dir))
    }
}

/// Runs `kiln train`; the first Ctrl-C cancels at the next step boundary so the run ends with a
/// complete folder and summary.json, a second one ends the process at once.
pub fn run(args: TrainArgs) -> anyhow::Result<()> {
    let resume_folder = args.0.resume.clone();
    let resume_device = args.0.devices()?;
    let (experiment, runs_dir) = match &resume_folder {
        Some(folder) => (
            run::resume_plan(folder, resume_device.clone())?.0,
            PathBuf::new(),
        ),
        None => {
            let (draft, runs_dir) = args.into_draft()?;
            (draft.validate()?, runs_dir)
        }
    };
    let control = Arc::new(Control::new());
    cancel_on_interrupt(&control);
    let mut reporter = Reporter::new(&experiment);
    if let (Some(_), Some(devices)) = (&resume_folder, &resume_device) {
        reporter.line(&format!(
            "resuming on {} (config.toml keeps the devices the run started on)",
            kiln_core::device::devices_text(devices)
        ));
    }
    let reporter_ref = &reporter;
    let mut on_stage = |stage| match stage {
        Stage::LoadingData => reporter_ref.line(&format!("loading {}…", experiment.dataset)),
        loaded @ Stage::DataLoaded { .. } => reporter_ref.line(&loaded.to_string()),
        Stage::FolderCreated(path) => reporter_ref.line(&format!("run folder {}", path.display())),
    };
    let mut on_event = |event: &TrainEvent| reporter_ref.event(event);
    let record = match &resume_folder {
        Some(folder) => run::resume(
            folder,
            resume_device,
            &control,
            &mut on_stage,
            &mut on_event,
        ),
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
pub(super) fn cancel_on_interrupt(control: &Arc<Control>) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use kiln_core::config::Keep;

    #[derive(Debug, Parser)]
    struct Train {
        #[command(flatten)]
        args: TrainArgs,
    }

    fn draft_of(flags: &[&str]) -> ExperimentDraft {
        let args = Train::try_parse_from(std::iter::once("kiln").chain(flags.iter().copied()))
            .expect("the flags parse")
            .args;
        args.into_draft().expect("a draft").0
    }

    #[test]
    fn a_validation_split_over_a_preset_keeps_the_best_epoch_unless_told_otherwise() {
        let preset = draft_of(&["--preset", "fashion-mlp"]);
        assert_eq!(
            (preset.validation, preset.keep),
            (Validation::Test, Keep::Last)
        );
        let split = draft_of(&["--preset", "fashion-mlp", "--val-split", "0.1"]);
        assert_eq!(
            (split.validation, split.keep),
            (Validation::Split, Keep::Best)
        );
        let told = draft_of(&[
            "--preset",
            "fashion-mlp",
            "--val-split",
            "0.1",
            "--keep",
            "last",
        ]);
        assert_eq!(told.keep, Keep::Last);
    }

    /// `--resume` keeps the run's own config, so it refuses every flag that would change it,
    /// the settings table's rows included, without a list to keep: only where the run goes on
    /// is left to it.
    #[test]
    fn resume_refuses_every_flag_that_would_change_the_config() {
        let parse = |flags: &[&str]| {
            Train::try_parse_from(["kiln", "--resume", "runs/1-a"].iter().chain(flags))
        };
        let defaults = ExperimentDraft::default();
        for row in kiln_core::settings::rows() {
            let flag = format!("--{}", row.setting().flag());
            let value = row.show(&defaults);
            let flags: Vec<&str> = match row.value_name() {
                Some(_) => vec![&flag, &value],
                None => vec![&flag],
            };
            let refusal = parse(&flags).unwrap_err().to_string();
            assert!(refusal.contains("cannot be used with"), "{flag}: {refusal}");
        }
        for flag in ["--preset", "--model", "--lr", "--name"] {
            assert!(parse(&[flag, "x"]).is_err(), "{flag}");
        }
        assert!(parse(&["--device", "cpu"]).is_ok());
        assert!(parse(&["--devices", "gpu:0,gpu:1"]).is_ok());
    }

    #[test]
    fn pretrained_weights_size_a_folder_as_they_were_trained_unless_the_size_is_given() {
        let image_size = |dataset: &str, model: &str, weights: bool| {
            let mut flags = vec!["--dataset", dataset, "--model", model];
            if weights {
                flags.extend(["--weights", "imagenet"]);
            }
            draft_of(&flags).dataset.image_size()
        };
        assert_eq!(
            image_size("folder:photos", "efficientnet-b2", true),
            Some(288)
        );
        assert_eq!(image_size("csv:labels.csv", "vit-b-16", true), Some(224));
        assert_eq!(
            image_size("folder:photos@64", "efficientnet-b2", true),
            Some(64)
        );
        assert_eq!(
            image_size("folder:photos", "efficientnet-b2", false),
            Some(kiln_core::data::DEFAULT_FOLDER_IMAGE_SIZE_PX)
        );
    }

    #[test]
    fn relative_data_and_weights_paths_are_kept_absolute() {
        let draft = draft_of(&[
            "--dataset",
            "folder:photos@16",
            "--data-dir",
            "idx",
            "--model",
            "resnet18-imagenet",
            "--weights",
            "start.pth",
        ]);
        let here = std::env::current_dir().unwrap();
        match &draft.dataset {
            kiln_core::data::DatasetSpec::Folder { path, image_size } => {
                assert_eq!((path, *image_size), (&here.join("photos"), 16));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(draft.data_dir, Some(here.join("idx")));
        assert_eq!(
            draft.weights,
            Some(kiln_core::weights::WeightsSource::File(
                here.join("start.pth")
            ))
        );
    }
}
