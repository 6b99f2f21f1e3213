//! `kiln bench`: one workload for a fixed number of steps, trained the way Kiln trains and the
//! way the slow user loops did, measured the same way so their ratio means something.
//!
//! Both styles are timed in windows of [`WINDOW_STEPS`] steps that end in one host sync, so the
//! figures are device time, not time to enqueue work; the Kiln style syncs only there, the naive
//! style also twice after every step, as `loss.item()` and `correct.item()` do.

use web_time::Instant;

use burn::tensor::{Device, Int, Tensor, TensorData};
use serde::Serialize;

use super::device_reads::{DeviceTotals, read_scalar};
use super::pipeline::{InputPipeline, epoch_order, pixel_transform};
use super::precision::StepPrecision;
use super::step::Stepper;
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

/// The figures of one bench run, printed as one JSON line.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// How the loop was written.
    pub style: LoopStyle,
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
    let device = &target.device;
    device.seed(experiment.seed);
    let shape = data.shape.chw();
    let transform = pixel_transform(experiment.input_scaling, data);
    let (mut model, mut stepper) = Stepper::new(experiment, data, device)?;
    // The loss scale stays at its first value: a bench reads nothing back until its end.
    let precision = StepPrecision::new(experiment.precision, None);
    let batch_size = experiment.batch_size.min(data.train.len()).max(1);
    let per_epoch = data.train.len() / batch_size;
    // Only the Kiln style keeps the data set on the device; the naive loop never uploads it whole.
    let pipeline = match style {
        LoopStyle::Kiln => Some(InputPipeline::upload(experiment, data, &transform, device)?),
        LoopStyle::Naive => None,
    };

    let mut totals = DeviceTotals::zeros(device);
    // The naive loop's running loss sum and correct count, kept on the host as it keeps them.
    let mut naive_sums = (0.0f64, 0.0f64);
    let mut order_host = Vec::new();
    let mut order_device: Option<Tensor<1, Int>> = None;
    let mut window_ms = Vec::new();
    let mut peak_device_bytes: Option<u64> = None;
    let mut note_device_memory = |device: &Device| {
        if let Some(usage) = device.memory_pool_usage() {
            peak_device_bytes = Some(peak_device_bytes.unwrap_or(0).max(usage.bytes_reserved));
        }
    };
    // The timed loop keeps the CPU's workers awake as an epoch of `kiln train` does.
    let awake = stepper.threads.keep_awake();
    let started = Instant::now();
    let mut warmup_secs = 0.0;
    let mut window_started = started;
    for step in 0..=steps {
        let epoch = step / per_epoch.max(1);
        let in_epoch = step % per_epoch.max(1);
        if in_epoch == 0 || order_host.is_empty() {
            order_host = epoch_order(data.train.len(), experiment.seed, epoch);
            order_device = (style == LoopStyle::Kiln).then(|| {
                Tensor::<1, Int>::from_data(
                    TensorData::new(order_host.clone(), [order_host.len()]),
                    device,
                )
            });
        }
        let start = in_epoch * batch_size;
        let rows = batch_size;
        let (images, labels) = match (&pipeline, &order_device) {
            (Some(pipeline), Some(order)) => pipeline
                .train
                .batch(order.clone().slice(start..start + rows), &pipeline.plain)?,
            _ => {
                let (images, labels) =
                    naive_batch(data, &order_host[start..start + rows], &transform, device);
                (images.reshape([rows, shape[0], shape[1], shape[2]]), labels)
            }
        };
        let keep = |logits: Tensor<2>, loss: Tensor<1>, labels: Tensor<1, Int>| match style {
            LoopStyle::Kiln => {
                totals.add(logits, labels, loss);
                Ok(())
            }
            LoopStyle::Naive => {
                // The user's loop keeps the same two metrics on the host:
                // `running_loss += loss.item()` and
                // `correct += (outputs.argmax(1) == labels).sum().item()`, each a wait for the
                // device.
                let loss_value = block_on(read_scalar(loss))?;
                let predicted = logits.argmax(1).reshape([rows]);
                let correct = block_on(read_scalar(predicted.equal(labels).int().sum().float()))?;
                naive_sums.0 += loss_value * rows as f64;
                naive_sums.1 += correct;
                Ok(())
            }
        };
        let stepped = stepper.step(
            model,
            &precision,
            (images, labels),
            experiment.lr,
            keep,
            &|| Ok(()),
        )?;
        model = stepped.model;
        totals.add_overflow(stepped.overflowed);

        let window_end = step == 0 || step % WINDOW_STEPS == 0 || step == steps;
        if !window_end {
            continue;
        }
        // One sync closes the window: everything issued so far has run.
        device
            .sync()
            .map_err(|e| TrainError::Readback(format!("{e:?}")))?;
        note_device_memory(device);
        let now = Instant::now();
        if step == 0 {
            warmup_secs = (now - started).as_secs_f64();
        } else {
            let steps_in_window = if step % WINDOW_STEPS == 0 {
                WINDOW_STEPS
            } else {
                step % WINDOW_STEPS
            };
            window_ms.push((now - window_started).as_secs_f64() * 1e3 / steps_in_window as f64);
        }
        window_started = now;
    }
    let steady_secs = (Instant::now() - started).as_secs_f64() - warmup_secs;
    drop(awake);
    // The Kiln loop reads its sums a few times per second; once here keeps them honest work.
    let (loss_sum, correct) = match style {
        LoopStyle::Kiln => {
            let sums = block_on(totals.read())?;
            (sums.loss_sum, sums.correct)
        }
        LoopStyle::Naive => naive_sums,
    };
    let samples_trained = ((steps + 1) * batch_size) as f64;
    Ok(BenchReport {
        style,
        workload: experiment.name.clone(),
        device: target.name.clone(),
        precision: experiment.precision,
        batch_size,
        steps,
        warmup_secs,
        median_step_ms: percentile(&window_ms, 0.5),
        p90_step_ms: percentile(&window_ms, 0.9),
        samples_per_sec: (steps * batch_size) as f64 / steady_secs.max(1e-9),
        peak_rss_bytes: peak_rss_bytes(),
        peak_device_bytes,
        cpu_threads: stepper.threads.choice().cloned(),
        train_loss: loss_sum / samples_trained,
        train_accuracy: correct / samples_trained,
    })
}

/// The user loop's batch: every image converted on the host one at a time, as a `Dataset`'s
/// `__getitem__` with `ToTensor` does, collated, then uploaded.
fn naive_batch(
    data: &ImageDataset,
    indices: &[i32],
    transform: &kiln_shaders::PixelTransform,
    device: &Device,
) -> (Tensor<2>, Tensor<1, Int>) {
    let values = data.shape.pixels_per_image();
    let plane = data.shape.height * data.shape.width;
    let mut pixels = Vec::with_capacity(indices.len() * values);
    let mut labels = Vec::with_capacity(indices.len());
    for &index in indices {
        let index = usize::try_from(index).unwrap_or(0);
        let image = &data.train.images[index * values..(index + 1) * values];
        pixels.extend(transform.apply_reference(image, plane));
        labels.push(i32::from(data.train.labels[index]));
    }
    (
        Tensor::<2>::from_data(TensorData::new(pixels, [indices.len(), values]), device),
        Tensor::<1, Int>::from_data(TensorData::new(labels, [indices.len()]), device),
    )
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
        let experiment = crate::config::ExperimentDraft {
            model: "mlp:16".parse().unwrap(),
            batch_size: 20,
            ..crate::config::ExperimentDraft::default()
        }
        .validate()
        .unwrap();
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
}
