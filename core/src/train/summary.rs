//! The figures of a whole run: the schema of `summary.json`, filled by the loop as it ends.

use serde::{Deserialize, Serialize};

use super::precision::LossScaleReport;
use super::threads::CpuThreadChoice;
use crate::config::Precision;
use crate::data::SkippedFile;
use crate::results::ClassReport;
use crate::selection::{EarlyStop, ValidatedOn};

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
    /// Test accuracy of the weights the run keeps, measured once at its end; for a run
    /// validated on test that stopped early (cancelled), of its last evaluated epoch.
    pub final_test_accuracy: Option<f64>,
    /// Test loss of those weights.
    pub final_test_loss: Option<f64>,
    /// Best test accuracy over the epochs: only runs validated on test have one.
    pub best_test_accuracy: Option<f64>,
    /// What each epoch was evaluated on; summaries from before validation splits read as test.
    #[serde(default)]
    pub validated_on: ValidatedOn,
    /// Images in the training, validation and test splits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_sizes: Option<SplitSizes>,
    /// Validation accuracy of the last evaluated epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_val_accuracy: Option<f64>,
    /// Validation loss of the last evaluated epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_val_loss: Option<f64>,
    /// Best validation accuracy over the epochs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_val_accuracy: Option<f64>,
    /// The (1-based) epoch the monitored figure liked best.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_epoch: Option<usize>,
    /// The (1-based) epoch whose weights the run kept, saved and tested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_epoch: Option<usize>,
    /// Why the run ended before its last epoch, when early stopping ended it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<EarlyStop>,
    /// Why a sweep's pruning rule ended the run before its last epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pruned: Option<super::Pruned>,
    /// The classification report of the kept weights on the test split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_report: Option<ClassReport>,
    /// The same on the validation split, for a run that has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub val_report: Option<ClassReport>,
    /// In a multi-label set, the kept weights' report on the test split at the run's
    /// thresholds (in place of `test_report`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_report: Option<crate::results::multi_label::LabelReport>,
    /// Files of an image folder left out of every split, each with its reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_files: Vec<SkippedFile>,
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

/// How many images each split of a run holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitSizes {
    /// Images trained on.
    pub train: usize,
    /// Images each epoch is evaluated on (0 for a run validated on test or not at all).
    pub val: usize,
    /// Images tested on.
    pub test: usize,
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
            validated_on: ValidatedOn::Test,
            split_sizes: None,
            final_val_accuracy: None,
            final_val_loss: None,
            best_val_accuracy: None,
            best_epoch: None,
            kept_epoch: None,
            stopped_early: None,
            pruned: None,
            test_report: None,
            val_report: None,
            label_report: None,
            skipped_files: Vec::new(),
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
