//! Live and past runs on the same four plots: loss, accuracy, throughput and step time.

use egui::Color32;
use egui_plot::{FilledArea, Legend, Line, LineStyle, MarkerShape, Plot, PlotPoints, Points};
use kiln_core::compare::seed_band;
use kiln_core::plot::{Chart, XAxis, eval_line_name, run_rgb};
use kiln_core::run_folder::RunHistory;

/// The colour of the n-th run on the plots, from the palette every plot shares.
pub fn run_color(index: usize) -> Color32 {
    let [r, g, b] = run_rgb(index);
    Color32::from_rgb(r, g, b)
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
            for (i, chart) in Chart::ALL.into_iter().enumerate() {
                chart_ui(ui, chart, runs, bands, x_axis, [width, height]);
                if i % 2 == 1 {
                    ui.end_row();
                }
            }
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
        let link = egui::Id::unique("kiln-plots-x");
        Plot::new(chart.title())
            .width(width)
            .height(height)
            .legend(Legend::default().follow_insertion_order(true))
            .x_axis_label(x_axis.caption())
            .link_axis(link, [true, false])
            .link_cursor(link, [true, false])
            .show(ui, |plot_ui| {
                for band in bands.iter().filter(|_| chart.has_eval_line()) {
                    let points = seed_band(&band.runs, x_axis, |e| chart.eval_value(e));
                    let xs: Vec<f64> = points.iter().map(|p| p.0).collect();
                    let low: Vec<f64> = points.iter().map(|p| p.1).collect();
                    let high: Vec<f64> = points.iter().map(|p| p.2).collect();
                    if xs.len() >= 2 {
                        let name = format!(
                            "{} mean ± std over {} seeds",
                            eval_line_name(&band.runs),
                            band.runs.len()
                        );
                        plot_ui.add(
                            FilledArea::new(name, &xs, &low, &high)
                                .fill_color(band.color.gamma_multiply(0.25)),
                        );
                    }
                }
                for run in runs {
                    let history = run.history;
                    let as_plot = |points: Vec<(f64, f64)>| -> Vec<[f64; 2]> {
                        points.into_iter().map(|(x, y)| [x, y]).collect()
                    };
                    let train = as_plot(chart.train_points(history, x_axis));
                    let test = as_plot(chart.eval_points(history, x_axis));
                    let train_name = match chart.has_eval_line() {
                        true => format!("{} train", run.label),
                        false => run.label.to_owned(),
                    };
                    plot_ui.line(
                        Line::new(train_name, PlotPoints::from(train))
                            .color(run.color)
                            .width(1.0),
                    );
                    if !test.is_empty() {
                        let name = format!("{} {}", run.label, history.validated_on().split_name());
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
