//! Checkpoints: model and optimizer state after every evaluated epoch, so a run stopped by a
//! crash, Ctrl-C or a closed window goes on where it stopped and ends as if it never had.
//!
//! ```text
//! runs/<run>/checkpoints/
//!   last/   model.bpk  optimizer.bpk  state.json   the newest epoch: what `--resume` reads
//!   best/   model.bpk  optimizer.bpk  state.json   the epoch with the best test accuracy
//! ```
//!
//! A slot is written as `<slot>.partial/` and then swapped in with renames; `state.json` is the
//! last file written, so a slot that has one is complete.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::optim::ModuleOptimizer;
use serde::{Deserialize, Serialize};

use crate::model::Classifier;
use crate::train::precision::LossScale;

/// The folder of a run that holds its checkpoints.
pub const CHECKPOINTS_DIR: &str = "checkpoints";
const MODEL_FILE: &str = "model.bpk";
const OPTIMIZER_FILE: &str = "optimizer.bpk";
const STATE_FILE: &str = "state.json";
/// Bumped when `state.json` changes meaning, so an old checkpoint is refused, not misread.
const STATE_VERSION: u32 = 1;

/// Which checkpoint of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The newest epoch.
    Last,
    /// The epoch with the highest test accuracy so far.
    Best,
}

impl Slot {
    fn name(self) -> &'static str {
        match self {
            Self::Last => "last",
            Self::Best => "best",
        }
    }
}

/// Everything the loop needs besides the tensors to go on as if it had never stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointState {
    /// Format version of this file.
    pub version: u32,
    /// Epochs trained and evaluated; the resumed run starts at this (0-based) epoch.
    pub epochs_completed: usize,
    /// Optimizer steps taken in the run.
    pub steps: usize,
    /// Training images seen in the run.
    pub samples_seen: u64,
    /// Run wall seconds at the end of the epoch, so resumed rows continue the time axis.
    pub wall_secs: f64,
    /// Training seconds summed over the completed epochs (for the mean epoch time).
    pub train_secs_total: f64,
    /// Steady-state seconds so far (warm-up excluded).
    pub steady_secs: f64,
    /// Images trained in those seconds.
    pub steady_samples: u64,
    /// Seconds to the first finished step of the original start.
    pub warmup_secs: f64,
    /// Whether the divergence warning was already given.
    pub diverging_warned: bool,
    /// Mean training loss of the last epoch.
    pub train_loss: f64,
    /// Training accuracy of the last epoch.
    pub train_accuracy: f64,
    /// Test loss after the last epoch.
    pub test_loss: f64,
    /// Test accuracy after the last epoch.
    pub test_accuracy: f64,
    /// Best test accuracy of any epoch so far.
    pub best_test_accuracy: f64,
    /// The loss scale of an f16 run; none in f32 and in checkpoints written before f16 existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_scale: Option<LossScale>,
}

impl CheckpointState {
    /// A state for `epochs_completed` epochs with every other figure zero; the loop fills it.
    pub fn new(epochs_completed: usize) -> Self {
        Self {
            version: STATE_VERSION,
            epochs_completed,
            steps: 0,
            samples_seen: 0,
            wall_secs: 0.0,
            train_secs_total: 0.0,
            steady_secs: 0.0,
            steady_samples: 0,
            warmup_secs: 0.0,
            diverging_warned: false,
            train_loss: 0.0,
            train_accuracy: 0.0,
            test_loss: 0.0,
            test_accuracy: 0.0,
            best_test_accuracy: 0.0,
            loss_scale: None,
        }
    }
}

/// Why a checkpoint could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The run has no complete checkpoint.
    #[error(
        "{0} has no checkpoint to resume from: a run keeps one from the end of its first epoch on"
    )]
    Missing(PathBuf),
    /// A file could not be written.
    #[error("could not write the checkpoint {path}: {reason}")]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// A file could not be read or does not fit this run.
    #[error("the checkpoint {path} cannot be used: {reason}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

/// The folder of `slot` in `run_folder`.
pub fn slot_folder(run_folder: &Path, slot: Slot) -> PathBuf {
    run_folder.join(CHECKPOINTS_DIR).join(slot.name())
}

fn write_error(path: &Path) -> impl FnOnce(String) -> CheckpointError + '_ {
    move |reason| CheckpointError::Write {
        path: path.to_owned(),
        reason,
    }
}

/// Writes `model`, `optimizer` and `state` as the `slot` checkpoint of `run_folder`.
pub fn save(
    run_folder: &Path,
    slot: Slot,
    model: &Classifier,
    optimizer: &ModuleOptimizer,
    state: &CheckpointState,
) -> Result<(), CheckpointError> {
    let target = slot_folder(run_folder, slot);
    let partial = target.with_extension("partial");
    remove_dir_if_present(&partial).map_err(|e| write_error(&partial)(e.to_string()))?;
    fs::create_dir_all(&partial).map_err(|e| write_error(&partial)(e.to_string()))?;
    let model_path = partial.join(MODEL_FILE);
    model
        .valid()
        .save_file(&model_path)
        .map_err(|e| write_error(&model_path)(format!("{e:?}")))?;
    let optimizer_path = partial.join(OPTIMIZER_FILE);
    optimizer
        .save(&optimizer_path)
        .map_err(|e| write_error(&optimizer_path)(format!("{e:?}")))?;
    let state_path = partial.join(STATE_FILE);
    let text =
        serde_json::to_string_pretty(state).map_err(|e| write_error(&state_path)(e.to_string()))?;
    crate::run::write_atomically(&state_path, text.as_bytes())
        .map_err(|e| write_error(&state_path)(e.to_string()))?;
    swap_in(&partial, &target).map_err(|e| write_error(&target)(e.to_string()))
}

/// Copies the `from` checkpoint to `to`: the best epoch is often the newest one.
pub fn copy_slot(run_folder: &Path, from: Slot, to: Slot) -> Result<(), CheckpointError> {
    let source = slot_folder(run_folder, from);
    let target = slot_folder(run_folder, to);
    let partial = target.with_extension("partial");
    let copy = || -> io::Result<()> {
        remove_dir_if_present(&partial)?;
        fs::create_dir_all(&partial)?;
        // State last, as in `save`, so an interrupted copy never looks complete.
        for name in [MODEL_FILE, OPTIMIZER_FILE, STATE_FILE] {
            let (from, to) = (source.join(name), partial.join(name));
            // A hard link costs nothing; `save` replaces files by rename, so the link keeps
            // this epoch's content when `last` moves on.
            if fs::hard_link(&from, &to).is_err() {
                fs::copy(&from, &to)?;
            }
        }
        swap_in(&partial, &target)
    };
    copy().map_err(|e| write_error(&target)(e.to_string()))
}

fn remove_dir_if_present(path: &Path) -> io::Result<()> {
    match fs::remove_dir_all(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Replaces `target` by `partial`; between the two renames the old slot survives as `.old`,
/// which [`find`] also accepts, so no moment leaves the run without a checkpoint.
fn swap_in(partial: &Path, target: &Path) -> io::Result<()> {
    let old = target.with_extension("old");
    remove_dir_if_present(&old)?;
    if target.exists() {
        fs::rename(target, &old)?;
    }
    fs::rename(partial, target)?;
    remove_dir_if_present(&old)
}

/// The complete `slot` checkpoint of `run_folder`, with its state.
pub fn find(run_folder: &Path, slot: Slot) -> Result<(PathBuf, CheckpointState), CheckpointError> {
    let target = slot_folder(run_folder, slot);
    for folder in [target.clone(), target.with_extension("old")] {
        let state_path = folder.join(STATE_FILE);
        let Ok(text) = fs::read_to_string(&state_path) else {
            continue;
        };
        let state: CheckpointState =
            serde_json::from_str(&text).map_err(|e| CheckpointError::Read {
                path: state_path.clone(),
                reason: e.to_string(),
            })?;
        if state.version != STATE_VERSION {
            return Err(CheckpointError::Read {
                path: state_path,
                reason: format!(
                    "it was written by another version of Kiln (format {}, this one reads {STATE_VERSION})",
                    state.version
                ),
            });
        }
        return Ok((folder, state));
    }
    Err(CheckpointError::Missing(run_folder.to_owned()))
}

/// Whether `run_folder`, a run of `epochs` epochs, stopped short of its last epoch with a
/// checkpoint to go on from.
pub fn can_resume(run_folder: &Path, epochs: usize) -> bool {
    find(run_folder, Slot::Last).is_ok_and(|(_, state)| state.epochs_completed < epochs)
}

/// Loads the weights of the checkpoint in `folder` into `model`, which must have the shape the
/// run's config describes.
pub fn load_model(folder: &Path, model: Classifier) -> Result<Classifier, CheckpointError> {
    let path = folder.join(MODEL_FILE);
    model
        .try_load_file(&path)
        .map_err(|e| CheckpointError::Read {
            path,
            reason: format!("{e:?}"),
        })
}

/// Loads the optimizer state of the checkpoint in `folder` into `optimizer`.
pub fn load_optimizer(
    folder: &Path,
    optimizer: ModuleOptimizer,
) -> Result<ModuleOptimizer, CheckpointError> {
    let path = folder.join(OPTIMIZER_FILE);
    let read_error = |reason: String| CheckpointError::Read {
        path: path.clone(),
        reason,
    };
    let record =
        burn::optim::OptimizerRecord::load(&path).map_err(|e| read_error(format!("{e:?}")))?;
    // Burn expects every state tensor of a record it wrote to name its parameter and panics
    // otherwise; a damaged file must end in a sentence, not a crash.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        optimizer.load_record(record)
    }))
    .map_err(|_| read_error("the optimizer state is damaged".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Precision;
    use crate::train::precision::StepPrecision;

    #[test]
    fn an_f16_loss_scale_survives_state_json_and_older_files_read_as_f32() {
        let scale = StepPrecision::new(Precision::F16, None).loss_scale();
        assert!(scale.is_some());
        let state = CheckpointState {
            loss_scale: scale.clone(),
            ..CheckpointState::new(2)
        };
        let text = serde_json::to_string(&state).expect("json");
        let back: CheckpointState = serde_json::from_str(&text).expect("read back");
        assert_eq!(back.loss_scale, scale);
        // A file written before f16 existed has no `loss_scale`, and an f32 run writes none.
        let f32_text = serde_json::to_string(&CheckpointState::new(2)).expect("json");
        assert!(!f32_text.contains("loss_scale"), "{f32_text}");
        let older: CheckpointState = serde_json::from_str(&f32_text).expect("older file");
        assert_eq!(older.loss_scale, None);
    }
}
