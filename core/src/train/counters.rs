//! What a run counts as it goes: the figures that survive a resume ([`RunCounters`], the body of
//! a checkpoint's `state.json`), and the one rule for how a readback window counts toward the
//! run's speed ([`ReadbackWindowKind`], applied by [`SpeedBook`]).

use std::time::Duration;

use web_time::Instant;

use serde::{Deserialize, Serialize};

use super::StepProfile;
use super::precision::LossScale;
use crate::selection::SelectionState;

/// Everything the loop needs besides the tensors to go on as if it had never stopped. Saved
/// whole with each checkpoint and restored whole on resume.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunCounters {
    /// Epochs trained and evaluated; the resumed run starts at this (0-based) epoch.
    pub epochs_completed: usize,
    /// Optimizer steps taken in the run.
    pub steps: usize,
    /// Training images seen in the run.
    pub samples_seen: u64,
    /// Run wall seconds at the end of the epoch, so resumed rows continue the time axis.
    pub wall_secs: f64,
    /// Training seconds summed over the completed epochs (for the mean epoch time).
    pub train_secs_total: f64,
    /// Steady-state seconds so far (warm-up excluded).
    pub steady_secs: f64,
    /// Images trained in those seconds.
    pub steady_samples: u64,
    /// Seconds to the first finished step of the original start.
    pub warmup_secs: f64,
    /// Whether the divergence warning was already given.
    pub diverging_warned: bool,
    /// Mean training loss of the last epoch.
    pub train_loss: f64,
    /// Training accuracy of the last epoch.
    pub train_accuracy: f64,
    /// Loss of the last epoch's evaluation (validation, or test for a run validated on test).
    #[serde(alias = "test_loss")]
    pub eval_loss: f64,
    /// Accuracy of the last epoch's evaluation.
    #[serde(alias = "test_accuracy")]
    pub eval_accuracy: f64,
    /// Best evaluation accuracy of any epoch so far.
    #[serde(alias = "best_test_accuracy")]
    pub best_eval_accuracy: f64,
    /// The best epoch and patience so far; checkpoints written before validation splits have
    /// none and start it afresh.
    #[serde(default)]
    pub selection: SelectionState,
    /// The loss scale of an f16 run; none in f32 and in checkpoints written before f16 existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_scale: Option<LossScale>,
}

impl RunCounters {
    /// Whether a run at these counters has nothing left to train: all `epochs` ran, or early
    /// stopping's `patience` (0: none) ran out. The one rule for resume and the runs list.
    pub fn is_over(&self, epochs: usize, patience: usize) -> bool {
        self.epochs_completed >= epochs
            || (patience > 0 && self.selection.epochs_since_best >= patience)
    }
}

/// Host-side timing of one readback window: the steps since the last readback.
#[derive(Debug, Default)]
pub(super) struct ReadbackWindow {
    /// When its first step started; none before any step.
    pub(super) started: Option<Instant>,
    /// Steps in it.
    pub(super) steps: usize,
    /// Images those steps trained on.
    pub(super) samples: u64,
    /// Host time spent building batches.
    pub(super) data: Duration,
    /// Host time spent recording forward, backward and optimizer work.
    pub(super) compute: Duration,
}

impl ReadbackWindow {
    /// An empty window whose clock starts `now` (after a readback, a pause or a profiled step).
    pub(super) fn starting(now: Instant) -> Self {
        Self {
            started: Some(now),
            ..Self::default()
        }
    }

    /// Wall seconds from its first step to `now`.
    pub(super) fn secs_until(&self, now: Instant) -> f64 {
        self.started
            .map_or(0.0, |started| (now - started).as_secs_f64())
    }
}

/// How one readback window counts toward the run's speed figures. Profiled steps never enter a
/// window (each one starts a fresh window), so they count toward nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReadbackWindowKind {
    /// No step since the last readback.
    Empty,
    /// Holds this launch's first step: shader compilation, autotuning, first allocations.
    FirstStep,
    /// Ends with this launch's first short last batch, whose new shape compiles and autotunes
    /// kernels once (40 s on lavapipe's first launch, measured).
    FirstShortBatch,
    /// Everything else: steady state, the figure samples/s is made of.
    Steady,
}

impl ReadbackWindowKind {
    /// The kind of a window of `window_steps` steps when the launch has taken `launch_steps`,
    /// and whether the window ends with the launch's first short last batch.
    pub(super) fn of(window_steps: usize, launch_steps: usize, first_short_batch: bool) -> Self {
        if window_steps == 0 {
            Self::Empty
        } else if window_steps == launch_steps {
            Self::FirstStep
        } else if first_short_batch {
            Self::FirstShortBatch
        } else {
            Self::Steady
        }
    }
}

/// Books each window into the run's warm-up and steady figures by its [`ReadbackWindowKind`].
#[derive(Debug)]
pub(super) struct SpeedBook {
    /// The CPU compiles nothing, so its first short batch is no warm-up.
    on_cpu: bool,
    /// Warm-up is the original start's: a resumed launch leaves it as it was.
    fresh_run: bool,
    /// On the CPU, the first short batch's window: out of the rate, but the only figure a run
    /// too short for any other window after warm-up (and profiling) has.
    short_window: Option<(f64, u64)>,
}

impl SpeedBook {
    /// A book for a launch on the CPU or not, from epoch 0 or resumed.
    pub(super) fn new(on_cpu: bool, fresh_run: bool) -> Self {
        Self {
            on_cpu,
            fresh_run,
            short_window: None,
        }
    }

    /// Counts a window of `secs` and `samples` of `kind` into `counters`.
    pub(super) fn count(
        &mut self,
        counters: &mut RunCounters,
        kind: ReadbackWindowKind,
        secs: f64,
        samples: u64,
    ) {
        match kind {
            ReadbackWindowKind::Empty => {}
            ReadbackWindowKind::FirstStep => {
                if self.fresh_run {
                    counters.warmup_secs = secs;
                }
            }
            ReadbackWindowKind::FirstShortBatch if self.on_cpu => {
                self.short_window = Some((secs, samples))
            }
            ReadbackWindowKind::FirstShortBatch => {
                if self.fresh_run {
                    counters.warmup_secs += secs;
                }
            }
            ReadbackWindowKind::Steady => {
                counters.steady_secs += secs;
                counters.steady_samples += samples;
            }
        }
    }

    /// Steady samples per second over the whole run; 0 when no window after warm-up was
    /// measured. A CPU run whose only such window was its first short batch reports that one.
    pub(super) fn steady_rate(&self, counters: &RunCounters) -> f64 {
        let (secs, samples) = match self.short_window {
            Some(short) if counters.steady_samples == 0 => short,
            _ => (counters.steady_secs, counters.steady_samples),
        };
        if secs > 0.0 {
            samples as f64 / secs
        } else {
            0.0
        }
    }
}

/// The median of each phase over the profiled steps (data, forward, backward, optimizer,
/// readback milliseconds); none when nothing was profiled.
pub(super) fn step_profile(samples: &[[f64; 5]]) -> Option<StepProfile> {
    if samples.is_empty() {
        return None;
    }
    let median = |phase: usize| {
        let mut values: Vec<f64> = samples.iter().map(|s| s[phase]).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    Some(StepProfile {
        mode: format!(
            "profiling: {} steps after warm-up, device synced after every phase; medians in ms; these steps are left out of samples/s",
            samples.len()
        ),
        steps: samples.len(),
        data_ms: median(0),
        forward_ms: median(1),
        backward_ms: median(2),
        optimizer_ms: median(3),
        host_sync_ms: median(4),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_window_counts_by_one_rule() {
        assert_eq!(
            ReadbackWindowKind::of(0, 5, false),
            ReadbackWindowKind::Empty
        );
        // The launch's first step, read back alone mid-epoch or at the end of a one-step epoch.
        assert_eq!(
            ReadbackWindowKind::of(1, 1, false),
            ReadbackWindowKind::FirstStep
        );
        assert_eq!(
            ReadbackWindowKind::of(1, 1, true),
            ReadbackWindowKind::FirstStep
        );
        assert_eq!(
            ReadbackWindowKind::of(6, 7, true),
            ReadbackWindowKind::FirstShortBatch
        );
        assert_eq!(
            ReadbackWindowKind::of(6, 7, false),
            ReadbackWindowKind::Steady
        );
    }

    #[test]
    fn the_first_short_batch_is_warm_up_on_a_gpu_and_a_fallback_on_the_cpu() {
        let mut counters = RunCounters::default();
        let mut gpu = SpeedBook::new(false, true);
        gpu.count(&mut counters, ReadbackWindowKind::FirstStep, 2.0, 64);
        gpu.count(&mut counters, ReadbackWindowKind::FirstShortBatch, 3.0, 100);
        assert_eq!(counters.warmup_secs, 5.0);
        assert_eq!(gpu.steady_rate(&counters), 0.0);

        let mut counters = RunCounters::default();
        let mut cpu = SpeedBook::new(true, true);
        cpu.count(&mut counters, ReadbackWindowKind::FirstStep, 0.5, 64);
        cpu.count(&mut counters, ReadbackWindowKind::FirstShortBatch, 1.0, 100);
        assert_eq!(counters.warmup_secs, 0.5);
        assert_eq!(cpu.steady_rate(&counters), 100.0);
        cpu.count(&mut counters, ReadbackWindowKind::Steady, 2.0, 1000);
        assert_eq!(cpu.steady_rate(&counters), 500.0);
    }

    #[test]
    fn a_resumed_launch_keeps_the_original_warm_up() {
        let mut counters = RunCounters {
            warmup_secs: 9.0,
            ..RunCounters::default()
        };
        let mut book = SpeedBook::new(false, false);
        book.count(&mut counters, ReadbackWindowKind::FirstStep, 1.0, 64);
        book.count(&mut counters, ReadbackWindowKind::FirstShortBatch, 1.0, 64);
        assert_eq!(counters.warmup_secs, 9.0);
    }
}
