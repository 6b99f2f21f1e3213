//! A finished sweep's charts in the window: validation accuracy against each axis as a plot a
//! person can hover, zoom and drag (each setting's mean with a bar of ± one standard deviation
//! over its seeds, a line per setting of the other axes), and the charts only drawing shows well
//! (parallel coordinates, an explain sweep's waterfall) as the images written beside the trials.

use egui_plot::{HoverPosition, Legend, Line, Plot, PlotPoints, Points};
use kiln_core::sweep::plots::{AxisPoints, CHART_PX};
use kiln_core::sweep::{ExplainReport, SweepChart, SweepReport};

/// The drawn charts' titles and textures, made once after the sweep ends.
pub type DrawnCharts = Vec<(String, egui::TextureHandle)>;

/// Every chart of the report: an interactive plot per axis (none for an explain sweep, whose
/// waterfall says more), then the drawn ones.
pub fn charts_ui(
    ui: &mut egui::Ui,
    report: &SweepReport,
    explained: Option<&ExplainReport>,
    drawn: &mut Option<DrawnCharts>,
) {
    if explained.is_none() {
        for axis in 0..report.axes.len() {
            if let Some(points) = AxisPoints::of(report, axis) {
                axis_plot_ui(ui, report.figure_name(), &points);
            }
        }
    }
    let drawn = drawn.get_or_insert_with(|| draw_charts(ui.ctx(), report, explained));
    for (title, texture) in drawn.iter() {
        let width = ui.available_width().min(CHART_PX.0 as f32);
        let size = texture.size_vec2() * (width / texture.size_vec2().x);
        ui.add(egui::Image::new((texture.id(), size)))
            .on_hover_text(title);
    }
}

/// The figure against one axis, on a log scale where the axis is one, words at whole places.
fn axis_plot_ui(ui: &mut egui::Ui, figure: &str, points: &AxisPoints) {
    ui.label(egui::RichText::new(format!("{figure} accuracy against {}", points.key)).strong());
    let x_name = if points.log {
        format!("{} (log scale)", points.key)
    } else {
        points.key.clone()
    };
    Plot::new(("sweep-axis", points.key.as_str()))
        .height(240.0)
        .legend(Legend::default())
        .x_axis_label(x_name)
        .y_axis_label(format!("{figure} accuracy (%)"))
        .x_axis_formatter(|mark, _| points.x_label(mark.value))
        .label_formatter(|hover| {
            let (name, at) = match hover {
                HoverPosition::NearDataPoint {
                    plot_name,
                    position,
                    ..
                } => (*plot_name, *position),
                HoverPosition::Elsewhere { position } => ("", *position),
            };
            let x = points.x_label(at.x);
            Some(format!("{name}\n{} {x}\n{:.2} %", points.key, at.y))
        })
        .show(ui, |plot| {
            for (label, series) in &points.series {
                let name = if label.is_empty() { "mean" } else { label };
                let means: Vec<[f64; 2]> = series.iter().map(|&[x, mean, _]| [x, mean]).collect();
                if series.len() > 1 {
                    plot.line(Line::new(name, means.clone()).width(1.5));
                }
                plot.points(Points::new(name, means).radius(3.0));
                for &[x, mean, std] in series.iter().filter(|p| p[2] > 0.0) {
                    let bar: PlotPoints = vec![[x, mean - std], [x, mean + std]].into();
                    plot.line(Line::new(name, bar).width(1.0));
                }
            }
        });
}

/// The charts drawn as images: parallel coordinates past two axes, or an explain sweep's
/// waterfall.
fn draw_charts(
    ctx: &egui::Context,
    report: &SweepReport,
    explained: Option<&ExplainReport>,
) -> DrawnCharts {
    let (w, h) = CHART_PX;
    let drawn: Vec<(String, Option<Vec<u8>>)> = match explained {
        Some(explained) => vec![("explain".to_owned(), explained.waterfall_png(w, h).ok())],
        None => SweepChart::all(report)
            .into_iter()
            .filter(|chart| *chart == SweepChart::Parallel)
            .map(|chart| (chart.file_stem(report), chart.png(report, w, h).ok()))
            .collect(),
    };
    drawn
        .into_iter()
        .filter_map(|(name, png)| {
            let rgba = image::load_from_memory(&png?).ok()?.to_rgba8();
            let size = [rgba.width() as usize, rgba.height() as usize];
            let image = egui::ColorImage::from_rgba_unmultiplied(size, rgba.as_raw());
            let texture = ctx.load_texture(&name, image, egui::TextureOptions::LINEAR);
            Some((name, texture))
        })
        .collect()
}
