//! Checkpoints: model and optimizer state after every evaluated epoch, so a run stopped by a
//! crash, Ctrl-C or a closed window goes on where it stopped and ends as if it never had.
//!
//! A slot is written as `<slot>.partial/` and then swapped in with renames; `state.json` is the
//! last file written, so a slot that has one is complete. A page's runs keep theirs the same
//! way among the page's runs ([`super::page_runs`]), until the run completes.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::optim::ModuleOptimizer;
use burn::tensor::Bytes;
use kiln_formats::files::{Disk, FileTree};
use serde::{Deserialize, Serialize};

use super::{
    CARD_FILE, CHECKPOINTS_DIR, MODEL_FILE, OPTIMIZER_FILE, STATE_FILE, page_runs, read_bytes,
};
use crate::atomic_file::write_atomically;
use crate::config::ExperimentDraft;
use crate::model::{Classifier, ModelCard};
use crate::train::{CheckpointFiles, Restored, RunCounters, RunStore};

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

/// Writes `files` and `state` as the `slot` checkpoint of `run_folder`.
pub fn save(
    run_folder: &Path,
    slot: Slot,
    files: &CheckpointFiles,
    state: &CheckpointState,
) -> Result<(), CheckpointError> {
    let target = slot_folder(run_folder, slot);
    let partial = target.with_extension("partial");
    remove_dir_if_present(&partial).map_err(|e| write_error(&partial)(e.to_string()))?;
    fs::create_dir_all(&partial).map_err(|e| write_error(&partial)(e.to_string()))?;
    let text = state_text(state)?;
    for (name, bytes) in slot_files(files, &text) {
        let path = partial.join(name);
        // State last, through a rename: a slot with a `state.json` is whole.
        let written = match name {
            STATE_FILE => write_atomically(&path, bytes),
            _ => fs::write(&path, bytes),
        };
        written.map_err(|e| write_error(&path)(e.to_string()))?;
    }
    swap_in(&partial, &target).map_err(|e| write_error(&target)(e.to_string()))
}

/// `state` as its `state.json` text.
fn state_text(state: &CheckpointState) -> Result<String, CheckpointError> {
    serde_json::to_string_pretty(state)
        .map_err(|e| write_error(Path::new(STATE_FILE))(e.to_string()))
}

/// A slot's files in the order they are written, `state.json` (its `state_text`) last.
fn slot_files<'a>(
    files: &'a CheckpointFiles,
    state_text: &'a str,
) -> [(&'static str, &'a [u8]); 3] {
    [
        (MODEL_FILE, &files.weights[..]),
        (OPTIMIZER_FILE, &files.optimizer[..]),
        (STATE_FILE, state_text.as_bytes()),
    ]
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
    find_in(&Disk, run_folder, slot)
}

/// [`find`] in `tree`: a disk, or a page's runs.
pub fn find_in(
    tree: &dyn FileTree,
    run_folder: &Path,
    slot: Slot,
) -> Result<(PathBuf, CheckpointState), CheckpointError> {
    let target = slot_folder(run_folder, slot);
    for folder in [target.clone(), target.with_extension("old")] {
        let state_path = folder.join(STATE_FILE);
        let Ok(bytes) = read_bytes(tree, &state_path) else {
            continue;
        };
        let state: CheckpointState =
            serde_json::from_slice(&bytes).map_err(|e| CheckpointError::Read {
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

/// Whether `run_folder` of `tree`, a run of `epochs` epochs, stopped short of its last epoch
/// with a checkpoint to go on from.
pub fn can_resume_in(tree: &dyn FileTree, run_folder: &Path, config: &ExperimentDraft) -> bool {
    find_in(tree, run_folder, Slot::Last)
        .is_ok_and(|(_, state)| !state.counters.is_over(config.epochs, config.early_stop))
}

/// [`can_resume_in`] on this computer's disk.
pub fn can_resume(run_folder: &Path, config: &ExperimentDraft) -> bool {
    can_resume_in(&Disk, run_folder, config)
}

/// The file `name` of the checkpoint in `folder` of `tree`.
fn slot_file(tree: &dyn FileTree, folder: &Path, name: &str) -> Result<Bytes, CheckpointError> {
    let path = folder.join(name);
    read_bytes(tree, &path)
        .map(Bytes::from_bytes_vec)
        .map_err(|e| CheckpointError::Read {
            path,
            reason: e.to_string(),
        })
}

/// Loads the weights of the checkpoint in `folder` of `tree` into `model`, which must have the
/// shape the run's config describes.
pub fn load_model(
    tree: &dyn FileTree,
    folder: &Path,
    model: Classifier,
) -> Result<Classifier, CheckpointError> {
    let bytes = slot_file(tree, folder, MODEL_FILE)?;
    let read_error = |reason: String| CheckpointError::Read {
        path: folder.join(MODEL_FILE),
        reason,
    };
    let record =
        burn::store::ModuleRecord::from_bytes(bytes).map_err(|e| read_error(format!("{e:?}")))?;
    model
        .try_load_record(record)
        .map_err(|e| read_error(format!("{e:?}")))
}

/// Loads the optimizer state of the checkpoint in `folder` of `tree` into `optimizer`, its
/// tensors on `device` (the model's).
pub fn load_optimizer(
    tree: &dyn FileTree,
    folder: &Path,
    optimizer: ModuleOptimizer,
    device: &burn::tensor::Device,
) -> Result<ModuleOptimizer, CheckpointError> {
    let bytes = slot_file(tree, folder, OPTIMIZER_FILE)?;
    let read_error = |reason: String| CheckpointError::Read {
        path: folder.join(OPTIMIZER_FILE),
        reason,
    };
    let record = burn::optim::OptimizerRecord::from_bytes(bytes)
        .map_err(|e| read_error(format!("{e:?}")))?;
    // Burn expects every state tensor of a record it wrote to name its parameter and panics
    // otherwise; a damaged file must end in a sentence, not a crash.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        optimizer.load_record_on(record, device)
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

/// Where a run folder lies: on this computer's disk, or among a browser page's runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Disk,
    Page,
}

/// The run folder as the loop's [`RunStore`]: each epoch's checkpoint into `checkpoints/`, a
/// completed run's model beside its config, and a resumed run's start from its checkpoint.
#[derive(Debug, Clone)]
pub struct FolderStore {
    run_folder: PathBuf,
    place: Place,
    resume: Option<ResumePoint>,
}

impl FolderStore {
    /// A store for a run that starts anew in `run_folder` on disk.
    pub fn new(run_folder: &Path) -> Self {
        Self {
            run_folder: run_folder.to_owned(),
            place: Place::Disk,
            resume: None,
        }
    }

    /// A store for a page's run in `run_folder` among the page's runs ([`page_runs`]). A
    /// completed run there drops its checkpoints: they would only fill the browser's storage.
    pub fn in_page(run_folder: &Path) -> Self {
        Self {
            place: Place::Page,
            ..Self::new(run_folder)
        }
    }

    /// This store, for a run that goes on from `point`.
    pub fn resuming(self, point: ResumePoint) -> Self {
        Self {
            resume: Some(point),
            ..self
        }
    }

    /// `read` on the tree the run folder lies in.
    fn read<R>(&self, read: impl FnOnce(&dyn FileTree) -> R) -> R {
        match self.place {
            Place::Disk => read(&Disk),
            Place::Page => page_runs::with(|runs| read(runs)),
        }
    }

    /// Writes `files` as the page's `slot`, through a partial folder as on disk.
    fn save_in_page(
        &self,
        slot: Slot,
        files: &CheckpointFiles,
        state: &CheckpointState,
    ) -> Result<(), CheckpointError> {
        let target = slot_folder(&self.run_folder, slot);
        let partial = target.with_extension("partial");
        let text = state_text(state)?;
        page_runs::with_mut(|runs| {
            runs.remove(&partial);
            for (name, bytes) in slot_files(files, &text) {
                runs.insert(partial.join(name), bytes.to_vec())?;
            }
            runs.remove(&target);
            runs.rename(&partial, &target)
        })
        .map_err(|e| write_error(&target)(e.to_string()))
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
        let device = model.devices().into_iter().next().unwrap_or_default();
        let loaded = self.read(|tree| {
            let model = load_model(tree, &point.folder, model)?;
            Ok((
                model,
                load_optimizer(tree, &point.folder, optimizer, &device)?,
            ))
        });
        let (model, optimizer) = loaded.map_err(|e: CheckpointError| e.to_string())?;
        Ok(Restored {
            model,
            optimizer,
            counters: Some(point.state.counters),
        })
    }

    fn keeps_checkpoints(&self) -> bool {
        true
    }

    fn save_checkpoint(
        &mut self,
        files: &CheckpointFiles,
        counters: &RunCounters,
        best: bool,
    ) -> Result<(), String> {
        let state = CheckpointState::of(counters.clone());
        let saved = match self.place {
            Place::Disk => save(&self.run_folder, Slot::Last, files, &state).and_then(|()| {
                if best {
                    copy_slot(&self.run_folder, Slot::Last, Slot::Best)
                } else {
                    Ok(())
                }
            }),
            // Memory has no links: the best slot is a second copy of the bytes.
            Place::Page => std::iter::once(Slot::Last)
                .chain(best.then_some(Slot::Best))
                .try_for_each(|slot| self.save_in_page(slot, files, &state)),
        };
        saved.map_err(|e| e.to_string())
    }

    fn restore_best(&mut self, model: Classifier) -> Result<Option<Classifier>, String> {
        let best = slot_folder(&self.run_folder, Slot::Best);
        self.read(|tree| load_model(tree, &best, model))
            .map(Some)
            .map_err(|e| e.to_string())
    }

    fn save_model(&mut self, model: &Classifier, card: &ModelCard) -> Result<(), String> {
        match self.place {
            Place::Disk => super::save_model(model, card, &self.run_folder),
            Place::Page => {
                let (weights, card_text) = super::saved_model::model_files(model, card)?;
                page_runs::with_mut(|runs| {
                    runs.insert(self.run_folder.join(MODEL_FILE), weights.to_vec())?;
                    runs.insert(self.run_folder.join(CARD_FILE), card_text.into_bytes())?;
                    runs.remove(&self.run_folder.join(CHECKPOINTS_DIR));
                    Ok::<(), io::Error>(())
                })
                .map_err(|e| format!("could not keep the model in the page: {e}"))
            }
        }
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
