//! The run folder: its layout, written as the run goes (so a crash leaves valid files up to the
//! last row), read back for the runs list, plots, compare and export, and managed (list, rename,
//! delete). Every file name is written once, below.
//!
//! ```text
//! runs/<timestamp>-<name>/
//!   config.toml      the checked experiment; `kiln train --config` reruns it exactly
//!   metrics.csv      one MetricsRow per readback
//!   epochs.csv       one EpochRow per evaluated epoch
//!   summary.json     the whole run's figures (RunSummary), written atomically when it ends
//!   predictions.csv  one PredictionRow per test image, by the kept weights of a completed run
//!   confusion.csv    true class × predicted class counts, when the run completed
//!   report.csv       precision, recall, F1, support per class; averages; top-5 accuracy
//!   model.bpk        the completed run's weights (Burn's burnpack)
//!   model.json       its ModelCard: shape, class names, input scaling
//!   checkpoints/
//!     last/  model.bpk  optimizer.bpk  state.json   the newest epoch: what `--resume` reads
//!     best/  model.bpk  optimizer.bpk  state.json   the best epoch on validation (see selection)
//!   .kiln-lock       held (an advisory lock) by the one process writing the folder: [`lock`]
//!   .kiln-writer     which process that is, for the sentence that refuses a second one
//!   train/           TensorBoard event files of the training series, as Keras lays them out
//!   validation/      TensorBoard event files of the evaluation series: [`tensorboard`]
//! ```
//!
//! A run imported from another framework's log has `source.json` and `epochs.csv` (and event
//! files) only: [`imported`].
//!
//! A run folder travels as one tar archive of the folder ([`archive`]): `kiln archive`, the runs
//! list's *Archive…* and *Import run…*.
//!
//! The writer and the reader share one row type per CSV ([`rows`]); the loop never sees this
//! layout: [`FolderStore`] is the [`crate::train::RunStore`] that puts its checkpoints here.

mod archive;
mod checkpoint;
pub mod imported;
mod label_predictions;
mod lock;
mod manage;
pub mod page_runs;
mod reader;
mod rows;
mod saved_model;
pub mod tensorboard;
#[cfg(test)]
mod tests;
mod writer;

#[cfg(not(target_arch = "wasm32"))]
pub use archive::import;
pub use archive::{
    ARCHIVE_EXTENSION, ArchiveError, MAX_ARCHIVE_BYTES, RunArchive, import_in_memory, pack,
    read_archive,
};
pub use checkpoint::{
    CheckpointError, CheckpointState, FolderStore, ResumePoint, Slot, can_resume, can_resume_in,
    find, find_in, slot_folder,
};
pub use imported::{
    Hparam, ImportOutcome, ImportedSource, LogValidation, SOURCE_FILE, imported_run,
};
#[cfg(not(target_arch = "wasm32"))]
pub use imported::{import_path, unnamed_series_at};
/// The figures a log's series can be named as (the window's choice beside each unnamed series).
pub use kiln_formats::training_log::Figure as LogFigure;
/// How a person names a log's series as figures, for [`import_path`] (`kiln import --series`).
pub use kiln_formats::training_log::SeriesNames;
pub use label_predictions::load_label_predictions_in;
pub use lock::{FolderLock, LOCK_FILE, WRITER_FILE, held_by};
pub use manage::{
    MAX_NAME_CHARS, check_run_name, delete_run, list_runs, list_runs_in, rename_run, rename_run_in,
};
pub(crate) use reader::read_bytes;
pub use reader::{RunHistory, load_predictions, load_predictions_in};
pub use rows::{EpochRow, MetricsRow, PredictionRow};
pub(crate) use saved_model::save_model;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use writer::create_unique_dir;
pub use writer::{RunFolder, run_stem};

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use web_time::{SystemTime, UNIX_EPOCH};

/// The checked experiment, as TOML.
pub const CONFIG_FILE: &str = "config.toml";
/// One row per readback.
pub const METRICS_FILE: &str = "metrics.csv";
/// One row per evaluated epoch.
pub const EPOCHS_FILE: &str = "epochs.csv";
/// The run's figures as JSON.
pub const SUMMARY_FILE: &str = "summary.json";
/// One row per test image of a completed run.
pub const PREDICTIONS_FILE: &str = "predictions.csv";
/// The confusion matrix of a completed run.
pub const CONFUSION_FILE: &str = "confusion.csv";
/// Precision, recall, F1 and support per class of a completed run, with their averages.
pub const REPORT_FILE: &str = "report.csv";
/// Weights, in the run folder (the completed model) and in each checkpoint slot.
pub const MODEL_FILE: &str = "model.bpk";
/// The saved model's card.
pub const CARD_FILE: &str = "model.json";
/// The folder of the checkpoint slots.
pub const CHECKPOINTS_DIR: &str = "checkpoints";
/// A checkpoint's optimizer state.
pub const OPTIMIZER_FILE: &str = "optimizer.bpk";
/// A checkpoint's loop counters; written last, so a slot that has one is complete.
pub const STATE_FILE: &str = "state.json";

/// Why a run folder could not be read, renamed or deleted; each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    /// The folder does not exist.
    #[error("{} does not exist; check the path of the run folder", path.display())]
    NotFound {
        /// The path asked for.
        path: PathBuf,
    },
    /// The path exists but is not a run folder.
    #[error(
        "{} is not a Kiln run folder (it has no config.toml, metrics.csv or source.json); pick a folder that `kiln train` or `kiln import` created",
        path.display()
    )]
    NotARun {
        /// The path asked for.
        path: PathBuf,
    },
    /// The new name cannot be used.
    #[error("'{name}' cannot name a run: {reason}")]
    BadName {
        /// The refused name.
        name: String,
        /// What is wrong and what would be accepted.
        reason: String,
    },
    /// The rename target is taken.
    #[error("{} already exists; choose another name", path.display())]
    Exists {
        /// The folder that is in the way.
        path: PathBuf,
    },
    /// config.toml could not be parsed, so its name cannot be rewritten.
    #[error(
        "{} is not a readable Kiln configuration ({message}); fix or restore it, then rename the run again",
        path.display()
    )]
    Config {
        /// The config file.
        path: PathBuf,
        /// What the parser said.
        message: String,
    },
    /// Another process writes the folder now.
    #[error(
        "{} is being written by {holder}; wait for that run to end or stop it, then try again",
        path.display()
    )]
    Locked {
        /// The folder.
        path: PathBuf,
        /// Who writes it: "process 4242 (kiln train), since 20261206-201305 UTC".
        holder: String,
    },
    /// The file system refused.
    #[error("could not {action} {}: {source}; check that it exists and that you may change it", path.display())]
    Io {
        /// What was being done: "read", "rename", "delete"...
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
}

/// The error for `action` on `path` failing with an OS error.
pub(crate) fn io_err<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(io::Error) -> FolderError + 'a {
    move |source| FolderError::Io {
        action,
        path: path.to_owned(),
        source,
    }
}

/// Whether `folder` holds a run: a config or a metrics file, or an imported run's source.
pub(crate) fn is_run_folder(folder: &Path) -> bool {
    is_run_folder_in(&kiln_formats::files::Disk, folder)
}

/// [`is_run_folder`] of a folder in `tree`.
pub(crate) fn is_run_folder_in(tree: &dyn kiln_formats::files::FileTree, folder: &Path) -> bool {
    [CONFIG_FILE, METRICS_FILE, SOURCE_FILE]
        .iter()
        .any(|file| tree.is_file(&folder.join(file)))
}

/// Checks that `folder` of `tree` is a folder holding a run.
pub(crate) fn check_run_folder_in(
    tree: &dyn kiln_formats::files::FileTree,
    folder: &Path,
) -> Result<(), FolderError> {
    if !tree.is_dir(folder) {
        return Err(FolderError::NotFound {
            path: folder.to_owned(),
        });
    }
    if !is_run_folder_in(tree, folder) {
        return Err(FolderError::NotARun {
            path: folder.to_owned(),
        });
    }
    Ok(())
}

/// Checks that `folder` is a directory (or a link to one) holding a run. A link is acted on
/// itself: `remove_dir_all` and `rename` never follow it, so a delete stays in the runs folder.
pub(crate) fn check_run_folder(folder: &Path) -> Result<(), FolderError> {
    match fs::symlink_metadata(folder) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(FolderError::NotFound {
            path: folder.to_owned(),
        }),
        Err(e) => Err(io_err("read", folder)(e)),
        Ok(meta)
            if (meta.is_dir() || (meta.file_type().is_symlink() && folder.is_dir()))
                && is_run_folder(folder) =>
        {
            Ok(())
        }
        Ok(_) => Err(FolderError::NotARun {
            path: folder.to_owned(),
        }),
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

/// Seconds since the Unix epoch of a `YYYYMMDD-HHMMSS` UTC stamp: [`timestamp`]'s inverse;
/// `None` for a date or time that does not exist.
pub(crate) fn timestamp_secs(stamp: &str) -> Option<i64> {
    let digits = |range: std::ops::Range<usize>| -> Option<i64> { stamp.get(range)?.parse().ok() };
    if stamp.as_bytes().get(8) != Some(&b'-') {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(4..6)?, digits(6..8)?);
    let (hour, minute, second) = (digits(9..11)?, digits(11..13)?, digits(13..15)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    // Days-from-civil (Howard Hinnant), the inverse of `timestamp`'s civil-from-days.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hour * 3600 + minute * 60 + second)
}

/// Seconds since the Unix epoch now, as event files and exports stamp their records.
pub(crate) fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The last component of `path`, the name the runs list shows next to the date.
pub(crate) fn folder_name_of(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
