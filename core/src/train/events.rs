//! The one protocol between the engine and any front end: the loop emits, listeners render.

use serde::{Deserialize, Serialize};

use super::RunSummary;
use crate::results::TestPredictions;
use crate::results::multi_label::LabelPredictions;
use crate::selection::ValidatedOn;

/// Sent once, after the data is on the device and the model is built.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartInfo {
    /// Adapter or CPU name, as `kiln devices` lists it.
    pub device_name: String,
    /// `cpu` or `gpu:N`.
    pub device_id: String,
    /// Trainable scalars in the model.
    pub parameter_count: usize,
    /// Optimizer steps per epoch (the last batch may be short).
    pub steps_per_epoch: usize,
    /// Epochs the run will do.
    pub epochs: usize,
    /// Training images.
    pub train_len: usize,
    /// Validation images, evaluated each epoch (0 when the run validates on test or not at all).
    #[serde(default)]
    pub val_len: usize,
    /// Test images, evaluated at the end (and each epoch in a run validated on test).
    pub test_len: usize,
    /// What each epoch is evaluated on.
    #[serde(default)]
    pub validated_on: ValidatedOn,
    /// Seconds spent reading the data set from disk (or generating it).
    pub load_secs: f64,
    /// Seconds spent uploading the data set to the device.
    pub upload_secs: f64,
    /// The (0-based) epoch training starts at: 0, or where a resumed run picks up.
    pub first_epoch: usize,
    /// What the pretrained weights file gave a run that starts from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pretrained: Option<crate::weights::Loaded>,
    /// Seconds a linear probe spent computing every image's features, once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features_secs: Option<f64>,
}

/// A metrics readback: the running figures since the start of the epoch. It is also the row
/// metrics.csv keeps, so what the window plots live and what it reads back are one type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricsRow {
    /// Seconds since the run started (after data loading).
    pub wall_secs: f64,
    /// 1-based epoch, as everywhere a person reads it.
    pub epoch: usize,
    /// Steps done in this epoch.
    pub step: usize,
    /// Steps done in the whole run.
    pub global_step: usize,
    /// Images seen in the whole run.
    pub samples_seen: u64,
    /// Mean loss over the images of this epoch so far.
    pub train_loss: f64,
    /// Fraction of this epoch's images so far classified correctly.
    pub train_accuracy: f64,
    /// Images per second since the previous readback.
    pub samples_per_sec: f64,
    /// Mean wall milliseconds per step since the previous readback.
    pub step_ms: f64,
    /// Milliseconds of that window spent preparing batches.
    pub data_ms: f64,
    /// Milliseconds of that window spent recording device work.
    pub compute_ms: f64,
    /// Milliseconds of that window spent waiting for the device.
    pub sync_ms: f64,
    /// Learning rate of the last step.
    pub lr: f64,
}

/// Sent after each epoch's evaluation; also the row epochs.csv keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpochRow {
    /// 1-based epoch.
    pub epoch: usize,
    /// Mean training loss over every image of the epoch; none only in a run imported from a
    /// log that does not hold it (every figure below that is not already optional, likewise).
    pub train_loss: Option<f64>,
    /// Training accuracy over every image of the epoch.
    pub train_accuracy: Option<f64>,
    /// Mean loss over the validation split; none when the run does not validate on one.
    pub val_loss: Option<f64>,
    /// Accuracy over the validation split.
    pub val_accuracy: Option<f64>,
    /// Mean loss over the test split: only in runs validated on test (the parity presets, and
    /// run folders from before validation splits), which evaluate it every epoch.
    pub test_loss: Option<f64>,
    /// Accuracy over the test split, in such runs.
    pub test_accuracy: Option<f64>,
    /// Wall seconds of the training part of the epoch.
    pub epoch_secs: Option<f64>,
    /// Wall seconds of the evaluation.
    pub eval_secs: Option<f64>,
    /// Training images per second over the epoch.
    pub samples_per_sec: Option<f64>,
}

impl EpochRow {
    /// The epoch's evaluation as (loss, accuracy): on validation, or on test in a run
    /// validated on test; none when the epoch was not evaluated.
    pub fn held_out(&self) -> Option<(f64, f64)> {
        let pair = |loss: Option<f64>, accuracy: Option<f64>| Some((loss?, accuracy?));
        pair(self.val_loss, self.val_accuracy).or_else(|| pair(self.test_loss, self.test_accuracy))
    }
}

/// The test split measured once, at the end, on the weights the run keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// The (1-based) epoch whose weights were tested.
    pub epoch: usize,
    /// Mean loss over every test image.
    pub loss: f64,
    /// Fraction of the test images classified correctly.
    pub accuracy: f64,
}

/// Something a person should know while the run goes on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TrainWarning {
    /// The loss became NaN or infinite; the run stops unless the config says to go on.
    NonFiniteLoss {
        /// Epoch where it was seen.
        epoch: usize,
        /// Whether the run stopped because of it.
        stopped: bool,
    },
    /// The running loss is far above that of uniform guessing.
    Diverging {
        /// Epoch where it was seen.
        epoch: usize,
        /// The running loss at that point.
        loss: f64,
    },
    /// The trained model could not be saved with the run; the run itself is complete.
    ModelNotSaved {
        /// What went wrong.
        reason: String,
    },
    /// The largest class has 3× or more the training images of the smallest, and the loss is
    /// not weighted: accuracy then flatters the model on the large classes.
    Unbalanced {
        /// The largest class and its training images.
        largest: (String, usize),
        /// The smallest class and its training images.
        smallest: (String, usize),
    },
    /// Files of an image folder were left out (unreadable, not images); the run trains on the
    /// rest, and summary.json lists them all.
    FilesSkipped {
        /// How many.
        count: usize,
        /// The first of them, with its reason.
        first: String,
    },
    /// Something about the data set as a whole to read before trusting the run (a labels file
    /// whose labels are all numbers, say).
    DataNote {
        /// The sentence.
        note: String,
    },
    /// The best epoch's weights could not be read back after a resume; the last ones are kept.
    BestNotKept {
        /// What went wrong.
        reason: String,
    },
    /// An epoch's checkpoint could not be written; training goes on, but cannot resume there.
    CheckpointNotSaved {
        /// What went wrong.
        reason: String,
    },
    /// The evaluation accuracy stayed at chance level for a whole epoch.
    StuckAtChance {
        /// Epoch where it was seen.
        epoch: usize,
        /// The accuracy.
        accuracy: f64,
        /// The split it was measured on.
        #[serde(default)]
        on: ValidatedOn,
    },
}

impl std::fmt::Display for TrainWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NonFiniteLoss {
                epoch,
                stopped: true,
            } => write!(
                f,
                "the loss became NaN or infinite in epoch {}; the run stopped. Try a lower learning rate.",
                epoch + 1
            ),
            Self::NonFiniteLoss {
                epoch,
                stopped: false,
            } => write!(
                f,
                "the loss became NaN or infinite in epoch {}; training goes on as asked, but nothing it learns now is reliable. Try a lower learning rate.",
                epoch + 1
            ),
            Self::Diverging { epoch, loss } => write!(
                f,
                "the loss ({loss:.3} in epoch {}) is far above that of guessing; the learning rate may be too high or the inputs unscaled.",
                epoch + 1
            ),
            Self::ModelNotSaved { reason } => write!(
                f,
                "the trained model was not saved ({reason}); the run's figures are complete"
            ),
            Self::Unbalanced { largest, smallest } => write!(
                f,
                "the classes are unbalanced: `{}` has {} training images, `{}` only {} ({:.1}×); read per-class recall and F1, not accuracy alone, or set class_weights = \"balanced\"",
                largest.0,
                largest.1,
                smallest.0,
                smallest.1,
                largest.1 as f64 / smallest.1.max(1) as f64
            ),
            Self::FilesSkipped { count, first } => write!(
                f,
                "{count} file(s) of the data set were left out, the first: {first}; summary.json lists them all"
            ),
            Self::DataNote { note } => write!(f, "data set: {note}"),
            Self::BestNotKept { reason } => write!(
                f,
                "the best epoch's weights could not be read back ({reason}); the run keeps and tests the last epoch's"
            ),
            Self::CheckpointNotSaved { reason } => write!(
                f,
                "{reason}; training goes on, but a resume would start from an earlier epoch"
            ),
            Self::StuckAtChance {
                epoch,
                accuracy,
                on,
            } => write!(
                f,
                "{} accuracy is at chance level ({:.1} %) after epoch {}; check the learning rate and input scaling.",
                on.split_name(),
                accuracy * 100.0,
                epoch + 1
            ),
        }
    }
}

/// Everything the loop tells its listeners, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TrainEvent {
    /// Data loaded, model built, first step about to run.
    Started(StartInfo),
    /// A periodic readback of running metrics.
    Progress(MetricsRow),
    /// An epoch ended and was evaluated.
    EpochEnd(EpochRow),
    /// The test split, measured once on the weights a completed run keeps.
    Tested(TestResult),
    /// Every test image's prediction by those weights.
    Predictions(TestPredictions),
    /// In a multi-label set, every test image's probability per label by those weights, and
    /// the thresholds (boxed: a probability per image and label).
    LabelPredictions(Box<LabelPredictions>),
    /// Something looks wrong; see [`TrainWarning`].
    Warning(TrainWarning),
    /// The run ended (completed, cancelled or diverged). Boxed: the summary is by far the
    /// largest event and comes once.
    Finished(Box<RunSummary>),
    /// The run could not go on; the sentence says why.
    Failed(String),
}
