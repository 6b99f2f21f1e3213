//! A run on a set of several labels per image: it learns, its on-device label accuracy agrees
//! with the host's report, and its thresholds come from validation only.

// A child of the crate's test module: it exists only in the test build.
#![cfg(test)]

use super::*;
use crate::config::{ClassWeights, ExperimentDraft, Threshold};
use crate::data::{ImageShape, Split};
use crate::results::multi_label::LabelPredictions;
use crate::shuffle::ShuffleRng;

/// 4×4 images whose left half is bright when they have label 0 (`left`) and whose top half is
/// bright when they have label 1 (`top`), each drawn independently, with noise.
fn quarters(len: usize, seed: u64) -> Split {
    let mut rng = ShuffleRng(seed);
    let mut split = Split::default();
    for _ in 0..len {
        let (left, top) = (rng.next().is_multiple_of(2), rng.next().is_multiple_of(3));
        for row in 0..4 {
            for col in 0..4 {
                let bright = (col < 2 && left) || (row < 2 && top);
                let noise = (rng.next() % 60) as u8;
                split.images.push(if bright { 180 + noise } else { noise });
            }
        }
        let set: Vec<u8> = [(left, 0u8), (top, 1)]
            .into_iter()
            .filter_map(|(has, label)| has.then_some(label))
            .collect();
        split.labels.push(set.first().copied().unwrap_or(0));
        split.label_sets.push(set);
    }
    split
}

fn quarters_dataset() -> ImageDataset {
    ImageDataset {
        name: "quarters".into(),
        shape: ImageShape {
            channels: 1,
            height: 4,
            width: 4,
        },
        class_names: vec!["left".into(), "top, \"bright\"".into()],
        train: quarters(240, 1),
        val: quarters(60, 2),
        test: quarters(80, 3),
        skipped: Vec::new(),
        notes: Vec::new(),
        sources: Vec::new(),
    }
}

/// The summary and the label predictions of a run of `draft` on [`quarters_dataset`].
fn run(draft: ExperimentDraft) -> (RunSummary, LabelPredictions) {
    let mut predictions = None;
    let summary = train(
        &draft.validate().expect("a valid draft"),
        &quarters_dataset(),
        &cpu(),
        Preparation::default(),
        &Control::new(),
        &mut |event| {
            if let TrainEvent::LabelPredictions(p) = event {
                predictions = Some(*p);
            }
        },
    )
    .expect("the run trains");
    (
        summary,
        predictions.expect("a multi-label run's predictions"),
    )
}

fn draft(threshold: Threshold) -> ExperimentDraft {
    ExperimentDraft {
        model: "mlp:16".parse().expect("a model"),
        batch_size: 32,
        epochs: 12,
        lr: 0.01,
        threshold,
        ..ExperimentDraft::default()
    }
}

#[test]
fn a_multi_label_run_learns_each_label_and_its_label_accuracy_is_one_minus_the_hamming_loss() {
    let (summary, predictions) = run(draft(Threshold::Half));
    assert_eq!(summary.outcome, RunOutcome::Completed);
    let report = predictions.report();
    assert_eq!(summary.label_report.as_ref(), Some(&report));
    assert!(summary.test_report.is_none(), "no single-label report");
    assert!(report.mean_average_precision > 0.95, "{report:?}");
    assert_eq!(predictions.thresholds, [0.5, 0.5]);
    assert_eq!(predictions.scores.images(), 80);
    // The device counts label decisions at logit 0; the host report at probability 0.5.
    let label_accuracy = summary.final_test_accuracy.expect("tested");
    assert!(
        (label_accuracy - (1.0 - report.hamming_loss)).abs() < 1e-6,
        "{label_accuracy} against {}",
        report.hamming_loss
    );
    // Binary cross-entropy per label starts near ln 2 and falls.
    let loss = summary.final_test_loss.expect("tested");
    assert!(loss < 0.3, "{loss}");
}

#[test]
fn thresholds_chosen_per_label_come_from_the_validation_images_not_the_test_images() {
    let (_, predictions) = run(draft(Threshold::PerLabel));
    let (_, shared) = run(draft(Threshold::Shared));
    assert_eq!(shared.thresholds[0], shared.thresholds[1]);
    // Each chosen threshold is a validation image's probability (best_thresholds' own tests
    // check which one), never the default of 0.5.
    for threshold in predictions.thresholds.iter().chain(&shared.thresholds) {
        assert_ne!(*threshold, 0.5);
    }
    let report = predictions.report();
    for (label, metrics) in report.per_label.iter().enumerate() {
        assert_eq!(metrics.threshold, predictions.thresholds[label]);
    }
}

#[test]
fn balanced_weights_of_a_multi_label_set_weigh_each_labels_positives_by_its_negatives() {
    let data = quarters_dataset();
    let weights =
        step::class_weights(ClassWeights::Balanced, &data).expect("weights when asked for");
    let counts = data.train.label_counts(2);
    for (label, weight) in weights.iter().enumerate() {
        let positives = counts[label] as f32;
        let expected = (data.train.len() as f32 - positives) / positives;
        assert!((weight - expected).abs() < 1e-5, "{weights:?} {counts:?}");
    }
    let (summary, _) = run(ExperimentDraft {
        class_weights: ClassWeights::Balanced,
        ..draft(Threshold::Half)
    });
    assert!(
        summary
            .label_report
            .expect("a report")
            .mean_average_precision
            > 0.9
    );
}

#[test]
fn a_multi_label_set_is_refused_for_data_parallel_training_with_a_sentence() {
    let mut draft = draft(Threshold::Half);
    draft.set_devices(vec![
        "gpu:0".parse().expect("a device"),
        "gpu:1".parse().expect("a device"),
    ]);
    let experiment = draft
        .validate()
        .expect("two GPUs are a valid data-parallel run");
    let refused = experiment
        .check_against(&quarters_dataset())
        .expect_err("refused");
    assert!(refused.to_string().contains("on one device"), "{refused}");
}

#[test]
fn validation_map_can_choose_the_kept_epoch_of_a_multi_label_run_and_only_of_one() {
    let (summary, _) = run(ExperimentDraft {
        monitor: crate::selection::Monitor::ValMap,
        // No later epoch can gain a whole 1.0 of mAP: epoch 1 stays the best, and after two
        // epochs without improvement the run stops.
        min_delta: 1.0,
        early_stop: 2,
        ..draft(Threshold::Half)
    });
    let stopped = summary.stopped_early.expect("stopped early");
    assert_eq!((stopped.best_epoch, stopped.after_epoch), (1, 3));
    assert_eq!(stopped.monitor, crate::selection::Monitor::ValMap);
    assert_eq!(summary.kept_epoch, Some(1));
    let one_label = ExperimentDraft {
        monitor: crate::selection::Monitor::ValMap,
        ..ExperimentDraft::default()
    }
    .validate()
    .expect("valid");
    let refused = one_label
        .check_against(&super::tiny_dataset())
        .expect_err("refused");
    assert!(
        refused.to_string().contains("several labels per image"),
        "{refused}"
    );
}
