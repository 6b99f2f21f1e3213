//! Checkpoints: model and optimizer state after every evaluated epoch, so a run stopped by a
//! crash, Ctrl-C or a closed window goes on where it stopped and ends as if it never had.
//!
//! A slot is written as `<slot>.partial/` and then swapped in with renames; `state.json` is the
//! last file written, so a slot that has one is complete.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::optim::ModuleOptimizer;
use serde::{Deserialize, Serialize};

use super::{CHECKPOINTS_DIR, MODEL_FILE, OPTIMIZER_FILE, STATE_FILE, write_atomically};
use crate::config::ExperimentDraft;
use crate::model::{Classifier, ModelCard};
use crate::train::reads::{optimizer_bytes, weights_bytes};
use crate::train::{Restored, RunCounters, RunStore};

/// Bumped when `state.json` changes meaning, so an old checkpoint is refused, not misread.
const STATE_VERSION: u32 = 1;

/// Which checkpoint of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The newest epoch.
    Last,
    /// The epoch the selection rule liked best so far (validation loss by default).
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

/// A checkpoint's `state.json`: its format version and the loop's counters at that epoch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointState {
    /// Format version of this file.
    pub version: u32,
    /// The loop's figures at the end of the epoch, flattened into the file's top level.
    #[serde(flatten)]
    pub counters: RunCounters,
}

impl CheckpointState {
    /// A state for `epochs_completed` epochs with every other figure zero.
    pub fn new(epochs_completed: usize) -> Self {
        Self::of(RunCounters {
            epochs_completed,
            ..RunCounters::default()
        })
    }

    /// The state that keeps `counters`, in this version's format.
    pub fn of(counters: RunCounters) -> Self {
        Self {
            version: STATE_VERSION,
            counters,
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
    let weights = weights_bytes(&model.valid()).map_err(write_error(&model_path))?;
    fs::write(&model_path, &weights[..]).map_err(|e| write_error(&model_path)(e.to_string()))?;
    let optimizer_path = partial.join(OPTIMIZER_FILE);
    let state_bytes = optimizer_bytes(optimizer).map_err(write_error(&optimizer_path))?;
    fs::write(&optimizer_path, &state_bytes[..])
        .map_err(|e| write_error(&optimizer_path)(e.to_string()))?;
    let state_path = partial.join(STATE_FILE);
    let text =
        serde_json::to_string_pretty(state).map_err(|e| write_error(&state_path)(e.to_string()))?;
    write_atomically(&state_path, text.as_bytes())
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
pub fn can_resume(run_folder: &Path, config: &ExperimentDraft) -> bool {
    find(run_folder, Slot::Last)
        .is_ok_and(|(_, state)| !state.counters.is_over(config.epochs, config.early_stop))
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

/// Where a resumed run picks up: a checkpoint folder and the loop state saved with it.
#[derive(Debug, Clone)]
pub struct ResumePoint {
    /// The checkpoint slot folder holding `model.bpk` and `optimizer.bpk`.
    pub folder: PathBuf,
    /// The loop's figures at the end of that epoch.
    pub state: CheckpointState,
}

/// The run folder as the loop's [`RunStore`]: each epoch's checkpoint into `checkpoints/`, a
/// completed run's model beside its config, and a resumed run's start from its checkpoint.
#[derive(Debug, Clone)]
pub struct FolderStore {
    run_folder: PathBuf,
    resume: Option<ResumePoint>,
}

impl FolderStore {
    /// A store for a run that starts anew in `run_folder`.
    pub fn new(run_folder: &Path) -> Self {
        Self {
            run_folder: run_folder.to_owned(),
            resume: None,
        }
    }

    /// A store for a run in `run_folder` that goes on from `point`.
    pub fn resuming(run_folder: &Path, point: ResumePoint) -> Self {
        Self {
            run_folder: run_folder.to_owned(),
            resume: Some(point),
        }
    }
}

impl RunStore for FolderStore {
    fn resumes_after(&self) -> Option<usize> {
        self.resume
            .as_ref()
            .map(|point| point.state.counters.epochs_completed)
    }

    fn restore(
        &mut self,
        model: Classifier,
        optimizer: ModuleOptimizer,
    ) -> Result<Restored, String> {
        let Some(point) = self.resume.take() else {
            return Ok(Restored {
                model,
                optimizer,
                counters: None,
            });
        };
        let loaded = load_model(&point.folder, model)
            .and_then(|model| Ok((model, load_optimizer(&point.folder, optimizer)?)));
        let (model, optimizer) = loaded.map_err(|e| e.to_string())?;
        Ok(Restored {
            model,
            optimizer,
            counters: Some(point.state.counters),
        })
    }

    fn save_checkpoint(
        &mut self,
        model: &Classifier,
        optimizer: &ModuleOptimizer,
        counters: &RunCounters,
        best: bool,
    ) -> Result<(), String> {
        let state = CheckpointState::of(counters.clone());
        save(&self.run_folder, Slot::Last, model, optimizer, &state)
            .and_then(|()| {
                if best {
                    copy_slot(&self.run_folder, Slot::Last, Slot::Best)
                } else {
                    Ok(())
                }
            })
            .map_err(|e| e.to_string())
    }

    fn restore_best(&mut self, model: Classifier) -> Result<Option<Classifier>, String> {
        let best = slot_folder(&self.run_folder, Slot::Best);
        load_model(&best, model)
            .map(Some)
            .map_err(|e| e.to_string())
    }

    fn save_model(&mut self, model: &Classifier, card: &ModelCard) -> Result<(), String> {
        super::save_model(model, card, &self.run_folder)
    }
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
        let state = CheckpointState::of(RunCounters {
            epochs_completed: 2,
            loss_scale: scale.clone(),
            ..RunCounters::default()
        });
        let text = serde_json::to_string(&state).expect("json");
        let back: CheckpointState = serde_json::from_str(&text).expect("read back");
        assert_eq!(back.counters.loss_scale, scale);
        // A file written before f16 existed has no `loss_scale`, and an f32 run writes none.
        let f32_text = serde_json::to_string(&CheckpointState::new(2)).expect("json");
        assert!(!f32_text.contains("loss_scale"), "{f32_text}");
        let older: CheckpointState = serde_json::from_str(&f32_text).expect("older file");
        assert_eq!(older.counters.loss_scale, None);
    }
}
