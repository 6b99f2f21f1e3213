//! The run folder: written as the run goes, so a crash leaves valid files up to the last row.
//!
//! ```text
//! runs/<timestamp>-<name>/
//!   config.toml    the checked experiment; `kiln train --config` reruns it exactly
//!   metrics.csv    one row per readback
//!   epochs.csv     one row per evaluated epoch
//!   summary.json   the whole run's figures, written atomically when it ends
//!   checkpoints/   model and optimizer state of the last and the best epoch (see `checkpoint`)
//! ```

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::checkpoint::{self, CheckpointError, Slot};
use crate::config::{ConfigError, Experiment};
use crate::data::{self, DataError, ImageDataset};
use crate::device::{self, DeviceError};
use crate::train::{
    self, Control, Preparation, ResumePoint, RunOutcome, RunSummary, TestPredictions, TrainDevice,
    TrainError, TrainEvent,
};

/// Header of `metrics.csv`; README.md documents each column.
pub const METRICS_HEADER: &str = "wall_secs,epoch,step,global_step,samples_seen,train_loss,train_accuracy,samples_per_sec,step_ms,data_ms,compute_ms,sync_ms,lr";
/// Header of `predictions.csv`; README.md documents each column.
pub const PREDICTIONS_HEADER: &str = "index,label,predicted,confidence";
/// Header of `epochs.csv`; README.md documents each column.
pub const EPOCHS_HEADER: &str =
    "epoch,train_loss,train_accuracy,test_loss,test_accuracy,epoch_secs,eval_secs,samples_per_sec";

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
    #[error("could not write {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> RunError + '_ {
    move |source| RunError::Io {
        path: path.to_owned(),
        source,
    }
}

/// `YYYYMMDD-HHMMSS` in UTC, from the system clock; sorts like the runs it names.
pub fn timestamp(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm): no calendar crate for one line of output.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Writes `contents` to `path` through a temporary file and a rename, so readers never see half.
pub fn write_atomically(path: &Path, contents: &[u8]) -> io::Result<()> {
    let tmp = path.with_extension("tmp");
    {
        let mut file = File::create(&tmp)?;
        file.write_all(contents)?;
        file.sync_all()?;
    }
    fs::rename(&tmp, path)
}

/// An open run folder that records [`TrainEvent`]s as they arrive.
#[derive(Debug)]
pub struct RunFolder {
    path: PathBuf,
    metrics: BufWriter<File>,
    epochs: BufWriter<File>,
}

impl RunFolder {
    /// Creates `runs_dir/<timestamp>-<name>` (with a numeric suffix if taken) and its files.
    pub fn create(runs_dir: &Path, experiment: &Experiment) -> Result<Self, RunError> {
        fs::create_dir_all(runs_dir).map_err(io_error(runs_dir))?;
        let stem = format!("{}-{}", timestamp(SystemTime::now()), experiment.name);
        let mut path = runs_dir.join(&stem);
        let mut suffix = 1;
        loop {
            match fs::create_dir(&path) {
                Ok(()) => break,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && suffix < 1000 => {
                    suffix += 1;
                    path = runs_dir.join(format!("{stem}-{suffix}"));
                }
                Err(e) => return Err(io_error(&path)(e)),
            }
        }
        let config_path = path.join("config.toml");
        write_atomically(&config_path, experiment.to_toml().as_bytes())
            .map_err(io_error(&config_path))?;
        let metrics = Self::csv(&path.join("metrics.csv"), METRICS_HEADER)?;
        let epochs = Self::csv(&path.join("epochs.csv"), EPOCHS_HEADER)?;
        Ok(Self {
            path,
            metrics,
            epochs,
        })
    }

    /// Opens the run folder `path` to go on after `epochs_completed` epochs: rows of later
    /// epochs (and a row cut short by a crash) are dropped, new rows are appended.
    pub fn reopen(path: &Path, epochs_completed: usize) -> Result<Self, RunError> {
        // The epoch is metrics.csv's second column and epochs.csv's first.
        let metrics = Self::keep_epochs(
            &path.join("metrics.csv"),
            METRICS_HEADER,
            1,
            epochs_completed,
        )?;
        let epochs =
            Self::keep_epochs(&path.join("epochs.csv"), EPOCHS_HEADER, 0, epochs_completed)?;
        Ok(Self {
            path: path.to_owned(),
            metrics,
            epochs,
        })
    }

    /// Rewrites the CSV at `path` with only its whole rows whose `epoch_column` is at most
    /// `last_epoch` (counted from 1, the file's own numbering), then opens it for appending.
    fn keep_epochs(
        path: &Path,
        header: &str,
        epoch_column: usize,
        last_epoch: usize,
    ) -> Result<BufWriter<File>, RunError> {
        let text = match fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(io_error(path)(e)),
        };
        let columns = header.split(',').count();
        let mut kept = format!("{header}\n");
        // `lines` would keep a last row that a crash cut short; only newline-ended rows count.
        for line in text.split_inclusive('\n').skip(1) {
            let Some(row) = line.strip_suffix('\n') else {
                continue;
            };
            let cells: Vec<&str> = row.split(',').collect();
            if cells.len() == columns
                && cells
                    .get(epoch_column)
                    .and_then(|e| e.parse::<usize>().ok())
                    .is_some_and(|e| e <= last_epoch)
            {
                kept.push_str(line);
            }
        }
        write_atomically(path, kept.as_bytes()).map_err(io_error(path))?;
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(io_error(path))?;
        Ok(BufWriter::new(file))
    }

    fn csv(path: &Path, header: &str) -> Result<BufWriter<File>, RunError> {
        let file = OpenOptions::new()
            .create_new(true)
            .write(true)
            .open(path)
            .map_err(io_error(path))?;
        let mut writer = BufWriter::new(file);
        writeln!(writer, "{header}")
            .and_then(|()| writer.flush())
            .map_err(io_error(path))?;
        Ok(writer)
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends what `event` adds to the files; every row is flushed so a crash keeps it.
    pub fn record(&mut self, event: &TrainEvent) -> Result<(), RunError> {
        match event {
            TrainEvent::Progress(p) => {
                let path = self.path.join("metrics.csv");
                writeln!(
                    self.metrics,
                    "{:.3},{},{},{},{},{:.6},{:.6},{:.1},{:.4},{:.3},{:.3},{:.3},{:e}",
                    p.wall_secs,
                    p.epoch + 1,
                    p.step_in_epoch,
                    p.global_step,
                    p.samples_seen,
                    p.train_loss,
                    p.train_accuracy,
                    p.samples_per_sec,
                    p.step_ms,
                    p.data_ms,
                    p.compute_ms,
                    p.sync_ms,
                    p.lr
                )
                .and_then(|()| self.metrics.flush())
                .map_err(io_error(&path))
            }
            TrainEvent::EpochEnd(e) => {
                let path = self.path.join("epochs.csv");
                writeln!(
                    self.epochs,
                    "{},{:.6},{:.6},{:.6},{:.6},{:.3},{:.3},{:.1}",
                    e.epoch + 1,
                    e.train_loss,
                    e.train_accuracy,
                    e.test_loss,
                    e.test_accuracy,
                    e.train_secs,
                    e.eval_secs,
                    e.samples_per_sec
                )
                .and_then(|()| self.epochs.flush())
                .map_err(io_error(&path))
            }
            TrainEvent::Predictions(predictions) => self.write_predictions(predictions),
            TrainEvent::Finished(summary) => self.write_summary(summary),
            TrainEvent::Started(_) | TrainEvent::Warning(_) | TrainEvent::Failed(_) => Ok(()),
        }
    }

    /// Writes `predictions.csv` (one row per test image) and `confusion.csv` (rows: true class,
    /// columns: predicted class), each atomically.
    pub fn write_predictions(&self, predictions: &TestPredictions) -> Result<(), RunError> {
        let mut rows = String::from(PREDICTIONS_HEADER);
        rows.push('\n');
        for (index, ((truth, guess), confidence)) in predictions
            .labels
            .iter()
            .zip(&predictions.predicted)
            .zip(&predictions.confidence)
            .enumerate()
        {
            rows.push_str(&format!("{index},{truth},{guess},{confidence:.6}\n"));
        }
        let path = self.path.join("predictions.csv");
        write_atomically(&path, rows.as_bytes()).map_err(io_error(&path))?;

        let quote = |name: &str| format!("\"{}\"", name.replace('"', "\"\""));
        let mut table = String::from("true \\ predicted");
        for name in &predictions.class_names {
            table.push(',');
            table.push_str(&quote(name));
        }
        table.push('\n');
        for (class, row) in predictions.confusion().iter().enumerate() {
            let name = predictions
                .class_names
                .get(class)
                .map_or("", String::as_str);
            table.push_str(&quote(name));
            for count in row {
                table.push_str(&format!(",{count}"));
            }
            table.push('\n');
        }
        let path = self.path.join("confusion.csv");
        write_atomically(&path, table.as_bytes()).map_err(io_error(&path))
    }

    /// Writes `summary.json` atomically.
    pub fn write_summary(&self, summary: &RunSummary) -> Result<(), RunError> {
        let path = self.path.join("summary.json");
        let mut text = serde_json::to_string_pretty(summary)
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        text.push('\n');
        write_atomically(&path, text.as_bytes()).map_err(io_error(&path))
    }
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
        /// Test images.
        test_len: usize,
        /// Seconds it took.
        secs: f64,
    },
    /// The run folder exists.
    FolderCreated(PathBuf),
}

/// Loads the data, checks the experiment against it, picks the device, creates the run folder,
/// trains, and records every event. Nothing is written before every check has passed.
pub fn execute(
    experiment: &Experiment,
    runs_dir: &Path,
    control: &Arc<Control>,
    on_stage: &mut dyn FnMut(Stage),
    on_event: &mut dyn FnMut(&TrainEvent),
) -> Result<RunRecord, RunError> {
    let prepared = prepare(experiment, on_stage)?;
    let folder = RunFolder::create(runs_dir, experiment)?;
    on_stage(Stage::FolderCreated(folder.path().to_owned()));
    train_into(experiment, &prepared, None, folder, control, on_event)
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
    /// The checkpoint could not be found or read.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
}

/// The experiment of a past run and the checkpoint it would resume from.
pub fn resume_plan(run_folder: &Path) -> Result<(Experiment, ResumePoint), ResumeError> {
    let not_a_run = |reason: String| ResumeError::NotARun {
        path: run_folder.to_owned(),
        reason,
    };
    let config_path = run_folder.join("config.toml");
    let text = fs::read_to_string(&config_path)
        .map_err(|e| not_a_run(format!("could not read config.toml ({e})")))?;
    let experiment = crate::config::ExperimentDraft::from_toml(&text, "config.toml")
        .and_then(crate::config::ExperimentDraft::validate)
        .map_err(|e| not_a_run(e.to_string()))?;
    let (folder, state) = checkpoint::find(run_folder, Slot::Last)?;
    if state.epochs_completed >= experiment.epochs {
        return Err(ResumeError::Finished {
            path: run_folder.to_owned(),
            epochs: experiment.epochs,
        });
    }
    Ok((experiment, ResumePoint { folder, state }))
}

/// Continues the run in `run_folder` from its last checkpoint, in the same folder: rows written
/// after that checkpoint are dropped, and the run ends as the uninterrupted run would have.
pub fn resume(
    run_folder: &Path,
    control: &Arc<Control>,
    on_stage: &mut dyn FnMut(Stage),
    on_event: &mut dyn FnMut(&TrainEvent),
) -> Result<RunRecord, RunError> {
    let (experiment, point) = resume_plan(run_folder)?;
    let prepared = prepare(&experiment, on_stage)?;
    let folder = RunFolder::reopen(run_folder, point.state.epochs_completed)?;
    on_stage(Stage::FolderCreated(folder.path().to_owned()));
    train_into(
        &experiment,
        &prepared,
        Some(point),
        folder,
        control,
        on_event,
    )
}

/// Everything before the run folder: data, checks, device.
/// What a run needs before its folder: the data, how long it took to load, the device.
struct Prepared {
    data: ImageDataset,
    load_secs: f64,
    target: TrainDevice,
}

fn prepare(experiment: &Experiment, on_stage: &mut dyn FnMut(Stage)) -> Result<Prepared, RunError> {
    on_stage(Stage::LoadingData);
    let load_started = Instant::now();
    let data: ImageDataset = data::load(&experiment.dataset, experiment.data_dir.as_deref())?;
    let load_secs = load_started.elapsed().as_secs_f64();
    on_stage(Stage::DataLoaded {
        name: data.name.clone(),
        train_len: data.train.len(),
        test_len: data.test.len(),
        secs: load_secs,
    });
    experiment.check_against(&data)?;
    let (info, device) = device::resolve(&experiment.device)?;
    device::check_precision(&info, &device, experiment.precision)?;
    let target = TrainDevice {
        device,
        id: info.id.clone(),
        name: info.name.clone(),
    };
    Ok(Prepared {
        data,
        load_secs,
        target,
    })
}

/// Trains and records every event into `folder`.
fn train_into(
    experiment: &Experiment,
    prepared: &Prepared,
    resume: Option<ResumePoint>,
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
                run_folder: Some(folder.path().to_owned()),
                resume,
            },
            control,
            &mut |event| {
                if record_error.is_none()
                    && let Err(e) = folder.record(&event)
                {
                    // A full disk must not kill the run silently; stop it and report once.
                    control.cancel();
                    record_error = Some(e);
                }
                on_event(&event);
            },
        )
    }))
    .unwrap_or_else(|payload| Err(TrainError::from_panic(payload.as_ref())));
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
                ..RunSummary::new(&prepared.target.name, 0, prepared.load_secs, 0.0)
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
    use std::time::Duration;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kiln-run-test-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
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
    fn a_device_failure_mid_run_ends_in_a_sentence_and_keeps_the_folder() {
        let dir = scratch("device-failure");
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
            ..ExperimentDraft::default()
        }
        .validate()
        .unwrap();
        let runs = scratch("short-batch");
        let record = execute(
            &experiment,
            &runs,
            &Arc::new(Control::new()),
            &mut |_| {},
            &mut |_| {},
        )
        .unwrap();
        let (_, state) = checkpoint::find(&record.path, Slot::Last).unwrap();
        let all = 2 * 12_000;
        assert!(
            state.steady_samples <= all - 512 - 224,
            "the first step and the first short batch are left out: {}",
            state.steady_samples
        );
        assert!(state.steady_samples >= 12_000, "{}", state.steady_samples);
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
    fn resuming_a_folder_without_a_checkpoint_says_why() {
        let dir = scratch("no-checkpoint");
        fs::create_dir_all(&dir).unwrap();
        let control = Arc::new(Control::new());
        let err = resume(&dir, &control, &mut |_| {}, &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("config.toml"), "{err}");
        fs::write(
            dir.join("config.toml"),
            resumable_experiment().draft().to_toml(),
        )
        .unwrap();
        let err = resume(&dir, &control, &mut |_| {}, &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("no checkpoint"), "{err}");
        // A damaged optimizer file ends in a sentence, not a panic.
        let slot = checkpoint::slot_folder(&dir, Slot::Last);
        fs::create_dir_all(&slot).unwrap();
        fs::write(
            slot.join("state.json"),
            serde_json::to_string(&checkpoint::CheckpointState::new(1)).unwrap(),
        )
        .unwrap();
        fs::write(slot.join("model.bpk"), b"not a model").unwrap();
        let err = resume(&dir, &control, &mut |_| {}, &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("cannot be used"), "{err}");
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        assert_eq!(timestamp(UNIX_EPOCH), "19700101-000000");
        // 2026-11-29 15:34:06 UTC
        let t = UNIX_EPOCH + Duration::from_secs(1_795_966_446);
        assert_eq!(timestamp(t), "20261129-153406");
        // A leap day.
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(timestamp(t), "20000229-000000");
    }
}
