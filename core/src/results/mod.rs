//! What a completed run's model answers on the test split, and what is read from those answers
//! (the confusion matrix, per-class accuracy, precision, recall and F1 as scikit-learn's
//! `classification_report` computes them, top-5 accuracy, the surest mistakes). The window, the run folder
//! and the export all read a run's results from here.

use serde::{Deserialize, Serialize};

pub mod multi_label;

/// The kept model's answer for every test image.
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
    /// Per image, how many classes the model scored above the true one (0: right); empty for
    /// runs from before it was kept.
    #[serde(default)]
    pub label_rank: Vec<u8>,
    /// The most confidently wrong test images, surest first, for a gallery.
    pub gallery: Vec<GalleryImage>,
}

/// How well one class (or an average over classes) is told apart.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClassMetrics {
    /// Of the images given this class, the share that are of it (0 when none was given it).
    pub precision: f64,
    /// Of this class's images, the share given this class (0 when it has none).
    pub recall: f64,
    /// The harmonic mean of precision and recall (0 when both are 0).
    pub f1: f64,
    /// Test images of this class (for an average: all of them).
    pub support: u64,
    /// Test images the model gave this class.
    pub predicted: u64,
}

impl ClassMetrics {
    fn new(precision: f64, recall: f64, support: u64, predicted: u64) -> Self {
        let sum = precision + recall;
        Self {
            precision,
            recall,
            f1: if sum > 0.0 {
                2.0 * precision * recall / sum
            } else {
                0.0
            },
            support,
            predicted,
        }
    }
}

/// A classification report: accuracy alone misleads on unbalanced classes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassReport {
    /// One entry per class, in label order.
    pub classes: Vec<ClassMetrics>,
    /// The unweighted mean over the classes that occur: every class counts the same.
    pub macro_average: ClassMetrics,
    /// The mean weighted by support: large classes count more.
    pub weighted_average: ClassMetrics,
    /// Share of all images classified correctly.
    pub accuracy: f64,
    /// Share whose true class is among the model's five most likely; only for more than five
    /// classes and runs that kept the ranks.
    pub top_5_accuracy: Option<f64>,
}

/// `part / whole`, 0 when `whole` is 0 (scikit-learn's `zero_division=0`).
fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
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
        crate::pixels::planar_to_rgba(self.shape, &self.pixels)
    }
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

    /// Precision, recall, F1 and support of every class, their averages, and top-5 accuracy.
    pub fn report(&self) -> ClassReport {
        let confusion = self.confusion();
        let total: u64 = confusion.iter().flatten().sum();
        let classes: Vec<ClassMetrics> = (0..confusion.len())
            .map(|class| {
                let hits = confusion[class][class];
                let support: u64 = confusion[class].iter().sum();
                let predicted: u64 = confusion.iter().map(|row| row[class]).sum();
                ClassMetrics::new(
                    ratio(hits, predicted),
                    ratio(hits, support),
                    support,
                    predicted,
                )
            })
            .collect();
        // As scikit-learn: the averages run over the classes that occur, truly or predicted.
        let present: Vec<&ClassMetrics> = classes
            .iter()
            .filter(|c| c.support > 0 || c.predicted > 0)
            .collect();
        let mean = |weight: &dyn Fn(&ClassMetrics) -> f64| {
            let weights: f64 = present.iter().map(|c| weight(c)).sum();
            let average = |value: fn(&ClassMetrics) -> f64| {
                if weights > 0.0 {
                    present.iter().map(|c| weight(c) * value(c)).sum::<f64>() / weights
                } else {
                    0.0
                }
            };
            ClassMetrics {
                precision: average(|c| c.precision),
                recall: average(|c| c.recall),
                f1: average(|c| c.f1),
                support: total,
                predicted: total,
            }
        };
        let correct: u64 = (0..confusion.len()).map(|c| confusion[c][c]).sum();
        let top_5 = (self.class_names.len() > 5 && self.label_rank.len() == self.labels.len())
            .then(|| {
                let within = self.label_rank.iter().filter(|&&rank| rank < 5).count();
                ratio(within as u64, self.label_rank.len() as u64)
            });
        ClassReport {
            macro_average: mean(&|_| 1.0),
            weighted_average: mean(&|c| c.support as f64),
            classes,
            accuracy: ratio(correct, total),
            top_5_accuracy: top_5,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn predictions(labels: &[u8], predicted: &[u8], classes: usize) -> TestPredictions {
        TestPredictions {
            class_names: (0..classes).map(|c| format!("c{c}")).collect(),
            labels: labels.to_vec(),
            predicted: predicted.to_vec(),
            confidence: vec![0.9; labels.len()],
            label_rank: Vec::new(),
            gallery: Vec::new(),
        }
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }

    /// The figures scikit-learn's `classification_report(labels, predicted)` prints for these
    /// six images; class 3 occurs nowhere, so it is left out of the averages as there.
    #[test]
    fn the_report_is_scikit_learns_classification_report() {
        let report = predictions(&[0, 0, 0, 1, 1, 2], &[0, 0, 1, 1, 2, 2], 4).report();
        let c = &report.classes;
        close(c[0].precision, 1.0);
        close(c[0].recall, 2.0 / 3.0);
        close(c[0].f1, 0.8);
        close(c[1].f1, 0.5);
        close(c[2].precision, 0.5);
        close(c[2].recall, 1.0);
        assert_eq!((c[0].support, c[3].support, c[3].predicted), (3, 0, 0));
        close(report.macro_average.precision, 2.0 / 3.0);
        close(report.macro_average.recall, (2.0 / 3.0 + 0.5 + 1.0) / 3.0);
        close(report.macro_average.f1, (0.8 + 0.5 + 2.0 / 3.0) / 3.0);
        close(report.weighted_average.precision, 0.75);
        close(report.weighted_average.recall, 4.0 / 6.0);
        close(
            report.weighted_average.f1,
            (3.0 * 0.8 + 2.0 * 0.5 + 2.0 / 3.0) / 6.0,
        );
        close(report.accuracy, 4.0 / 6.0);
        assert_eq!(
            report.top_5_accuracy, None,
            "four classes: top 5 is every class"
        );
    }

    #[test]
    fn a_class_never_predicted_has_zero_precision_and_top_5_counts_ranks_below_five() {
        let mut p = predictions(&[0, 1, 2, 3, 4, 5], &[0, 0, 0, 0, 0, 0], 6);
        p.label_rank = vec![0, 1, 4, 5, 7, 2];
        let report = p.report();
        close(report.classes[1].precision, 0.0);
        close(report.classes[1].f1, 0.0);
        close(report.classes[0].precision, 1.0 / 6.0);
        assert_eq!(report.top_5_accuracy, Some(4.0 / 6.0));
    }
}
