//! The training loop, written on Burn's modules and optimizers.
//!
//! How it stays fast: the data set is on the device and batches are gathered there by a
//! per-epoch shuffled index uploaded once per epoch; the loss sum and the correct count
//! accumulate on the device and are read back together a few times per second, which is the only
//! host sync inside an epoch; evaluation follows the same rules; every metric is over samples.
//!
//! ```text
//! train()        the loop: prepare, then per epoch train → evaluate → end → checkpoint → check
//!                (stopping early when validation stopped improving), finish: test the kept weights
//!   state        RunState: what a run holds between those steps, and each step
//!                (state/evaluation: each epoch's evaluation, and the run's end)
//!   counters     RunCounters (what survives a resume), the readback window rule, the speed
//!                book
//!   step         Stepper: one optimizer step (optimizer, loss, CPU threads)
//!   targets      a batch's truth: a class per image, or a multi-label set's 0/1 rows
//!   decay        decoupled weight decay for SGD with momentum, before each step
//!   precision    f16 mixed precision: the scaled loss and its scale, decided on the device
//!   threads      how a CPU run's steps use every core (workers kept awake through a step)
//!   parallel     a step split across devices (data parallel), combined by Burn's step_multi
//!                or, on CUDA, its collective all-reduce
//!   pipeline     pixel scaling, the seeded epoch order, the splits on the device (as bytes,
//!                or a linear probe's cached features)
//!   probe        a linear probe's frozen backbone and when it unfreezes
//!   device_reads every read from the device (the one seam a browser build makes async)
//!   store        RunStore: where checkpoints and the model go, chosen by the caller
//!   watch        warnings about the loss (NaN, divergence) and chance-level accuracy
//!   control      Control: pause, resume and cancel, checked at step boundaries
//!   events       TrainEvent, the one protocol to front ends
//!   error        TrainError: every way a run fails, as a sentence
//!   summary      RunSummary, the schema of summary.json
//!   bench        `kiln bench`: a workload timed for N steps, Kiln's loop or the naive one
//! ```

#[cfg(not(target_arch = "wasm32"))]
pub mod bench;
mod control;
mod counters;
mod decay;
pub(crate) mod error;
mod events;
mod judge;
#[cfg(not(target_arch = "wasm32"))]
pub mod lr_find;
mod parallel;
mod pipeline;
pub mod precision;
mod probe;
pub(crate) use probe::loads_pretrained;
pub(crate) mod device_reads;
mod state;
mod step;
mod store;
mod summary;
mod targets;
mod threads;
mod watch;

pub use control::{Control, ControlState};
pub use counters::RunCounters;
pub use device_reads::CheckpointFiles;
pub use error::TrainError;
pub use events::{EpochRow, MetricsRow, StartInfo, TestResult, TrainEvent, TrainWarning};
pub use judge::{EpochJudge, Pruned};
pub use pipeline::{augmentation_preview, epoch_order, pixel_transform};
pub use store::{KeepNothing, Restored, RunStore};
pub use summary::{RunOutcome, RunSummary, SplitSizes, StepProfile};
pub use threads::{CPU_ENGINE, CpuThreadChoice};

use burn::tensor::Device;

use crate::config::Experiment;
use crate::data::ImageDataset;
use state::{EpochEnd, RunState};

/// Where to train: the Burn device and how to name it to a person.
#[derive(Debug, Clone)]
pub struct TrainDevice {
    /// The device tensors are created on (without autodiff; the loop adds it); the model lives,
    /// evaluates and is saved here.
    pub device: Device,
    /// `cpu` or `gpu:N`; for a data-parallel run every device, comma separated.
    pub id: String,
    /// Adapter or CPU name.
    pub name: String,
    /// Further devices each step's batch is split across (data parallel); none trains on
    /// `device` alone.
    pub replicas: Vec<Device>,
}

impl TrainDevice {
    /// `device` alone, named `id` and `name`.
    pub fn one(device: Device, id: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            device,
            id: id.into(),
            name: name.into(),
            replicas: Vec::new(),
        }
    }
}

/// What the caller did before the loop and where the loop may keep what it makes.
pub struct Preparation {
    /// Seconds spent reading or generating the data set.
    pub load_secs: f64,
    /// Where checkpoints and the completed model go, and where a resumed run comes from.
    pub store: Box<dyn RunStore>,
    /// Asked after each evaluated epoch whether the run ends there (a sweep's pruning rule).
    pub judge: Option<Box<dyn EpochJudge>>,
}

impl Default for Preparation {
    fn default() -> Self {
        Self {
            load_secs: 0.0,
            store: Box::new(KeepNothing),
            judge: None,
        }
    }
}

/// Trains `experiment` on `data` on `target`, telling `on_event` everything as it happens,
/// blocking this thread until the run ends ([`train_async`] run to its end).
///
/// Returns the summary for every ending a person chose or the data caused (completed, cancelled,
/// diverged); returns an error only when the device failed.
#[cfg(not(target_arch = "wasm32"))]
pub fn train(
    experiment: &Experiment,
    data: &ImageDataset,
    target: &TrainDevice,
    preparation: Preparation,
    control: &Control,
    on_event: &mut dyn FnMut(TrainEvent),
) -> Result<RunSummary, TrainError> {
    crate::executor::block_on(train_async(
        experiment,
        data,
        target,
        preparation,
        control,
        on_event,
    ))
}

/// The training loop as a future that waits for the device without blocking its thread: what a
/// browser page runs on its event loop, and what [`train`] runs to its end on native.
pub async fn train_async(
    experiment: &Experiment,
    data: &ImageDataset,
    target: &TrainDevice,
    preparation: Preparation,
    control: &Control,
    on_event: &mut dyn FnMut(TrainEvent),
) -> Result<RunSummary, TrainError> {
    let (mut run, mut model) = RunState::prepare(experiment, data, target, preparation)?;
    on_event(TrainEvent::Started(run.start_info()));
    run.warn_about_data(on_event);
    for epoch in run.first_epoch..experiment.epochs {
        let ended;
        (model, ended) = run.train_epoch(model, epoch, control, on_event).await?;
        let trained = match ended {
            EpochEnd::Trained(trained) => trained,
            EpochEnd::Stopped(outcome) => {
                run.stop(outcome);
                break;
            }
        };
        let evaluation = run.evaluate(&model).await?;
        let verdict = run.end_epoch(epoch, &trained, evaluation.as_ref(), &model, on_event);
        run.checkpoint(&model, verdict.best, on_event).await;
        run.check_progress(epoch, evaluation.as_ref(), on_event);
        if verdict.stop {
            run.stop_early(epoch);
            break;
        }
        if run.judged_over(epoch, evaluation.as_ref()) {
            break;
        }
    }
    run.finish(model, on_event).await
}

#[cfg(test)]
mod tests {
    /// A run on several labels per image, in a file of its own.
    mod multi_label;

    use super::*;
    use crate::config::{ExperimentDraft, InputScaling, LossInput, OptimizerSpec};
    use crate::data::{ImageShape, Split};
    use crate::shuffle::ShuffleRng;
    use burn::nn::loss::CrossEntropyLossConfig;
    use burn::tensor::{Int, Tensor, TensorData};
    use state::GALLERY_SIZE;
    use step::batch_loss;

    /// Two classes of 4x4 images: bright left half or bright right half, with noise.
    fn halves(len: usize) -> Split {
        let mut rng = ShuffleRng(3);
        let mut split = Split::default();
        for i in 0..len {
            let label = (i % 2) as u8;
            for row in 0..4 {
                for col in 0..4 {
                    let bright = (col < 2) == (label == 0);
                    let noise = (rng.next() % 60) as u8;
                    split.images.push(if bright { 180 + noise } else { noise });
                    let _ = row;
                }
            }
            split.labels.push(label);
        }
        split
    }

    /// A 16-unit MLP with batches of 20: a quick experiment on [`tiny_dataset`].
    pub(super) fn tiny_mlp() -> Experiment {
        ExperimentDraft {
            model: "mlp:16".parse().unwrap(),
            batch_size: 20,
            ..ExperimentDraft::default()
        }
        .validate()
        .unwrap()
    }

    pub(super) fn tiny_dataset() -> ImageDataset {
        ImageDataset {
            name: "halves".into(),
            shape: ImageShape {
                channels: 1,
                height: 4,
                width: 4,
            },
            class_names: vec!["left".into(), "right".into()],
            train: halves(200),
            val: halves(40),
            test: halves(50),
            skipped: Vec::new(),
            notes: Vec::new(),
            sources: Vec::new(),
        }
    }

    #[test]
    fn probability_loss_matches_logit_loss_until_it_clips() {
        let device = Device::flex();
        let loss_fn = CrossEntropyLossConfig::new().init(&device);
        let labels = || {
            targets::Targets::Classes(Tensor::<1, Int>::from_data(
                TensorData::new(vec![0i32, 2], [2]),
                &device,
            ))
        };
        let read = |t: Tensor<1>| t.into_data().try_to_vec::<f32>().unwrap()[0];
        // Moderate logits: both forms are the same cross-entropy.
        let moderate = || {
            Tensor::<2>::from_data(
                TensorData::new(vec![1.0f32, 0.5, -0.5, 0.2, 0.1, 2.0], [2, 3]),
                &device,
            )
        };
        let from_logits = read(batch_loss(
            &loss_fn,
            LossInput::Logits,
            moderate(),
            labels(),
        ));
        let from_probs = read(batch_loss(
            &loss_fn,
            LossInput::Probabilities,
            moderate(),
            labels(),
        ));
        assert!(
            (from_logits - from_probs).abs() < 1e-5,
            "{from_logits} vs {from_probs}"
        );
        // A confidently wrong answer: the logit loss grows without bound, Keras's clipped
        // probabilities cap it at -ln(1e-7) ≈ 16.1.
        let wrong = || {
            Tensor::<2>::from_data(
                TensorData::new(vec![-50.0f32, 50.0, 0.0, 0.0, 50.0, -50.0], [2, 3]),
                &device,
            )
        };
        let from_logits = read(batch_loss(&loss_fn, LossInput::Logits, wrong(), labels()));
        let from_probs = read(batch_loss(
            &loss_fn,
            LossInput::Probabilities,
            wrong(),
            labels(),
        ));
        assert!(from_logits > 90.0, "{from_logits}");
        assert!((from_probs - 16.118).abs() < 0.01, "{from_probs}");
    }

    #[test]
    fn predictions_agree_with_the_final_test_accuracy() {
        let control = Control::new();
        let mut predictions = None;
        let summary = train(
            &tiny_experiment(2),
            &tiny_dataset(),
            &cpu(),
            Preparation::default(),
            &control,
            &mut |event| {
                if let TrainEvent::Predictions(p) = event {
                    predictions = Some(p);
                }
            },
        )
        .unwrap();
        let predictions = predictions.expect("a completed run reports its predictions");
        assert_eq!(predictions.predicted.len(), 50);
        assert_eq!(predictions.labels, tiny_dataset().test.labels);
        let confusion = predictions.confusion();
        let total: u64 = confusion.iter().flatten().sum();
        let correct: u64 = (0..2).map(|c| confusion[c][c]).sum();
        assert_eq!(total, 50);
        let accuracy = summary.final_test_accuracy.unwrap();
        assert!(
            (correct as f64 / 50.0 - accuracy).abs() < 1e-9,
            "{correct} vs {accuracy}"
        );
        assert!(
            predictions
                .confidence
                .iter()
                .all(|c| (0.5..=1.0).contains(c))
        );
        // The gallery is the wrong answers, surest first, each with its own pixels.
        let wrong = predictions.confidently_wrong(GALLERY_SIZE);
        let shown: Vec<usize> = predictions.gallery.iter().map(|g| g.index).collect();
        assert_eq!(shown, wrong);
        let test = tiny_dataset().test;
        for image in &predictions.gallery {
            assert_eq!(image.shape, [1, 4, 4]);
            assert_eq!(
                image.pixels,
                test.images[image.index * 16..(image.index + 1) * 16]
            );
            assert_ne!(test.labels[image.index], predictions.predicted[image.index]);
        }
    }

    /// The test predictions of `experiment` on the tiny data set, trained into `store`.
    fn predictions_of_a_run_kept_by(
        experiment: &Experiment,
        store: Box<dyn RunStore>,
    ) -> crate::results::TestPredictions {
        let mut predictions = None;
        let preparation = Preparation {
            load_secs: 0.0,
            store,
            judge: None,
        };
        train(
            experiment,
            &tiny_dataset(),
            &cpu(),
            preparation,
            &Control::new(),
            &mut |event| {
                if let TrainEvent::Predictions(p) = event {
                    predictions = Some(p);
                }
            },
        )
        .unwrap();
        predictions.expect("a completed run predicts its test images")
    }

    /// `predictor` ranks a few test images as the run that saved it predicted them.
    fn assert_predicts_as_the_run(
        predictor: &crate::predict::Predictor,
        predictions: &crate::results::TestPredictions,
    ) {
        let test = tiny_dataset().test;
        for index in [0, 1, 7] {
            let ranked = predictor.classify_pixels(&test.images[index * 16..(index + 1) * 16]);
            let expected = &predictions.class_names[usize::from(predictions.predicted[index])];
            assert_eq!(&ranked[0].0, expected, "image {index}");
            assert!((ranked[0].1 - predictions.confidence[index]).abs() < 1e-4);
            let total: f32 = ranked.iter().map(|(_, p)| p).sum();
            assert!((total - 1.0).abs() < 1e-4);
        }
    }

    #[test]
    fn a_completed_run_keeps_a_model_that_predicts_as_it_did() {
        let folder = crate::data::test_dir("saved-model");
        let experiment = tiny_experiment(2);
        std::fs::write(folder.join("config.toml"), experiment.to_toml()).unwrap();
        let predictions = predictions_of_a_run_kept_by(
            &experiment,
            Box::new(crate::run_folder::FolderStore::new(&folder)),
        );
        assert!(
            !folder.join("model.tmp").exists(),
            "no half-written file is left"
        );
        let predictor = crate::predict::Predictor::load(&folder).expect("the model loads back");
        assert_predicts_as_the_run(&predictor, &predictions);
        // A folder without a model says so instead of failing obscurely.
        let empty = crate::data::test_dir("no-model");
        assert!(matches!(
            crate::predict::Predictor::load(&empty),
            Err(crate::predict::PredictError::NoModel(_))
        ));
    }

    #[test]
    fn a_page_run_keeps_its_model_among_the_page_runs_and_it_predicts_as_it_did() {
        let folder = std::path::Path::new(crate::run_folder::page_runs::RUNS_DIR).join("tiny");
        let experiment = tiny_experiment(2);
        crate::run_folder::page_runs::with_mut(|runs| {
            runs.insert(
                folder.join("config.toml"),
                experiment.to_toml().into_bytes(),
            )
        })
        .unwrap();
        let predictions = predictions_of_a_run_kept_by(
            &experiment,
            Box::new(crate::run_folder::FolderStore::in_page(&folder)),
        );
        let predictor = crate::run_folder::page_runs::with(|runs| {
            crate::predict::Predictor::load_in(runs, &folder)
        })
        .expect("the model loads back from the page's memory");
        assert_predicts_as_the_run(&predictor, &predictions);
        assert!(
            !crate::run_folder::page_runs::with(|runs| {
                kiln_formats::files::FileTree::is_dir(runs, &folder.join("checkpoints"))
            }),
            "a completed page run drops its checkpoints"
        );
    }

    #[test]
    fn the_optimizer_state_read_without_blocking_packs_as_the_blocking_read_does() {
        let folder = crate::data::test_dir("optimizer-async");
        let experiment = ExperimentDraft {
            optimizer: OptimizerSpec::from_name("adam").unwrap(),
            ..tiny_experiment(1).draft().clone()
        }
        .validate()
        .unwrap();
        predictions_of_a_run_kept_by(
            &experiment,
            Box::new(crate::run_folder::FolderStore::new(&folder)),
        );
        // The run's checkpoint was itself read without blocking; Adam's moments are in it.
        let slot = crate::run_folder::slot_folder(&folder, crate::run_folder::Slot::Last);
        let kept = std::fs::read(slot.join("optimizer.bpk")).unwrap();
        let weights_len = std::fs::metadata(slot.join("model.bpk")).unwrap().len();
        assert!(kept.len() as u64 > weights_len, "two moments per weight");
        let record =
            burn::optim::OptimizerRecord::from_bytes(burn::tensor::Bytes::from_bytes_vec(kept))
                .unwrap();
        let optimizer = step::build_optimizer(&experiment.optimizer, experiment.weight_decay_mode)
            .load_record_on(record, &Device::flex());
        let blocking = optimizer.into_bytes().unwrap();
        let waited = crate::executor::block_on(optimizer.to_record_async())
            .unwrap()
            .into_bytes()
            .unwrap();
        assert_eq!(waited, blocking);
        let _ = std::fs::remove_dir_all(folder);
    }

    #[test]
    fn a_model_brought_to_the_cpu_without_blocking_keeps_every_weight_and_statistic() {
        let shape = ImageShape {
            channels: 1,
            height: 8,
            width: 8,
        };
        let model = "resnet18"
            .parse::<crate::model::ModelSpec>()
            .unwrap()
            .init(
                shape,
                2,
                crate::model::LayerDefaults::default(),
                &Device::flex(),
            )
            .unwrap();
        let before = device_reads::weights_bytes(&model).unwrap();
        let moved = crate::executor::block_on(device_reads::on_cpu_async(model)).unwrap();
        assert_eq!(device_reads::weights_bytes(&moved).unwrap(), before);
    }

    #[test]
    fn the_loop_learns_with_the_probability_loss() {
        let mut experiment = tiny_experiment(3).draft().clone();
        experiment.loss = LossInput::Probabilities;
        let experiment = experiment.validate().unwrap();
        let control = Control::new();
        let summary = train(
            &experiment,
            &tiny_dataset(),
            &cpu(),
            Preparation::default(),
            &control,
            &mut |_| {},
        )
        .unwrap();
        assert!(summary.final_test_accuracy.unwrap() > 0.9, "{summary:?}");
    }

    /// Regression: the Keras flavour took its loss on clipped probabilities. On raw 0–255 inputs
    /// most of them start clipped and pass no gradient, so `fashion-mlp-keras` sat at 28 % for
    /// epochs where Keras on TensorFlow, which takes that loss from the logits, reached 72 %
    /// after one (both measured side by side on Fashion-MNIST).
    #[test]
    fn the_keras_flavour_learns_in_its_first_epoch_as_keras_does() {
        let mut draft = crate::config::preset("fashion-mlp-keras").unwrap();
        draft.epochs = 1;
        let experiment = draft.validate().unwrap();
        let data = crate::data::synthetic();
        let summary = train(
            &experiment,
            &data,
            &cpu(),
            Preparation::default(),
            &Control::new(),
            &mut |_| {},
        )
        .unwrap();
        assert!(summary.final_test_accuracy.unwrap() > 0.6, "{summary:?}");
    }

    fn tiny_experiment(epochs: usize) -> Experiment {
        ExperimentDraft {
            model: "mlp:16".parse().unwrap(),
            batch_size: 32,
            epochs,
            lr: 0.01,
            ..ExperimentDraft::default()
        }
        .validate()
        .unwrap()
    }

    /// Every event of a run of `draft` on the tiny data set.
    fn run_events(draft: ExperimentDraft) -> (RunSummary, Vec<TrainEvent>) {
        let mut events = Vec::new();
        let summary = train(
            &draft.validate().unwrap(),
            &tiny_dataset(),
            &cpu(),
            Preparation::default(),
            &Control::new(),
            &mut |e| events.push(e),
        )
        .unwrap();
        (summary, events)
    }

    #[test]
    fn early_stopping_ends_the_run_on_validation_and_tests_the_best_epoch_once() {
        // No improvement can clear a min_delta of 10, so epoch 1 stays the best.
        let experiment = ExperimentDraft {
            early_stop: 2,
            min_delta: 10.0,
            ..tiny_experiment(6).draft().clone()
        }
        .validate()
        .unwrap();
        let folder = crate::data::test_dir("early-stop");
        let mut events = Vec::new();
        let summary = train(
            &experiment,
            &tiny_dataset(),
            &cpu(),
            Preparation {
                load_secs: 0.0,
                store: Box::new(crate::run_folder::FolderStore::new(&folder)),
                judge: None,
            },
            &Control::new(),
            &mut |e| events.push(e),
        )
        .unwrap();
        assert_eq!(summary.outcome, RunOutcome::Completed);
        assert_eq!(summary.epochs_completed, 3);
        assert_eq!(summary.best_epoch, Some(1));
        assert_eq!(summary.kept_epoch, Some(1));
        assert_eq!(
            summary.validated_on,
            crate::selection::ValidatedOn::Validation
        );
        let stop = summary.stopped_early.clone().expect("patience ran out");
        assert_eq!(
            (stop.after_epoch, stop.best_epoch, stop.patience),
            (3, 1, 2)
        );
        assert!(summary.best_test_accuracy.is_none(), "test chose nothing");
        assert!(summary.best_val_accuracy.is_some() && summary.final_val_accuracy.is_some());
        let tested: Vec<&TestResult> = events
            .iter()
            .filter_map(|e| match e {
                TrainEvent::Tested(t) => Some(t),
                _ => None,
            })
            .collect();
        assert_eq!(tested.len(), 1, "the test split is measured once");
        assert_eq!(tested[0].epoch, 1);
        assert_eq!(summary.final_test_accuracy, Some(tested[0].accuracy));
        // Both reports are of the kept weights: validation's is epoch 1's validation figure.
        let first = events.iter().find_map(|e| match e {
            TrainEvent::EpochEnd(row) if row.epoch == 1 => row.val_accuracy,
            _ => None,
        });
        let val_report = summary.val_report.as_ref().expect("a validation report");
        assert!((val_report.accuracy - first.unwrap()).abs() < 1e-9);
        let test_report = summary.test_report.as_ref().expect("a test report");
        assert!((test_report.accuracy - tested[0].accuracy).abs() < 1e-9);
        assert_eq!(val_report.macro_average.support, 40);
        // The kept weights are epoch 1's, held while two more epochs trained: byte for byte
        // those of the best checkpoint written at epoch 1, not of the last one.
        let saved = |path: &std::path::Path| std::fs::read(path).unwrap();
        let kept = saved(&folder.join("model.bpk"));
        let best = crate::run_folder::slot_folder(&folder, crate::run_folder::Slot::Best);
        let last = crate::run_folder::slot_folder(&folder, crate::run_folder::Slot::Last);
        assert!(kept == saved(&best.join("model.bpk")));
        assert!(kept != saved(&last.join("model.bpk")));
        let _ = std::fs::remove_dir_all(&folder);
    }

    #[test]
    fn a_run_validated_on_test_says_so_and_keeps_the_last_epoch_when_asked() {
        let draft = ExperimentDraft {
            validation: crate::config::Validation::Test,
            keep: crate::config::Keep::Last,
            ..tiny_experiment(2).draft().clone()
        };
        let (summary, events) = run_events(draft);
        assert_eq!(summary.validated_on, crate::selection::ValidatedOn::Test);
        let rows: Vec<&EpochRow> = events
            .iter()
            .filter_map(|e| match e {
                TrainEvent::EpochEnd(r) => Some(r),
                _ => None,
            })
            .collect();
        assert!(
            rows.iter()
                .all(|r| r.val_accuracy.is_none() && r.test_accuracy.is_some())
        );
        assert_eq!(summary.kept_epoch, Some(2));
        assert_eq!(summary.final_test_accuracy, rows[1].test_accuracy);
        assert!(summary.best_test_accuracy.is_some());
        assert!(summary.val_report.is_none() && summary.test_report.is_some());
        assert_eq!(summary.split_sizes.map(|s| s.val), Some(0));
    }

    #[test]
    fn without_validation_no_epoch_is_evaluated_and_the_last_is_kept() {
        let draft = ExperimentDraft {
            val_split: 0.0,
            ..tiny_experiment(2).draft().clone()
        };
        let mut data = tiny_dataset();
        data.val = Split::default();
        let mut events = Vec::new();
        let summary = train(
            &draft.validate().unwrap(),
            &data,
            &cpu(),
            Preparation::default(),
            &Control::new(),
            &mut |e| events.push(e),
        )
        .unwrap();
        assert_eq!(summary.validated_on, crate::selection::ValidatedOn::Nothing);
        assert!(
            events
                .iter()
                .all(|e| !matches!(e, TrainEvent::EpochEnd(r) if r.held_out().is_some()))
        );
        assert_eq!((summary.best_epoch, summary.kept_epoch), (None, Some(2)));
        assert!(summary.final_test_accuracy.is_some());
    }

    #[test]
    fn balanced_class_weights_weigh_rare_classes_up_in_both_loss_forms() {
        let mut data = tiny_dataset();
        // 100 left, 25 right: weights 125 / (2 × 100) and 125 / (2 × 25).
        let keep: Vec<usize> = (0..200).filter(|&i| i % 2 == 0 || i % 8 == 1).collect();
        data.train = Split {
            images: keep
                .iter()
                .flat_map(|&i| data.train.images[i * 16..(i + 1) * 16].to_vec())
                .collect(),
            labels: keep.iter().map(|&i| data.train.labels[i]).collect(),
            files: Vec::new(),
            label_sets: Vec::new(),
        };
        assert_eq!(data.class_counts(), vec![100, 25]);
        let weights = step::class_weights(crate::config::ClassWeights::Balanced, &data).unwrap();
        assert!(
            (weights[0] - 0.625).abs() < 1e-6 && (weights[1] - 2.5).abs() < 1e-6,
            "{weights:?}"
        );
        assert_eq!(
            step::class_weights(crate::config::ClassWeights::None, &data),
            None
        );
        // Weighted as PyTorch: Σ wᵢ·lossᵢ / Σ wᵢ, the same on logits and unclipped probabilities.
        let device = Device::flex();
        let loss_fn = CrossEntropyLossConfig::new()
            .with_weights(Some(weights.clone()))
            .init(&device);
        let logits = || {
            Tensor::<2>::from_data(
                TensorData::new(vec![2.0f32, 0.5, 0.1, 1.0], [2, 2]),
                &device,
            )
        };
        let labels = || {
            targets::Targets::Classes(Tensor::<1, Int>::from_data(
                TensorData::new(vec![0i32, 1], [2]),
                &device,
            ))
        };
        let read = |t: Tensor<1>| t.into_data().try_to_vec::<f32>().unwrap()[0];
        let on_logits = read(batch_loss(&loss_fn, LossInput::Logits, logits(), labels()));
        let on_probabilities = read(batch_loss(
            &loss_fn,
            LossInput::Probabilities,
            logits(),
            labels(),
        ));
        let nll = |a: f32, b: f32| (a.exp() + b.exp()).ln() - a;
        let expected = (0.625 * nll(2.0, 0.5) + 2.5 * nll(1.0, 0.1)) / 3.125;
        assert!(
            (on_logits - expected).abs() < 1e-5,
            "{on_logits} vs {expected}"
        );
        assert!(
            (on_probabilities - expected).abs() < 1e-5,
            "{on_probabilities}"
        );
        // Unweighted, the run warns; weighted, it does not.
        let draft = ExperimentDraft {
            validation: crate::config::Validation::Test,
            ..tiny_experiment(1).draft().clone()
        };
        let warned = |draft: ExperimentDraft| {
            let mut warnings = Vec::new();
            train(
                &draft.validate().unwrap(),
                &data,
                &cpu(),
                Preparation::default(),
                &Control::new(),
                &mut |e| {
                    if let TrainEvent::Warning(w @ TrainWarning::Unbalanced { .. }) = e {
                        warnings.push(w.to_string());
                    }
                },
            )
            .unwrap();
            warnings
        };
        let unweighted = warned(draft.clone());
        assert_eq!(unweighted.len(), 1);
        assert!(
            unweighted[0].contains("`left` has 100 training images, `right` only 25 (4.0×)"),
            "{unweighted:?}"
        );
        let weighted = warned(ExperimentDraft {
            class_weights: crate::config::ClassWeights::Balanced,
            ..draft
        });
        assert!(weighted.is_empty(), "{weighted:?}");
    }

    pub(super) fn cpu() -> TrainDevice {
        TrainDevice::one(Device::flex(), "cpu", "CPU")
    }

    #[test]
    fn a_tiny_run_learns_and_counts_every_sample_once_per_epoch() {
        let data = tiny_dataset();
        let experiment = tiny_experiment(3);
        let mut events = Vec::new();
        let summary = train(
            &experiment,
            &data,
            &cpu(),
            Preparation::default(),
            &Control::new(),
            &mut |e| events.push(e),
        )
        .unwrap();
        assert_eq!(summary.outcome, RunOutcome::Completed);
        assert_eq!(summary.epochs_completed, 3);
        // 200 images in batches of 32: 7 steps, the last one of 8 images, none dropped.
        assert_eq!(summary.steps, 21);
        assert_eq!(summary.samples_seen, 600);
        assert!(summary.final_test_accuracy.unwrap() > 0.9, "{summary:?}");
        assert!(matches!(events.first(), Some(TrainEvent::Started(s)) if s.steps_per_epoch == 7));
        assert!(matches!(events.last(), Some(TrainEvent::Finished(_))));
        let epoch_ends: Vec<&EpochRow> = events
            .iter()
            .filter_map(|e| match e {
                TrainEvent::EpochEnd(s) => Some(s),
                _ => None,
            })
            .collect();
        assert_eq!(epoch_ends.len(), 3);
        for e in &epoch_ends {
            assert!((0.0..=1.0).contains(&e.train_accuracy.unwrap()));
            assert!((0.0..=1.0).contains(&e.val_accuracy.unwrap()));
            assert_eq!((e.test_loss, e.test_accuracy), (None, None));
        }
        // The last readback of each epoch covers all of its samples.
        let last_progress = events.iter().rev().find_map(|e| match e {
            TrainEvent::Progress(p) => Some(p),
            _ => None,
        });
        assert_eq!(last_progress.map(|p| p.samples_seen), Some(600));
        // Every core, and the engine named.
        let choice = summary
            .cpu_threads
            .as_ref()
            .expect("a CPU run reports its threads");
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(choice.threads, cores);
        assert_eq!(choice.engine.as_deref(), Some(CPU_ENGINE));
        assert_eq!(summary.precision, crate::config::Precision::F32);
        assert_eq!(summary.loss_scale, None);
    }

    #[test]
    fn a_batch_split_across_two_devices_steps_as_the_whole_batch_does_on_one() {
        // Two lanes on the one CPU device: the split, the weighed shard losses and Burn's
        // multi-device step, without a second device to move tensors to.
        let learned = |target: &TrainDevice| {
            let mut rows = Vec::new();
            let summary = train(
                &tiny_experiment(3),
                &tiny_dataset(),
                target,
                Preparation::default(),
                &Control::new(),
                &mut |e| {
                    if let TrainEvent::EpochEnd(row) = e {
                        rows.push([
                            row.train_loss.unwrap(),
                            row.train_accuracy.unwrap(),
                            row.val_loss.unwrap(),
                            row.val_accuracy.unwrap(),
                        ]);
                    }
                },
            )
            .unwrap();
            (summary, rows)
        };
        let two = TrainDevice {
            replicas: vec![Device::flex()],
            ..cpu()
        };
        let (one_summary, one_rows) = learned(&cpu());
        let (two_summary, two_rows) = learned(&two);
        assert_eq!(two_summary.samples_seen, one_summary.samples_seen);
        assert_eq!(two_rows.len(), 3);
        for (one, two) in one_rows.iter().zip(&two_rows) {
            for (a, b) in one.iter().zip(two) {
                assert!((a - b).abs() < 1e-4, "one device {one:?}, two {two:?}");
            }
        }
    }

    #[test]
    fn a_cancelled_run_stops_at_a_step_boundary_and_says_so() {
        let data = tiny_dataset();
        let experiment = tiny_experiment(5);
        let control = Control::new();
        control.cancel();
        let summary = train(
            &experiment,
            &data,
            &cpu(),
            Preparation::default(),
            &control,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(summary.outcome, RunOutcome::Cancelled);
        assert_eq!(summary.steps, 0);
    }

    #[test]
    fn a_huge_learning_rate_is_caught_as_divergence() {
        let mut data = tiny_dataset();
        // Raw 0-255 inputs and lr 10 blow the loss up within a step or two.
        data.train = halves(256);
        let mut draft = tiny_experiment(2).draft().clone();
        draft.lr = 10.0;
        draft.input_scaling = InputScaling::Raw;
        draft.optimizer = OptimizerSpec::from_name("sgd").unwrap();
        draft.readback_interval_ms = 10;
        let experiment = draft.validate().unwrap();
        let mut warnings = Vec::new();
        let summary = train(
            &experiment,
            &data,
            &cpu(),
            Preparation::default(),
            &Control::new(),
            &mut |e| {
                if let TrainEvent::Warning(w) = e {
                    warnings.push(w);
                }
            },
        )
        .unwrap();
        assert!(!warnings.is_empty(), "{summary:?}");
    }

    #[test]
    fn profiling_mode_breaks_a_step_into_phases_only_when_asked() {
        let data = tiny_dataset();
        let mut draft = tiny_experiment(1).draft().clone();
        let run = |draft: &ExperimentDraft| {
            train(
                &draft.clone().validate().unwrap(),
                &data,
                &cpu(),
                Preparation::default(),
                &Control::new(),
                &mut |_| {},
            )
            .unwrap()
        };
        assert!(run(&draft).profile.is_none());
        draft.profile_steps = 3;
        let summary = run(&draft);
        // Regression: the profiled steps and the short last batch left no window to measure,
        // and the run reported 0 samples/s; on the CPU that last window is the figure.
        assert!(
            summary.steady_rate().is_some_and(|r| r > 0.0),
            "{summary:?}"
        );
        let profile = summary.profile.expect("a profile");
        assert_eq!(profile.steps, 3);
        assert!(
            profile.mode.contains("synced after every phase"),
            "{}",
            profile.mode
        );
        for ms in [
            profile.data_ms,
            profile.forward_ms,
            profile.backward_ms,
            profile.optimizer_ms,
            profile.host_sync_ms,
        ] {
            assert!(ms.is_finite() && ms >= 0.0, "{profile:?}");
        }
        assert!(
            profile.forward_ms + profile.backward_ms > 0.0,
            "{profile:?}"
        );
        // Profiled steps are still training steps.
        assert_eq!(summary.steps, 7);
        assert_eq!(summary.outcome, RunOutcome::Completed);
    }

    #[test]
    fn epoch_order_is_a_seeded_permutation() {
        let a = epoch_order(1000, 7, 0);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<_>>());
        assert_eq!(a, epoch_order(1000, 7, 0));
        assert_ne!(a, epoch_order(1000, 7, 1));
        assert_ne!(a, epoch_order(1000, 8, 0));
    }
}
