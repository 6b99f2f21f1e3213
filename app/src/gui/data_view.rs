//! The Data window: the Setup form's data set as a run would split it, before any training:
//! images per class and split as bars, a row of training images per class, what the training
//! augmentation does to a few of them, the files that were left out and the images found in
//! more than one split. Loading a folder of photos takes a while, so it happens on a named
//! thread and the window stays live; so does each redraw of the augmentation preview.

use kiln_core::config::Experiment;
use kiln_core::data::{self, ImageShape, inspect::DataReport, inspect::SPLIT_NAMES};

use super::background_job::BackgroundJob;

/// Training images per class shown in the grid.
const SAMPLES_PER_CLASS: usize = 10;
/// Training images the augmentation preview shows, one per class in turn.
const PREVIEW_IMAGES: usize = 8;
/// Training steps the augmentation preview draws, one row each.
const PREVIEW_DRAWS: usize = 4;

/// What the window shows once the data set is read: the report and its sample grid.
pub struct Inspected {
    /// Counts, skipped files, duplicates.
    pub report: DataReport,
    /// RGBA pixels of the sample grid, with its width and height.
    pub grid: (Vec<u8>, usize, usize),
    /// The bytes of the few training images the augmentation preview shows.
    pub preview_images: Vec<u8>,
    /// Their shape.
    pub shape: ImageShape,
}

/// The settings the augmentation preview depends on: a change of any redraws it.
#[derive(Debug, Clone, PartialEq)]
struct PreviewKey {
    crop_padding: usize,
    flip: bool,
    crop_scale: f64,
    rotation_degrees: f64,
    brightness: f64,
    contrast: f64,
    resize: Option<usize>,
    seed: u64,
    device: String,
}

impl PreviewKey {
    fn of(experiment: &Experiment) -> Self {
        Self {
            crop_padding: experiment.crop_padding,
            flip: experiment.flip,
            crop_scale: experiment.crop_scale,
            rotation_degrees: experiment.rotation_degrees,
            brightness: experiment.brightness,
            contrast: experiment.contrast,
            resize: experiment.model.input_resize(),
            seed: experiment.seed,
            device: experiment.device.to_string(),
        }
    }
}

/// The settings the counts and the sample grid depend on: a change of any reads the data anew.
#[derive(Debug, Clone, PartialEq)]
struct DataKey {
    dataset: String,
    data_dir: Option<std::path::PathBuf>,
    validation: kiln_core::config::Validation,
    val_split: f64,
    test_split: f64,
    seed: u64,
}

impl DataKey {
    fn of(experiment: &Experiment) -> Self {
        Self {
            dataset: experiment.dataset.to_string(),
            data_dir: experiment.data_dir.clone(),
            validation: experiment.validation,
            val_split: experiment.val_split,
            test_split: experiment.test_split,
            seed: experiment.seed,
        }
    }
}

/// The augmentation preview: the grid, computed on a thread, for the settings it was drawn with.
struct Preview {
    key: PreviewKey,
    grid: BackgroundJob<(Vec<u8>, usize, usize)>,
    texture: Option<egui::TextureHandle>,
}

/// The Data window's state: it owns the loading thread's channel, the preview's, and the
/// grids' textures.
pub struct DataView {
    /// The data set, as the form names it.
    pub title: String,
    /// Boxed: the report is large and arrives once.
    stage: BackgroundJob<Box<Inspected>>,
    texture: Option<egui::TextureHandle>,
    preview: Option<Preview>,
    /// Why the form's settings cannot be previewed now, if they cannot.
    preview_blocked: Option<String>,
    /// The settings the data was read and split with; none for a view built ready.
    data_key: Option<DataKey>,
}

impl DataView {
    /// Reads and splits `experiment`'s data set on a thread named `kiln-inspect`.
    pub fn open(experiment: Experiment, wake: impl Fn() + Send + 'static) -> Self {
        let title = experiment.dataset.to_string();
        let data_key = Some(DataKey::of(&experiment));
        let work = move || {
            let loaded = data::load(
                &experiment.dataset,
                experiment.data_dir.as_deref(),
                experiment.resize,
            )
            .map_err(|e| e.to_string())?;
            let split = data::make_splits(loaded, &experiment).map_err(|e| e.to_string())?;
            Ok(Box::new(Inspected {
                report: data::inspect::inspect(&split),
                grid: data::inspect::sample_grid(&split, SAMPLES_PER_CLASS),
                preview_images: data::inspect::preview_images(&split, PREVIEW_IMAGES),
                shape: split.shape,
            }))
        };
        let stage = BackgroundJob::start("kiln-inspect", work, wake);
        Self {
            title,
            stage,
            texture: None,
            preview: None,
            preview_blocked: None,
            data_key,
        }
    }

    /// A view of data already inspected, as the window's tests build it.
    pub fn ready(title: &str, inspected: Inspected) -> Self {
        Self {
            title: title.to_owned(),
            stage: BackgroundJob::Ready(Box::new(inspected)),
            texture: None,
            preview: None,
            preview_blocked: None,
            data_key: None,
        }
    }

    /// The data set's report, once read and split.
    pub fn report(&mut self) -> Option<&DataReport> {
        self.stage.poll();
        match &self.stage {
            BackgroundJob::Ready(inspected) => Some(&inspected.report),
            _ => None,
        }
    }

    /// The augmentation preview's RGBA grid with its width and height, once drawn for the
    /// settings last followed; `None` while it is being drawn or could not be.
    pub fn preview(&mut self) -> Option<&(Vec<u8>, usize, usize)> {
        let preview = self.preview.as_mut()?;
        preview.grid.poll();
        match &preview.grid {
            BackgroundJob::Ready(grid) => Some(grid),
            _ => None,
        }
    }

    /// Keeps the view drawn with the form's current settings: another data set or split reads
    /// the data anew, and another augmentation redraws the preview on a thread named
    /// `kiln-preview`, through the batch pass training uses.
    pub fn follow(
        &mut self,
        experiment: Result<&Experiment, String>,
        wake: impl Fn() + Send + 'static,
    ) {
        if let (Ok(experiment), Some(key)) = (&experiment, &self.data_key)
            && *key != DataKey::of(experiment)
        {
            *self = Self::open((*experiment).clone(), wake);
            return;
        }
        let BackgroundJob::Ready(inspected) = &self.stage else {
            return;
        };
        let experiment = match experiment {
            Ok(experiment) => experiment,
            Err(reason) => {
                self.preview_blocked = Some(reason);
                return;
            }
        };
        self.preview_blocked = None;
        let key = PreviewKey::of(experiment);
        if self.preview.as_ref().is_some_and(|p| p.key == key) {
            return;
        }
        let (experiment, images, shape) = (
            experiment.clone(),
            inspected.preview_images.clone(),
            inspected.shape,
        );
        let work = move || {
            let (_, device) =
                kiln_core::device::resolve(&experiment.device).map_err(|e| e.to_string())?;
            kiln_core::train::augmentation_preview(
                &experiment,
                shape,
                &images,
                PREVIEW_DRAWS,
                &device,
            )
            .map_err(|e| e.to_string())
        };
        self.preview = Some(Preview {
            key,
            grid: BackgroundJob::start("kiln-preview", work, wake),
            texture: None,
        });
    }
}

/// The Data window's contents.
pub fn data_view_ui(ui: &mut egui::Ui, view: &mut DataView) {
    view.stage.poll();
    let inspected = match &view.stage {
        BackgroundJob::Waiting(_) => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("reading {}…", view.title));
            });
            return;
        }
        BackgroundJob::Failed(reason) => {
            ui.colored_label(ui.visuals().error_fg_color, reason);
            return;
        }
        BackgroundJob::Ready(inspected) => inspected,
    };
    let report = &inspected.report;
    let [channels, height, width] = report.shape;
    ui.label(format!(
        "{}: {} classes, {width}×{height} pixels, {}",
        report.name,
        report.class_names.len(),
        if channels == 1 { "grayscale" } else { "RGB" }
    ));
    if let Some(line) = report.sources_line(4) {
        ui.label(format!("Read from: {line}"))
            .on_hover_text("The sizes and colour modes of the files, before every image is resized to the size above.");
    }
    egui::ScrollArea::vertical()
        .id_salt("data-view-scroll")
        .show(ui, |ui| {
            counts_ui(ui, report);
            ui.separator();
            ui.strong("Training images, a row per class");
            grid_ui(ui, &mut view.texture, "data-samples", &inspected.grid);
            ui.separator();
            preview_ui(ui, &mut view.preview, view.preview_blocked.as_deref());
            ui.separator();
            problems_ui(ui, report);
        });
}

/// The augmentation preview: the images as evaluated, then as a few training steps draw them.
fn preview_ui(ui: &mut egui::Ui, preview: &mut Option<Preview>, blocked: Option<&str>) {
    ui.strong("Training augmentation")
        .on_hover_text("Top row: the images as validation and test see them. Each row below: one training step's draw of crop, flip, rotation and jitter, made by the same pass on the same device that trains. It redraws when an augmentation setting changes.");
    if let Some(reason) = blocked {
        ui.colored_label(ui.visuals().warn_fg_color, format!("not shown: {reason}"));
        return;
    }
    let Some(preview) = preview else {
        return;
    };
    preview.grid.poll();
    match &preview.grid {
        BackgroundJob::Waiting(_) => {
            ui.spinner();
        }
        BackgroundJob::Failed(reason) => {
            ui.colored_label(ui.visuals().error_fg_color, reason);
        }
        BackgroundJob::Ready(grid) => {
            grid_ui(ui, &mut preview.texture, "augmentation-preview", grid);
        }
    }
}

/// An RGBA grid of small images, magnified to about 360 points wide with sharp pixels; its
/// texture is made once, on the first frame that shows it.
fn grid_ui(
    ui: &mut egui::Ui,
    texture: &mut Option<egui::TextureHandle>,
    name: &str,
    (pixels, width, height): &(Vec<u8>, usize, usize),
) {
    let texture = texture.get_or_insert_with(|| {
        let image = egui::ColorImage::from_rgba_unmultiplied([*width, *height], pixels);
        ui.ctx()
            .load_texture(name, image, egui::TextureOptions::NEAREST)
    });
    let scale = (360.0 / *width as f32).clamp(1.0, 4.0);
    ui.image((texture.id(), texture.size_vec2() * scale));
}

/// One row per class with its images in each split, then the same as a bar chart: a group of
/// three bars (train, validation, test) per class.
fn counts_ui(ui: &mut egui::Ui, report: &DataReport) {
    egui::Grid::new("data-counts")
        .striped(true)
        .spacing([12.0, 2.0])
        .show(ui, |ui| {
            ui.strong(match report.label_sets {
                Some(_) => "label",
                None => "class",
            });
            for name in SPLIT_NAMES {
                ui.strong(name);
            }
            ui.end_row();
            for (class, name) in report.class_names.iter().enumerate() {
                ui.label(name);
                for counts in &report.counts {
                    ui.label(counts.get(class).copied().unwrap_or(0).to_string());
                }
                ui.end_row();
            }
        });
    counts_chart_ui(ui, report);
    let imbalance = report.imbalance();
    if imbalance >= 3.0 && report.label_sets.is_none() {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            format!(
                "Unbalanced: the largest class has {imbalance:.1}× the training images of the smallest. Read recall and F1 per class, or set Class weights to balanced."
            ),
        );
    }
}

/// Images per class and split as grouped bars, classes along the x axis by name.
fn counts_chart_ui(ui: &mut egui::Ui, report: &DataReport) {
    use egui_plot::{Bar, BarChart, Legend, Plot};
    const BAR_WIDTH: f64 = 0.28;
    // Each name cut with "…" to its class's slot of the x axis: egui_plot leaves out a label
    // wider than the space between two, and the first class's name went missing that way.
    // A bar's tooltip names its class in full.
    let slot_width = (ui.available_width() - 60.0) / (report.class_names.len() as f32 + 0.5);
    let font = egui::TextStyle::Body.resolve(ui.style());
    let names: Vec<String> = report
        .class_names
        .iter()
        .map(|name| super::results_panel::fit_text(ui, name, &font, slot_width - 8.0))
        .collect();
    let most = report.counts.iter().flatten().copied().max().unwrap_or(0) as f64;
    Plot::new("data-counts-chart")
        .height(220.0)
        .legend(Legend::default().follow_insertion_order(true))
        .allow_zoom(false)
        .allow_drag(false)
        .allow_scroll(false)
        .include_y(0.0)
        // Room beside the first and last bars for their classes' names, which egui_plot
        // centres under them and leaves out where they would cross the chart's edge.
        .include_x(-0.75)
        .include_x(names.len() as f64 - 0.25)
        // Headroom above the tallest bar for the legend, so it never sits over a bar.
        .include_y(most * 1.45)
        .x_grid_spacer(|input| {
            let (low, high) = input.bounds;
            (low.ceil() as i64..=high.floor() as i64)
                .map(|class| egui_plot::GridMark {
                    value: class as f64,
                    step_size: 1.0,
                })
                .collect()
        })
        .x_axis_formatter(move |mark, _| {
            let class = mark.value.round();
            if (mark.value - class).abs() > 1e-6 || class < 0.0 {
                return String::new();
            }
            names.get(class as usize).cloned().unwrap_or_default()
        })
        .show(ui, |plot| {
            for (split, counts) in report.counts.iter().enumerate() {
                let offset = (split as f64 - 1.0) * BAR_WIDTH;
                let bars = counts
                    .iter()
                    .enumerate()
                    .map(|(class, &count)| {
                        Bar::new(class as f64 + offset, count as f64)
                            .width(BAR_WIDTH)
                            .name(&report.class_names[class])
                    })
                    .collect();
                plot.bar_chart(
                    BarChart::new(SPLIT_NAMES[split], bars).color(super::run_color(split)),
                );
            }
        });
}

/// The files left out and the images found in more than one split.
fn problems_ui(ui: &mut egui::Ui, report: &DataReport) {
    for note in &report.notes {
        ui.colored_label(ui.visuals().warn_fg_color, note);
    }
    for line in report.label_set_lines() {
        match line.strip_prefix("warning: ") {
            Some(warning) => ui.colored_label(ui.visuals().warn_fg_color, warning),
            None => ui.label(line),
        };
    }
    if report.skipped.is_empty() {
        ui.label("No file was left out.");
    } else {
        ui.strong(format!("{} file(s) left out", report.skipped.len()));
        for file in &report.skipped {
            ui.label(format!("{}: {}", file.path.display(), file.reason));
        }
    }
    if report.duplicates.is_empty() {
        ui.label("No image appears in more than one split.");
    } else {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            format!(
                "{} image(s) appear in more than one split: a leak that flatters validation and test figures.",
                report.duplicates.len()
            ),
        );
        for duplicate in report.duplicates.iter().take(50) {
            ui.label(duplicate.describe());
        }
    }
}
