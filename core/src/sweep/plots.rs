//! A sweep's table drawn: validation accuracy against each axis (a log scale where the axis is
//! one, a band of ± one standard deviation over seeds, a line per setting of the other axes
//! where a grid gives one), and parallel coordinates of every setting for more than two axes.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::export::{ExportError, encode_png, register_font};

use super::plan::{Values, get};
use super::report::{SettingRow, SweepReport};
use crate::config::value_text;

/// Lines drawn on one axis's chart at most; more series are drawn as points with error bars.
const MAX_SERIES: usize = 8;

/// A chart of a sweep, drawn as SVG or PNG alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepChart {
    /// Validation accuracy against the axis at this place of the plan's axes.
    Axis(usize),
    /// Every setting as a line across the axes and its validation accuracy.
    Parallel,
}

impl SweepChart {
    /// Every chart `report` has: one per axis, and parallel coordinates past two axes.
    pub fn all(report: &SweepReport) -> Vec<Self> {
        let mut charts: Vec<Self> = (0..report.axes.len()).map(Self::Axis).collect();
        if report.axes.len() > 2 {
            charts.push(Self::Parallel);
        }
        charts
    }

    /// Its file name without extension: `sweep-lr`, `sweep-parallel`.
    pub fn file_stem(self, report: &SweepReport) -> String {
        match self {
            Self::Axis(i) => {
                let key = report.axes.get(i).map_or("axis", |a| a.key.as_str());
                let safe: String = key
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                    .collect();
                format!("sweep-{safe}")
            }
            Self::Parallel => "sweep-parallel".to_string(),
        }
    }

    /// The chart as SVG text.
    pub fn svg(
        self,
        report: &SweepReport,
        width_px: u32,
        height_px: u32,
    ) -> Result<String, ExportError> {
        register_font()?;
        let mut text = String::new();
        {
            let root =
                SVGBackend::with_string(&mut text, (width_px, height_px)).into_drawing_area();
            self.draw(report, &root)?;
        }
        Ok(text)
    }

    /// The chart as PNG bytes, the same drawing as [`SweepChart::svg`].
    pub fn png(
        self,
        report: &SweepReport,
        width_px: u32,
        height_px: u32,
    ) -> Result<Vec<u8>, ExportError> {
        register_font()?;
        let mut pixels = vec![255u8; width_px as usize * height_px as usize * 3];
        {
            let root =
                BitMapBackend::with_buffer(&mut pixels, (width_px, height_px)).into_drawing_area();
            self.draw(report, &root)?;
        }
        encode_png(&pixels, width_px, height_px)
    }

    fn draw<DB: DrawingBackend>(
        self,
        report: &SweepReport,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), ExportError> {
        root.fill(&WHITE).map_err(|e| draw_error(&e))?;
        match self {
            Self::Axis(i) => draw_axis(report, i, root)?,
            Self::Parallel => draw_parallel(report, root)?,
        }
        root.present().map_err(|e| draw_error(&e))
    }
}

/// Pixels of the charts written beside a sweep's trials.
pub const CHART_PX: (u32, u32) = (900, 520);

/// Writes `report`'s charts into `dir` as PNG and SVG, as `kiln sweep` and the window leave
/// them beside the trials: an explain sweep's waterfall (`explain.png`), or every
/// [`SweepChart`] (`sweep-<key>.png`), none while no row has a figure; the PNGs' paths.
pub fn write_charts(
    report: &SweepReport,
    explained: Option<&super::ExplainReport>,
    dir: &Path,
) -> Result<Vec<PathBuf>, ExportError> {
    let (w, h) = CHART_PX;
    let mut files: Vec<(String, Vec<u8>, Vec<u8>)> = Vec::new();
    match explained {
        Some(explained) => files.push((
            "explain".into(),
            explained.waterfall_png(w, h)?,
            explained.waterfall_svg(w, h)?.into_bytes(),
        )),
        None if report.rows.iter().any(|row| row.val_accuracy.is_some()) => {
            for chart in SweepChart::all(report) {
                let (png, svg) = (chart.png(report, w, h)?, chart.svg(report, w, h)?);
                files.push((chart.file_stem(report), png, svg.into_bytes()));
            }
        }
        None => {}
    }
    let write = |path: PathBuf, bytes: &[u8]| {
        crate::atomic_file::write_atomically(&path, bytes)
            .map_err(|source| ExportError::Io { path, source })
    };
    if !files.is_empty() {
        std::fs::create_dir_all(dir).map_err(|source| ExportError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let mut written = Vec::new();
    for (stem, png, svg) in files {
        write(dir.join(format!("{stem}.png")), &png)?;
        write(dir.join(format!("{stem}.svg")), &svg)?;
        written.push(dir.join(format!("{stem}.png")));
    }
    Ok(written)
}

fn draw_error(e: &dyn std::fmt::Display) -> ExportError {
    ExportError::Draw(e.to_string())
}

/// One axis's chart as numbers rather than pixels, for a chart a person can hover and zoom (the
/// window's): the same lines and seed bands the drawn chart has.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisPoints {
    /// The axis's key.
    pub key: String,
    /// Whether x is the log10 of the axis's value.
    pub log: bool,
    /// Each line: the other axes' values it holds, and its `[x, mean, std]` points (validation
    /// accuracy in percent) in x order.
    pub series: Vec<(String, Vec<[f64; 3]>)>,
    scale: Scale,
}

impl AxisPoints {
    /// The chart of the axis at place `axis` of the plan, none past the last axis.
    pub fn of(report: &SweepReport, axis: usize) -> Option<Self> {
        let key = report.axes.get(axis)?.key.clone();
        let scale = Scale::of(report, axis);
        let series = series(report, axis, &scale)
            .into_iter()
            .map(|s| {
                let points = s.points.iter().map(|&(x, m, sd)| [x, m, sd]).collect();
                (s.label, points)
            })
            .collect();
        Some(Self {
            key,
            log: matches!(scale, Scale::Numeric { log: true, .. }),
            series,
            scale,
        })
    }

    /// The axis's value at position `x` as the config writes it: the number (undone from its
    /// logarithm), or the word at a whole place and nothing between words.
    pub fn x_label(&self, x: f64) -> String {
        self.scale.label(x)
    }
}

/// Where a row sits on one axis: its own value, or the base's where it leaves the axis alone
/// (the base row, a one-at-a-time row changing another axis).
fn value_on(report: &SweepReport, row: &SettingRow, axis: usize) -> Option<toml::Value> {
    let key = &report.axes.get(axis)?.key;
    row.values
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
        .or_else(|| get(&report.base, key).cloned())
}

fn as_number(value: &toml::Value) -> Option<f64> {
    match value {
        toml::Value::Integer(n) => Some(*n as f64),
        toml::Value::Float(x) if x.is_finite() => Some(*x),
        _ => None,
    }
}

/// How an axis's values are laid out along a chart's x axis (or a parallel coordinate).
#[derive(Debug, Clone, PartialEq)]
enum Scale {
    /// Numbers, as they are or by their logarithm.
    Numeric { log: bool, min: f64, max: f64 },
    /// Anything else: each value at its place in order of first appearance.
    Categories(Vec<toml::Value>),
}

impl Scale {
    /// The scale of axis `axis` over the values its rows take.
    fn of(report: &SweepReport, axis: usize) -> Self {
        let values: Vec<toml::Value> = report
            .rows
            .iter()
            .filter_map(|row| value_on(report, row, axis))
            .collect();
        let numbers: Option<Vec<f64>> = values.iter().map(as_number).collect();
        if let Some(numbers) = numbers.filter(|n| !n.is_empty()) {
            let min = numbers.iter().copied().fold(f64::INFINITY, f64::min);
            let max = numbers.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            // A range written on a log scale, or listed values spanning two decades or more.
            let log = min > 0.0
                && (report.axes[axis].is_log()
                    || (matches!(report.axes[axis].values, Values::List(_)) && max / min >= 100.0));
            return Self::Numeric { log, min, max };
        }
        let mut seen: Vec<toml::Value> = Vec::new();
        for value in values {
            if !seen.contains(&value) {
                seen.push(value);
            }
        }
        Self::Categories(seen)
    }

    /// The position of `value` on the chart's x axis: log10 for a log scale, a place for a
    /// category.
    fn position(&self, value: &toml::Value) -> Option<f64> {
        match self {
            Self::Numeric { log: true, .. } => as_number(value).map(f64::log10),
            Self::Numeric { log: false, .. } => as_number(value),
            Self::Categories(values) => values.iter().position(|v| v == value).map(|i| i as f64),
        }
    }

    /// The chart's x range, padded so end points do not sit on the frame.
    fn range(&self) -> (f64, f64) {
        let (lo, hi) = match self {
            Self::Numeric {
                log: true,
                min,
                max,
            } => (min.log10(), max.log10()),
            Self::Numeric {
                log: false,
                min,
                max,
            } => (*min, *max),
            Self::Categories(values) => (0.0, values.len().saturating_sub(1) as f64),
        };
        let pad = ((hi - lo) * 0.06).max(0.5 * f64::from(u8::from(hi == lo)));
        (lo - pad, hi + pad)
    }

    /// A tick's label at position `x`.
    fn label(&self, x: f64) -> String {
        match self {
            Self::Numeric { log: true, .. } => value_text(&toml::Value::Float(
                format!("{:.2e}", 10f64.powf(x)).parse().unwrap_or(0.0),
            )),
            Self::Numeric { log: false, .. } => format!("{x:.3}")
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string(),
            Self::Categories(values) => {
                let i = x.round();
                if (x - i).abs() > 1e-6 || i < 0.0 {
                    return String::new();
                }
                values
                    .get(i as usize)
                    .map(|v| value_text(v).chars().take(18).collect())
                    .unwrap_or_default()
            }
        }
    }
}

/// One line of an axis's chart: the rows sharing the other axes' values, in x order, as
/// (x, mean, std) in points of accuracy.
struct Series {
    label: String,
    points: Vec<(f64, f64, f64)>,
}

/// The rows with a validation figure, grouped by the values of every other axis.
fn series(report: &SweepReport, axis: usize, scale: &Scale) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for row in &report.rows {
        let (Some(spread), Some(x)) = (
            row.val_accuracy,
            value_on(report, row, axis).and_then(|v| scale.position(&v)),
        ) else {
            continue;
        };
        let others: Vec<String> = (0..report.axes.len())
            .filter(|&other| other != axis)
            .filter_map(|other| {
                let value = value_on(report, row, other)?;
                Some(format!("{}={}", report.axes[other].key, value_text(&value)))
            })
            .collect();
        let label = others.join(" ");
        let point = (x, 100.0 * spread.mean, 100.0 * spread.std);
        match series.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                label,
                points: vec![point],
            }),
        }
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    series
}

fn draw_axis<DB: DrawingBackend>(
    report: &SweepReport,
    axis: usize,
    root: &DrawingArea<DB, Shift>,
) -> Result<(), ExportError> {
    let Some(key) = report.axes.get(axis).map(|a| a.key.clone()) else {
        return Ok(());
    };
    let scale = Scale::of(report, axis);
    let series = series(report, axis, &scale);
    // Lines only where a series has more than one point and there are few of them; else each
    // setting is a point with its error bar.
    let as_lines = series.len() <= MAX_SERIES && series.iter().any(|s| s.points.len() > 1);
    // The legend goes below the chart, never over its points.
    let legend_rows = match as_lines && series.len() > 1 {
        true => series.len().div_ceil(2),
        false => 0,
    };
    let legend_px = if legend_rows > 0 {
        legend_rows as u32 * 18 + 12
    } else {
        0
    };
    let (_, height) = root.dim_in_pixel();
    let (upper, legend) = root.split_vertically(height.saturating_sub(legend_px));
    let (x_lo, x_hi) = scale.range();
    let spans = series.iter().flat_map(|s| &s.points);
    let (y_lo, y_hi) = y_range(spans.map(|p| (p.1 - p.2, p.1 + p.2)));
    let log_note = match scale {
        Scale::Numeric { log: true, .. } => " (log scale)",
        _ => "",
    };
    let caption = format!(
        "{} accuracy against {key}: mean ± std over seeds",
        report.figure_name()
    );
    let mut chart = ChartBuilder::on(&upper)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)
        .map_err(|e| draw_error(&e))?;
    let ticks = match &scale {
        Scale::Categories(values) => values.len(),
        Scale::Numeric { .. } => 8,
    };
    chart
        .configure_mesh()
        .x_labels(ticks)
        .x_label_formatter(&|x| scale.label(*x))
        .x_desc(format!("{key}{log_note}"))
        .y_desc("accuracy (%)")
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(|e| draw_error(&e))?;
    for (i, s) in series.iter().enumerate() {
        let color = match as_lines {
            true => series_color(i),
            false => series_color(0),
        };
        draw_one_series(&mut chart, s, color, as_lines)?;
    }
    if legend_rows > 0 {
        draw_legend_below(&legend, &series)?;
    }
    Ok(())
}

/// The `i`-th line's colour, from the palette every plot shares.
fn series_color(i: usize) -> RGBColor {
    let [r, g, b] = crate::plot::run_rgb(i);
    RGBColor(r, g, b)
}

/// One series: its band and line (when drawn as a line), its error bars and its points.
fn draw_one_series<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    s: &Series,
    color: RGBColor,
    as_line: bool,
) -> Result<(), ExportError> {
    if as_line && s.points.len() > 1 {
        let band: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|p| (p.0, p.1 + p.2))
            .chain(s.points.iter().rev().map(|p| (p.0, p.1 - p.2)))
            .collect();
        let band = Polygon::new(band, color.mix(0.18).filled());
        chart
            .draw_series(std::iter::once(band))
            .map_err(|e| draw_error(&e))?;
        let line = s.points.iter().map(|p| (p.0, p.1));
        chart
            .draw_series(LineSeries::new(line, color.stroke_width(2)))
            .map_err(|e| draw_error(&e))?;
    }
    let bars = s
        .points
        .iter()
        .map(|p| PathElement::new(vec![(p.0, p.1 - p.2), (p.0, p.1 + p.2)], color));
    chart.draw_series(bars).map_err(|e| draw_error(&e))?;
    let dots = s
        .points
        .iter()
        .map(|p| Circle::new((p.0, p.1), 3, color.filled()));
    chart.draw_series(dots).map_err(|e| draw_error(&e))?;
    Ok(())
}

/// Each line's colour and name in two columns, in the strip below the chart.
fn draw_legend_below<DB: DrawingBackend>(
    legend: &DrawingArea<DB, Shift>,
    series: &[Series],
) -> Result<(), ExportError> {
    let (width, _) = legend.dim_in_pixel();
    let column_px = (width as i32 - 80) / 2;
    for (i, s) in series.iter().enumerate() {
        let color = series_color(i);
        let (x, y) = (70 + (i % 2) as i32 * column_px, 6 + (i / 2) as i32 * 18);
        let mark = PathElement::new(vec![(x, y + 7), (x + 20, y + 7)], color.stroke_width(2));
        legend.draw(&mark).map_err(|e| draw_error(&e))?;
        let name = Text::new(s.label.clone(), (x + 26, y), ("sans-serif", 12).into_font());
        legend.draw(&name).map_err(|e| draw_error(&e))?;
    }
    Ok(())
}

/// A y range in points of accuracy around `spans` (low, high), padded, within 0..100.
fn y_range(spans: impl Iterator<Item = (f64, f64)>) -> (f64, f64) {
    let (lo, hi) = spans.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (a, b)| {
        (lo.min(a), hi.max(b))
    });
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 100.0);
    }
    let pad = ((hi - lo) * 0.1).max(0.5);
    ((lo - pad).max(0.0), (hi + pad).min(100.0))
}

fn draw_parallel<DB: DrawingBackend>(
    report: &SweepReport,
    root: &DrawingArea<DB, Shift>,
) -> Result<(), ExportError> {
    let scales: Vec<Scale> = (0..report.axes.len())
        .map(|i| Scale::of(report, i))
        .collect();
    let figure = format!("{} accuracy", report.figure_name());
    let columns = scales.len() + 1;
    let mut rows: Vec<(Vec<f64>, f64)> = report
        .rows
        .iter()
        .filter_map(|row| {
            let accuracy = row.val_accuracy?.mean;
            let placed: Option<Vec<f64>> = scales
                .iter()
                .enumerate()
                .map(|(i, scale)| unit_place(scale, &value_on(report, row, i)?))
                .collect();
            Some((placed?, accuracy))
        })
        .collect();
    let (acc_lo, acc_hi) = rows
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
            (lo.min(r.1), hi.max(r.1))
        });
    let acc_unit = |a: f64| {
        if acc_hi > acc_lo {
            (a - acc_lo) / (acc_hi - acc_lo)
        } else {
            0.5
        }
    };
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!("Every setting across the axes, coloured by its {figure}"),
            ("sans-serif", 18),
        )
        .margin(16)
        .margin_left(40)
        .margin_right(60)
        .x_label_area_size(40)
        .build_cartesian_2d(-0.1f64..(columns as f64 - 0.9), -0.08f64..1.08)
        .map_err(|e| draw_error(&e))?;
    let names: Vec<String> = report
        .axes
        .iter()
        .map(|a| a.key.clone())
        .chain(std::iter::once(figure.clone()))
        .collect();
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_y_axis()
        .x_labels(columns)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() > 1e-6 || i < 0.0 {
                return String::new();
            }
            names.get(i as usize).cloned().unwrap_or_default()
        })
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(|e| draw_error(&e))?;
    // Worst first, so the best settings are drawn on top.
    rows.sort_by(|a, b| a.1.total_cmp(&b.1));
    for (placed, accuracy) in &rows {
        let color = heat(acc_unit(*accuracy));
        let points: Vec<(f64, f64)> = placed
            .iter()
            .enumerate()
            .map(|(i, y)| (i as f64, *y))
            .chain(std::iter::once((scales.len() as f64, acc_unit(*accuracy))))
            .collect();
        chart
            .draw_series(std::iter::once(PathElement::new(
                points,
                color.stroke_width(2),
            )))
            .map_err(|e| draw_error(&e))?;
    }
    // Each coordinate's own axis line with the values at its ends (or its categories).
    let label_style = ("sans-serif", 11).into_font();
    for column in 0..columns {
        let x = column as f64;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x, 0.0), (x, 1.0)],
                BLACK.mix(0.6),
            )))
            .map_err(|e| draw_error(&e))?;
        let marks = match scales.get(column) {
            Some(scale) => scale_marks(scale),
            None if rows.is_empty() => Vec::new(),
            None => vec![
                (0.0, format!("{:.2} %", 100.0 * acc_lo)),
                (1.0, format!("{:.2} %", 100.0 * acc_hi)),
            ],
        };
        // The ends' labels sit beyond the line's ends, clear of the lines meeting there.
        let lift = |y: f64| match y {
            y if y >= 0.999 => y + 0.065,
            y if y <= 0.001 => y - 0.012,
            y => y,
        };
        let texts = marks
            .into_iter()
            .map(|(y, text)| Text::new(text, (x + 0.02, lift(y)), label_style.clone()));
        chart.draw_series(texts).map_err(|e| draw_error(&e))?;
    }
    Ok(())
}

/// The labels along a parallel coordinate: every category, or a number scale's two ends.
fn scale_marks(scale: &Scale) -> Vec<(f64, String)> {
    match scale {
        Scale::Categories(values) => {
            let last = (values.len().max(2) - 1) as f64;
            let place = |i: usize| i as f64 / last;
            values
                .iter()
                .enumerate()
                .map(|(i, v)| (place(i), value_text(v)))
                .collect()
        }
        Scale::Numeric { log, min, max } => {
            let at = |v: f64| scale.label(if *log { v.log10() } else { v });
            vec![(0.0, at(*min)), (1.0, at(*max))]
        }
    }
}

/// A value's place on a parallel coordinate, from 0 (its scale's start) to 1 (its end).
fn unit_place(scale: &Scale, value: &toml::Value) -> Option<f64> {
    match scale {
        Scale::Categories(values) => {
            let i = values.iter().position(|v| v == value)?;
            Some(if values.len() > 1 {
                i as f64 / (values.len() - 1) as f64
            } else {
                0.5
            })
        }
        Scale::Numeric { log, min, max } => {
            let x = as_number(value)?;
            let (x, lo, hi) = if *log {
                (x.log10(), min.log10(), max.log10())
            } else {
                (x, *min, *max)
            };
            Some(if hi > lo { (x - lo) / (hi - lo) } else { 0.5 })
        }
    }
}

/// A colour from dark blue (0, the worst) through teal to yellow (1, the best), as viridis runs.
fn heat(t: f64) -> RGBColor {
    const STOPS: [(f64, [f64; 3]); 3] = [
        (0.0, [68.0, 1.0, 84.0]),
        (0.5, [33.0, 145.0, 140.0]),
        (1.0, [253.0, 231.0, 37.0]),
    ];
    let t = t.clamp(0.0, 1.0);
    let (a, b) = if t <= 0.5 {
        (STOPS[0], STOPS[1])
    } else {
        (STOPS[1], STOPS[2])
    };
    let f = (t - a.0) / (b.0 - a.0);
    let mix = |i: usize| (a.1[i] + f * (b.1[i] - a.1[i])).round() as u8;
    RGBColor(mix(0), mix(1), mix(2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::Sweep;
    use crate::sweep::report::Spread;

    /// The report of a grid over `table`, each row's validation accuracy given by `score` of its
    /// place.
    fn report(table: &str, score: impl Fn(usize) -> f64) -> SweepReport {
        let base =
            "name = \"tiny\"\nepochs = 1\nlr = 0.01\n\n[model]\nkind = \"mlp\"\nwidths = [16]\n";
        let sweep = Sweep::from_toml(&format!("{base}\n[sweep]\n{table}"), "s.toml").unwrap();
        let mut report = SweepReport::of(
            &sweep,
            std::path::Path::new("s"),
            &vec![None; sweep.trials.len()],
        );
        for (i, row) in report.rows.iter_mut().enumerate() {
            row.val_accuracy = Some(Spread {
                mean: score(i),
                std: 0.01,
            });
        }
        report
    }

    #[test]
    fn a_log_range_is_drawn_on_a_log_axis_with_a_line_per_setting_of_the_other_axis() {
        let report = report(
            "lr = { min = 0.0001, max = 0.1, log = true, steps = 4 }\ninput_scaling = [\"unit-range\", \"raw\"]\n",
            |i| 0.5 + 0.05 * i as f64,
        );
        let lr = report.axes.iter().position(|a| a.key == "lr").unwrap();
        let scale = Scale::of(&report, lr);
        assert!(
            matches!(scale, Scale::Numeric { log: true, .. }),
            "{scale:?}"
        );
        assert_eq!(scale.position(&toml::Value::Float(0.001)), Some(-3.0));
        let lines = series(&report, lr, &scale);
        let labels: Vec<&str> = lines.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["input_scaling=unit-range", "input_scaling=raw"]);
        assert!(lines.iter().all(|s| s.points.len() == 4));
        let svg = SweepChart::Axis(lr).svg(&report, 900, 520).unwrap();
        assert!(svg.contains("lr (log scale)"), "the x axis says its scale");
        assert!(
            svg.contains("input_scaling=raw"),
            "the legend names each line"
        );
        assert!(svg.contains("validation accuracy against lr"));
        let png = SweepChart::Axis(lr).png(&report, 900, 520).unwrap();
        assert!(png.starts_with(b"\x89PNG"));
        // The window's plot gets the same lines as numbers, its ticks labelled as the axis's
        // values rather than their logarithms.
        let points = AxisPoints::of(&report, lr).unwrap();
        assert!(points.log);
        assert_eq!(points.series.len(), 2);
        let [x, mean, std] = points.series[0].1[1];
        assert_eq!(x, -3.0);
        assert!((mean - 55.0).abs() < 1e-9 && (std - 1.0).abs() < 1e-9);
        assert_eq!(points.x_label(-3.0), "0.001");
        assert!(AxisPoints::of(&report, 2).is_none(), "no third axis");
    }

    #[test]
    fn listed_values_two_decades_apart_read_as_a_log_axis_and_words_as_categories() {
        let report = report(
            "batch_size = [16, 256, 4096]\ninput_scaling = [\"unit-range\", \"raw\"]\n",
            |i| 0.9 - 0.01 * i as f64,
        );
        let batch = report
            .axes
            .iter()
            .position(|a| a.key == "batch_size")
            .unwrap();
        assert!(matches!(
            Scale::of(&report, batch),
            Scale::Numeric { log: true, .. }
        ));
        let scaling = report
            .axes
            .iter()
            .position(|a| a.key == "input_scaling")
            .unwrap();
        let scale = Scale::of(&report, scaling);
        assert_eq!(scale.label(1.0), "raw");
        assert_eq!(scale.label(0.5), "", "no tick between two categories");
    }

    #[test]
    fn parallel_coordinates_come_past_two_axes_and_place_every_setting() {
        let two = report("lr = [0.01, 0.1]\nbatch_size = [32, 64]\n", |_| 0.8);
        assert_eq!(
            SweepChart::all(&two),
            [SweepChart::Axis(0), SweepChart::Axis(1)]
        );
        let three = report(
            "lr = [0.01, 0.1]\nbatch_size = [32, 64]\ninit = [\"glorot-uniform\", \"pytorch-default\"]\n",
            |i| 0.7 + 0.01 * i as f64,
        );
        let charts = SweepChart::all(&three);
        assert_eq!(charts.last(), Some(&SweepChart::Parallel));
        assert_eq!(charts.last().unwrap().file_stem(&three), "sweep-parallel");
        let svg = SweepChart::Parallel.svg(&three, 900, 520).unwrap();
        // Eight settings, each a path; the accuracy axis's ends are its lowest and highest.
        assert!(svg.contains("70.00 %") && svg.contains("77.00 %"), "{svg}");
        assert!(svg.contains("pytorch-default"));
        assert_eq!(
            unit_place(&Scale::of(&three, 0), &toml::Value::Integer(64)),
            Some(1.0),
            "batch_size 64 tops its coordinate"
        );
    }

    #[test]
    fn a_one_at_a_time_row_sits_at_the_base_value_of_every_axis_it_leaves_alone() {
        let report = report(
            "search = \"one-at-a-time\"\nlr = [0.001, 0.1]\nbatch_size = [32, 128]\n",
            |i| 0.5 + 0.1 * i as f64,
        );
        let lr = report.axes.iter().position(|a| a.key == "lr").unwrap();
        let base = &report.rows[0];
        assert_eq!(base.setting, "base");
        assert_eq!(value_on(&report, base, lr), Some(toml::Value::Float(0.01)));
        let scale = Scale::of(&report, lr);
        // The base, the two lr rows, and the batch rows at the base's lr: all on the lr chart.
        let points: usize = series(&report, lr, &scale)
            .iter()
            .map(|s| s.points.len())
            .sum();
        assert_eq!(points, report.rows.len());
    }
}
