//! CSV and plot images (PNG, SVG) of one run or several overlaid.
//!
//! The figure is drawn once, generically over plotters' backends, so the PNG and the SVG show
//! the same thing. Text uses the DejaVu Sans font shipped in `assets/fonts/`, so exports look the
//! same on every machine and need no system fonts.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use crate::atomic_file::write_atomically;
use crate::plot::{Chart, UnknownXAxis, XAxis, epoch_end, legend_labels, off_scale, run_rgb};
use crate::run_folder::RunHistory;

/// Smallest plot side accepted, in pixels; below it the four charts have no room for labels.
pub const MIN_PLOT_PX: u32 = 200;
/// Largest plot side accepted, in pixels; keeps a PNG's buffer within reason.
pub const MAX_PLOT_PX: u32 = 8192;

/// How plot images are drawn.
#[derive(Debug, Clone)]
pub struct PlotOptions {
    /// What the horizontal axes measure.
    pub x_axis: XAxis,
    /// Image width in pixels.
    pub width_px: u32,
    /// Image height in pixels.
    pub height_px: u32,
    /// The figure's title; none means "Kiln: <run>" or "Kiln: N runs".
    pub title: Option<String>,
}

impl Default for PlotOptions {
    fn default() -> Self {
        Self {
            x_axis: XAxis::Steps,
            width_px: 1600,
            height_px: 1000,
            title: None,
        }
    }
}

/// Why an export failed; each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The x axis was named wrongly.
    #[error(transparent)]
    BadXAxis(#[from] UnknownXAxis),
    /// The image size is out of range.
    #[error(
        "a plot of {width}x{height} pixels cannot be drawn; choose a width and height between {MIN_PLOT_PX} and {MAX_PLOT_PX}"
    )]
    Size {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
    },
    /// The bundled font did not load.
    #[error("the plot font shipped with Kiln could not be loaded; reinstall Kiln")]
    Font,
    /// plotters reported an error while drawing.
    #[error("could not draw the plot ({0}); try another image size")]
    Draw(String),
    /// The PNG encoder failed.
    #[error("could not encode the PNG image ({0}); try another image size")]
    Encode(String),
    /// Nothing was asked for.
    #[error("nothing to export; give a CSV, PNG or SVG file to write")]
    NoOutput,
    /// The CSV could not be written to its writer.
    #[error("could not write the CSV: {0}; check that the destination is writable")]
    Csv(#[source] io::Error),
    /// A file could not be written.
    #[error("could not write {}: {source}; check that its folder exists and is writable", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
}

fn draw_error<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> ExportError {
    ExportError::Draw(e.to_string())
}

/// Header of the long-format CSV written by [`write_csv`].
pub const CSV_HEADER: &str = "run,kind,epoch,step,global_step,wall_secs,samples_seen,train_loss,train_accuracy,val_loss,val_accuracy,test_loss,test_accuracy,samples_per_sec,step_ms,lr";

/// A CSV field, quoted when it holds a separator, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// Long-format CSV of every run: one `step` row per metrics row and one `epoch` row per epoch
/// row. An epoch row's step, global_step, wall_secs and samples_seen are those of the last
/// metrics row of that epoch (empty if there is none); its step_ms and lr are empty.
pub fn write_csv(runs: &[&RunHistory], out: &mut dyn Write) -> Result<(), ExportError> {
    let labels = legend_labels(runs);
    let mut text = String::new();
    text.push_str(CSV_HEADER);
    text.push('\n');
    for (run, label) in runs.iter().zip(&labels) {
        let label = csv_field(label);
        // Rows in reading order: an epoch's readbacks, then its evaluation.
        let mut order: Vec<(usize, u8, usize)> = run
            .metrics
            .iter()
            .enumerate()
            .map(|(i, m)| (m.epoch, 0, i))
            .chain(run.epochs.iter().enumerate().map(|(i, e)| (e.epoch, 1, i)))
            .collect();
        order.sort();
        for (_, kind, i) in order {
            if kind == 0 {
                let m = &run.metrics[i];
                // A String never refuses a write.
                let _ = writeln!(
                    text,
                    "{label},step,{},{},{},{},{},{},{},,,,,{},{},{}",
                    m.epoch,
                    m.step,
                    m.global_step,
                    m.wall_secs,
                    m.samples_seen,
                    m.train_loss,
                    m.train_accuracy,
                    m.samples_per_sec,
                    m.step_ms,
                    m.lr
                );
            } else {
                let e = &run.epochs[i];
                let position = match epoch_end(run, e.epoch) {
                    Some(m) => format!(
                        "{},{},{},{}",
                        m.step, m.global_step, m.wall_secs, m.samples_seen
                    ),
                    None => ",,,".to_owned(),
                };
                let figure = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
                let _ = writeln!(
                    text,
                    "{label},epoch,{},{position},{},{},{},{},{},{},{},,",
                    e.epoch,
                    figure(e.train_loss),
                    figure(e.train_accuracy),
                    figure(e.val_loss),
                    figure(e.val_accuracy),
                    figure(e.test_loss),
                    figure(e.test_accuracy),
                    figure(e.samples_per_sec)
                );
            }
        }
    }
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(ExportError::Csv)
}

/// The font every plot's text uses, registered with plotters once per process.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn register_font() -> Result<(), ExportError> {
    use plotters::style::FontStyle;
    use std::sync::OnceLock;
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            include_bytes!("../../assets/fonts/DejaVuSans.ttf"),
        )
        .is_ok()
    });
    if ok { Ok(()) } else { Err(ExportError::Font) }
}

/// In a browser plotters draws text with the page's own fonts.
#[cfg(target_arch = "wasm32")]
pub(crate) fn register_font() -> Result<(), ExportError> {
    Ok(())
}

fn check_size(options: &PlotOptions) -> Result<(), ExportError> {
    let ok = |v: u32| (MIN_PLOT_PX..=MAX_PLOT_PX).contains(&v);
    if ok(options.width_px) && ok(options.height_px) {
        Ok(())
    } else {
        Err(ExportError::Size {
            width: options.width_px,
            height: options.height_px,
        })
    }
}

/// The n-th run's colour, from the palette every plot shares.
fn run_color(index: usize) -> RGBColor {
    let [r, g, b] = run_rgb(index);
    RGBColor(r, g, b)
}

/// One run's lines in one chart; points are already finite.
struct RunLines {
    label: String,
    color: RGBColor,
    train: Vec<(f64, f64)>,
    eval: Vec<(f64, f64)>,
}

/// One of the four charts, with what it draws.
struct ChartSpec {
    chart: Chart,
    legend_at: SeriesLabelPosition,
    lines: Vec<RunLines>,
    /// The split the dashed lines were evaluated on, for the legend.
    eval_name: &'static str,
    /// Seed bands: a colour and per-epoch (x, mean − std, mean + std).
    bands: Vec<(RGBColor, crate::compare::Band)>,
    /// Where a run's curve parts from the first run's (accuracy chart only): the x of that
    /// epoch and the run's colour, drawn as a dotted vertical line.
    partings: Vec<(f64, RGBColor)>,
}

impl ChartSpec {
    fn has_data(&self) -> bool {
        self.lines
            .iter()
            .any(|l| !l.train.is_empty() || !l.eval.is_empty())
    }
}

fn build_charts(runs: &[&RunHistory], labels: &[String], x_axis: XAxis) -> Vec<ChartSpec> {
    let mut charts: Vec<ChartSpec> = Chart::ALL
        .into_iter()
        .map(|chart| ChartSpec {
            chart,
            legend_at: match chart {
                Chart::Loss | Chart::StepTime => SeriesLabelPosition::UpperRight,
                Chart::Accuracy | Chart::Throughput => SeriesLabelPosition::LowerRight,
            },
            lines: Vec::new(),
            eval_name: crate::plot::eval_line_name(runs),
            bands: Vec::new(),
            partings: Vec::new(),
        })
        .collect();
    for (index, (run, label)) in runs.iter().zip(labels).enumerate() {
        for spec in &mut charts {
            spec.lines.push(RunLines {
                label: label.clone(),
                color: run_color(index),
                train: spec.chart.train_points(run, x_axis),
                eval: spec.chart.eval_points(run, x_axis),
            });
        }
    }
    let comparison = crate::compare::compare(runs);
    for parting in &comparison.partings {
        let run = runs[parting.run];
        let x = run
            .epochs
            .iter()
            .find(|e| e.epoch == parting.from_epoch)
            .and_then(|e| crate::plot::epoch_x(run, e, x_axis));
        if let Some(x) = x {
            for spec in charts.iter_mut().filter(|s| s.chart == Chart::Accuracy) {
                spec.partings.push((x, run_color(parting.run)));
            }
        }
    }
    // Runs that differ only in their seed also get a band of test mean ± std.
    for group in comparison.seed_groups {
        let members: Vec<&RunHistory> = group.runs.iter().map(|&i| runs[i]).collect();
        let color = run_color(group.runs[0]);
        for spec in &mut charts {
            if spec.chart.has_eval_line() {
                let chart = spec.chart;
                let band = crate::compare::seed_band(&members, x_axis, |e| chart.eval_value(e));
                spec.bands.push((color, band));
            }
        }
    }
    charts
}

/// The title drawn above the four charts.
fn figure_title(runs: &[&RunHistory], labels: &[String], options: &PlotOptions) -> String {
    match (&options.title, runs.len()) {
        (Some(title), _) => title.clone(),
        (None, 1) => format!("Kiln: {}", labels[0]),
        (None, n) => format!("Kiln: {n} runs"),
    }
}

/// A data range padded so lines do not touch the frame; never empty, never NaN.
fn padded_range(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    let span = hi - lo;
    let pad = if span > 0.0 {
        span * 0.05
    } else {
        hi.abs().max(1.0) * 0.5
    };
    hi += pad;
    if !from_zero || lo < 0.0 {
        lo -= pad;
    }
    (lo, hi)
}

/// Tick labels with as many decimals as the axis's span needs: "150" for steps, "0.25" for a
/// loss, never "150.0".
fn tick_format(lo: f64, hi: f64) -> impl Fn(&f64) -> String {
    let tick = (hi - lo).abs() / 10.0;
    let decimals = if tick > 0.0 && tick.is_finite() {
        (-tick.log10().floor()).clamp(0.0, 9.0) as usize
    } else {
        0
    };
    move |v: &f64| {
        let text = format!("{v:.decimals$}");
        // "-0" reads like a bug.
        if text
            .trim_start_matches('-')
            .chars()
            .all(|c| c == '0' || c == '.')
        {
            text.trim_start_matches('-').to_owned()
        } else {
            text
        }
    }
}

/// Pixel sizes scaled to the image, so a small export stays legible and a large one balanced.
struct Sizes {
    title: f64,
    caption: f64,
    label: f64,
    line: u32,
    marker: i32,
    dash: i32,
}

impl Sizes {
    fn for_image(width: u32, height: u32) -> Self {
        let scale = (f64::from(width) / 1600.0)
            .min(f64::from(height) / 1000.0)
            .max(0.25);
        Self {
            title: (34.0 * scale).max(16.0),
            caption: (24.0 * scale).max(13.0),
            label: (16.0 * scale).max(10.0),
            line: ((2.0 * scale).round() as u32).max(1),
            marker: ((4.0 * scale).round() as i32).max(2),
            dash: ((8.0 * scale).round() as i32).max(3),
        }
    }
}

fn draw_figure<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    runs: &[&RunHistory],
    options: &PlotOptions,
) -> Result<(), ExportError>
where
    DB::ErrorType: 'static,
{
    let labels = legend_labels(runs);
    let sizes = Sizes::for_image(options.width_px, options.height_px);
    root.fill(&WHITE).map_err(draw_error)?;
    let title = figure_title(runs, &labels, options);
    let body = root
        .titled(&title, ("sans-serif", sizes.title).into_font())
        .map_err(draw_error)?;
    let charts = build_charts(runs, &labels, options.x_axis);
    // Colours mean the same run in every chart, so one legend (in the first chart with data)
    // names them all without covering lines in the other three.
    let legend_in = charts.iter().position(ChartSpec::has_data);
    for (index, (area, chart)) in body.split_evenly((2, 2)).iter().zip(&charts).enumerate() {
        draw_chart(
            area,
            chart,
            options.x_axis,
            &sizes,
            legend_in == Some(index),
        )?;
    }
    root.present().map_err(draw_error)
}

fn draw_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    spec: &ChartSpec,
    x_axis: XAxis,
    sizes: &Sizes,
    with_legend: bool,
) -> Result<(), ExportError>
where
    DB::ErrorType: 'static,
{
    let has_data = spec.has_data();
    let Ranges {
        x: (x0, x1),
        y: (y0, y1),
        scale_top,
        largest,
    } = chart_ranges(spec);

    let label_px = sizes.label;
    let mut chart = ChartBuilder::on(area)
        .caption(
            spec.chart.title(),
            ("sans-serif", sizes.caption).into_font(),
        )
        .margin((label_px * 0.8) as i32)
        .x_label_area_size((label_px * 3.0) as i32)
        .y_label_area_size((label_px * 5.0) as i32)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(draw_error)?;
    let x_ticks = tick_format(x0, x1);
    let y_ticks = tick_format(y0, y1);
    chart
        .configure_mesh()
        .x_label_formatter(&x_ticks)
        .y_label_formatter(&y_ticks)
        .x_desc(x_axis.caption())
        .y_desc(spec.chart.y_caption())
        .label_style(("sans-serif", label_px).into_font())
        .axis_desc_style(("sans-serif", label_px).into_font())
        .max_light_lines(0)
        .bold_line_style(BLACK.mix(0.12))
        .draw()
        .map_err(draw_error)?;

    if !has_data {
        let style = ("sans-serif", sizes.caption)
            .into_font()
            .color(&BLACK.mix(0.5))
            .pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Center,
                plotters::style::text_anchor::VPos::Center,
            ));
        chart
            .draw_series(std::iter::once(Text::new(
                "no data",
                ((x0 + x1) / 2.0, (y0 + y1) / 2.0),
                style,
            )))
            .map_err(draw_error)?;
        return Ok(());
    }

    for (color, band) in &spec.bands {
        // One quad per pair of epochs: each is convex, which a whole band need not be.
        chart
            .draw_series(band.windows(2).map(|pair| {
                let [(xa, la, ha), (xb, lb, hb)] = [pair[0], pair[1]];
                Polygon::new(
                    vec![(xa, la), (xb, lb), (xb, hb), (xa, ha)],
                    color.mix(0.2).filled(),
                )
            }))
            .map_err(draw_error)?;
    }
    draw_partings(&mut chart, spec, (y0, y1), sizes)?;
    let line = sizes.line;
    let dash = sizes.dash;
    for lines in &spec.lines {
        let color = lines.color;
        let solid = color.stroke_width(line);
        // Off-scale points (see Chart::scale_top) run to the top edge and get a triangle there.
        let annotation = chart
            .draw_series(LineSeries::new(
                lines.train.iter().map(|&(x, y)| (x, y.min(y1))),
                solid,
            ))
            .map_err(draw_error)?;
        annotation
            .label(lines.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], solid));
        if scale_top.is_some() {
            let (xs, _) = off_scale([lines.train.as_slice()], y1);
            chart
                .draw_series(
                    xs.into_iter()
                        .map(|x| TriangleMarker::new((x, y1), sizes.marker + 2, color.filled())),
                )
                .map_err(draw_error)?;
        }
        if spec.chart.has_eval_line() && !lines.eval.is_empty() {
            chart
                .draw_series(DashedLineSeries::new(
                    lines.eval.iter().copied(),
                    dash,
                    dash / 2 + 1,
                    solid,
                ))
                .map_err(draw_error)?;
            chart
                .draw_series(
                    lines
                        .eval
                        .iter()
                        .map(|&p| Circle::new(p, sizes.marker, color.filled())),
                )
                .map_err(draw_error)?;
        }
    }
    if scale_top.is_some() {
        let style = ("sans-serif", sizes.label)
            .into_font()
            .color(&BLACK.mix(0.7))
            .pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Center,
                plotters::style::text_anchor::VPos::Top,
            ));
        // At the top's middle: a warm-up's triangles sit at the left end.
        let note = format!("triangles: off the scale, up to {largest:.0} ms");
        chart
            .draw_series(std::iter::once(Text::new(
                note,
                ((x0 + x1) / 2.0, y1),
                style,
            )))
            .map_err(draw_error)?;
    }
    if with_legend {
        draw_legend(&mut chart, spec, sizes)?;
    }
    Ok(())
}

/// A chart's axis ranges, and where its y scale leaves points off (see [`Chart::scale_top`]).
struct Ranges {
    x: (f64, f64),
    y: (f64, f64),
    scale_top: Option<f64>,
    /// The largest training value, which an off-scale note names.
    largest: f64,
}

fn chart_ranges(spec: &ChartSpec) -> Ranges {
    let band_points: Vec<(f64, f64)> = spec
        .bands
        .iter()
        .flat_map(|(_, band)| band.iter().flat_map(|&(x, lo, hi)| [(x, lo), (x, hi)]))
        .collect();
    let all_points = || {
        spec.lines
            .iter()
            .flat_map(|l| l.train.iter().chain(&l.eval))
            .chain(&band_points)
            .copied()
    };
    let values: Vec<f64> = spec
        .lines
        .iter()
        .flat_map(|l| l.train.iter().map(|p| p.1))
        .collect();
    let scale_top = spec.chart.scale_top(&values);
    let y = match (spec.chart.y_fixed(), scale_top) {
        // Widened only for values outside the fixed range (a bug elsewhere, but then visible).
        (Some((lo, hi)), _) => {
            all_points().fold((lo, hi), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)))
        }
        (None, Some(top)) => padded_range(all_points().map(|p| p.1).filter(|&y| y <= top), true),
        (None, None) => padded_range(all_points().map(|p| p.1), true),
    };
    Ranges {
        x: padded_range(all_points().map(|p| p.0), true),
        y,
        scale_top,
        largest: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    }
}

/// The chart's parting lines ([`ChartSpec::partings`]) across its whole height `y`: dotted,
/// short dashes with long gaps, apart from the dashed evaluation lines.
fn draw_partings<'a, DB: DrawingBackend + 'a>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    spec: &ChartSpec,
    (y0, y1): (f64, f64),
    sizes: &Sizes,
) -> Result<(), ExportError>
where
    DB::ErrorType: 'static,
{
    for &(x, color) in &spec.partings {
        chart
            .draw_series(std::iter::once(DashedPathElement::new(
                vec![(x, y0), (x, y1)],
                sizes.dash,
                sizes.dash * 2,
                color.stroke_width(sizes.line),
            )))
            .map_err(draw_error)?;
    }
    Ok(())
}

/// The chart's legend: each run's line, and for loss and accuracy which stroke is which split.
fn draw_legend<'a, DB: DrawingBackend + 'a>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    spec: &ChartSpec,
    sizes: &Sizes,
) -> Result<(), ExportError>
where
    DB::ErrorType: 'static,
{
    let (line, label_px) = (sizes.line, sizes.label);
    if spec.chart.has_eval_line() {
        // Line styles, named once: colour says which run, the stroke says which split.
        let grey = BLACK.mix(0.6).stroke_width(line);
        chart
            .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())
            .map_err(draw_error)?
            .label("train (solid)")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], grey));
        chart
            .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())
            .map_err(draw_error)?
            .label(format!("{} (dashed, per epoch)", spec.eval_name))
            .legend(move |(x, y)| DashedPathElement::new(vec![(x, y), (x + 20, y)], 5, 3, grey));
    }
    chart
        .configure_series_labels()
        .position(spec.legend_at.clone())
        .label_font(("sans-serif", label_px).into_font())
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()
        .map_err(draw_error)?;
    Ok(())
}

/// The figure as SVG text: a title and four charts (loss, accuracy, throughput, step time).
pub fn render_svg(runs: &[&RunHistory], options: &PlotOptions) -> Result<String, ExportError> {
    check_size(options)?;
    register_font()?;
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (options.width_px, options.height_px))
            .into_drawing_area();
        draw_figure(&root, runs, options)?;
    }
    Ok(text)
}

/// The figure as encoded PNG bytes, the same drawing as [`render_svg`].
pub fn render_png(runs: &[&RunHistory], options: &PlotOptions) -> Result<Vec<u8>, ExportError> {
    check_size(options)?;
    register_font()?;
    let (w, h) = (options.width_px, options.height_px);
    // Within MAX_PLOT_PX, so this cannot overflow.
    let mut pixels = vec![255u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
        draw_figure(&root, runs, options)?;
    }
    encode_png(&pixels, w, h)
}

/// `width` × `height` RGB `pixels` (as plotters' bitmap backend draws them) as PNG bytes.
pub(crate) fn encode_png(pixels: &[u8], width: u32, height: u32) -> Result<Vec<u8>, ExportError> {
    let mut png = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut png),
        pixels,
        width,
        height,
        image::ExtendedColorType::Rgb8,
    )
    .map_err(|e| ExportError::Encode(e.to_string()))?;
    Ok(png)
}

/// Writes whichever of the CSV, PNG and SVG are asked for, each atomically so a failed export
/// never leaves half a file where a good one was.
pub fn save(
    runs: &[&RunHistory],
    options: &PlotOptions,
    csv: Option<&Path>,
    png: Option<&Path>,
    svg: Option<&Path>,
) -> Result<(), ExportError> {
    if csv.is_none() && png.is_none() && svg.is_none() {
        return Err(ExportError::NoOutput);
    }
    // Everything is rendered before anything is written, so a drawing error writes nothing.
    let mut files: Vec<(&Path, Vec<u8>)> = Vec::new();
    if let Some(path) = csv {
        let mut bytes = Vec::new();
        write_csv(runs, &mut bytes)?;
        files.push((path, bytes));
    }
    if let Some(path) = png {
        files.push((path, render_png(runs, options)?));
    }
    if let Some(path) = svg {
        files.push((path, render_svg(runs, options)?.into_bytes()));
    }
    for (path, bytes) in files {
        write_atomically(path, &bytes).map_err(|source| ExportError::Io {
            path: path.to_owned(),
            source,
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ExperimentDraft;
    use crate::run_folder::{EpochRow, MetricsRow};

    fn metrics(epoch: usize, step: usize, steps_per_epoch: usize, loss: f64) -> MetricsRow {
        let global_step = (epoch - 1) * steps_per_epoch + step;
        MetricsRow {
            wall_secs: global_step as f64 * 0.1,
            epoch,
            step,
            global_step,
            samples_seen: global_step as u64 * 64,
            train_loss: loss,
            train_accuracy: 1.0 - loss / 3.0,
            samples_per_sec: 5000.0 + step as f64,
            step_ms: 12.0 - step as f64 * 0.1,
            data_ms: 0.1,
            compute_ms: 10.0,
            sync_ms: 1.0,
            lr: 0.01,
        }
    }

    /// A run of `epochs` epochs, 4 readbacks each, with a config differing by `lr`.
    fn run(name: &str, lr: f64, epochs: usize) -> RunHistory {
        let mut history = RunHistory {
            path: PathBuf::from(format!("runs/20260101-000000-{name}")),
            name: name.to_owned(),
            config: Some(ExperimentDraft {
                name: name.to_owned(),
                lr,
                ..ExperimentDraft::default()
            }),
            ..RunHistory::default()
        };
        for epoch in 1..=epochs {
            for step in 1..=4 {
                history
                    .metrics
                    .push(metrics(epoch, step * 25, 100, 2.0 / (epoch * step) as f64));
            }
            history.epochs.push(EpochRow {
                epoch,
                train_loss: Some(1.0 / epoch as f64),
                train_accuracy: Some(0.5),
                val_loss: None,
                val_accuracy: None,
                test_loss: Some(1.2 / epoch as f64),
                test_accuracy: Some(0.45),
                epoch_secs: Some(10.0),
                eval_secs: Some(1.0),
                samples_per_sec: Some(6000.0),
            });
        }
        history
    }

    fn small() -> PlotOptions {
        PlotOptions {
            width_px: 800,
            height_px: 500,
            ..PlotOptions::default()
        }
    }

    #[test]
    fn runs_differing_only_in_seed_get_a_band() {
        let seeded = |seed: u64, shift: f64| {
            let mut history = run(&format!("s{seed}"), 0.01, 3);
            if let Some(config) = history.config.as_mut() {
                config.seed = seed;
            }
            for epoch in &mut history.epochs {
                epoch.test_accuracy = epoch.test_accuracy.map(|a| a + shift);
            }
            history
        };
        let (a, b) = (seeded(1, 0.0), seeded(2, 0.05));
        let svg = render_svg(&[&a, &b], &small()).unwrap();
        // Two quads (3 epochs) in each of the loss and accuracy charts.
        assert_eq!(svg.matches("<polygon").count(), 4, "{svg}");
        // Different settings: no band.
        let c = run("c", 0.1, 3);
        let svg = render_svg(&[&a, &c], &small()).unwrap();
        assert_eq!(svg.matches("<polygon").count(), 0);
    }

    #[test]
    fn csv_has_one_row_per_readback_and_per_epoch() {
        let a = run("a", 0.01, 2);
        let b = run("b", 0.1, 3);
        let mut out = Vec::new();
        write_csv(&[&a, &b], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(lines.len(), 1 + (8 + 2) + (12 + 3));
        let columns = CSV_HEADER.split(',').count();
        for line in &lines[1..] {
            assert_eq!(line.split(',').count(), columns, "{line}");
        }
        let kind = |k: &str| {
            lines
                .iter()
                .filter(|l| l.split(',').nth(1) == Some(k))
                .count()
        };
        assert_eq!(kind("step"), 20);
        assert_eq!(kind("epoch"), 5);
        // An epoch's readbacks, then its evaluation, placed at the epoch's last readback.
        assert!(
            lines[1].starts_with("lr 0.01,step,1,25,25,"),
            "{}",
            lines[1]
        );
        assert_eq!(
            lines[5],
            "lr 0.01,epoch,1,100,100,10,6400,1,0.5,,,1.2,0.45,6000,,"
        );
        assert!(lines[11].starts_with("lr 0.1,step,1,"), "{}", lines[11]);
    }

    #[test]
    fn csv_quotes_labels_and_tolerates_epochs_without_readbacks() {
        let mut a = run("a", 0.01, 1);
        a.config.as_mut().unwrap().batch_size = 32;
        let mut b = run("b", 0.1, 1);
        b.metrics.clear();
        let mut out = Vec::new();
        write_csv(&[&a, &b], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\"lr 0.01, batch 32\",step,"), "{text}");
        assert!(
            text.contains("\"lr 0.1, batch 64\",epoch,1,,,,,1,"),
            "{text}"
        );
        let mut out = Vec::new();
        write_csv(&[], &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), format!("{CSV_HEADER}\n"));
    }

    #[test]
    fn svg_has_title_axes_and_legend() {
        let a = run("a", 0.01, 2);
        let b = run("b", 0.1, 2);
        let svg = render_svg(&[&a, &b], &small()).unwrap();
        assert!(svg.contains("<svg"), "{}", &svg[..200.min(svg.len())]);
        for text in [
            "Kiln: 2 runs",
            "Loss",
            "Accuracy (%)",
            "Throughput (samples/s)",
            "Step time (ms)",
            "\nstep\n</text>",
            "samples/s",
            "lr 0.01",
            "lr 0.1",
            "train (solid)",
            "test (dashed, per epoch)",
        ] {
            assert!(svg.contains(text), "{text} is missing");
        }
        let options = PlotOptions {
            x_axis: XAxis::WallSecs,
            title: Some("Mine".to_owned()),
            ..small()
        };
        let svg = render_svg(&[&a], &options).unwrap();
        assert!(svg.contains("Mine"));
        assert!(svg.contains("wall time (s)"));
        let svg = render_svg(&[&a], &small()).unwrap();
        assert!(svg.contains("Kiln: a"));
    }

    #[test]
    fn a_warm_up_step_time_is_marked_off_the_scale_instead_of_flattening_the_chart() {
        let mut warm = run("warm", 0.01, 2);
        // A minute and a half of shader compilation in the first window.
        warm.metrics[0].step_ms = 90_000.0;
        let svg = render_svg(&[&warm], &small()).unwrap();
        assert!(
            svg.contains("triangles: off the scale, up to 90000 ms"),
            "{svg}"
        );
        // The scale ends near the steady 12 ms: no tick of the warm-up's tens of thousands
        // (no other chart reaches them).
        for tick in ["\n40000\n</text>", "\n50000\n</text>", "\n60000\n</text>"] {
            assert!(!svg.contains(tick), "{tick} is on the step time scale");
        }
        let steady = run("steady", 0.01, 2);
        let svg = render_svg(&[&steady], &small()).unwrap();
        assert!(!svg.contains("off the scale"));
    }

    #[test]
    fn png_decodes_at_the_requested_size_and_is_not_blank() {
        let a = run("a", 0.01, 3);
        let bytes = render_png(&[&a], &small()).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        let image = image::load_from_memory(&bytes).unwrap().to_rgb8();
        assert_eq!(image.dimensions(), (800, 500));
        let first = *image.get_pixel(0, 0);
        let different = image.pixels().filter(|p| **p != first).count();
        assert!(different > 1000, "only {different} pixels differ");
        // The run's colour was drawn.
        assert!(image.pixels().any(|p| p.0 == [31, 119, 180]));
    }

    #[test]
    fn text_renders_in_the_png() {
        // The title band holds only text; without a font it would stay white.
        let a = run("a", 0.01, 1);
        let bytes = render_png(&[&a], &small()).unwrap();
        let image = image::load_from_memory(&bytes).unwrap().to_rgb8();
        let dark = (300..500)
            .flat_map(|x| (0..20).map(move |y| (x, y)))
            .filter(|&(x, y)| image.get_pixel(x, y).0.iter().all(|&c| c < 128))
            .count();
        assert!(dark > 20, "the title left {dark} dark pixels");
    }

    #[test]
    fn nan_infinite_and_empty_runs_do_not_fail() {
        let mut a = run("a", 0.01, 2);
        a.metrics[1].train_loss = f64::NAN;
        a.metrics[2].train_loss = f64::INFINITY;
        a.metrics[3].wall_secs = f64::NAN;
        a.epochs[0].test_accuracy = Some(f64::NAN);
        let mut all_nan = run("nan", 0.1, 1);
        for m in &mut all_nan.metrics {
            m.train_loss = f64::NAN;
            m.global_step = 0;
        }
        let empty = RunHistory {
            name: "empty".to_owned(),
            ..RunHistory::default()
        };
        for runs in [
            vec![&a],
            vec![&a, &all_nan, &empty],
            vec![&empty],
            vec![&all_nan],
            vec![],
        ] {
            for x_axis in [XAxis::Steps, XAxis::WallSecs] {
                let options = PlotOptions { x_axis, ..small() };
                render_png(&runs, &options).unwrap();
                let svg = render_svg(&runs, &options).unwrap();
                if runs.is_empty() || runs[0].name == "empty" {
                    assert!(svg.contains("no data"));
                }
            }
            let mut out = Vec::new();
            write_csv(&runs, &mut out).unwrap();
        }
    }

    #[test]
    fn tick_labels_have_the_decimals_the_span_needs() {
        let steps = tick_format(0.0, 300.0);
        assert_eq!(steps(&150.0), "150");
        let loss = tick_format(0.0, 2.1);
        assert_eq!(loss(&0.2), "0.2");
        assert_eq!(loss(&-0.0), "0.0");
        let lr = tick_format(0.0, 0.001);
        assert_eq!(lr(&0.0005), "0.0005");
        assert_eq!(tick_format(1.0, 1.0)(&1.0), "1");
    }

    #[test]
    fn sizes_and_axes_are_checked() {
        let a = run("a", 0.01, 1);
        for (w, h) in [(0, 500), (800, 10), (100_000, 500)] {
            let options = PlotOptions {
                width_px: w,
                height_px: h,
                ..PlotOptions::default()
            };
            let err = render_png(&[&a], &options).unwrap_err();
            assert!(matches!(err, ExportError::Size { .. }), "{err}");
        }
        assert_eq!("steps".parse::<XAxis>().unwrap(), XAxis::Steps);
        assert_eq!("wall".parse::<XAxis>().unwrap(), XAxis::WallSecs);
        assert_eq!(
            XAxis::WallSecs.to_string().parse::<XAxis>().unwrap(),
            XAxis::WallSecs
        );
        assert_eq!(
            XAxis::Epochs.to_string().parse::<XAxis>().unwrap(),
            XAxis::Epochs
        );
        assert!(
            "samples"
                .parse::<XAxis>()
                .unwrap_err()
                .to_string()
                .contains("steps, wall or epochs")
        );
    }

    #[test]
    fn save_writes_each_file_asked_for() {
        let dir = crate::data::test_dir("export-save");
        let a = run("a", 0.01, 1);
        let (csv, png, svg) = (dir.join("a.csv"), dir.join("a.png"), dir.join("a.svg"));
        save(&[&a], &small(), Some(&csv), Some(&png), Some(&svg)).unwrap();
        assert!(
            std::fs::read_to_string(&csv)
                .unwrap()
                .starts_with(CSV_HEADER)
        );
        assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
        assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
        assert!(matches!(
            save(&[&a], &small(), None, None, None).unwrap_err(),
            ExportError::NoOutput
        ));
        let err = save(
            &[&a],
            &small(),
            Some(&dir.join("missing/a.csv")),
            None,
            None,
        )
        .unwrap_err();
        assert!(err.to_string().contains("missing"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
