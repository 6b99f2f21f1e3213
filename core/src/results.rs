//! What a completed run's model answers on the test split, and what is read from those answers
//! (the confusion matrix, per-class accuracy, the surest mistakes). The window, the run folder
//! and the export all read a run's results from here.

use serde::{Deserialize, Serialize};

/// The trained model's answer for every test image, after the last epoch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestPredictions {
    /// Class names; a label is an index into it.
    pub class_names: Vec<String>,
    /// True label of each test image, in the split's order.
    pub labels: Vec<u8>,
    /// Predicted label of each test image.
    pub predicted: Vec<u8>,
    /// Softmax probability the model gave its prediction.
    pub confidence: Vec<f32>,
    /// The most confidently wrong test images, surest first, for a gallery.
    pub gallery: Vec<GalleryImage>,
}

/// A test image with its pixels, so a front end can show it without the data set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GalleryImage {
    /// Position in the test split.
    pub index: usize,
    /// Channels (1 or 3), height and width.
    pub shape: [usize; 3],
    /// Bytes in planar C×H×W order, as in the data set.
    pub pixels: Vec<u8>,
}

impl GalleryImage {
    /// The image as interleaved RGBA bytes, row by row, for a texture.
    pub fn to_rgba(&self) -> Vec<u8> {
        planar_to_rgba(self.shape, &self.pixels)
    }
}

/// Planar C×H×W bytes (grayscale or RGB) as interleaved RGBA, row by row, for a texture.
pub fn planar_to_rgba([channels, height, width]: [usize; 3], pixels: &[u8]) -> Vec<u8> {
    let plane = height * width;
    let mut rgba = Vec::with_capacity(plane * 4);
    for i in 0..plane {
        let value = |c: usize| pixels.get(c * plane + i).copied().unwrap_or(0);
        let (r, g, b) = if channels >= 3 {
            (value(0), value(1), value(2))
        } else {
            (value(0), value(0), value(0))
        };
        rgba.extend_from_slice(&[r, g, b, 255]);
    }
    rgba
}

impl TestPredictions {
    /// Image counts indexed `[true label][predicted label]`.
    pub fn confusion(&self) -> Vec<Vec<u64>> {
        let classes = self.class_names.len();
        let mut counts = vec![vec![0u64; classes]; classes];
        for (&truth, &guess) in self.labels.iter().zip(&self.predicted) {
            if let Some(cell) = counts
                .get_mut(usize::from(truth))
                .and_then(|row| row.get_mut(usize::from(guess)))
            {
                *cell += 1;
            }
        }
        counts
    }

    /// Fraction of each class's test images classified correctly; none for an empty class.
    pub fn per_class_accuracy(&self) -> Vec<Option<f64>> {
        self.confusion()
            .iter()
            .enumerate()
            .map(|(class, row)| {
                let total: u64 = row.iter().sum();
                (total > 0).then(|| row[class] as f64 / total as f64)
            })
            .collect()
    }

    /// Indexes of the `count` wrong predictions the model was surest of, surest first.
    pub fn confidently_wrong(&self, count: usize) -> Vec<usize> {
        let mut wrong: Vec<usize> = (0..self.labels.len())
            .filter(|&i| self.labels[i] != self.predicted[i])
            .collect();
        wrong.sort_by(|&a, &b| self.confidence[b].total_cmp(&self.confidence[a]));
        wrong.truncate(count);
        wrong
    }
}
