//! One source for the rules every plot follows, in the window, `kiln export` and `kiln compare`:
//! the charts and their series, the x axis, where an epoch sits on it, the run colours, and what
//! a legend names.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use crate::config::ExperimentDraft;
use crate::run_folder::{EpochRow, MetricsRow, RunHistory};

/// What the plots' horizontal axis measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum XAxis {
    /// Optimizer steps done in the whole run: compares runs step for step.
    #[default]
    Steps,
    /// Seconds since the run started: compares runs by how fast they get there.
    WallSecs,
    /// Epochs done, a readback at its epoch's fraction: compares runs of different batch sizes,
    /// and runs imported from other frameworks, which log per epoch only.
    Epochs,
}

/// An x axis name that is not `steps`, `wall` or `epochs`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not an x axis; use steps, wall or epochs")]
pub struct UnknownXAxis(pub String);

impl fmt::Display for XAxis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Steps => "steps",
            Self::WallSecs => "wall",
            Self::Epochs => "epochs",
        })
    }
}

impl FromStr for XAxis {
    type Err = UnknownXAxis;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "steps" | "step" => Ok(Self::Steps),
            "wall" | "wall-time" | "time" => Ok(Self::WallSecs),
            "epochs" | "epoch" => Ok(Self::Epochs),
            _ => Err(UnknownXAxis(text.to_owned())),
        }
    }
}

impl XAxis {
    /// The axis caption, with its unit.
    pub fn caption(self) -> &'static str {
        match self {
            Self::Steps => "step",
            Self::WallSecs => "wall time (s)",
            Self::Epochs => "epoch",
        }
    }

    /// Where the readbacks of `run` sit on this axis, worked out once per run.
    pub fn positions(self, run: &RunHistory) -> Positions {
        let mut epoch_steps = Vec::new();
        if self == Self::Epochs {
            // An epoch's last readback covers all of its steps.
            for row in &run.metrics {
                let index = row.epoch.max(1) - 1;
                if epoch_steps.len() <= index {
                    epoch_steps.resize(index + 1, 0);
                }
                epoch_steps[index] = epoch_steps[index].max(row.step);
            }
            // The epoch under way has not done all of its steps yet: it is as long as the one
            // before it, when there is one.
            let evaluated = run.epochs.last().map_or(0, |e| e.epoch);
            if let [.., before, last] = epoch_steps.as_mut_slice()
                && evaluated < run.metrics.last().map_or(0, |m| m.epoch)
            {
                *last = (*last).max(*before);
            }
        }
        Positions {
            axis: self,
            epoch_steps,
        }
    }
}

/// Where a run's readbacks sit on an axis ([`XAxis::positions`]): on the epochs axis, a readback
/// sits at its epoch's fraction done, which needs the epoch's count of steps.
#[derive(Debug, Clone)]
pub struct Positions {
    /// The axis.
    axis: XAxis,
    /// Steps of each 1-based epoch, at index epoch - 1; filled for the epochs axis only.
    epoch_steps: Vec<usize>,
}

impl Positions {
    /// Where `row` sits.
    pub fn of(&self, row: &MetricsRow) -> f64 {
        match self.axis {
            XAxis::Steps => row.global_step as f64,
            XAxis::WallSecs => row.wall_secs,
            XAxis::Epochs => {
                let steps = self
                    .epoch_steps
                    .get(row.epoch.max(1) - 1)
                    .copied()
                    .unwrap_or(0);
                let done = if steps == 0 {
                    1.0
                } else {
                    row.step as f64 / steps as f64
                };
                (row.epoch.max(1) - 1) as f64 + done.min(1.0)
            }
        }
    }
}

/// The last readback of 1-based `epoch`: where the loop was when it evaluated that epoch, so
/// where the epoch's test point sits on either axis. None when the run has no readback of it.
pub fn epoch_end(run: &RunHistory, epoch: usize) -> Option<&MetricsRow> {
    run.metrics.iter().rev().find(|m| m.epoch == epoch)
}

/// Where `row`'s evaluation sits on `x_axis` (see [`epoch_end`]); on the epochs axis, at its
/// epoch, readbacks or not (an imported run has none).
pub fn epoch_x(run: &RunHistory, row: &EpochRow, x_axis: XAxis) -> Option<f64> {
    match x_axis {
        XAxis::Epochs => Some(row.epoch as f64),
        _ => epoch_end(run, row.epoch).map(|m| x_axis.positions(run).of(m)),
    }
}

/// Run colours as RGB (Tableau 10), distinct in light and dark themes and in print; the n-th
/// plotted run takes the n-th, in the window and in exported images alike.
pub const PALETTE: [[u8; 3]; 10] = [
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [127, 127, 127],
    [188, 189, 34],
    [23, 190, 207],
];

/// The colour of the n-th plotted run.
pub fn run_rgb(index: usize) -> [u8; 3] {
    PALETTE[index % PALETTE.len()]
}

/// One of the four charts every plot view draws, in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chart {
    /// Training loss per readback, validation (or test) loss per epoch.
    Loss,
    /// Training accuracy per readback, validation (or test) accuracy per epoch, in percent.
    Accuracy,
    /// Samples per second of each readback window.
    Throughput,
    /// Milliseconds per step of each readback window.
    StepTime,
}

impl Chart {
    /// Every chart, in the order they are laid out (left to right, top to bottom).
    pub const ALL: [Chart; 4] = [Self::Loss, Self::Accuracy, Self::Throughput, Self::StepTime];

    /// The chart's title, with its unit.
    pub fn title(self) -> &'static str {
        match self {
            Self::Loss => "Loss",
            Self::Accuracy => "Accuracy (%)",
            Self::Throughput => "Throughput (samples/s)",
            Self::StepTime => "Step time (ms)",
        }
    }

    /// The y axis caption.
    pub fn y_caption(self) -> &'static str {
        match self {
            Self::Loss => "cross-entropy loss",
            Self::Accuracy => "accuracy (%)",
            Self::Throughput => "samples/s",
            Self::StepTime => "ms per step",
        }
    }

    /// A y range the chart always shows, when its values have natural bounds.
    pub fn y_fixed(self) -> Option<(f64, f64)> {
        (self == Self::Accuracy).then_some((0.0, 100.0))
    }

    /// The value a readback adds to the chart's training line.
    pub fn train_value(self, row: &MetricsRow) -> f64 {
        match self {
            Self::Loss => row.train_loss,
            Self::Accuracy => row.train_accuracy * 100.0,
            Self::Throughput => row.samples_per_sec,
            Self::StepTime => row.step_ms,
        }
    }

    /// The value an evaluated epoch adds to the chart's evaluation line (validation, or test
    /// in a run validated on test); none for charts without one or epochs not evaluated.
    pub fn eval_value(self, epoch: &EpochRow) -> Option<f64> {
        // Each figure alone: a log may hold the validation loss but not the accuracy.
        match self {
            Self::Loss => epoch.val_loss.or(epoch.test_loss),
            Self::Accuracy => epoch
                .val_accuracy
                .or(epoch.test_accuracy)
                .map(|a| a * 100.0),
            Self::Throughput | Self::StepTime => None,
        }
    }

    /// The training line's points of `run`, finite ones only. Loss and accuracy are each
    /// readback window's own mean, taken out of the epoch's running mean that `metrics.csv`
    /// keeps: a running mean lags behind the model and jumps at every epoch start.
    pub fn train_points(self, run: &RunHistory, x_axis: XAxis) -> Vec<(f64, f64)> {
        if run.metrics.is_empty() {
            return self.epoch_train_points(run, x_axis);
        }
        let positions = x_axis.positions(run);
        let of_window = matches!(self, Self::Loss | Self::Accuracy);
        let mut previous: Option<&MetricsRow> = None;
        finite(run.metrics.iter().map(|row| {
            let value = match previous {
                Some(before)
                    if of_window && before.epoch == row.epoch && before.step < row.step =>
                {
                    window_mean(
                        (self.train_value(before), before.step),
                        (self.train_value(row), row.step),
                    )
                }
                _ => self.train_value(row),
            };
            previous = Some(row);
            (positions.of(row), value)
        }))
    }

    /// The training line of a run without readbacks (one imported from a framework's log): one
    /// point per epoch from its mean figures, at the epoch's end. Only the epochs axis can place
    /// them; what the log does not hold (samples per second, step times) leaves no point.
    fn epoch_train_points(self, run: &RunHistory, x_axis: XAxis) -> Vec<(f64, f64)> {
        if x_axis != XAxis::Epochs {
            return Vec::new();
        }
        finite(run.epochs.iter().filter_map(|e| {
            let value = match self {
                Self::Loss => e.train_loss,
                Self::Accuracy => e.train_accuracy.map(|a| a * 100.0),
                Self::Throughput => e.samples_per_sec,
                Self::StepTime => None,
            }?;
            Some((e.epoch as f64, value))
        }))
    }

    /// The evaluation line's points of `run`, one per evaluated epoch at its last readback;
    /// empty for charts without one. [`RunHistory::validated_on`] names the split.
    pub fn eval_points(self, run: &RunHistory, x_axis: XAxis) -> Vec<(f64, f64)> {
        finite(
            run.epochs
                .iter()
                .filter_map(|e| Some((epoch_x(run, e, x_axis)?, self.eval_value(e)?))),
        )
    }

    /// Whether the chart has an evaluation line beside its training line.
    pub fn has_eval_line(self) -> bool {
        matches!(self, Self::Loss | Self::Accuracy)
    }

    /// The top of the chart's y scale when some of `values` would flatten the rest, else none
    /// (scale to every value). Only step times have such values: a run's first readback window
    /// holds its shader compilation and autotuning, seconds per step against milliseconds after,
    /// and scaled to it every later step sits on the axis. A value more than
    /// [`OFF_SCALE_FACTOR`] times the median is off the scale; the top is the largest of the rest.
    pub fn scale_top(self, values: &[f64]) -> Option<f64> {
        if self != Self::StepTime || values.len() < 3 {
            return None;
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        let limit = median * OFF_SCALE_FACTOR;
        let top = sorted.iter().copied().rfind(|&v| v <= limit)?;
        (median > 0.0 && sorted.last().is_some_and(|&max| max > limit)).then_some(top)
    }
}

/// How many times a chart's median a value may be before [`Chart::scale_top`] leaves it off the
/// scale: wide enough for a busy machine's slow windows, narrow enough for a warm-up.
pub const OFF_SCALE_FACTOR: f64 = 4.0;

/// The points of `lines` above `top`, as an off-scale marker shows them: their x, and the
/// largest value among them, which the marker names.
pub fn off_scale<'a>(
    lines: impl IntoIterator<Item = &'a [(f64, f64)]>,
    top: f64,
) -> (Vec<f64>, f64) {
    let above: Vec<(f64, f64)> = lines
        .into_iter()
        .flatten()
        .copied()
        .filter(|&(_, y)| y > top)
        .collect();
    let largest = above.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    (above.into_iter().map(|p| p.0).collect(), largest)
}

/// The name of the evaluation lines of `runs` in a legend: the split they were evaluated on.
pub fn eval_line_name(runs: &[&RunHistory]) -> &'static str {
    let mut splits = runs.iter().map(|r| r.validated_on().split_name());
    let first = splits.next().unwrap_or("validation");
    if splits.all(|s| s == first) {
        first
    } else {
        "validation or test"
    }
}

/// The mean of the steps between two running means of one epoch, each given with the steps it
/// covers. Steps weigh alike, which is exact but for an epoch's last, smaller batch.
fn window_mean((mean_before, steps_before): (f64, usize), (mean, steps): (f64, usize)) -> f64 {
    (mean * steps as f64 - mean_before * steps_before as f64) / (steps - steps_before) as f64
}

/// The points with both coordinates finite: a NaN loss must not break a chart.
fn finite(points: impl Iterator<Item = (f64, f64)>) -> Vec<(f64, f64)> {
    points
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect()
}

/// A run's settings as (name, value) pairs, in the order a legend names them.
pub(crate) type Settings = Vec<(&'static str, Option<String>)>;

/// The settings a legend may name: the settings table's rows in its order, then the specs'
/// parts; `None` where a setting does not apply to a run (momentum of Adam) or is not known
/// (device `auto`), so it never makes two runs look different.
pub(crate) fn describe(draft: &ExperimentDraft) -> Settings {
    use crate::config::OptimizerSpec;
    use crate::device::DeviceChoice;
    let (momentum, nesterov, epsilon, weight_decay) = match &draft.optimizer {
        OptimizerSpec::Sgd {
            momentum,
            nesterov,
            weight_decay,
        } => (
            Some(momentum.to_string()),
            nesterov.then(|| "on".to_owned()),
            None,
            weight_decay,
        ),
        OptimizerSpec::Adam {
            epsilon,
            weight_decay,
            ..
        }
        | OptimizerSpec::AdamW {
            epsilon,
            weight_decay,
            ..
        } => (None, None, Some(epsilon.to_string()), weight_decay),
    };
    let device = match &draft.device {
        DeviceChoice::Auto => None,
        other => Some(other.to_string()),
    };
    // Every row of the settings table names itself; the specs' parts are named here.
    let rows = crate::settings::rows()
        .iter()
        .filter_map(|row| row.legend_entry(draft))
        .map(|(word, value)| (word, Some(value)));
    let others =
        [
            ("optimizer", Some(draft.optimizer.name().to_owned())),
            ("momentum", momentum),
            ("nesterov", nesterov),
            ("schedule", Some(draft.schedule.to_string())),
            ("weight decay", Some(weight_decay.to_string())),
            ("model", Some(draft.model.to_string())),
            (
                "weights",
                Some(draft.weights.as_ref().map_or_else(
                    || "scratch".to_owned(),
                    |source| match source {
                        crate::weights::WeightsSource::ImageNet => source.to_string(),
                        // A legend names the file, not the folders it came from.
                        crate::weights::WeightsSource::File(path) => path.file_name().map_or_else(
                            || source.to_string(),
                            |n| n.to_string_lossy().into_owned(),
                        ),
                    },
                )),
            ),
            ("dataset", Some(draft.dataset.to_string())),
            ("epsilon", epsilon),
            ("device", device),
        ];
    rows.chain(others).collect()
}

/// One legend label per run naming what differs between them ("lr 0.01" vs "lr 0.1"); falls
/// back to the run name (and the folder name where names clash). One run → its name.
pub fn legend_labels(runs: &[&RunHistory]) -> Vec<String> {
    if runs.len() == 1 {
        return vec![runs[0].name.clone()];
    }
    let described: Vec<Option<Settings>> = runs
        .iter()
        .map(|r| r.config.as_ref().map(describe))
        .collect();
    let with_config: Vec<&Settings> = described.iter().flatten().collect();
    let field_count = with_config.first().map_or(0, |d| d.len());
    // A field differs when the runs that have it hold more than one value between them.
    let differing: Vec<usize> = if with_config.len() > 1 {
        (0..field_count)
            .filter(|&i| {
                let mut values: Vec<&String> =
                    with_config.iter().filter_map(|d| d[i].1.as_ref()).collect();
                values.sort();
                values.dedup();
                values.len() > 1
            })
            .collect()
    } else {
        Vec::new()
    };
    // (label, came from settings)
    let mut labels: Vec<(String, bool)> = runs
        .iter()
        .zip(&described)
        .map(|(run, d)| match d {
            Some(fields) if !differing.is_empty() => {
                let text = differing
                    .iter()
                    .filter_map(|&i| {
                        let (key, value) = &fields[i];
                        value.as_ref().map(|value| format!("{key} {value}"))
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                if text.is_empty() {
                    (run.name.clone(), false)
                } else {
                    (text, true)
                }
            }
            _ => (run.name.clone(), false),
        })
        .collect();
    let counts = |labels: &[(String, bool)]| {
        let mut counts: HashMap<String, usize> = HashMap::new();
        for (label, _) in labels {
            *counts.entry(label.clone()).or_default() += 1;
        }
        counts
    };
    let seen = counts(&labels);
    for (run, (label, from_settings)) in runs.iter().zip(labels.iter_mut()) {
        if seen.get(label.as_str()).copied().unwrap_or(0) > 1 {
            *label = if *from_settings {
                format!("{label} ({})", run.folder_name())
            } else {
                run.folder_name()
            };
        }
    }
    labels.into_iter().map(|(label, _)| label).collect()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn row(epoch: usize, global_step: usize, wall_secs: f64, loss: f64) -> MetricsRow {
        MetricsRow {
            wall_secs,
            epoch,
            step: global_step,
            global_step,
            samples_seen: global_step as u64 * 10,
            train_loss: loss,
            train_accuracy: 0.5,
            samples_per_sec: 100.0,
            step_ms: 1.0,
            data_ms: 0.1,
            compute_ms: 0.8,
            sync_ms: 0.1,
            lr: 0.01,
        }
    }

    #[test]
    fn a_warm_up_step_time_is_left_off_the_scale_and_steady_ones_are_not() {
        // A GPU run's first window: 2.4 s per step of shader compilation, then 40-odd ms.
        let warm = [2400.0, 41.0, 40.0, 43.0, 39.5, 42.0];
        assert_eq!(Chart::StepTime.scale_top(&warm), Some(43.0));
        let (xs, largest) = off_scale([&[(10.0, 2400.0), (20.0, 41.0)][..]], 43.0);
        assert_eq!((xs, largest), (vec![10.0], 2400.0));
        // A busy machine's slow windows (three times the median) stay on the scale.
        assert_eq!(Chart::StepTime.scale_top(&[40.0, 120.0, 41.0, 39.0]), None);
        // Too few windows to tell a warm-up from a trend; other charts scale to every value.
        assert_eq!(Chart::StepTime.scale_top(&[2400.0, 40.0]), None);
        assert_eq!(
            Chart::Throughput.scale_top(&[10.0, 5000.0, 5100.0, 5200.0]),
            None
        );
        assert_eq!(Chart::Loss.scale_top(&warm), None);
    }

    #[test]
    fn a_seed_band_is_mean_and_sample_std_per_epoch() {
        let run = |accuracy: f64| RunHistory {
            metrics: vec![row(1, 10, 1.0, 1.0), row(2, 20, 2.0, 1.0)],
            epochs: (1..=2)
                .map(|epoch| EpochRow {
                    epoch,
                    train_loss: Some(1.0),
                    train_accuracy: Some(0.5),
                    val_loss: None,
                    val_accuracy: None,
                    test_loss: Some(1.0),
                    test_accuracy: Some(accuracy),
                    epoch_secs: Some(1.0),
                    eval_secs: Some(0.1),
                    samples_per_sec: Some(100.0),
                })
                .collect(),
            ..RunHistory::default()
        };
        let (a, b) = (run(0.80), run(0.90));
        let band = crate::compare::seed_band(&[&a, &b], XAxis::Steps, |r| {
            r.test_accuracy.map(|a| a * 100.0)
        });
        assert_eq!(
            band.iter().map(|p| p.0).collect::<Vec<_>>(),
            vec![10.0, 20.0]
        );
        let std = 50f64.sqrt();
        let (_, low, high) = band[0];
        assert!((low - (85.0 - std)).abs() < 1e-9 && (high - (85.0 + std)).abs() < 1e-9);
    }

    #[test]
    fn the_training_line_shows_each_windows_own_mean_not_the_epochs_running_mean() {
        // Readbacks every 4 steps of the windows' means 3, 1 and 2; epoch 2 starts afresh.
        let mut rows = vec![
            row(1, 4, 0.1, 3.0),
            row(1, 8, 0.2, 2.0),
            row(1, 12, 0.3, 2.0),
        ];
        rows.push(MetricsRow {
            step: 4,
            ..row(2, 16, 0.4, 0.5)
        });
        for (r, accuracy) in rows.iter_mut().zip([0.25, 0.5, 0.5, 0.9]) {
            r.train_accuracy = accuracy;
        }
        let history = RunHistory {
            metrics: rows,
            ..RunHistory::default()
        };
        let values = |chart: Chart| -> Vec<f64> {
            let points = chart.train_points(&history, XAxis::Steps);
            points
                .iter()
                .map(|&(_, y)| (y * 1e9).round() / 1e9)
                .collect()
        };
        assert_eq!(values(Chart::Loss), [3.0, 1.0, 2.0, 0.5]);
        assert_eq!(values(Chart::Accuracy), [25.0, 75.0, 50.0, 90.0]);
        // Rates are per window already.
        assert_eq!(values(Chart::Throughput), [100.0; 4]);
    }

    #[test]
    fn evaluation_points_sit_at_the_last_readback_of_their_epoch() {
        let history = RunHistory {
            metrics: vec![
                row(1, 5, 0.5, 2.0),
                row(1, 10, 1.0, 1.0),
                row(2, 20, 2.0, f64::NAN),
            ],
            epochs: vec![EpochRow {
                epoch: 1,
                train_loss: Some(1.5),
                train_accuracy: Some(0.5),
                val_loss: None,
                val_accuracy: None,
                test_loss: Some(1.2),
                test_accuracy: Some(0.6),
                epoch_secs: Some(1.0),
                eval_secs: Some(0.1),
                samples_per_sec: Some(100.0),
            }],
            ..RunHistory::default()
        };
        assert_eq!(
            Chart::Loss.eval_points(&history, XAxis::Steps),
            vec![(10.0, 1.2)]
        );
        assert_eq!(
            Chart::Accuracy.eval_points(&history, XAxis::WallSecs),
            vec![(1.0, 60.0)]
        );
        // A NaN loss is left out rather than drawn as a spike or a gap that breaks the line.
        // Steps 6–10 brought the running mean from 2 to 1: their own mean was 0.
        assert_eq!(
            Chart::Loss.train_points(&history, XAxis::Steps),
            vec![(5.0, 2.0), (10.0, 0.0)]
        );
        assert!(
            Chart::Throughput
                .eval_points(&history, XAxis::Steps)
                .is_empty()
        );
    }

    #[test]
    fn on_the_epochs_axis_readbacks_sit_at_their_epochs_fraction_and_imported_runs_plot_too() {
        // Epoch 1 of 10 steps, read back at 5 and 10; epoch 2 under way, read back at step 5.
        let mut rows = vec![row(1, 5, 0.5, 2.0), row(1, 10, 1.0, 1.0)];
        rows.push(MetricsRow {
            step: 5,
            ..row(2, 15, 1.5, 1.0)
        });
        let epoch = |epoch: usize, loss: Option<f64>, val: Option<f64>| EpochRow {
            epoch,
            train_loss: loss,
            train_accuracy: None,
            val_loss: val,
            val_accuracy: None,
            test_loss: None,
            test_accuracy: None,
            epoch_secs: None,
            eval_secs: None,
            samples_per_sec: None,
        };
        let kiln = RunHistory {
            metrics: rows,
            epochs: vec![epoch(1, Some(1.5), Some(1.2))],
            ..RunHistory::default()
        };
        let xs: Vec<f64> = Chart::Loss
            .train_points(&kiln, XAxis::Epochs)
            .iter()
            .map(|p| p.0)
            .collect();
        assert_eq!(xs, [0.5, 1.0, 1.5]);
        assert_eq!(Chart::Loss.eval_points(&kiln, XAxis::Epochs), [(1.0, 1.2)]);

        // A Keras log: per-epoch figures only, the second epoch's training loss not logged.
        let imported = RunHistory {
            epochs: vec![epoch(1, Some(0.6), Some(0.5)), epoch(2, None, Some(0.4))],
            ..RunHistory::default()
        };
        assert_eq!(
            Chart::Loss.train_points(&imported, XAxis::Epochs),
            [(1.0, 0.6)]
        );
        assert_eq!(
            Chart::Loss.eval_points(&imported, XAxis::Epochs),
            [(1.0, 0.5), (2.0, 0.4)]
        );
        // Nothing to place it by on the steps axis, and no throughput to show: no points.
        assert!(Chart::Loss.train_points(&imported, XAxis::Steps).is_empty());
        assert!(Chart::Loss.eval_points(&imported, XAxis::Steps).is_empty());
        assert!(
            Chart::Throughput
                .train_points(&imported, XAxis::Epochs)
                .is_empty()
        );
        assert_eq!("epochs".parse::<XAxis>(), Ok(XAxis::Epochs));
    }

    fn history(name: &str, folder: &str, config: Option<ExperimentDraft>) -> RunHistory {
        RunHistory {
            path: PathBuf::from("runs").join(folder),
            name: name.to_owned(),
            config,
            ..RunHistory::default()
        }
    }

    fn draft(lr: f64, batch_size: usize) -> Option<ExperimentDraft> {
        Some(ExperimentDraft {
            lr,
            batch_size,
            ..ExperimentDraft::default()
        })
    }

    #[test]
    fn legend_labels_name_what_differs() {
        let a = history("a", "1-a", draft(0.01, 64));
        let b = history("b", "2-b", draft(0.1, 64));
        assert_eq!(legend_labels(&[&a, &b]), ["lr 0.01", "lr 0.1"]);

        let c = history("c", "3-c", draft(0.1, 32));
        assert_eq!(
            legend_labels(&[&a, &b, &c]),
            ["lr 0.01, batch 64", "lr 0.1, batch 64", "lr 0.1, batch 32"]
        );

        let mut sgd = draft(0.01, 64);
        if let Some(d) = &mut sgd {
            d.optimizer = crate::config::OptimizerSpec::Sgd {
                momentum: 0.9,
                nesterov: false,
                weight_decay: 0.0,
            };
        }
        let s = history("s", "4-s", sgd);
        assert_eq!(
            legend_labels(&[&a, &s]),
            ["optimizer adam", "optimizer sgd"]
        );

        // Momentum is named only between SGD runs, where it means something.
        let mut plain = sgd_draft(0.0);
        let heavy = sgd_draft(0.9);
        assert_eq!(
            legend_labels(&[
                &history("p", "5-p", plain.clone()),
                &history("h", "6-h", heavy)
            ]),
            ["momentum 0", "momentum 0.9"]
        );

        // `auto` is not a device: it never makes two runs look different.
        if let Some(d) = &mut plain {
            d.device = crate::device::DeviceChoice::Cpu;
            d.lr = 0.5;
        }
        let auto = sgd_draft(0.0);
        assert_eq!(
            legend_labels(&[&history("c", "7-c", plain), &history("u", "8-u", auto)]),
            ["lr 0.5", "lr 0.01"]
        );
    }

    fn sgd_draft(momentum: f64) -> Option<ExperimentDraft> {
        let mut d = draft(0.01, 64);
        if let Some(d) = &mut d {
            d.optimizer = crate::config::OptimizerSpec::Sgd {
                momentum,
                nesterov: false,
                weight_decay: 0.0,
            };
        }
        d
    }

    #[test]
    fn legend_labels_fall_back_to_names_then_folders() {
        let one = history("solo", "1-solo", draft(0.01, 64));
        assert_eq!(legend_labels(&[&one]), ["solo"]);
        assert!(legend_labels(&[]).is_empty());

        // Same settings: the names tell them apart.
        let a = history("a", "1-a", draft(0.01, 64));
        let b = history("b", "2-b", draft(0.01, 64));
        assert_eq!(legend_labels(&[&a, &b]), ["a", "b"]);

        // Same settings and names: the folders do.
        let b2 = history("a", "2-a", draft(0.01, 64));
        assert_eq!(legend_labels(&[&a, &b2]), ["1-a", "2-a"]);

        // No configs at all.
        let x = history("x", "1-x", None);
        let y = history("y", "2-y", None);
        assert_eq!(legend_labels(&[&x, &y]), ["x", "y"]);

        // Two identical settings among different ones get their folder added.
        let c = history("c", "3-c", draft(0.1, 64));
        assert_eq!(
            legend_labels(&[&a, &b2, &c]),
            ["lr 0.01 (1-a)", "lr 0.01 (2-a)", "lr 0.1"]
        );

        // A run without a config keeps its name next to runs that have one.
        assert_eq!(legend_labels(&[&a, &c, &x]), ["lr 0.01", "lr 0.1", "x"]);
    }
}
