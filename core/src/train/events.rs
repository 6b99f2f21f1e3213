//! The one protocol between the engine and any front end: the loop emits, listeners render.

use serde::{Deserialize, Serialize};

use super::precision::LossScaleReport;
use super::threads::CpuThreadChoice;
use crate::config::Precision;

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
    /// Test images, evaluated each epoch.
    pub test_len: usize,
    /// Seconds spent reading the data set from disk (or generating it).
    pub load_secs: f64,
    /// Seconds spent uploading the data set to the device.
    pub upload_secs: f64,
    /// The (0-based) epoch training starts at: 0, or where a resumed run picks up.
    pub first_epoch: usize,
}

/// A metrics readback: the running figures since the start of the epoch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// Seconds since the run started (after data loading).
    pub wall_secs: f64,
    /// Zero-based epoch.
    pub epoch: usize,
    /// Steps done in this epoch.
    pub step_in_epoch: usize,
    /// Steps done in the whole run.
    pub global_step: usize,
    /// Images seen in the whole run.
    pub samples_seen: u64,
    /// Mean loss over the images of this epoch so far.
    pub train_loss: f64,
    /// Fraction of this epoch's images so far that were classified correctly.
    pub train_accuracy: f64,
    /// Images per second between this readback and the previous one.
    pub samples_per_sec: f64,
    /// Mean wall milliseconds per step between this readback and the previous one.
    pub step_ms: f64,
    /// Milliseconds of that window the host spent preparing batches (index slices, gathers).
    pub data_ms: f64,
    /// Milliseconds of that window the host spent recording forward, backward and optimizer work.
    pub compute_ms: f64,
    /// Milliseconds of that window the host waited for the device at the readback.
    pub sync_ms: f64,
    /// Learning rate of the last step.
    pub lr: f64,
}

/// Sent after each epoch's evaluation on the test split.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpochSummary {
    /// Zero-based epoch.
    pub epoch: usize,
    /// Mean training loss over every image of the epoch.
    pub train_loss: f64,
    /// Training accuracy over every image of the epoch.
    pub train_accuracy: f64,
    /// Mean test loss over every test image.
    pub test_loss: f64,
    /// Test accuracy over every test image.
    pub test_accuracy: f64,
    /// Wall seconds of the training part of the epoch.
    pub train_secs: f64,
    /// Wall seconds of the evaluation.
    pub eval_secs: f64,
    /// Training images per second over the epoch, warm-up included.
    pub samples_per_sec: f64,
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
    /// An epoch's checkpoint could not be written; training goes on, but cannot resume there.
    CheckpointNotSaved {
        /// What went wrong.
        reason: String,
    },
    /// Test accuracy stayed at chance level for a whole epoch.
    StuckAtChance {
        /// Epoch where it was seen.
        epoch: usize,
        /// The test accuracy.
        accuracy: f64,
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
            Self::CheckpointNotSaved { reason } => write!(
                f,
                "{reason}; training goes on, but a resume would start from an earlier epoch"
            ),
            Self::StuckAtChance { epoch, accuracy } => write!(
                f,
                "test accuracy is at chance level ({:.1} %) after epoch {}; check the learning rate and input scaling.",
                accuracy * 100.0,
                epoch + 1
            ),
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunOutcome {
    /// Every epoch ran.
    Completed,
    /// A person cancelled it.
    Cancelled,
    /// The loss became NaN or infinite.
    Diverged,
    /// An error ended it.
    Failed,
}

/// The figures of a whole run, written to `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// How the run ended.
    pub outcome: RunOutcome,
    /// Epochs fully done (trained and evaluated).
    pub epochs_completed: usize,
    /// Steps done.
    pub steps: usize,
    /// Images trained on.
    pub samples_seen: u64,
    /// Test accuracy after the last completed epoch.
    pub final_test_accuracy: Option<f64>,
    /// Test loss after the last completed epoch.
    pub final_test_loss: Option<f64>,
    /// Best test accuracy over the epochs.
    pub best_test_accuracy: Option<f64>,
    /// Training accuracy of the last completed epoch.
    pub final_train_accuracy: Option<f64>,
    /// Training loss of the last completed epoch.
    pub final_train_loss: Option<f64>,
    /// Seconds of warm-up: to the first finished step (shader compilation, autotuning, first
    /// allocations), plus on a GPU the readback window of the first short last batch of an
    /// epoch, whose new shape compiles and autotunes its own kernels.
    pub warmup_secs: f64,
    /// Training images per second after warm-up, over all epochs (evaluation excluded); 0 when
    /// the run was too short for any window after warm-up (see [`RunSummary::steady_rate`]).
    pub steady_samples_per_sec: f64,
    /// Mean training seconds per epoch, evaluation excluded.
    pub mean_epoch_train_secs: f64,
    /// Wall seconds of the whole run after the data was loaded.
    pub total_secs: f64,
    /// Seconds to read the data set.
    pub load_secs: f64,
    /// Seconds to upload the data set to the device.
    pub upload_secs: f64,
    /// Device the run trained on.
    pub device_name: String,
    /// Trainable scalars in the model.
    pub parameter_count: usize,
    /// The error that ended the run, if any.
    pub error: Option<String>,
    /// Where a step's time goes, from the profiling mode (`profile_steps` in the config).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<StepProfile>,
    /// The float type the run computed in.
    #[serde(default)]
    pub precision: Precision,
    /// What the loss scale did in an f16 run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_scale: Option<LossScaleReport>,
    /// On the CPU: how many threads the steps ran on, and the step size that decided it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_threads: Option<CpuThreadChoice>,
}

/// Median milliseconds of each phase of a training step, measured with the device synced after
/// every phase. Those syncs are what the normal loop avoids, so the profiled steps are left out
/// of every throughput figure; the breakdown says where time goes, not how fast a step is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepProfile {
    /// What the figures are, for whoever reads summary.json without this documentation.
    pub mode: String,
    /// Steps profiled (after the warm-up step).
    pub steps: usize,
    /// Gathering the batch from the device data set (index slice, gather, reshape).
    pub data_ms: f64,
    /// Forward pass, loss and the on-device metric sums.
    pub forward_ms: f64,
    /// Backward pass and collecting the gradients.
    pub backward_ms: f64,
    /// The optimizer's update of every parameter.
    pub optimizer_ms: f64,
    /// One metrics readback: the host waiting for the device and copying the sums.
    pub host_sync_ms: f64,
}

impl RunSummary {
    /// Steady samples per second, or none when the run had no window after warm-up to measure
    /// it: shown as "-", never as 0.
    pub fn steady_rate(&self) -> Option<f64> {
        (self.steady_samples_per_sec > 0.0).then_some(self.steady_samples_per_sec)
    }

    /// A summary of a run that has done nothing yet; the loop fills it in as it goes.
    pub fn new(
        device_name: &str,
        parameter_count: usize,
        load_secs: f64,
        upload_secs: f64,
    ) -> Self {
        Self {
            outcome: RunOutcome::Completed,
            epochs_completed: 0,
            steps: 0,
            samples_seen: 0,
            final_test_accuracy: None,
            final_test_loss: None,
            best_test_accuracy: None,
            final_train_accuracy: None,
            final_train_loss: None,
            warmup_secs: 0.0,
            steady_samples_per_sec: 0.0,
            mean_epoch_train_secs: 0.0,
            total_secs: 0.0,
            load_secs,
            upload_secs,
            device_name: device_name.to_owned(),
            parameter_count,
            error: None,
            profile: None,
            precision: Precision::F32,
            loss_scale: None,
            cpu_threads: None,
        }
    }
}

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

/// Everything the loop tells its listeners, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TrainEvent {
    /// Data loaded, model built, first step about to run.
    Started(StartInfo),
    /// A periodic readback of running metrics.
    Progress(Progress),
    /// An epoch ended and was evaluated.
    EpochEnd(EpochSummary),
    /// Every test image's prediction after the last epoch of a completed run.
    Predictions(TestPredictions),
    /// Something looks wrong; see [`TrainWarning`].
    Warning(TrainWarning),
    /// The run ended (completed, cancelled or diverged). Boxed: the summary is by far the
    /// largest event and comes once.
    Finished(Box<RunSummary>),
    /// The run could not go on; the sentence says why.
    Failed(String),
}
