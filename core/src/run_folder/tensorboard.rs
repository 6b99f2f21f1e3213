//! A run's TensorBoard event files, laid out as Keras's `TensorBoard` callback lays out its own,
//! so `tensorboard --logdir runs/` puts Kiln's runs beside a Keras or PyTorch run of the same
//! workload and `wandb sync` takes them:
//!
//! ```text
//! <run>/train/events.out.tfevents.…       epoch_loss, epoch_accuracy, epoch_learning_rate,
//!                                          epoch_samples_per_sec, epoch_secs at the epoch from 0;
//!                                          batch_loss, batch_accuracy, batch_samples_per_sec,
//!                                          batch_step_ms at each readback's global step
//! <run>/validation/events.out.tfevents.…  epoch_loss, epoch_accuracy of whatever the epochs were
//!                                          evaluated on (validation, or test for runs that validate
//!                                          on test, as a Keras script passing its test set does)
//! ```
//!
//! A run writes them as it goes ([`super::RunFolder`]); `kiln export --tensorboard` writes them
//! for a run folder from before, from its CSVs ([`write_event_files`]).

use std::path::{Path, PathBuf};

use kiln_formats::tensorboard::{event_file_name, file_version_record, scalars_record};

use super::{EpochRow, MetricsRow, RunHistory};

/// The folder of the training series, as Keras names it.
pub const TRAIN_EVENTS_DIR: &str = "train";
/// The folder of the evaluation series, as Keras names it.
pub const VALIDATION_EVENTS_DIR: &str = "validation";

/// The two event files of a run and what is needed to fill them: each opens with its version
/// record, and the epoch's learning rate comes from the readbacks before it.
#[derive(Debug)]
pub(super) struct EventFiles {
    /// `train/<file>` and `validation/<file>`, relative to the run folder.
    paths: [PathBuf; 2],
    /// Whether each file has had its version record.
    opened: [bool; 2],
    /// The learning rate of the last readback, logged with the epoch that holds it.
    last_lr: Option<f64>,
}

/// Which of the two files a record goes to.
#[derive(Debug, Clone, Copy)]
enum Series {
    Train = 0,
    Validation = 1,
}

impl EventFiles {
    /// The files of a writer started `wall_secs` after the Unix epoch by process `pid`: a
    /// resumed run adds new files beside the old ones, which TensorBoard reads in name order.
    pub(super) fn new(wall_secs: u64, pid: u32) -> Self {
        let name = event_file_name(wall_secs, "kiln", pid);
        Self {
            paths: [
                Path::new(TRAIN_EVENTS_DIR).join(&name),
                Path::new(VALIDATION_EVENTS_DIR).join(&name),
            ],
            opened: [false; 2],
            last_lr: None,
        }
    }

    /// The records a readback adds, with the file (relative to the run folder) each goes to.
    pub(super) fn readback(&mut self, row: &MetricsRow, wall_time: f64) -> Vec<(PathBuf, Vec<u8>)> {
        self.last_lr = Some(row.lr);
        let scalars = [
            ("batch_loss", row.train_loss),
            ("batch_accuracy", row.train_accuracy),
            ("batch_samples_per_sec", row.samples_per_sec),
            ("batch_step_ms", row.step_ms),
        ];
        vec![self.record(Series::Train, wall_time, row.global_step as i64, &scalars)]
    }

    /// The records an evaluated epoch adds, at the epoch counted from 0 as Keras logs it.
    pub(super) fn epoch(&mut self, row: &EpochRow, wall_time: f64) -> Vec<(PathBuf, Vec<u8>)> {
        let step = row.epoch.saturating_sub(1) as i64;
        // What an imported run's log does not hold is left out, never written as zero.
        let known = |scalars: &[(&'static str, Option<f64>)]| -> Vec<(&'static str, f64)> {
            scalars
                .iter()
                .filter_map(|&(tag, value)| Some((tag, value?)))
                .collect()
        };
        let train = known(&[
            ("epoch_loss", row.train_loss),
            ("epoch_accuracy", row.train_accuracy),
            ("epoch_learning_rate", self.last_lr),
            ("epoch_samples_per_sec", row.samples_per_sec),
            ("epoch_secs", row.epoch_secs),
        ]);
        let evaluated = known(&[
            ("epoch_loss", row.val_loss.or(row.test_loss)),
            ("epoch_accuracy", row.val_accuracy.or(row.test_accuracy)),
        ]);
        let mut records = Vec::new();
        if !train.is_empty() {
            records.push(self.record(Series::Train, wall_time, step, &train));
        }
        if !evaluated.is_empty() {
            records.push(self.record(Series::Validation, wall_time, step, &evaluated));
        }
        records
    }

    /// One record for `series`, after the file's version record if it is the file's first.
    fn record(
        &mut self,
        series: Series,
        wall_time: f64,
        step: i64,
        scalars: &[(&str, f64)],
    ) -> (PathBuf, Vec<u8>) {
        let index = series as usize;
        let mut bytes = Vec::new();
        if !self.opened[index] {
            self.opened[index] = true;
            bytes.extend(file_version_record(wall_time));
        }
        bytes.extend(scalars_record(wall_time, step, scalars));
        (self.paths[index].clone(), bytes)
    }
}

/// The event files of `run`, from its CSVs, as (path relative to the run's folder, bytes): what
/// `kiln export --tensorboard` writes for runs from before Kiln wrote them. Times are the run's
/// start (from its folder's name, else `fallback_start_secs`) plus each row's own seconds.
pub fn event_files_of(run: &RunHistory, fallback_start_secs: f64) -> Vec<(PathBuf, Vec<u8>)> {
    let start = start_secs_of(&run.folder_name()).unwrap_or(fallback_start_secs);
    let mut files = EventFiles::new(start as u64, 0);
    let mut out: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut add = |records: Vec<(PathBuf, Vec<u8>)>| {
        for (path, bytes) in records {
            match out.iter_mut().find(|(p, _)| *p == path) {
                Some((_, file)) => file.extend(bytes),
                None => out.push((path, bytes)),
            }
        }
    };
    let mut readbacks = run.metrics.iter().peekable();
    let mut epoch_end_secs = 0.0;
    for epoch in &run.epochs {
        // The readbacks of this epoch come first, so its learning rate is the one it ended on.
        while let Some(row) = readbacks.next_if(|row| row.epoch <= epoch.epoch) {
            add(files.readback(row, start + row.wall_secs));
        }
        epoch_end_secs += epoch.epoch_secs.unwrap_or(0.0) + epoch.eval_secs.unwrap_or(0.0);
        add(files.epoch(epoch, start + epoch_end_secs));
    }
    for row in readbacks {
        add(files.readback(row, start + row.wall_secs));
    }
    out
}

/// Writes the event files of `run` (from its CSVs) under `out_dir/<run folder's name>/`, so
/// `tensorboard --logdir out_dir` lists it by its name; hands back the files written. Writing the
/// same run again replaces its files (their names come from the run, not from now). A run that
/// already keeps event files in the folder asked for is left as it is: `None`.
#[cfg(not(target_arch = "wasm32"))]
pub fn export_event_files(
    run: &RunHistory,
    out_dir: &Path,
) -> Result<Option<Vec<PathBuf>>, super::FolderError> {
    let folder = out_dir.join(run.folder_name());
    let keeps_its_own =
        std::fs::read_dir(folder.join(TRAIN_EVENTS_DIR)).is_ok_and(|mut entries| {
            entries.any(|e| {
                e.is_ok_and(|e| {
                    kiln_formats::tensorboard::is_event_file_name(&e.file_name().to_string_lossy())
                })
            })
        });
    if keeps_its_own && same_folder(&folder, &run.path) {
        return Ok(None);
    }
    let mut written = Vec::new();
    for (relative, bytes) in event_files_of(run, super::now_secs()) {
        let path = folder.join(relative);
        let parent = path.parent().unwrap_or(&folder);
        std::fs::create_dir_all(parent).map_err(super::io_err("create", parent))?;
        crate::atomic_file::write_atomically(&path, &bytes)
            .map_err(super::io_err("write", &path))?;
        written.push(path);
    }
    Ok(Some(written))
}

/// Whether two paths name one folder (through links and `..`), as far as the disk can tell.
#[cfg(not(target_arch = "wasm32"))]
fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Seconds since the Unix epoch of a run folder named `YYYYMMDD-HHMMSS-name` (UTC).
fn start_secs_of(folder_name: &str) -> Option<f64> {
    super::manage::timestamp_prefix(folder_name)
        .and_then(super::timestamp_secs)
        .map(|secs| secs as f64)
}
