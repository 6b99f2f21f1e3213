//! The card a saved model travels with: what it needs besides its weights.

use serde::{Deserialize, Serialize};

/// What a saved model needs besides its weights to classify a new image as training did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCard {
    /// Channels, height and width of the images it was trained on.
    pub shape: [usize; 3],
    /// Class names; the model's output `i` is `class_names[i]`.
    pub class_names: Vec<String>,
    /// Per-channel value subtracted from a pixel byte before scaling.
    pub offset: Vec<f32>,
    /// Per-channel factor applied after the subtraction.
    pub scale: Vec<f32>,
}
