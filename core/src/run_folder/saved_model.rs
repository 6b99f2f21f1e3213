//! The completed run's model: `model.bpk` (Burn's burnpack) and its card `model.json`.

use std::path::Path;

use super::{CARD_FILE, MODEL_FILE, write_atomically};
use crate::model::{Classifier, ModelCard};
use crate::train::reads::weights_bytes;

/// Saves `model` and its card into `folder`, each through a temporary name and a rename, so a
/// crash never leaves a half-written model that looks complete.
pub(crate) fn save_model(
    model: &Classifier,
    card: &ModelCard,
    folder: &Path,
) -> Result<(), String> {
    let weights = folder.join(MODEL_FILE);
    let bytes = weights_bytes(&model.for_eval())?;
    write_atomically(&weights, &bytes)
        .map_err(|e| format!("could not write {}: {e}", weights.display()))?;
    let card_path = folder.join(CARD_FILE);
    let text = serde_json::to_string_pretty(card).map_err(|e| e.to_string())?;
    write_atomically(&card_path, text.as_bytes())
        .map_err(|e| format!("could not write {}: {e}", card_path.display()))
}
