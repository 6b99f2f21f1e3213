//! The learning-rate range test (Smith, 2017), as fastai's `lr_find` and Lightning's
//! `Tuner.lr_find` run it: a fresh model trained for a few hundred steps while the rate grows
//! exponentially from tiny to huge, the loss smoothed, the test stopped once the loss diverges;
//! the suggestion is the rate where the smoothed loss falls fastest (Lightning's rule).
//!
//! The test reads the loss back after every step: that is its measurement, not a training
//! loop's habit, and it runs apart from any run, which it leaves untouched.

mod chart;

use burn::tensor::{Int, Tensor, TensorData};
use serde::Serialize;

use super::device_reads::read_scalar;
use super::pipeline::{InputPipeline, epoch_order, pixel_transform};
use super::precision::StepPrecision;
use super::step::Stepper;
use super::{TrainDevice, TrainError};
use crate::config::Experiment;
use crate::data::ImageDataset;
use crate::executor::block_on;

/// How the range test runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LrFindOptions {
    /// The first rate tried.
    pub min_lr: f64,
    /// The last rate, reached at the last step unless the loss diverged before.
    pub max_lr: f64,
    /// Steps, each at the next rate.
    pub steps: usize,
    /// The weight of the past in the loss's moving average (fastai's 0.98).
    pub smoothing: f64,
    /// The test stops once the smoothed loss exceeds its lowest by this factor (4, as both).
    pub diverge_factor: f64,
}

impl Default for LrFindOptions {
    fn default() -> Self {
        Self {
            min_lr: 1e-7,
            max_lr: 10.0,
            steps: 100,
            smoothing: 0.98,
            diverge_factor: 4.0,
        }
    }
}

impl LrFindOptions {
    /// The options, or a sentence on what to change.
    pub fn check(&self) -> Result<(), String> {
        if !(self.min_lr > 0.0 && self.min_lr.is_finite()) {
            return Err(format!("--min-lr {} must be above 0", self.min_lr));
        }
        if !(self.max_lr > self.min_lr && self.max_lr.is_finite()) {
            return Err(format!(
                "--max-lr {} must be above --min-lr {}",
                self.max_lr, self.min_lr
            ));
        }
        if !(10..=100_000).contains(&self.steps) {
            return Err(format!(
                "--steps {} must be from 10 to 100000; the test needs enough steps to see the loss fall",
                self.steps
            ));
        }
        Ok(())
    }

    /// The rate of step `i` (0-based): `min_lr` growing by a constant ratio to `max_lr`.
    pub fn rate_at(&self, i: usize) -> f64 {
        let t = i as f64 / (self.steps.max(2) - 1) as f64;
        self.min_lr * (self.max_lr / self.min_lr).powf(t)
    }
}

/// One step of the test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LrFindPoint {
    /// The rate the step trained at.
    pub lr: f64,
    /// The step's batch loss.
    pub loss: f64,
    /// The loss's bias-corrected exponential moving average up to this step.
    pub smoothed_loss: f64,
}

/// What the test found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LrFindReport {
    /// The workload's name.
    pub workload: String,
    /// Adapter or CPU name.
    pub device: String,
    /// Every step, in order.
    pub points: Vec<LrFindPoint>,
    /// Where the smoothed loss fell fastest, if the test saw it fall.
    pub suggested_lr: Option<f64>,
    /// The rate of the lowest smoothed loss, divided by ten (fastai's older `lr_min`).
    pub min_loss_lr_tenth: Option<f64>,
    /// The test stopped because the loss diverged (the usual end).
    pub diverged: bool,
}

/// Steps left out at the start when looking for the steepest fall: the average is young there
/// (Lightning's `skip_begin`).
const SKIP_BEGIN: usize = 10;

impl LrFindReport {
    /// The rate where the smoothed loss falls fastest against the step (the rate's log) on its
    /// way down to its lowest: the smallest central difference past the first steps (Lightning's
    /// rule), looked for before the lowest point, since a loss that blew up falls again as it
    /// settles at chance, and that fall is no rate to train at.
    pub fn steepest(points: &[LrFindPoint]) -> Option<f64> {
        let lowest = points
            .iter()
            .enumerate()
            .filter(|(_, p)| p.smoothed_loss.is_finite())
            .min_by(|a, b| a.1.smoothed_loss.total_cmp(&b.1.smoothed_loss))?
            .0;
        let loss: Vec<f64> = points.iter().map(|p| p.smoothed_loss).collect();
        (SKIP_BEGIN..lowest.min(points.len().saturating_sub(1)))
            .map(|i| (i, (loss[i + 1] - loss[i - 1]) / 2.0))
            .filter(|(_, slope)| slope.is_finite() && *slope < 0.0)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| points[i].lr)
    }

    /// The report's lines: what was tried, where it stopped, and the rate to take.
    pub fn describe(&self) -> String {
        let first = self.points.first().map_or(0.0, |p| p.lr);
        let last = self.points.last().map_or(0.0, |p| p.lr);
        let ended = if self.diverged {
            "the loss diverged there"
        } else {
            "the last rate asked for"
        };
        let mut text = format!(
            "{}: {} steps on {}, the rate from {first:.1e} to {last:.1e} ({ended})\n",
            self.workload,
            self.points.len(),
            self.device
        );
        match self.suggested_lr {
            Some(lr) => text.push_str(&format!(
                "suggested lr: {lr:.2e} (where the smoothed loss fell fastest){}\n",
                self.min_loss_lr_tenth
                    .map(|t| format!("; the lowest loss's rate / 10: {t:.2e}"))
                    .unwrap_or_default()
            )),
            None => text.push_str(
                "no suggestion: the loss never fell; try a larger --max-lr or more --steps\n",
            ),
        }
        text
    }
}

/// Runs the range test on a fresh model of `experiment` over `data`'s training split.
pub fn lr_find(
    experiment: &Experiment,
    data: &ImageDataset,
    target: &TrainDevice,
    options: &LrFindOptions,
) -> Result<LrFindReport, TrainError> {
    let device = &target.device;
    device.seed(experiment.seed);
    let transform = pixel_transform(experiment.input_scaling, data);
    let pipeline = InputPipeline::upload(experiment, data, &transform, device)?;
    let (mut model, mut stepper) = Stepper::new(experiment, data, device)?;
    let precision = StepPrecision::new(experiment.precision, None);
    let batch_size = experiment.batch_size.min(data.train.len()).max(1);
    let per_epoch = (data.train.len() / batch_size).max(1);
    let mut order: Option<Tensor<1, Int>> = None;
    let mut points: Vec<LrFindPoint> = Vec::with_capacity(options.steps);
    let (mut average, mut lowest) = (0.0f64, f64::INFINITY);
    let mut diverged = false;
    for i in 0..options.steps {
        let (epoch, in_epoch) = (i / per_epoch, i % per_epoch);
        if in_epoch == 0 || order.is_none() {
            let host = epoch_order(data.train.len(), experiment.seed, epoch);
            order = Some(Tensor::from_data(
                TensorData::new(host.clone(), [host.len()]),
                device,
            ));
        }
        let Some(order) = order.as_ref() else { break };
        let start = in_epoch * batch_size;
        let batch = pipeline.train.batch(
            order.clone().slice(start..start + batch_size),
            &pipeline.plain,
        )?;
        let lr = options.rate_at(i);
        let mut loss_value = f64::NAN;
        let keep = |_: Tensor<2>, loss: Tensor<1>, _: super::targets::Targets| {
            loss_value = block_on(read_scalar(loss))?;
            Ok(())
        };
        model = stepper
            .step(model, &precision, batch, lr, keep, &|| Ok(()))?
            .model;
        average = options.smoothing * average + (1.0 - options.smoothing) * loss_value;
        let smoothed_loss = average / (1.0 - options.smoothing.powi(i as i32 + 1));
        points.push(LrFindPoint {
            lr,
            loss: loss_value,
            smoothed_loss,
        });
        if !smoothed_loss.is_finite() || (i > 0 && smoothed_loss > options.diverge_factor * lowest)
        {
            diverged = true;
            break;
        }
        lowest = lowest.min(smoothed_loss);
    }
    let lowest_at = points
        .iter()
        .filter(|p| p.smoothed_loss.is_finite())
        .min_by(|a, b| a.smoothed_loss.total_cmp(&b.smoothed_loss));
    Ok(LrFindReport {
        workload: experiment.name.clone(),
        device: target.name.clone(),
        suggested_lr: LrFindReport::steepest(&points),
        min_loss_lr_tenth: lowest_at.map(|p| p.lr / 10.0),
        points,
        diverged,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_grow_by_a_constant_ratio_from_the_first_to_the_last() {
        let options = LrFindOptions {
            min_lr: 1e-6,
            max_lr: 1.0,
            steps: 7,
            ..LrFindOptions::default()
        };
        let rates: Vec<f64> = (0..7).map(|i| options.rate_at(i)).collect();
        for (rate, expected) in rates.iter().zip([1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0]) {
            assert!(
                (rate / expected - 1.0).abs() < 1e-9,
                "{rate} against {expected}"
            );
        }
    }

    #[test]
    fn the_suggestion_is_where_the_smoothed_loss_falls_fastest_past_the_first_steps() {
        // A loss flat at first, falling fastest at step 30, flat, rising from step 50, then
        // falling faster still (a blown-up loss settling): the suggestion is before the lowest.
        let points: Vec<LrFindPoint> = (0..60)
            .map(|i| {
                let x = i as f64;
                let loss =
                    2.0 - 1.5 / (1.0 + (-(x - 30.0) / 3.0).exp()) + (x - 50.0).max(0.0) * 0.2;
                LrFindPoint {
                    lr: 10f64.powf(-6.0 + x / 10.0),
                    loss,
                    smoothed_loss: loss,
                }
            })
            .collect();
        let lr = LrFindReport::steepest(&points).unwrap();
        assert!((lr / 1e-3 - 1.0).abs() < 1e-9, "step 30's rate, not {lr}");
        // A loss that only rises has no suggestion.
        let rising: Vec<LrFindPoint> = points
            .iter()
            .enumerate()
            .map(|(i, p)| LrFindPoint {
                smoothed_loss: i as f64,
                ..*p
            })
            .collect();
        assert_eq!(LrFindReport::steepest(&rising), None);
    }

    #[test]
    fn options_that_cannot_make_a_test_are_refused_in_a_sentence() {
        let with = |min_lr: f64, max_lr: f64, steps: usize| LrFindOptions {
            min_lr,
            max_lr,
            steps,
            ..LrFindOptions::default()
        };
        assert!(with(0.0, 1.0, 100).check().unwrap_err().contains("above 0"));
        assert!(
            with(1e-3, 1e-4, 100)
                .check()
                .unwrap_err()
                .contains("above --min-lr")
        );
        assert!(
            with(1e-7, 1.0, 5)
                .check()
                .unwrap_err()
                .contains("from 10 to 100000")
        );
        assert_eq!(LrFindOptions::default().check(), Ok(()));
    }

    #[test]
    fn a_range_test_on_a_tiny_workload_sees_the_loss_fall_then_diverge_and_suggests_a_rate_between()
    {
        let data = crate::train::tests::tiny_dataset();
        let experiment = crate::train::tests::tiny_mlp();
        let options = LrFindOptions {
            min_lr: 1e-5,
            max_lr: 100.0,
            steps: 80,
            ..LrFindOptions::default()
        };
        let report = lr_find(&experiment, &data, &crate::train::tests::cpu(), &options).unwrap();
        assert!(report.points.len() <= 80 && report.points.len() > SKIP_BEGIN);
        assert_eq!(
            report.diverged,
            report.points.len() < 80,
            "only divergence stops it early"
        );
        assert!(report.points.windows(2).all(|w| w[1].lr > w[0].lr));
        let suggested = report.suggested_lr.expect("the loss fell on its way");
        let lowest = report.min_loss_lr_tenth.unwrap() * 10.0;
        assert!(
            options.min_lr < suggested && suggested < lowest,
            "{suggested} lies before the lowest loss's rate {lowest}"
        );
        assert!(
            report.describe().contains("suggested lr: "),
            "{}",
            report.describe()
        );
        let svg = report.chart_svg(800, 480).unwrap();
        assert!(svg.contains("suggested ") && svg.contains("learning rate (log scale)"));
        assert!(report.chart_png(800, 480).unwrap().starts_with(b"\x89PNG"));
    }
}
