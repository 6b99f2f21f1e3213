//! What a multi-label model's scores say, label by label, as scikit-learn computes it: precision,
//! recall and F1 at a threshold (`precision_recall_fscore_support`), average precision
//! (`average_precision_score`: the step-wise area under the precision-recall curve, no
//! interpolation) and its mean over labels (mAP), their macro, micro and weighted averages,
//! subset accuracy (`accuracy_score` on label sets) and the Hamming loss; and the threshold of
//! each label that gives the best F1 on validation images, never on test.

use serde::{Deserialize, Serialize};

use super::ClassMetrics;
use crate::config::Threshold;

/// A split's scores: each image's probability per label (a sigmoid's), and its true labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelScores {
    /// How many labels.
    pub labels: usize,
    /// Image by image, a probability per label: `images × labels` values.
    pub probabilities: Vec<f32>,
    /// Each image's true labels, as label indices.
    pub truth: Vec<Vec<u8>>,
}

impl LabelScores {
    /// Images scored.
    pub fn images(&self) -> usize {
        self.truth.len()
    }

    /// Label `label`'s probability on every image, and whether each image has it.
    fn column(&self, label: usize) -> (Vec<f32>, Vec<bool>) {
        let scores = (0..self.images())
            .map(|i| self.probabilities[i * self.labels + label])
            .collect();
        let truth = self
            .truth
            .iter()
            .map(|set| set.contains(&(label as u8)))
            .collect();
        (scores, truth)
    }
}

/// One label's figures on a split.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LabelMetrics {
    /// Precision, recall, F1 at `threshold`, its images (`support`) and those given it.
    pub at_threshold: ClassMetrics,
    /// Average precision over every threshold; none for a label no image has.
    pub average_precision: Option<f64>,
    /// A probability at or above it gives the image the label.
    pub threshold: f32,
}

/// A multi-label model's report on a split.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelReport {
    /// One row per label, in label order.
    pub per_label: Vec<LabelMetrics>,
    /// Precision, recall, F1 averaged over labels, each label counting alike.
    pub macro_avg: ClassMetrics,
    /// Precision, recall, F1 of every (image, label) decision pooled.
    pub micro_avg: ClassMetrics,
    /// Precision, recall, F1 averaged over labels, each weighted by its images.
    pub weighted_avg: ClassMetrics,
    /// The mean of the average precisions of the labels some image has (mAP).
    pub mean_average_precision: f64,
    /// The share of images whose every label is right (scikit-learn's `accuracy_score`).
    pub subset_accuracy: f64,
    /// The share of (image, label) decisions that are wrong.
    pub hamming_loss: f64,
}

/// The average precision of `scores` against `truth`, as scikit-learn's
/// `average_precision_score`: Σₙ (Rₙ − Rₙ₋₁) Pₙ over the distinct scores from the highest down
/// (images of equal score enter together); none when no image is positive.
pub fn average_precision(scores: &[f32], truth: &[bool]) -> Option<f64> {
    let positives = truth.iter().filter(|&&t| t).count();
    if positives == 0 {
        return None;
    }
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    let (mut true_pos, mut taken, mut recall_before, mut area) = (0usize, 0usize, 0.0, 0.0);
    let mut at = 0;
    while at < order.len() {
        let score = scores[order[at]];
        while at < order.len() && scores[order[at]] == score {
            true_pos += usize::from(truth[order[at]]);
            taken += 1;
            at += 1;
        }
        let recall = true_pos as f64 / positives as f64;
        let precision = true_pos as f64 / taken as f64;
        area += (recall - recall_before) * precision;
        recall_before = recall;
    }
    Some(area)
}

/// The mean of the labels' average precisions on `scores` (labels no image has left out):
/// the mAP, which no threshold changes.
pub fn mean_average_precision(scores: &LabelScores) -> f64 {
    let aps: Vec<f64> = (0..scores.labels)
        .filter_map(|label| {
            let (column, truth) = scores.column(label);
            average_precision(&column, &truth)
        })
        .collect();
    aps.iter().sum::<f64>() / aps.len().max(1) as f64
}

/// For each label, the threshold that gives the best F1 on `validation` (a probability some
/// image has, the highest of equals taken; 0.5 for a label no validation image has).
pub fn best_thresholds(validation: &LabelScores) -> Vec<f32> {
    (0..validation.labels)
        .map(|label| {
            let (scores, truth) = validation.column(label);
            let mut candidates = scores.clone();
            candidates.sort_by(|a, b| b.total_cmp(a));
            candidates.dedup();
            candidates
                .into_iter()
                .map(|threshold| (f1_at(&scores, &truth, threshold), threshold))
                .filter(|(f1, _)| *f1 > 0.0)
                .max_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)))
                .map_or(0.5, |(_, threshold)| threshold)
        })
        .collect()
}

/// The one threshold for every label that gives the best F1 of all (image, label) decisions
/// pooled (micro F1) on `validation`; 0.5 when no threshold gives any right label.
pub fn best_shared_threshold(validation: &LabelScores) -> f32 {
    let truth: Vec<bool> = (0..validation.images())
        .flat_map(|image| {
            let set = &validation.truth[image];
            (0..validation.labels).map(move |label| set.contains(&(label as u8)))
        })
        .collect();
    let scores = &validation.probabilities;
    let mut candidates = scores.clone();
    candidates.sort_by(|a, b| b.total_cmp(a));
    candidates.dedup();
    candidates
        .into_iter()
        .map(|threshold| (f1_at(scores, &truth, threshold), threshold))
        .filter(|(f1, _)| *f1 > 0.0)
        .max_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)))
        .map_or(0.5, |(_, threshold)| threshold)
}

/// The thresholds `choice` asks for: 0.5 for every label, or chosen on `validation` (never on
/// test) per label or one for all; 0.5 where there are no validation images to choose on.
pub fn thresholds(choice: Threshold, labels: usize, validation: Option<&LabelScores>) -> Vec<f32> {
    match (choice, validation.filter(|v| v.images() > 0)) {
        (Threshold::PerLabel, Some(validation)) => best_thresholds(validation),
        (Threshold::Shared, Some(validation)) => vec![best_shared_threshold(validation); labels],
        _ => vec![0.5; labels],
    }
}

/// A multi-label run's test images as its kept model scored them, and where it draws the line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelPredictions {
    /// The labels' names, in label order.
    pub label_names: Vec<String>,
    /// The test images' probabilities and true labels.
    pub scores: LabelScores,
    /// Per label, the probability at or above which an image is given it.
    pub thresholds: Vec<f32>,
    /// The file each test image was read from, where the data set names one.
    pub files: Vec<std::path::PathBuf>,
}

impl LabelPredictions {
    /// The test report at the run's thresholds.
    pub fn report(&self) -> LabelReport {
        report(&self.scores, &self.thresholds)
    }

    /// The labels the model gives image `image`, in label order.
    pub fn given(&self, image: usize) -> Vec<usize> {
        let labels = self.scores.labels;
        (0..labels)
            .filter(|&label| {
                let threshold = self.thresholds.get(label).copied().unwrap_or(0.5);
                self.scores
                    .probabilities
                    .get(image * labels + label)
                    .is_some_and(|&p| p >= threshold)
            })
            .collect()
    }
}

/// F1 of calling an image positive when its score is at or above `threshold`.
fn f1_at(scores: &[f32], truth: &[bool], threshold: f32) -> f64 {
    counts_at(scores, truth, threshold).metrics().f1
}

/// True positives, false positives and false negatives at a threshold.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    true_pos: u64,
    false_pos: u64,
    false_neg: u64,
}

impl Counts {
    fn metrics(self) -> ClassMetrics {
        let Counts {
            true_pos,
            false_pos,
            false_neg,
        } = self;
        let ratio = |n: u64, d: u64| if d == 0 { 0.0 } else { n as f64 / d as f64 };
        ClassMetrics::new(
            ratio(true_pos, true_pos + false_pos),
            ratio(true_pos, true_pos + false_neg),
            true_pos + false_neg,
            true_pos + false_pos,
        )
    }
}

fn counts_at(scores: &[f32], truth: &[bool], threshold: f32) -> Counts {
    let mut counts = Counts::default();
    for (&score, &positive) in scores.iter().zip(truth) {
        match (score >= threshold, positive) {
            (true, true) => counts.true_pos += 1,
            (true, false) => counts.false_pos += 1,
            (false, true) => counts.false_neg += 1,
            (false, false) => {}
        }
    }
    counts
}

/// The report of `scores`, each label given at its threshold of `thresholds` (one per label).
pub fn report(scores: &LabelScores, thresholds: &[f32]) -> LabelReport {
    let mut per_label = Vec::with_capacity(scores.labels);
    let mut pooled = Counts::default();
    for label in 0..scores.labels {
        let (column, truth) = scores.column(label);
        let threshold = thresholds.get(label).copied().unwrap_or(0.5);
        let counts = counts_at(&column, &truth, threshold);
        pooled.true_pos += counts.true_pos;
        pooled.false_pos += counts.false_pos;
        pooled.false_neg += counts.false_neg;
        per_label.push(LabelMetrics {
            at_threshold: counts.metrics(),
            average_precision: average_precision(&column, &truth),
            threshold,
        });
    }
    let rows: Vec<ClassMetrics> = per_label.iter().map(|l| l.at_threshold).collect();
    let support: u64 = rows.iter().map(|r| r.support).sum();
    let mean = |weight: &dyn Fn(&ClassMetrics) -> f64, total: f64| {
        let part = |figure: fn(&ClassMetrics) -> f64| {
            rows.iter().map(|r| figure(r) * weight(r)).sum::<f64>() / total.max(f64::MIN_POSITIVE)
        };
        ClassMetrics {
            precision: part(|r| r.precision),
            recall: part(|r| r.recall),
            f1: part(|r| r.f1),
            support,
            predicted: rows.iter().map(|r| r.predicted).sum(),
        }
    };
    let macro_avg = mean(&|_| 1.0, rows.len() as f64);
    let weighted_avg = mean(&|r| r.support as f64, support as f64);
    let aps: Vec<f64> = per_label
        .iter()
        .filter_map(|l| l.average_precision)
        .collect();
    let images = scores.images();
    let mut exact = 0usize;
    let mut wrong = 0usize;
    for image in 0..images {
        let mut all_right = true;
        for (label, &threshold) in thresholds.iter().enumerate().take(scores.labels) {
            let said = scores.probabilities[image * scores.labels + label] >= threshold;
            let truth = scores.truth[image].contains(&(label as u8));
            if said != truth {
                all_right = false;
                wrong += 1;
            }
        }
        exact += usize::from(all_right);
    }
    let decisions = (images * scores.labels).max(1);
    LabelReport {
        per_label,
        macro_avg,
        micro_avg: pooled.metrics(),
        weighted_avg,
        mean_average_precision: aps.iter().sum::<f64>() / aps.len().max(1) as f64,
        subset_accuracy: exact as f64 / images.max(1) as f64,
        hamming_loss: wrong as f64 / decisions as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eight images, three labels, a tie in label 0 (0.8 twice); the expected figures are
    /// scikit-learn 1.9.1's on the same arrays (`average_precision_score`,
    /// `precision_recall_fscore_support` with thresholds 0.5, 0.6, 0.5, `accuracy_score`,
    /// `hamming_loss`), printed to the last digit.
    fn scores() -> LabelScores {
        let probabilities = [
            [0.9, 0.2, 0.6],
            [0.8, 0.7, 0.1],
            [0.8, 0.4, 0.3],
            [0.3, 0.9, 0.8],
            [0.6, 0.1, 0.55],
            [0.2, 0.3, 0.2],
            [0.55, 0.65, 0.9],
            [0.1, 0.5, 0.4],
        ];
        let truth = [
            vec![0, 2],
            vec![0, 1],
            vec![],
            vec![1, 2],
            vec![0],
            vec![2],
            vec![1, 2],
            vec![1],
        ];
        LabelScores {
            labels: 3,
            probabilities: probabilities.iter().flatten().copied().collect(),
            truth: truth.to_vec(),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn every_figure_equals_what_scikit_learn_computes_from_the_same_scores() {
        let report = report(&scores(), &[0.5, 0.6, 0.5]);
        assert_eq!(
            mean_average_precision(&scores()),
            report.mean_average_precision
        );
        let aps: Vec<f64> = report
            .per_label
            .iter()
            .map(|l| l.average_precision.unwrap())
            .collect();
        for (ours, sklearn) in aps
            .iter()
            .zip([0.8055555555555556, 1.0, 0.8928571428571428])
        {
            assert!(close(*ours, sklearn), "{aps:?}");
        }
        assert!(close(report.mean_average_precision, 0.8994708994708995));
        let per_label: Vec<[f64; 3]> = report
            .per_label
            .iter()
            .map(|l| {
                [
                    l.at_threshold.precision,
                    l.at_threshold.recall,
                    l.at_threshold.f1,
                ]
            })
            .collect();
        let expected = [
            [0.6, 1.0, 0.75],
            [1.0, 0.75, 0.8571428571428571],
            [0.75, 0.75, 0.75],
        ];
        for (ours, sklearn) in per_label.iter().zip(expected) {
            assert!(
                ours.iter().zip(sklearn).all(|(a, b)| close(*a, b)),
                "{per_label:?}"
            );
        }
        let averages = [
            (
                report.macro_avg,
                [0.7833333333333333, 0.8333333333333334, 0.7857142857142857],
            ),
            (
                report.micro_avg,
                [0.75, 0.8181818181818182, 0.782608695652174],
            ),
            (
                report.weighted_avg,
                [0.8, 0.8181818181818182, 0.788961038961039],
            ),
        ];
        for (ours, sklearn) in averages {
            let ours = [ours.precision, ours.recall, ours.f1];
            assert!(
                ours.iter().zip(sklearn).all(|(a, b)| close(*a, b)),
                "{ours:?}"
            );
        }
        assert!(close(report.subset_accuracy, 0.375));
        assert!(close(report.hamming_loss, 0.20833333333333334));
    }

    #[test]
    fn a_label_no_image_has_has_no_average_precision_and_keeps_out_of_the_mean() {
        let mut scores = scores();
        scores
            .truth
            .iter_mut()
            .for_each(|set| set.retain(|&l| l != 1));
        let report = report(&scores, &[0.5; 3]);
        assert_eq!(report.per_label[1].average_precision, None);
        assert!(close(
            report.mean_average_precision,
            (0.8055555555555556 + 0.8928571428571428) / 2.0
        ));
    }

    #[test]
    fn thresholds_chosen_on_validation_give_each_label_its_best_f1() {
        let scores = scores();
        let thresholds = best_thresholds(&scores);
        // Label 1's positives score 0.7, 0.9, 0.65, 0.5 and its negatives at most 0.4: every
        // positive is kept and every negative left at 0.5.
        assert_eq!(thresholds[1], 0.5);
        let chosen = report(&scores, &thresholds);
        let halves = report(&scores, &[0.5; 3]);
        for (best, half) in chosen.per_label.iter().zip(&halves.per_label) {
            assert!(best.at_threshold.f1 >= half.at_threshold.f1);
        }
        assert_eq!(chosen.per_label[1].at_threshold.f1, 1.0);
        // A label no validation image has keeps the usual 0.5.
        let mut none = scores.clone();
        none.truth
            .iter_mut()
            .for_each(|set| set.retain(|&l| l != 2));
        assert_eq!(best_thresholds(&none)[2], 0.5);
    }
}
