//! Live and past runs on the same four plots: loss, accuracy, throughput and step time.

use egui::Color32;
use egui_plot::{FilledArea, Legend, Line, LineStyle, MarkerShape, Plot, PlotPoints, Points};
use kiln_core::compare::seed_band;
use kiln_core::export::XAxis;
use kiln_core::history::{EpochRow, MetricsRow, RunHistory};

/// Run colours, distinct in both themes; the n-th overlaid run takes the n-th.
const PALETTE: [Color32; 8] = [
    Color32::from_rgb(31, 119, 180),
    Color32::from_rgb(255, 127, 14),
    Color32::from_rgb(44, 160, 44),
    Color32::from_rgb(214, 39, 40),
    Color32::from_rgb(148, 103, 189),
    Color32::from_rgb(140, 86, 75),
    Color32::from_rgb(227, 119, 194),
    Color32::from_rgb(23, 190, 207),
];

/// The colour of the n-th run on the plots.
pub fn run_color(index: usize) -> Color32 {
    PALETTE[index % PALETTE.len()]
}

/// One run to draw and the legend text that tells it apart from the others.
#[derive(Debug, Clone, Copy)]
pub struct PlotRun<'a> {
    /// The run's rows.
    pub history: &'a RunHistory,
    /// Legend label.
    pub label: &'a str,
    /// Line colour.
    pub color: Color32,
}

/// Runs that differ only in their seed, drawn as one band: mean ± std of their test curves, so a
/// gap between settings can be told from seed noise.
#[derive(Debug, Clone)]
pub struct SeedBand<'a> {
    /// The runs of the group.
    pub runs: Vec<&'a RunHistory>,
    /// The band's colour (that of the group's first run).
    pub color: Color32,
}

/// Pairs each run with its legend label and the colour of its place in the list.
pub fn plot_runs<'a>(histories: &[&'a RunHistory], labels: &'a [String]) -> Vec<PlotRun<'a>> {
    histories
        .iter()
        .zip(labels)
        .enumerate()
        .map(|(i, (history, label))| PlotRun {
            history,
            label,
            color: run_color(i),
        })
        .collect()
}

fn metrics_x(row: &MetricsRow, x_axis: XAxis) -> f64 {
    match x_axis {
        XAxis::Steps => row.global_step as f64,
        XAxis::WallSecs => row.wall_secs,
    }
}

/// Where an epoch's evaluation sits on the x axis: at the last readback of that epoch, the same
/// rule the exported images use.
fn epoch_x(history: &RunHistory, row: &EpochRow, x_axis: XAxis) -> Option<f64> {
    history
        .metrics
        .iter()
        .rev()
        .find(|m| m.epoch == row.epoch)
        .map(|m| metrics_x(m, x_axis))
}

fn metric_points(
    history: &RunHistory,
    x_axis: XAxis,
    value: impl Fn(&MetricsRow) -> f64,
) -> Vec<[f64; 2]> {
    history
        .metrics
        .iter()
        .map(|row| [metrics_x(row, x_axis), value(row)])
        .filter(|[x, y]| x.is_finite() && y.is_finite())
        .collect()
}

fn epoch_points(
    history: &RunHistory,
    x_axis: XAxis,
    value: impl Fn(&EpochRow) -> f64,
) -> Vec<[f64; 2]> {
    history
        .epochs
        .iter()
        .filter_map(|row| Some([epoch_x(history, row, x_axis)?, value(row)]))
        .filter(|[x, y]| x.is_finite() && y.is_finite())
        .collect()
}

/// Which series a plot shows.
#[derive(Debug, Clone, Copy)]
enum Chart {
    Loss,
    Accuracy,
    Throughput,
    StepTime,
}

impl Chart {
    fn title(self) -> &'static str {
        match self {
            Self::Loss => "Loss",
            Self::Accuracy => "Accuracy (%)",
            Self::Throughput => "Throughput (samples/s)",
            Self::StepTime => "Step time (ms)",
        }
    }
}

/// The four plots in a 2×2 grid filling the space given; x axes are linked so zooming one
/// zooms all.
pub fn plots_ui(ui: &mut egui::Ui, runs: &[PlotRun<'_>], bands: &[SeedBand<'_>], x_axis: XAxis) {
    let spacing = 8.0;
    let available = ui.available_size();
    let width = ((available.x - spacing) / 2.0).max(120.0);
    let height = ((available.y - spacing) / 2.0 - 20.0).max(100.0);
    egui::Grid::new("plots")
        .num_columns(2)
        .spacing([spacing, spacing])
        .show(ui, |ui| {
            chart_ui(ui, Chart::Loss, runs, bands, x_axis, [width, height]);
            chart_ui(ui, Chart::Accuracy, runs, bands, x_axis, [width, height]);
            ui.end_row();
            chart_ui(ui, Chart::Throughput, runs, bands, x_axis, [width, height]);
            chart_ui(ui, Chart::StepTime, runs, bands, x_axis, [width, height]);
            ui.end_row();
        });
}

fn chart_ui(
    ui: &mut egui::Ui,
    chart: Chart,
    runs: &[PlotRun<'_>],
    bands: &[SeedBand<'_>],
    x_axis: XAxis,
    [width, height]: [f32; 2],
) {
    ui.vertical(|ui| {
        ui.strong(chart.title());
        let x_label = match x_axis {
            XAxis::Steps => "step",
            XAxis::WallSecs => "wall time (s)",
        };
        let link = egui::Id::unique("kiln-plots-x");
        Plot::new(chart.title())
            .width(width)
            .height(height)
            .legend(Legend::default().follow_insertion_order(true))
            .x_axis_label(x_label)
            .link_axis(link, [true, false])
            .link_cursor(link, [true, false])
            .show(ui, |plot_ui| {
                for band in bands {
                    let points = match chart {
                        Chart::Loss => seed_band(&band.runs, x_axis, |r| r.test_loss),
                        Chart::Accuracy => {
                            seed_band(&band.runs, x_axis, |r| r.test_accuracy * 100.0)
                        }
                        Chart::Throughput | Chart::StepTime => continue,
                    };
                    let xs: Vec<f64> = points.iter().map(|p| p.0).collect();
                    let low: Vec<f64> = points.iter().map(|p| p.1).collect();
                    let high: Vec<f64> = points.iter().map(|p| p.2).collect();
                    if xs.len() >= 2 {
                        let name = format!("test mean ± std over {} seeds", band.runs.len());
                        plot_ui.add(
                            FilledArea::new(name, &xs, &low, &high)
                                .fill_color(band.color.gamma_multiply(0.25)),
                        );
                    }
                }
                for run in runs {
                    let history = run.history;
                    let (train, test): (Vec<[f64; 2]>, Vec<[f64; 2]>) = match chart {
                        Chart::Loss => (
                            metric_points(history, x_axis, |r| r.train_loss),
                            epoch_points(history, x_axis, |r| r.test_loss),
                        ),
                        Chart::Accuracy => (
                            metric_points(history, x_axis, |r| r.train_accuracy * 100.0),
                            epoch_points(history, x_axis, |r| r.test_accuracy * 100.0),
                        ),
                        Chart::Throughput => (
                            metric_points(history, x_axis, |r| r.samples_per_sec),
                            Vec::new(),
                        ),
                        Chart::StepTime => {
                            (metric_points(history, x_axis, |r| r.step_ms), Vec::new())
                        }
                    };
                    let train_name = match chart {
                        Chart::Loss | Chart::Accuracy => format!("{} train", run.label),
                        Chart::Throughput | Chart::StepTime => run.label.to_owned(),
                    };
                    plot_ui.line(
                        Line::new(train_name, PlotPoints::from(train))
                            .color(run.color)
                            .width(1.0),
                    );
                    if !test.is_empty() {
                        let name = format!("{} test", run.label);
                        plot_ui.line(
                            Line::new(name.clone(), PlotPoints::from(test.clone()))
                                .color(run.color)
                                .style(LineStyle::dashed_loose())
                                .width(1.0),
                        );
                        plot_ui.points(
                            Points::new(name, PlotPoints::from(test))
                                .color(run.color)
                                .shape(MarkerShape::Circle)
                                .radius(3.0)
                                .filled(true),
                        );
                    }
                }
            });
    });
}

#[cfg(test)]
mod tests {
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
    fn a_seed_band_is_mean_and_sample_std_per_epoch() {
        let run = |accuracy: f64| RunHistory {
            metrics: vec![row(1, 10, 1.0, 1.0), row(2, 20, 2.0, 1.0)],
            epochs: (1..=2)
                .map(|epoch| EpochRow {
                    epoch,
                    train_loss: 1.0,
                    train_accuracy: 0.5,
                    test_loss: 1.0,
                    test_accuracy: accuracy,
                    epoch_secs: 1.0,
                    eval_secs: 0.1,
                    samples_per_sec: 100.0,
                })
                .collect(),
            ..RunHistory::default()
        };
        let (a, b) = (run(0.80), run(0.90));
        let band = seed_band(&[&a, &b], XAxis::Steps, |r| r.test_accuracy * 100.0);
        assert_eq!(
            band.iter().map(|p| p.0).collect::<Vec<_>>(),
            vec![10.0, 20.0]
        );
        let std = 50f64.sqrt();
        let (_, low, high) = band[0];
        assert!((low - (85.0 - std)).abs() < 1e-9 && (high - (85.0 + std)).abs() < 1e-9);
    }

    #[test]
    fn test_points_sit_at_the_last_readback_of_their_epoch() {
        let history = RunHistory {
            metrics: vec![
                row(1, 5, 0.5, 2.0),
                row(1, 10, 1.0, 1.0),
                row(2, 20, 2.0, f64::NAN),
            ],
            epochs: vec![EpochRow {
                epoch: 1,
                train_loss: 1.5,
                train_accuracy: 0.5,
                test_loss: 1.2,
                test_accuracy: 0.6,
                epoch_secs: 1.0,
                eval_secs: 0.1,
                samples_per_sec: 100.0,
            }],
            ..RunHistory::default()
        };
        assert_eq!(
            epoch_points(&history, XAxis::Steps, |r| r.test_loss),
            vec![[10.0, 1.2]]
        );
        assert_eq!(
            epoch_points(&history, XAxis::WallSecs, |r| r.test_accuracy),
            vec![[1.0, 0.6]]
        );
        // A NaN loss is left out rather than drawn as a spike or a gap that breaks the line.
        assert_eq!(
            metric_points(&history, XAxis::Steps, |r| r.train_loss),
            vec![[5.0, 2.0], [10.0, 1.0]]
        );
    }
}
