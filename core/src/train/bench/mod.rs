//! `kiln bench`: one workload for a fixed number of steps, trained the way Kiln trains and the
//! way the slow user loops did, measured the same way so their ratio means something.
//!
//! Both styles are timed in windows of [`WINDOW_STEPS`] steps that end in one host sync, so the
//! figures are device time, not time to enqueue work; the Kiln style syncs only there, the naive
//! style also twice after every step, as `loss.item()` and `correct.item()` do. Between the two,
//! Kiln's loop can take up any of the naive loop's habits ([`LoopDefects`]) alone: `kiln explain
//! --loop` splits the naive loop's slowdown that way, habit by habit. Each bench ends with one
//! evaluation pass, timed to its one sync (or, evaluation synced, to its sync per batch).

use web_time::Instant;

use burn::tensor::{Device, Int, Tensor, TensorData};
use serde::Serialize;

mod defects;

pub use defects::LoopDefects;

use defects::Batches;

use super::device_reads::{DeviceTotals, read_scalar};
use super::pipeline::{InputPipeline, epoch_order, pixel_transform};
use super::precision::StepPrecision;
use super::step::Stepper;
use super::targets::Targets;
use super::threads::CpuThreadChoice;
use super::{TrainDevice, TrainError};
use crate::config::{Experiment, Precision};
use crate::data::ImageDataset;
use crate::executor::block_on;

/// Steps per timed window; each window ends in one sync.
pub const WINDOW_STEPS: usize = 10;

/// How the training loop is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoopStyle {
    /// Data set on the device, batches gathered there, metrics read a few times per second.
    Kiln,
    /// Per-sample host preprocessing, an upload per batch and a host sync every step.
    Naive,
}

impl LoopStyle {
    /// The user loops' habits the style takes up: none, or all.
    pub fn defects(self) -> LoopDefects {
        match self {
            Self::Kiln => LoopDefects::NONE,
            Self::Naive => LoopDefects::ALL,
        }
    }
}

/// The figures of one bench run, printed as one JSON line.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// How the loop was written: `kiln`, `naive`, or `kiln+` the habits it took up.
    pub style: String,
    /// The user loops' habits it took up.
    pub defects: LoopDefects,
    /// The run's name (the preset's, usually).
    pub workload: String,
    /// Adapter or CPU name.
    pub device: String,
    /// The float type of the arithmetic.
    pub precision: Precision,
    /// Images per step.
    pub batch_size: usize,
    /// Steps timed after the first.
    pub steps: usize,
    /// Seconds to the end of the first step: shader compilation, autotuning, allocations.
    pub warmup_secs: f64,
    /// Median milliseconds per step over the timed windows.
    pub median_step_ms: f64,
    /// 90th percentile of milliseconds per step over the timed windows.
    pub p90_step_ms: f64,
    /// Training images per second after warm-up.
    pub samples_per_sec: f64,
    /// Seconds of one evaluation pass after the steps, to its one sync.
    pub eval_secs: f64,
    /// Images that pass evaluated (the validation split, or the test split without one).
    pub eval_images: usize,
    /// The process's peak resident memory so far (Linux only).
    pub peak_rss_bytes: Option<u64>,
    /// The most memory the device's allocator held at a window end (GPU only).
    pub peak_device_bytes: Option<u64>,
    /// On the CPU: the threads the steps ran on, and the step size that decided it.
    pub cpu_threads: Option<CpuThreadChoice>,
    /// Mean training loss over every step, warm-up included, from the loop's own running sum.
    pub train_loss: f64,
    /// Fraction of training images classified right over every step, counted by the loop.
    pub train_accuracy: f64,
}

/// Trains `experiment` on `data` for `steps` steps after a first, warm-up step, in `style`.
pub fn bench(
    experiment: &Experiment,
    data: &ImageDataset,
    target: &TrainDevice,
    style: LoopStyle,
    steps: usize,
) -> Result<BenchReport, TrainError> {
    bench_loop(experiment, data, target, style.defects(), steps)
}

/// Trains `experiment` on `data` for `steps` steps after a first, warm-up step, in Kiln's loop
/// with the user loops' habits `defects`, then evaluates once.
pub fn bench_loop(
    experiment: &Experiment,
    data: &ImageDataset,
    target: &TrainDevice,
    defects: LoopDefects,
    steps: usize,
) -> Result<BenchReport, TrainError> {
    let device = &target.device;
    device.seed(experiment.seed);
    let transform = pixel_transform(experiment.input_scaling, data);
    let (mut model, mut stepper) = Stepper::new(experiment, data, device)?;
    // The loss scale stays at its first value: a bench reads nothing back until its end.
    let precision = StepPrecision::new(experiment.precision, None);
    let batch_size = experiment.batch_size.min(data.train.len()).max(1);
    let per_epoch = (data.train.len() / batch_size).max(1);
    // Only a loop that gathers on the device keeps the data set there.
    let pipeline = match defects.batches_from_host() {
        false => Some(InputPipeline::upload(experiment, data, &transform, device)?),
        true => None,
    };
    let batches = Batches {
        data,
        transform: &transform,
        plain: InputPipeline::plain_options(experiment, &transform),
        pipeline,
        defects,
        device,
    };
    let mut totals = DeviceTotals::zeros(device);
    // The running loss sum and correct count a user loop keeps on the host.
    let mut host_sums = (0.0f64, 0.0f64);
    let mut order_host = Vec::new();
    let mut order_device: Option<Tensor<1, Int>> = None;
    let mut clock = WindowClock::start();
    // The timed loop keeps the CPU's workers awake as an epoch of `kiln train` does.
    let awake = stepper.threads.keep_awake();
    for step in 0..=steps {
        let (epoch, in_epoch) = (step / per_epoch, step % per_epoch);
        if in_epoch == 0 || order_host.is_empty() {
            order_host = epoch_order(data.train.len(), experiment.seed, epoch);
            order_device = (!defects.host_shuffle && !defects.batches_from_host()).then(|| {
                let order = TensorData::new(order_host.clone(), [order_host.len()]);
                Tensor::<1, Int>::from_data(order, device)
            });
        }
        let order = (order_host.as_slice(), order_device.as_ref());
        let batch = batches.train(order, in_epoch * batch_size, batch_size)?;
        let keep = |logits: Tensor<2>, loss: Tensor<1>, labels: Targets| {
            keep_metrics(defects, (logits, loss, labels), &mut totals, &mut host_sums)
        };
        let stepped = stepper.step(model, &precision, batch, experiment.lr, keep, &|| Ok(()))?;
        model = stepped.model;
        totals.add_overflow(stepped.overflowed);
        clock.after_step(step, steps, device)?;
    }
    drop(awake);
    let eval_started = Instant::now();
    let (eval_images, _) = batches.evaluate(&model, batch_size)?;
    let eval_secs = eval_started.elapsed().as_secs_f64();
    // Kiln's loop reads its sums a few times per second; once here keeps them honest work.
    let sums = block_on(totals.read())?;
    let loss_sum = if defects.read_loss {
        host_sums.0
    } else {
        sums.loss_sum
    };
    let correct = if defects.read_correct {
        host_sums.1
    } else {
        sums.correct
    };
    let samples_trained = ((steps + 1) * batch_size) as f64;
    Ok(BenchReport {
        style: defects.style_name(),
        defects,
        workload: experiment.name.clone(),
        device: target.name.clone(),
        precision: experiment.precision,
        batch_size,
        steps,
        warmup_secs: clock.warmup_secs,
        median_step_ms: percentile(&clock.window_ms, 0.5),
        p90_step_ms: percentile(&clock.window_ms, 0.9),
        samples_per_sec: (steps * batch_size) as f64 / clock.steady_secs().max(1e-9),
        eval_secs,
        eval_images,
        peak_rss_bytes: peak_rss_bytes(),
        peak_device_bytes: clock.peak_device_bytes,
        cpu_threads: stepper.threads.choice().cloned(),
        train_loss: loss_sum / samples_trained,
        train_accuracy: correct / samples_trained,
    })
}

/// What a step keeps of its logits, loss and labels: the loss and the correct count each
/// read back now where the loop has that habit (each a wait for the device, as `.item()` is),
/// the rest summed on the device.
fn keep_metrics(
    defects: LoopDefects,
    (logits, loss, labels): (Tensor<2>, Tensor<1>, Targets),
    totals: &mut DeviceTotals,
    host_sums: &mut (f64, f64),
) -> Result<(), TrainError> {
    let rows = labels.rows() as f64;
    if defects.read_loss {
        host_sums.0 += block_on(read_scalar(loss.clone()))? * rows;
    }
    if defects.read_correct {
        host_sums.1 += block_on(read_scalar(labels.right(logits.clone())))?;
    }
    if !(defects.read_loss && defects.read_correct) {
        totals.add(logits, labels, loss);
    }
    Ok(())
}

/// The bench's timing: windows of [`WINDOW_STEPS`] steps, each closed by one device sync.
struct WindowClock {
    started: Instant,
    window_started: Instant,
    warmup_secs: f64,
    window_ms: Vec<f64>,
    peak_device_bytes: Option<u64>,
}

impl WindowClock {
    fn start() -> Self {
        let now = Instant::now();
        Self {
            started: now,
            window_started: now,
            warmup_secs: 0.0,
            window_ms: Vec::new(),
            peak_device_bytes: None,
        }
    }

    /// Closes a window after `step` (of `steps`) where one ends: one sync, everything issued
    /// so far has run.
    fn after_step(&mut self, step: usize, steps: usize, device: &Device) -> Result<(), TrainError> {
        if !(step == 0 || step.is_multiple_of(WINDOW_STEPS) || step == steps) {
            return Ok(());
        }
        device
            .sync()
            .map_err(|e| TrainError::Readback(format!("{e:?}")))?;
        if let Some(usage) = device.memory_pool_usage() {
            let peak = self
                .peak_device_bytes
                .unwrap_or(0)
                .max(usage.bytes_reserved);
            self.peak_device_bytes = Some(peak);
        }
        let now = Instant::now();
        if step == 0 {
            self.warmup_secs = (now - self.started).as_secs_f64();
        } else {
            let in_window = match step % WINDOW_STEPS {
                0 => WINDOW_STEPS,
                rest => rest,
            };
            let ms = (now - self.window_started).as_secs_f64() * 1e3 / in_window as f64;
            self.window_ms.push(ms);
        }
        self.window_started = now;
        Ok(())
    }

    /// Seconds from the end of warm-up to the last window's end.
    fn steady_secs(&self) -> f64 {
        (self.window_started - self.started).as_secs_f64() - self.warmup_secs
    }
}

/// The `q` quantile (0–1) of `values` by nearest rank; 0 for none.
fn percentile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// The process's resident-memory high-water mark, from `/proc/self/status` (`VmHWM`).
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let values: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&values, 0.5), 5.0);
        assert_eq!(percentile(&values, 0.9), 9.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
        assert_eq!(percentile(&[3.0], 0.9), 3.0);
    }

    #[test]
    fn both_styles_train_the_same_workload_and_report_figures() {
        let data = super::super::tests::tiny_dataset();
        let experiment = crate::train::tests::tiny_mlp();
        let target = super::super::tests::cpu();
        let mut metrics = Vec::new();
        for style in [LoopStyle::Kiln, LoopStyle::Naive] {
            let report = bench(&experiment, &data, &target, style, 25).unwrap();
            metrics.push((report.train_loss, report.train_accuracy));
            assert_eq!(report.steps, 25);
            assert_eq!(report.batch_size, 20);
            assert!(report.warmup_secs > 0.0);
            assert!(report.median_step_ms > 0.0 && report.median_step_ms <= report.p90_step_ms);
            assert!(report.samples_per_sec > 0.0);
            assert!(
                report.peak_device_bytes.is_none(),
                "the CPU has no device pool"
            );
            #[cfg(target_os = "linux")]
            assert!(report.peak_rss_bytes.is_some_and(|b| b > 1 << 20));
        }
        // Each loop keeps its own metrics; that they agree is tests/seeded_runs.rs's to check,
        // where no other test draws from the backend's one generator.
        for (loss, accuracy) in metrics {
            assert!(loss.is_finite() && loss > 0.0, "{loss}");
            assert!(accuracy > 0.0 && accuracy <= 1.0, "{accuracy}");
        }
    }

    #[test]
    fn each_habit_alone_trains_the_workload_evaluates_once_and_names_itself() {
        let data = super::super::tests::tiny_dataset();
        let experiment = crate::train::tests::tiny_mlp();
        let mut styles = Vec::new();
        for (_, defects) in LoopDefects::each() {
            let report =
                bench_loop(&experiment, &data, &super::super::tests::cpu(), defects, 5).unwrap();
            assert_eq!(report.defects, defects);
            assert_eq!(
                report.eval_images,
                data.val.len(),
                "evaluated on validation"
            );
            assert!(report.eval_secs > 0.0 && report.median_step_ms > 0.0);
            assert!(report.train_loss.is_finite() && report.train_loss > 0.0);
            styles.push(report.style);
        }
        assert_eq!(
            styles,
            [
                "kiln+host-transforms",
                "kiln+upload-per-batch",
                "kiln+host-shuffle",
                "kiln+read-loss",
                "kiln+read-correct",
                "kiln+eval-synced"
            ]
        );
        assert_eq!(LoopDefects::ALL.style_name(), "naive");
        assert_eq!(LoopDefects::NONE.style_name(), "kiln");
    }
}
