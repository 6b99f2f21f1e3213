//! Where a run keeps what it makes. The loop calls a [`RunStore`] at the points where something
//! is worth keeping; the caller chooses which one (a run folder, or nothing for tests and
//! `kiln bench`), so the loop knows no file layout.

use burn::optim::ModuleOptimizer;

use super::{CheckpointFiles, RunCounters};
use crate::model::{Classifier, ModelCard};

/// The model and optimizer a run starts from: as built, or as a checkpoint left them.
pub struct Restored {
    /// The weights: fresh, or those at the end of the checkpoint's epoch.
    pub model: Classifier,
    /// The optimizer's state (moments, step counts): fresh, or the checkpoint's.
    pub optimizer: ModuleOptimizer,
    /// The loop's figures at the checkpoint; none for a run that starts anew.
    pub counters: Option<RunCounters>,
}

/// What the loop hands over to be kept, and where a resumed run comes from. The provided
/// methods are those of a store that keeps no checkpoints (a run starts anew, epochs are not
/// kept): such a store says only where the completed model goes.
pub trait RunStore {
    /// Epochs the checkpoint a resumed run goes on from had completed; none for a new run.
    fn resumes_after(&self) -> Option<usize> {
        None
    }

    /// Loads the checkpoint a resumed run goes on from into the freshly built `model` and
    /// `optimizer`; a run that starts anew gets both back as they are.
    fn restore(
        &mut self,
        model: Classifier,
        optimizer: ModuleOptimizer,
    ) -> Result<Restored, String> {
        Ok(Restored {
            model,
            optimizer,
            counters: None,
        })
    }

    /// Whether this store keeps checkpoints: the loop reads one back from the device only for
    /// a store that does.
    fn keeps_checkpoints(&self) -> bool {
        false
    }

    /// Keeps an evaluated epoch's `files`; `best` when the selection rule calls it the best so
    /// far.
    fn save_checkpoint(
        &mut self,
        files: &CheckpointFiles,
        counters: &RunCounters,
        best: bool,
    ) -> Result<(), String> {
        let _ = (files, counters, best);
        Ok(())
    }

    /// The best epoch's weights loaded into `model`, for a run that keeps the best and met it
    /// before a resume; none when this store keeps no checkpoints.
    fn restore_best(&mut self, model: Classifier) -> Result<Option<Classifier>, String> {
        let _ = model;
        Ok(None)
    }

    /// Keeps a completed run's model, with the card that says how to feed it an image.
    fn save_model(&mut self, model: &Classifier, card: &ModelCard) -> Result<(), String>;
}

/// A store that keeps nothing: runs in tests, `kiln bench`, anything without a folder.
#[derive(Debug, Clone, Copy, Default)]
pub struct KeepNothing;

impl RunStore for KeepNothing {
    fn save_model(&mut self, _: &Classifier, _: &ModelCard) -> Result<(), String> {
        Ok(())
    }
}
