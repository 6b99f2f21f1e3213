//! One run from start to end: load the data, check the experiment against it, pick the device,
//! create (or reopen) the run folder, train, and record every event there. Nothing is written
//! before every check has passed. In a browser page ([`execute_in_page`], [`resume_in_page`])
//! the same steps run on the page's devices, into a run folder among the page's runs.

use kiln_formats::files::{Disk, FileTree};
use std::path::{Path, PathBuf};
#[cfg(not(target_arch = "wasm32"))]
use std::sync::Arc;
use web_time::Instant;

use crate::config::{ConfigError, Experiment};
use crate::data::{self, DataError, ImageDataset};
use crate::device::{self, DeviceChoice, DeviceError};
use crate::run_folder::{self, CONFIG_FILE, CheckpointError, FolderError, ResumePoint, Slot};
use crate::run_folder::{FolderStore, RunFolder};
use crate::train::RunOutcome;
use crate::train::{self, Control, Preparation, RunSummary, TrainDevice, TrainError, TrainEvent};

/// Why a run could not start or could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The data set could not be loaded.
    #[error(transparent)]
    Data(#[from] DataError),
    /// The configuration does not fit the data.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The device could not be chosen.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// Training failed.
    #[error(transparent)]
    Train(#[from] TrainError),
    /// The run folder cannot be resumed.
    #[error(transparent)]
    Resume(#[from] ResumeError),
    /// A file of the run folder could not be written.
    #[error(transparent)]
    Folder(#[from] FolderError),
}

/// What a finished [`execute`] hands back.
#[derive(Debug)]
pub struct RunRecord {
    /// The run folder.
    pub path: PathBuf,
    /// The run's figures, as written to `summary.json`.
    pub summary: RunSummary,
}

/// Notices from [`execute`] before training starts, so a front end can show what is happening.
#[derive(Debug, Clone, PartialEq)]
pub enum Stage {
    /// Reading or generating the data set.
    LoadingData,
    /// The data set is in memory.
    DataLoaded {
        /// Its name.
        name: String,
        /// Training images.
        train_len: usize,
        /// Validation images (0 when the run validates on test or not at all).
        val_len: usize,
        /// Test images.
        test_len: usize,
        /// Seconds it took.
        secs: f64,
    },
    /// The run folder exists.
    FolderCreated(PathBuf),
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::LoadingData => f.write_str("loading the data set"),
            Self::DataLoaded {
                name,
                train_len,
                val_len,
                test_len,
                secs,
            } => {
                let validation = match val_len {
                    0 => String::new(),
                    n => format!(", {n} validation"),
                };
                write!(
                    f,
                    "{name}: {train_len} training{validation} and {test_len} test images, read in {secs:.2} s"
                )
            }
            Self::FolderCreated(path) => write!(f, "run folder {}", path.display()),
        }
    }
}

/// Loads the data, checks the experiment against it, picks the device, creates the run folder,
/// trains, and records every event. Nothing is written before every check has passed.
#[cfg(not(target_arch = "wasm32"))]
pub fn execute(
    experiment: &Experiment,
    runs_dir: &Path,
    control: &Arc<Control>,
    on_stage: &mut dyn FnMut(Stage),
    on_event: &mut dyn FnMut(&TrainEvent),
) -> Result<RunRecord, RunError> {
    execute_judged(experiment, runs_dir, control, None, on_stage, on_event)
}

/// [`execute`] with a judge asked after each evaluated epoch whether the run ends there: a
/// sweep's trial under a pruning rule.
#[cfg(not(target_arch = "wasm32"))]
pub fn execute_judged(
    experiment: &Experiment,
    runs_dir: &Path,
    control: &Arc<Control>,
    judge: Option<Box<dyn train::EpochJudge>>,
    on_stage: &mut dyn FnMut(Stage),
    on_event: &mut dyn FnMut(&TrainEvent),
) -> Result<RunRecord, RunError> {
    let prepared = prepare(experiment, None, on_stage)?;
    let folder = RunFolder::create(runs_dir, experiment)?;
    on_stage(Stage::FolderCreated(folder.path().to_owned()));
    let launch = Launch {
        resume: None,
        judge,
    };
    train_into(experiment, &prepared, launch, folder, control, on_event)
}

/// Why a run folder cannot be resumed, besides the errors any run can meet.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// The folder has no readable config.
    #[error("{path} is not a run folder Kiln can resume: {reason}")]
    NotARun {
        /// The folder.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Every epoch already ran.
    #[error("{path} already finished all {epochs} epochs; there is nothing to resume")]
    Finished {
        /// The folder.
        path: PathBuf,
        /// Its epochs.
        epochs: usize,
    },
    /// It trained on files a page's visitor chose, which the page no longer holds.
    #[error(
        "{path} trained on {data}, which this page no longer holds (a page keeps the files chosen only while it is open): choose it again in Setup, then Resume run"
    )]
    DataGone {
        /// The folder.
        path: PathBuf,
        /// The chosen folder or files the run names.
        data: PathBuf,
    },
    /// It completed and kept its model but not its checkpoints, as a page's runs do.
    #[error(
        "{path} completed and keeps its model, not its checkpoints; there is nothing to resume"
    )]
    Completed {
        /// The folder.
        path: PathBuf,
    },
    /// Early stopping ended it: its patience had run out.
    #[error(
        "{path} stopped early after epoch {epoch} because validation stopped improving; there is nothing to resume (start a new run with a higher early_stop to train longer)"
    )]
    StoppedEarly {
        /// The folder.
        path: PathBuf,
        /// Its last epoch.
        epoch: usize,
    },
    /// The checkpoint could not be found or read.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
}

/// The experiment of a past run and the checkpoint it would resume from; `devices`, when given,
/// replace the devices the run started on (the way on when a GPU or a box is lost).
pub fn resume_plan(
    run_folder: &Path,
    devices: Option<Vec<DeviceChoice>>,
) -> Result<(Experiment, ResumePoint), ResumeError> {
    resume_plan_in(&Disk, run_folder, devices)
}

/// [`resume_plan`] of a run folder in `tree`: the disk, or a page's runs.
pub fn resume_plan_in(
    tree: &dyn FileTree,
    run_folder: &Path,
    devices: Option<Vec<DeviceChoice>>,
) -> Result<(Experiment, ResumePoint), ResumeError> {
    let not_a_run = |reason: String| ResumeError::NotARun {
        path: run_folder.to_owned(),
        reason,
    };
    let config_path = run_folder.join(CONFIG_FILE);
    let text = run_folder::read_bytes(tree, &config_path)
        .and_then(|bytes| {
            String::from_utf8(bytes)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
        })
        .map_err(|e| not_a_run(format!("could not read config.toml ({e})")))?;
    let experiment = crate::config::ExperimentDraft::from_run_config(&text, "config.toml")
        .and_then(|mut draft| {
            // config.toml keeps the device the run started on; only this resume moves.
            if let Some(devices) = devices {
                draft.set_devices(devices);
            }
            draft.validate()
        })
        .map_err(|e| not_a_run(e.to_string()))?;
    let (folder, state) = match run_folder::find_in(tree, run_folder, Slot::Last) {
        Err(CheckpointError::Missing(path))
            if tree.is_file(&run_folder.join(run_folder::MODEL_FILE)) =>
        {
            return Err(ResumeError::Completed { path });
        }
        found => found?,
    };
    let counters = &state.counters;
    if counters.is_over(experiment.epochs, experiment.early_stop) {
        let path = run_folder.to_owned();
        return Err(match counters.epochs_completed >= experiment.epochs {
            true => ResumeError::Finished {
                path,
                epochs: experiment.epochs,
            },
            false => ResumeError::StoppedEarly {
                path,
                epoch: counters.epochs_completed,
            },
        });
    }
    Ok((experiment, ResumePoint { folder, state }))
}

/// Continues the run in `run_folder` from its last checkpoint, in the same folder: rows written
/// after that checkpoint are dropped, and the run ends as the uninterrupted run would have.
/// `devices` move it to other devices than it started on.
#[cfg(not(target_arch = "wasm32"))]
pub fn resume(
    run_folder: &Path,
    devices: Option<Vec<DeviceChoice>>,
    control: &Arc<Control>,
    on_stage: &mut dyn FnMut(Stage),
    on_event: &mut dyn FnMut(&TrainEvent),
) -> Result<RunRecord, RunError> {
    resume_judged(run_folder, devices, control, None, on_stage, on_event)
}

/// [`resume`] with a judge asked after each evaluated epoch whether the run ends there.
#[cfg(not(target_arch = "wasm32"))]
pub fn resume_judged(
    run_folder: &Path,
    devices: Option<Vec<DeviceChoice>>,
    control: &Arc<Control>,
    judge: Option<Box<dyn train::EpochJudge>>,
    on_stage: &mut dyn FnMut(Stage),
    on_event: &mut dyn FnMut(&TrainEvent),
) -> Result<RunRecord, RunError> {
    // First, so a folder another process writes is refused before anything is read or loaded.
    let lock = run_folder::FolderLock::acquire(run_folder)?;
    let (experiment, point) = resume_plan(run_folder, devices)?;
    let resumes_after = Some(point.state.counters.epochs_completed);
    let prepared = prepare(&experiment, resumes_after, on_stage)?;
    let folder = RunFolder::reopen(lock, point.state.counters.epochs_completed)?;
    on_stage(Stage::FolderCreated(folder.path().to_owned()));
    let launch = Launch {
        resume: Some(point),
        judge,
    };
    train_into(&experiment, &prepared, launch, folder, control, on_event)
}

/// How a native run starts: from a checkpoint or afresh, and under which judge.
#[cfg(not(target_arch = "wasm32"))]
struct Launch {
    resume: Option<ResumePoint>,
    judge: Option<Box<dyn train::EpochJudge>>,
}

/// What a run needs before its folder: the data, how long it took to load, the device.
#[cfg(not(target_arch = "wasm32"))]
struct Prepared {
    data: ImageDataset,
    load_secs: f64,
    target: TrainDevice,
}

/// The data and devices of `experiment` as a run would have them, every check a run makes
/// before its folder made, and no folder: what a measurement apart from any run trains on
/// (the learning-rate range test, `kiln explain --loop`).
#[cfg(not(target_arch = "wasm32"))]
pub fn data_and_devices(experiment: &Experiment) -> Result<(ImageDataset, TrainDevice), RunError> {
    let prepared = prepare(experiment, None, &mut |_| {})?;
    Ok((prepared.data, prepared.target))
}

/// Everything before the run folder: data, checks, device (of a run resuming after
/// `resumes_after` epochs, or a new one).
#[cfg(not(target_arch = "wasm32"))]
fn prepare(
    experiment: &Experiment,
    resumes_after: Option<usize>,
    on_stage: &mut dyn FnMut(Stage),
) -> Result<Prepared, RunError> {
    let (data, load_secs) = load_data(experiment, resumes_after, on_stage)?;
    let target = train_device(experiment)?;
    Ok(Prepared {
        data,
        load_secs,
        target,
    })
}

/// Reads and splits `experiment`'s data set and checks the run against it, a run that resumes
/// after `resumes_after` epochs (none: a new run); hands back the data and the seconds that took.
fn load_data(
    experiment: &Experiment,
    resumes_after: Option<usize>,
    on_stage: &mut dyn FnMut(Stage),
) -> Result<(ImageDataset, f64), RunError> {
    on_stage(Stage::LoadingData);
    let load_started = Instant::now();
    let loaded = data::load(
        &experiment.dataset,
        experiment.data_dir.as_deref(),
        experiment.resize,
    )?;
    let data = data::make_splits(loaded, experiment)?;
    let load_secs = load_started.elapsed().as_secs_f64();
    on_stage(Stage::DataLoaded {
        name: data.name.clone(),
        train_len: data.train.len(),
        val_len: data.val.len(),
        test_len: data.test.len(),
        secs: load_secs,
    });
    experiment.check_against(&data)?;
    // A weights file that is not there is told before a run folder exists for it; a resumed
    // run has the weights in its checkpoint, unless it probes.
    if let Some(source) = &experiment.weights
        && train::loads_pretrained(experiment, resumes_after)
    {
        let path = source
            .resolve(&experiment.model, experiment.data_dir.as_deref())
            .map_err(TrainError::from)?;
        if !data::with_files(|files| files.is_file(&path)) {
            Err(TrainError::from(crate::weights::WeightsError::NoFile {
                path,
            }))?;
        }
    }
    Ok((data, load_secs))
}

/// Every device `experiment` trains on, connected: the first alone, or all data parallel.
#[cfg(not(target_arch = "wasm32"))]
fn train_device(experiment: &Experiment) -> Result<TrainDevice, RunError> {
    let first = device::resolve(&experiment.device)?;
    device::check_precision(&first.0, &first.1, experiment.precision)?;
    let replicas = experiment
        .data_parallel
        .iter()
        .map(device::resolve)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(together(first, replicas))
}

/// The devices of a run as one [`TrainDevice`], named by all of them: "2 × NAME" when they
/// are alike.
fn together(
    (info, device): (device::DeviceInfo, burn::tensor::Device),
    replicas: Vec<(device::DeviceInfo, burn::tensor::Device)>,
) -> TrainDevice {
    let (mut ids, mut names) = (vec![info.id], vec![info.name]);
    let mut target = TrainDevice::one(device, "", "");
    for (other, replica) in replicas {
        ids.push(other.id);
        names.push(other.name);
        target.replicas.push(replica);
    }
    target.id = ids.join(",");
    target.name = match names.iter().all(|name| *name == names[0]) && names.len() > 1 {
        true => format!("{} × {}", names.len(), names[0]),
        false => names.join(" + "),
    };
    target
}

/// [`execute`] in a browser page: the same data, checks and loop, on the page's devices
/// ([`device::resolve_in_page`]), awaited on the page's event loop, recorded into a run folder
/// among the page's runs ([`run_folder::page_runs`]). Natively (for tests) the devices are
/// resolved as [`execute`] does.
pub async fn execute_in_page(
    experiment: &Experiment,
    control: &Control,
    on_stage: &mut dyn FnMut(Stage),
    on_event: &mut dyn FnMut(&TrainEvent),
) -> Result<RunRecord, RunError> {
    let (data, load_secs) = load_data(experiment, None, on_stage)?;
    let target = page_device(experiment).await?;
    let runs_dir = Path::new(run_folder::page_runs::RUNS_DIR);
    let folder = RunFolder::create_in_page(runs_dir, experiment)?;
    let prepared = (data, load_secs, target);
    train_in_page(
        experiment, prepared, None, folder, control, on_stage, on_event,
    )
    .await
}

/// [`resume`] in a browser page: the stopped run in `run_folder` among the page's runs goes on
/// from its last checkpoint there.
pub async fn resume_in_page(
    run_folder: &Path,
    devices: Option<Vec<DeviceChoice>>,
    control: &Control,
    on_stage: &mut dyn FnMut(Stage),
    on_event: &mut dyn FnMut(&TrainEvent),
) -> Result<RunRecord, RunError> {
    let (experiment, point) =
        run_folder::page_runs::with(|runs| resume_plan_in(runs, run_folder, devices))?;
    // A page forgets the files its visitor chose when it closes.
    if let Some(data) = &experiment.data_dir
        && !data::with_files(|files| files.is_dir(data) || files.is_file(data))
    {
        Err(ResumeError::DataGone {
            path: run_folder.to_owned(),
            data: data.clone(),
        })?;
    }
    let resumes_after = Some(point.state.counters.epochs_completed);
    let (data, load_secs) = load_data(&experiment, resumes_after, on_stage)?;
    let target = page_device(&experiment).await?;
    let folder = RunFolder::reopen_in_page(run_folder, point.state.counters.epochs_completed)?;
    let prepared = (data, load_secs, target);
    train_in_page(
        &experiment,
        prepared,
        Some(point),
        folder,
        control,
        on_stage,
        on_event,
    )
    .await
}

/// The page's devices of `experiment`, started without blocking.
#[cfg(target_arch = "wasm32")]
async fn page_device(experiment: &Experiment) -> Result<TrainDevice, RunError> {
    let first = device::resolve_in_page(&experiment.device).await?;
    device::check_precision(&first.0, &first.1, experiment.precision)?;
    let mut replicas = Vec::new();
    for choice in &experiment.data_parallel {
        replicas.push(device::resolve_in_page(choice).await?);
    }
    Ok(together(first, replicas))
}

/// The devices of `experiment` as [`execute`] resolves them: a page's run driven by a test.
#[cfg(not(target_arch = "wasm32"))]
async fn page_device(experiment: &Experiment) -> Result<TrainDevice, RunError> {
    train_device(experiment)
}

/// Trains `experiment` on the prepared data and device into the page's run `folder`, from
/// `resume` when given.
async fn train_in_page(
    experiment: &Experiment,
    (data, load_secs, target): (ImageDataset, f64, TrainDevice),
    resume: Option<ResumePoint>,
    mut folder: RunFolder,
    control: &Control,
    on_stage: &mut dyn FnMut(Stage),
    on_event: &mut dyn FnMut(&TrainEvent),
) -> Result<RunRecord, RunError> {
    on_stage(Stage::FolderCreated(folder.path().to_owned()));
    let store = FolderStore::in_page(folder.path());
    let preparation = Preparation {
        load_secs,
        store: Box::new(match resume {
            Some(point) => store.resuming(point),
            None => store,
        }),
        judge: None,
    };
    let mut record_error = None;
    let result = train::train_async(
        experiment,
        &data,
        &target,
        preparation,
        control,
        &mut |event| {
            record_into(&mut folder, &event, control, &mut record_error);
            on_event(&event);
        },
    )
    .await;
    let failed_summary = || RunSummary::new(&target.name, 0, load_secs, 0.0);
    end_record(&folder, result, record_error, failed_summary, on_event)
}

/// Trains and records every event into `folder`.
#[cfg(not(target_arch = "wasm32"))]
fn train_into(
    experiment: &Experiment,
    prepared: &Prepared,
    launch: Launch,
    mut folder: RunFolder,
    control: &Arc<Control>,
    on_event: &mut dyn FnMut(&TrainEvent),
) -> Result<RunRecord, RunError> {
    let mut record_error: Option<RunError> = None;
    // Burn and its GPU runtime panic on a failed allocation or a lost device. Caught here, the
    // panic ends this run with a sentence; the window stays open and the folder keeps its rows.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        train::train(
            experiment,
            &prepared.data,
            &prepared.target,
            Preparation {
                load_secs: prepared.load_secs,
                store: Box::new(match launch.resume {
                    Some(point) => FolderStore::new(folder.path()).resuming(point),
                    None => FolderStore::new(folder.path()),
                }),
                judge: launch.judge,
            },
            control,
            &mut |event| {
                record_into(&mut folder, &event, control, &mut record_error);
                on_event(&event);
            },
        )
    }))
    .unwrap_or_else(|payload| Err(TrainError::from_panic(payload.as_ref())))
    .map_err(|e| match &experiment.device {
        DeviceChoice::Remote { address, .. } => e.on_box(address),
        _ => e,
    });
    let failed_summary = || RunSummary::new(&prepared.target.name, 0, prepared.load_secs, 0.0);
    end_record(&folder, result, record_error, failed_summary, on_event)
}

/// Records `event` into `folder` unless an earlier write failed. A failed write (a full disk)
/// must not lose the run silently: it stops the run and is kept to be reported once.
fn record_into(
    folder: &mut RunFolder,
    event: &TrainEvent,
    control: &Control,
    failed: &mut Option<RunError>,
) {
    if failed.is_none()
        && let Err(e) = folder.record(event)
    {
        control.cancel();
        *failed = Some(e.into());
    }
}

/// What a run that trained into `folder` ends with: a failed write first, else the loop's
/// result; a loop that failed is told to the listeners and leaves a `failed` summary (from
/// `summary`, for the figures known before training).
fn end_record(
    folder: &RunFolder,
    result: Result<RunSummary, TrainError>,
    record_error: Option<RunError>,
    summary: impl FnOnce() -> RunSummary,
    on_event: &mut dyn FnMut(&TrainEvent),
) -> Result<RunRecord, RunError> {
    if let Some(e) = record_error {
        return Err(e);
    }
    match result {
        Ok(summary) => Ok(RunRecord {
            path: folder.path().to_owned(),
            summary,
        }),
        Err(e) => {
            let message = e.to_string();
            on_event(&TrainEvent::Failed(message.clone()));
            let failed = RunSummary {
                outcome: RunOutcome::Failed,
                error: Some(message),
                ..summary()
            };
            // The error below is what the person sees; a summary that cannot be written adds nothing.
            let _ = folder.write_summary(&failed);
            Err(e.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ExperimentDraft;
    use crate::device::DeviceChoice;
    use crate::model::{Activation, ModelSpec};
    use kiln_test_support::scratch_dir;
    use std::fs;

    /// Runs `experiment` into `runs` with no one pausing it or listening to its events.
    fn execute_unwatched(experiment: &Experiment, runs: &Path) -> Result<RunRecord, RunError> {
        execute(
            experiment,
            runs,
            &Arc::new(Control::new()),
            &mut |_| {},
            &mut |_| {},
        )
    }

    /// A small MLP run on the built-in data, quick enough for a unit test.
    fn resumable_experiment() -> Experiment {
        ExperimentDraft {
            name: "resume".into(),
            model: ModelSpec::Mlp {
                widths: vec![24],
                activation: Activation::Relu,
                dropout: 0.2,
            },
            batch_size: 500,
            epochs: 4,
            device: DeviceChoice::Cpu,
            readback_interval_ms: 10,
            ..ExperimentDraft::default()
        }
        .validate()
        .unwrap()
    }

    #[test]
    fn a_missing_weights_file_is_told_before_a_run_folder_exists() {
        let dir = scratch_dir("missing-weights");
        let photos = dir.join("photos");
        for class in ["a", "b"] {
            std::fs::create_dir_all(photos.join(class)).unwrap();
            for i in 0..6u8 {
                let image = image::RgbImage::from_pixel(32, 32, image::Rgb([i * 40, 10, 200]));
                image
                    .save(photos.join(class).join(format!("{i}.png")))
                    .unwrap();
            }
        }
        let experiment = ExperimentDraft {
            dataset: crate::data::DatasetSpec::Folder {
                path: photos,
                image_size: 32,
            },
            model: ModelSpec::ResNet18ImageNet,
            weights: Some(crate::weights::WeightsSource::File(dir.join("absent.pth"))),
            device: DeviceChoice::Cpu,
            batch_size: 4,
            ..ExperimentDraft::default()
        }
        .validate()
        .unwrap();
        let runs = dir.join("runs");
        let error = execute_unwatched(&experiment, &runs).expect_err("no weights file");
        assert!(
            error.to_string().contains("absent.pth does not exist"),
            "{error}"
        );
        assert!(
            !runs.exists(),
            "no run folder for a run that could not start"
        );
        // A resume reads its checkpoint, not the weights file (moved away, or a page's chosen
        // file gone with a reload): it looked for the file, and the run could not go on.
        let stopped = dir.join("stopped");
        let slot = run_folder::slot_folder(&stopped, Slot::Last);
        fs::create_dir_all(&slot).unwrap();
        fs::write(stopped.join("config.toml"), experiment.to_toml()).unwrap();
        let state = serde_json::to_string(&run_folder::CheckpointState::new(1)).unwrap();
        fs::write(slot.join("state.json"), state).unwrap();
        fs::write(slot.join("model.bpk"), b"not a model").unwrap();
        let control = Arc::new(Control::new());
        let err = resume(&stopped, None, &control, &mut |_| {}, &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("cannot be used"), "{err}");
    }

    #[test]
    fn a_device_failure_mid_run_ends_in_a_sentence_and_keeps_the_folder() {
        let dir = scratch_dir("device-failure");
        let experiment = resumable_experiment();
        let control = Arc::new(Control::new());
        let mut rows = 0;
        // The panic Burn's GPU runtime raises when an allocation fails, raised where a device
        // call would raise it: inside the loop, after rows were recorded.
        let err = execute(&experiment, &dir, &control, &mut |_| {}, &mut |event| {
            if let TrainEvent::Progress(_) = event {
                rows += 1;
                if rows == 3 {
                    panic!("An out-of-memory error happened during launch\nCaused by:\n  out of device memory allocating 4294967296 bytes");
                }
            }
        })
        .unwrap_err();
        let message = err.to_string();
        assert!(message.contains("ran out of memory"), "{message}");
        assert!(message.contains("smaller batch"), "{message}");
        assert!(!message.contains("Caused by"), "{message}");
        let folder = fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
        let metrics = fs::read_to_string(folder.join("metrics.csv")).unwrap();
        assert_eq!(metrics.lines().count(), 1 + 3, "{metrics}");
        let summary = fs::read_to_string(folder.join("summary.json")).unwrap();
        assert!(summary.contains("\"failed\""), "{summary}");
        assert!(summary.contains("ran out of memory"), "{summary}");
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn the_first_short_last_batch_counts_as_warm_up_not_steady_state() {
        // 12 000 images in batches of 512: 23 full steps and a short one of 224 per epoch. Its
        // new shape compiles kernels on a GPU's first launch (20 s on lavapipe, measured), so
        // the window that ends with it is warm-up; the second epoch's short batch is steady.
        let experiment = ExperimentDraft {
            name: "short".into(),
            model: "mlp:16".parse().unwrap(),
            batch_size: 512,
            epochs: 2,
            device: DeviceChoice::Cpu,
            // The batch geometry above is that of all 12 000 training images.
            val_split: 0.0,
            ..ExperimentDraft::default()
        }
        .validate()
        .unwrap();
        let runs = scratch_dir("short-batch");
        let record = execute_unwatched(&experiment, &runs).unwrap();
        let (_, state) = run_folder::find(&record.path, Slot::Last).unwrap();
        let all = 2 * 12_000;
        assert!(
            state.counters.steady_samples <= all - 512 - 224,
            "the first step and the first short batch are left out: {}",
            state.counters.steady_samples
        );
        assert!(
            state.counters.steady_samples >= 12_000,
            "{}",
            state.counters.steady_samples
        );
        let _ = fs::remove_dir_all(&runs);
    }

    #[test]
    fn a_heavily_augmented_run_is_tested_on_the_images_as_they_are() {
        // Every augmentation at its strongest: an evaluation that went through any of them would
        // score some test image differently from the saved model fed the image as it is.
        let experiment = ExperimentDraft {
            name: "augmented".into(),
            model: "mlp:16".parse().unwrap(),
            batch_size: 500,
            epochs: 1,
            device: DeviceChoice::Cpu,
            crop_padding: 4,
            flip: true,
            crop_scale: 0.3,
            rotation_degrees: 30.0,
            brightness: 0.5,
            contrast: 0.5,
            ..ExperimentDraft::default()
        }
        .validate()
        .unwrap();
        let runs = scratch_dir("augmented-eval");
        let record = execute_unwatched(&experiment, &runs).unwrap();
        let recorded = run_folder::load_predictions(&record.path)
            .unwrap()
            .expect("a completed run keeps its test predictions");
        let predictor = crate::predict::Predictor::load(&record.path).unwrap();
        let test = data::make_splits(
            data::load(&experiment.dataset, None, experiment.resize).unwrap(),
            &experiment,
        )
        .unwrap()
        .test;
        assert_eq!(recorded.labels.len(), test.len());
        let shape = predictor.card().shape;
        let image_len: usize = shape.iter().product();
        // Every 50th image: enough to see one augmented pixel, quick on one thread.
        for index in (0..test.len()).step_by(50) {
            let ranked = predictor.classify_pixels(test.image(index, image_len));
            let (name, confidence) = &ranked[0];
            let predicted = recorded.predicted[index] as usize;
            assert_eq!(*name, recorded.class_names[predicted], "test image {index}");
            assert!(
                (confidence - recorded.confidence[index]).abs() < 1e-5,
                "test image {index}: {confidence} against {} recorded",
                recorded.confidence[index]
            );
        }
        let _ = fs::remove_dir_all(&runs);
    }

    #[test]
    fn panics_are_told_by_what_they_mean() {
        let lost: Box<dyn std::any::Any + Send> =
            Box::new("Device lost: the driver reset".to_owned());
        assert!(matches!(
            TrainError::from_panic(lost.as_ref()),
            TrainError::DeviceLost(_)
        ));
        let other: Box<dyn std::any::Any + Send> = Box::new("index out of bounds");
        let err = TrainError::from_panic(other.as_ref());
        assert!(matches!(err, TrainError::Crashed(_)));
        assert!(err.to_string().contains("index out of bounds"));
    }

    #[test]
    fn a_page_run_on_files_the_page_no_longer_holds_says_to_choose_them_again() {
        let folder = Path::new(run_folder::page_runs::RUNS_DIR).join("chosen-gone");
        let draft = ExperimentDraft {
            data_dir: Some("gone photos".into()),
            ..resumable_experiment().draft().clone()
        };
        let state = serde_json::to_string(&run_folder::CheckpointState::new(1)).unwrap();
        let slot = run_folder::slot_folder(&folder, Slot::Last);
        run_folder::page_runs::with_mut(|runs| {
            runs.insert(folder.join(CONFIG_FILE), draft.to_toml().into_bytes())?;
            runs.insert(slot.join("state.json"), state.into_bytes())
        })
        .unwrap();
        let (control, mut on_stage, mut on_event) = (Control::new(), |_| {}, |_: &_| {});
        let resumed = resume_in_page(&folder, None, &control, &mut on_stage, &mut on_event);
        let err = crate::executor::block_on(resumed).unwrap_err();
        assert!(
            err.to_string().contains("choose it again in Setup"),
            "{err}"
        );
    }

    #[test]
    fn resuming_a_folder_without_a_checkpoint_says_why() {
        let dir = scratch_dir("no-checkpoint");
        fs::create_dir_all(&dir).unwrap();
        let control = Arc::new(Control::new());
        let err = resume(&dir, None, &control, &mut |_| {}, &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("config.toml"), "{err}");
        fs::write(
            dir.join("config.toml"),
            resumable_experiment().draft().to_toml(),
        )
        .unwrap();
        let err = resume(&dir, None, &control, &mut |_| {}, &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("no checkpoint"), "{err}");
        // A damaged optimizer file ends in a sentence, not a panic.
        let slot = run_folder::slot_folder(&dir, Slot::Last);
        fs::create_dir_all(&slot).unwrap();
        fs::write(
            slot.join("state.json"),
            serde_json::to_string(&run_folder::CheckpointState::new(1)).unwrap(),
        )
        .unwrap();
        fs::write(slot.join("model.bpk"), b"not a model").unwrap();
        let err = resume(&dir, None, &control, &mut |_| {}, &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("cannot be used"), "{err}");
        let _ = fs::remove_dir_all(dir);
    }
}
