//! The completed run's model: `model.bpk` (Burn's burnpack) and its card `model.json`, in a
//! run folder on disk or among a page's runs.

use std::path::{Path, PathBuf};

use burn::tensor::Bytes;

use super::{CARD_FILE, MODEL_FILE, write_atomically};
use crate::model::{Classifier, ModelCard};
use crate::train::RunStore;
use crate::train::reads::weights_bytes;

/// Saves `model` and its card into `folder`, each through a temporary name and a rename, so a
/// crash never leaves a half-written model that looks complete.
pub(crate) fn save_model(
    model: &Classifier,
    card: &ModelCard,
    folder: &Path,
) -> Result<(), String> {
    let (weights_bytes, card_text) = model_files(model, card)?;
    for (name, bytes) in [
        (MODEL_FILE, &weights_bytes[..]),
        (CARD_FILE, card_text.as_bytes()),
    ] {
        let path = folder.join(name);
        write_atomically(&path, bytes)
            .map_err(|e| format!("could not write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// The bytes of `model.bpk` and the text of `model.json`.
fn model_files(model: &Classifier, card: &ModelCard) -> Result<(Bytes, String), String> {
    let weights = weights_bytes(&model.for_eval())?;
    let card = serde_json::to_string_pretty(card).map_err(|e| e.to_string())?;
    Ok((weights, card))
}

/// Where a page's run keeps its model: its folder among the page's runs
/// ([`super::page_runs`]). A page keeps no checkpoints (its runs cannot be resumed there), so
/// it keeps the best epoch's weights in memory or the last ones.
#[derive(Debug)]
pub struct PageStore {
    run_folder: PathBuf,
}

impl PageStore {
    /// The store of the page's run in `run_folder`.
    pub fn new(run_folder: &Path) -> Self {
        Self {
            run_folder: run_folder.to_owned(),
        }
    }
}

impl RunStore for PageStore {
    fn save_model(&mut self, model: &Classifier, card: &ModelCard) -> Result<(), String> {
        let (weights_bytes, card_text) = model_files(model, card)?;
        super::page_runs::with_mut(|runs| {
            runs.insert(self.run_folder.join(MODEL_FILE), weights_bytes.to_vec())?;
            runs.insert(self.run_folder.join(CARD_FILE), card_text.into_bytes())
        })
        .map_err(|e| format!("could not keep the model in the page: {e}"))
    }
}
