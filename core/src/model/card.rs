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
    /// A multi-label model's threshold per class (label): its outputs are independent sigmoid
    /// probabilities, and an image has each label whose probability reaches its threshold.
    /// None for a model of one class per image, whose outputs are a softmax.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thresholds: Option<Vec<f32>>,
}

impl ModelCard {
    /// The probabilities of `logits` (`[N, classes]`) as this model gives them: a softmax over
    /// classes, or for a multi-label model a sigmoid per label.
    pub fn probabilities(&self, logits: burn::tensor::Tensor<2>) -> burn::tensor::Tensor<2> {
        match self.thresholds {
            Some(_) => burn::tensor::activation::sigmoid(logits),
            None => burn::tensor::activation::softmax(logits, 1),
        }
    }

    /// The labels a multi-label model gives an image of `probabilities` (one per class), in
    /// class order, each with its probability; none for a model of one class per image.
    pub fn labels_given<'a>(&'a self, probabilities: &[f32]) -> Option<Vec<(&'a str, f32)>> {
        let thresholds = self.thresholds.as_ref()?;
        Some(
            self.class_names
                .iter()
                .zip(thresholds)
                .zip(probabilities)
                .filter(|((_, threshold), p)| **p >= **threshold)
                .map(|((name, _), p)| (name.as_str(), *p))
                .collect(),
        )
    }
}
