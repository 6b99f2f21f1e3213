//! The completed run's model: `model.bpk` (Burn's burnpack) and its card `model.json`, in a
//! run folder on disk or among a page's runs.

use std::path::Path;

use burn::tensor::Bytes;

use super::{CARD_FILE, MODEL_FILE};
use crate::atomic_file::write_atomically;
use crate::model::{Classifier, ModelCard};
use crate::train::device_reads::weights_bytes;

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
pub(super) fn model_files(model: &Classifier, card: &ModelCard) -> Result<(Bytes, String), String> {
    let weights = weights_bytes(&model.for_eval())?;
    let card = serde_json::to_string_pretty(card).map_err(|e| e.to_string())?;
    Ok((weights, card))
}
