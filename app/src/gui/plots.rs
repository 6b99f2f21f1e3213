//! Live and past runs on the same four plots: loss, accuracy, throughput and step time.

use egui::Color32;
use egui_plot::{
    FilledArea, Line, LineStyle, MarkerShape, Plot, PlotPoints, Points, VLine, uniform_grid_spacer,
};
use kiln_core::compare::{Parting, seed_band};
use kiln_core::plot::{Chart, XAxis, epoch_x, eval_line_name, off_scale, run_rgb};
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

/// Grid steps for an axis whose thinnest lines may be no closer than `base_step` (what
/// egui_plot passes: 8 points in data units). The labelled step is the smallest of 1, 2 or 5
/// times a power of ten at least ten times that (80 points, where x labels are fully drawn),
/// and the thinner steps divide it, so no label falls between two others. egui_plot's default
/// steps by powers of ten alone: an axis of 845 steps had lines every 100, too close for labels,
/// and the next step (1000) off the axis, so it was labelled "0" and nothing else.
fn nice_steps(base_step: f64) -> [f64; 3] {
    if !(base_step.is_finite() && base_step > 0.0) {
        return [0.1, 0.5, 1.0];
    }
    let wanted = 10.0 * base_step;
    let power = 10f64.powf(wanted.log10().floor());
    let (mantissa, labelled) = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| (m, m * power))
        .find(|&(_, step)| step >= wanted * (1.0 - 1e-9))
        .unwrap_or((10.0, 10.0 * power));
    let middle = if mantissa == 5.0 {
        labelled / 5.0
    } else {
        labelled / 2.0
    };
    [labelled / 10.0, middle, labelled]
}

/// A tick's text with as many decimals as its step needs: egui_plot's default rounds the
/// decimals of a step of 0.5 to none and labels 1.5 as "2".
fn tick_label(value: f64, step: f64) -> String {
    let decimals = (-step.log10()).ceil().max(0.0) as usize;
    egui::emath::format_with_decimals_in_range(value, decimals..=decimals)
}

/// What a legend swatch draws: a run's line, the dashed evaluation line with its epoch dot, a
/// seed band, or the off-the-scale mark.
#[derive(Debug, Clone, Copy)]
enum Swatch {
    Line(Color32),
    Dashed(Color32),
    Band(Color32),
    OffScale(Color32),
}

/// A legend's small picture of a line, painted rather than written: the fonts have no box
/// drawing characters.
fn swatch_ui(ui: &mut egui::Ui, swatch: Swatch) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(22.0, 12.0), egui::Sense::hover());
    let painter = ui.painter();
    let (left, right) = (rect.left_center(), rect.right_center());
    match swatch {
        Swatch::Line(color) => {
            painter.line_segment([left, right], egui::Stroke::new(2.0, color));
        }
        Swatch::Dashed(color) => {
            painter.extend(egui::Shape::dashed_line(
                &[left, right],
                egui::Stroke::new(1.5, color),
                4.0,
                3.0,
            ));
            painter.circle_filled(rect.center(), 3.0, color);
        }
        Swatch::Band(color) => {
            painter.rect_filled(
                rect.shrink2(egui::vec2(0.0, 2.0)),
                1.0,
                color.gamma_multiply(0.4),
            );
        }
        Swatch::OffScale(color) => {
            let c = rect.center();
            painter.add(egui::Shape::convex_polygon(
                vec![
                    c + egui::vec2(0.0, -5.0),
                    c + egui::vec2(5.0, 4.0),
                    c + egui::vec2(-5.0, 4.0),
                ],
                color,
                egui::Stroke::NONE,
            ));
        }
    }
}

/// The legend of every chart at once, above them: each run's colour and label, each seed band,
/// and what the solid and dashed lines are. Outside the plots, so it never covers a line, and
/// once, since every chart draws the same runs in the same colours.
pub fn legend_ui(ui: &mut egui::Ui, runs: &[PlotRun<'_>], bands: &[SeedBand<'_>]) {
    if runs.is_empty() && bands.is_empty() {
        return;
    }
    // Three lines at most, scrolled past them: a sweep's twenty runs must not take the charts'
    // height.
    let line_height = ui.text_style_height(&egui::TextStyle::Body) + ui.spacing().item_spacing.y;
    egui::ScrollArea::vertical()
        .id_salt("plots-legend")
        .max_height(3.0 * line_height)
        .show(ui, |ui| legend_entries_ui(ui, runs, bands));
}

/// A line under the legend when a plotted run holds figures per epoch only (imported from
/// another framework's log) and the x axis cannot place them: say so rather than show nothing.
pub fn per_epoch_note_ui(ui: &mut egui::Ui, runs: &[PlotRun<'_>], x_axis: XAxis) {
    if x_axis == XAxis::Epochs {
        return;
    }
    let names: Vec<String> = runs
        .iter()
        .filter(|run| run.history.metrics.is_empty() && !run.history.epochs.is_empty())
        .map(|run| run.label.to_string())
        .collect();
    if !names.is_empty() {
        ui.small(format!(
            "{} holds figures per epoch only: choose the epochs x axis to see it.",
            names.join(", ")
        ));
    }
}

fn legend_entries_ui(ui: &mut egui::Ui, runs: &[PlotRun<'_>], bands: &[SeedBand<'_>]) {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 4.0;
        for run in runs {
            swatch_ui(ui, Swatch::Line(run.color));
            ui.label(run.label);
            ui.add_space(8.0);
        }
        for band in bands {
            swatch_ui(ui, Swatch::Band(band.color));
            ui.label(format!(
                "{} mean ± std over {} seeds",
                eval_line_name(&band.runs),
                band.runs.len()
            ));
            ui.add_space(8.0);
        }
        let histories: Vec<&RunHistory> = runs.iter().map(|run| run.history).collect();
        let key = ui.visuals().strong_text_color();
        swatch_ui(ui, Swatch::Line(key));
        ui.label("training")
            .on_hover_text("Loss and accuracy: the mean over each readback window of steps.");
        ui.add_space(8.0);
        swatch_ui(ui, Swatch::Dashed(key));
        ui.label(eval_line_name(&histories))
            .on_hover_text("Loss and accuracy evaluated at the end of each epoch.");
    });
}

/// What [`off_scale`] found of one run's training line: the x of each point above the scale,
/// and the largest of their values.
type OffScale = (Vec<f64>, f64);

/// The sentence above the step time chart for a run with readbacks off the scale: said there,
/// where it covers nothing.
fn off_scale_note(run: &PlotRun<'_>, (xs, largest): &OffScale) -> String {
    let count = match xs.len() {
        1 => "1 readback".to_owned(),
        n => format!("{n} readbacks"),
    };
    format!(
        "{}: {count} off the scale, up to {largest:.0} ms",
        run.label
    )
}

/// One chart of the runs filling the space given (its panel's tab carries the title, and
/// [`legend_ui`] above the charts names the lines); the x axes of every chart are linked, so
/// zooming one zooms all.
pub fn chart_ui(
    ui: &mut egui::Ui,
    chart: Chart,
    runs: &[PlotRun<'_>],
    bands: &[SeedBand<'_>],
    partings: &[Parting],
    x_axis: XAxis,
) {
    let parting_marks = parting_marks(chart, runs, partings, x_axis);
    // Each run's points before the plot is built: a chart with none yet (no runs, or a run
    // that has not read back its first window) gets its own range, not egui_plot's −0.5…0.5.
    let points: Vec<_> = runs
        .iter()
        .map(|run| {
            let train = chart.train_points(run.history, x_axis);
            (run, train, chart.eval_points(run.history, x_axis))
        })
        .collect();
    let values: Vec<f64> = points
        .iter()
        .flat_map(|(_, train, _)| train.iter().map(|p| p.1))
        .collect();
    let scale_top = chart.scale_top(&values);
    let as_plot = |points: Vec<(f64, f64)>| -> Vec<[f64; 2]> {
        points.into_iter().map(|(x, y)| [x, y]).collect()
    };
    // What lies off the scale, found once for the notes above the chart and the marks on it.
    let lines: Vec<_> = points
        .into_iter()
        .map(|(run, train, eval)| {
            let above = scale_top
                .map(|top| off_scale([train.as_slice()], top))
                .filter(|(xs, _)| !xs.is_empty());
            (run, as_plot(train), as_plot(eval), above)
        })
        .collect();
    ui.vertical(|ui| {
        for (run, _, _, above) in &lines {
            if let Some(above) = above {
                ui.horizontal(|ui| {
                    swatch_ui(ui, Swatch::OffScale(run.color));
                    ui.small(off_scale_note(run, above));
                });
            }
        }
        // Room at the right for the last x tick's label, which egui_plot centres on the edge.
        let width = ui.available_width() - 12.0;
        let height = ui.available_height();
        let link = egui::Id::unique("kiln-plots-x");
        let mut plot = Plot::new(chart.title())
            .width(width)
            .height(height)
            .x_grid_spacer(uniform_grid_spacer(|input| {
                nice_steps(input.base_step_size)
            }))
            .y_grid_spacer(uniform_grid_spacer(|input| {
                nice_steps(input.base_step_size)
            }))
            .x_axis_formatter(|mark, _| tick_label(mark.value, mark.step_size))
            .y_axis_formatter(|mark, _| tick_label(mark.value, mark.step_size))
            .x_axis_label(x_axis.caption());
        let no_points = lines
            .iter()
            .all(|(_, train, eval, _)| train.is_empty() && eval.is_empty());
        if no_points && bands.is_empty() {
            let top = if chart == Chart::Accuracy { 100.0 } else { 1.0 };
            plot = plot
                .include_x(0.0)
                .include_x(1.0)
                .include_y(0.0)
                .include_y(top);
        }
        // Given anew each frame, the range follows a live run until the person zooms or drags
        // (egui_plot keeps their view then, and a double click comes back to this one).
        // Room above the highest point on the scale for the off-scale triangles.
        if let Some(top) = scale_top {
            plot = plot.default_y_bounds(0.0, top * 1.25);
        } else if chart == Chart::StepTime {
            // From 0, so two runs' step times read as the ratio they are.
            plot = plot.include_y(0.0);
        }
        plot.link_axis(link, [true, false])
            .link_cursor(link, [true, false])
            .show(ui, |plot_ui| {
                for &(x, color) in &parting_marks {
                    plot_ui.vline(
                        VLine::new("where the curves part", x)
                            .color(color)
                            .style(LineStyle::dotted_dense())
                            .width(1.5),
                    );
                }
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
                for (run, train, test, above) in lines {
                    let history = run.history;
                    let train_name = match chart.has_eval_line() {
                        true => format!("{} train", run.label),
                        false => run.label.to_owned(),
                    };
                    // No bands: egui_plot merges the points within one pixel column into a
                    // band and fills between neighbouring columns, which at a readback every
                    // few pixels turned a one-window spike into a filled triangle.
                    plot_ui.line(
                        Line::new(train_name, PlotPoints::from(train))
                            .color(run.color)
                            .width(1.0)
                            .allow_band(false),
                    );
                    if let (Some((xs, _)), Some(top)) = (&above, scale_top) {
                        off_scale_ui(plot_ui, run, xs, top * 1.2);
                    }
                    if !test.is_empty() {
                        let name = format!("{} {}", run.label, history.validated_on().split_name());
                        plot_ui.line(
                            Line::new(name.clone(), PlotPoints::from(test.clone()))
                                .color(run.color)
                                .style(LineStyle::dashed_loose())
                                .width(1.0)
                                .allow_band(false),
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

/// Where a run parts from the first: on the accuracy chart, the x of the epoch from which one
/// leads (the compare table says by how much) and the run's colour, for a dotted line.
fn parting_marks(
    chart: Chart,
    runs: &[PlotRun<'_>],
    partings: &[Parting],
    x_axis: XAxis,
) -> Vec<(f64, Color32)> {
    partings
        .iter()
        .filter(|_| chart == Chart::Accuracy)
        .filter_map(|parting| {
            let run = runs.get(parting.run)?;
            let epoch = run
                .history
                .epochs
                .iter()
                .find(|e| e.epoch == parting.from_epoch)?;
            Some((epoch_x(run.history, epoch, x_axis)?, run.color))
        })
        .collect()
}

/// Marks the training points at `xs`, which lie off the scale, with a triangle at `marker_y`
/// near the chart's top edge ([`off_scale_note`] says how far above): left off so the rest can
/// be read, never hidden.
fn off_scale_ui(plot_ui: &mut egui_plot::PlotUi<'_>, run: &PlotRun<'_>, xs: &[f64], marker_y: f64) {
    let at_top: Vec<[f64; 2]> = xs.iter().map(|&x| [x, marker_y]).collect();
    plot_ui.points(
        Points::new(
            format!("{} off the scale", run.label),
            PlotPoints::from(at_top),
        )
        .color(run.color)
        .shape(MarkerShape::Up)
        .radius(5.0)
        .filled(true),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_steps_label_every_nice_step_that_is_far_enough_apart_and_nest() {
        // 845 steps on a 260-point chart: 8 points are 26 steps.
        assert_eq!(nice_steps(26.0), [50.0, 100.0, 500.0]);
        assert_eq!(nice_steps(1.0), [1.0, 5.0, 10.0]);
        assert_eq!(nice_steps(12.0), [20.0, 100.0, 200.0]);
        assert_eq!(nice_steps(0.031), [0.05, 0.1, 0.5]);
        for base in [0.0, f64::NAN, -1.0] {
            assert_eq!(
                nice_steps(base),
                [0.1, 0.5, 1.0],
                "a degenerate axis still gets steps"
            );
        }
    }

    #[test]
    fn tick_labels_keep_the_decimals_their_step_needs() {
        assert_eq!(tick_label(1.5, 0.5), "1.5");
        assert_eq!(tick_label(0.2, 0.1), "0.2");
        assert_eq!(tick_label(500.0, 500.0), "500");
        assert_eq!(tick_label(0.05, 0.05), "0.05");
    }
}
