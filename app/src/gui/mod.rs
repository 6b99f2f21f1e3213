//! The window: setup on the left, live plots in the middle, past runs on the right, a status line
//! at the bottom. Training runs on a named thread; its events are drained once per frame.

mod fetch;
mod plots;
mod profile;
mod runs;
mod session;
mod setup;
mod try_model;

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use egui::{Key, KeyboardShortcut, Modifiers};
use kiln_core::compare::{Comparison, compare};
use kiln_core::data::{self, DataError};
use kiln_core::device::DeviceInfo;
use kiln_core::export::{self, PlotOptions};
use kiln_core::plot::XAxis;
use kiln_core::results::TestPredictions;
use kiln_core::run_folder::{self, RunHistory};
use serde::{Deserialize, Serialize};

pub use plots::{PlotRun, SeedBand, plot_runs, plots_ui, run_color};
pub use profile::{ProfiledRun, step_profile_ui};

pub use runs::{ExportKind, RunsAction, RunsPanel, runs_ui};
pub use session::{Session, SessionState};
pub use setup::{DatasetKind, FormCheck, SetupAction, SetupContext, SetupForm, setup_ui};

use fetch::FetchJob;
pub use try_model::{TryModel, try_model_ui};

/// Starts a run (shown in the Start button's tooltip).
pub const START_SHORTCUT: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::Enter);
/// Pauses or resumes the run.
pub const PAUSE_SHORTCUT: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::Space);
/// Cancels the run (⌘. as on macOS, Ctrl+. elsewhere).
pub const CANCEL_SHORTCUT: KeyboardShortcut =
    KeyboardShortcut::new(Modifiers::COMMAND, Key::Period);

/// Wakes the UI for a message from a worker. A zero-delay request makes egui paint twice; a
/// short delay paints once and merges a burst (readback, epoch end) into one frame, which halves
/// what the window costs a run that shares the CPU with it.
fn wake(ctx: &egui::Context) {
    ctx.request_repaint_after(WAKE_DELAY);
}

/// Delay between a worker's message and the frame that shows it.
const WAKE_DELAY: Duration = Duration::from_millis(30);

/// How long one frame may spend taking events off the channel.
const DRAIN_BUDGET: Duration = Duration::from_millis(4);

/// What is remembered between launches.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
struct Remembered {
    form: SetupForm,
    wall_time_axis: bool,
}

/// Settings fixed when the window opens.
#[derive(Debug, Clone)]
pub struct AppOptions {
    /// Where run folders go and are read from.
    pub runs_dir: PathBuf,
    /// Devices to offer; none lists them on a background thread.
    pub devices: Option<Vec<DeviceInfo>>,
    /// Restore the last settings from the window's storage.
    pub restore: bool,
}

/// Where the device list stands.
enum Devices {
    Listing(Receiver<Vec<DeviceInfo>>),
    Ready(Vec<DeviceInfo>),
}

/// The whole application state.
pub struct KilnApp {
    ctx: egui::Context,
    /// The setup form.
    pub form: SetupForm,
    runs_dir: PathBuf,
    /// The run started from this window, if any.
    pub session: Option<Session>,
    /// Past runs.
    pub runs: RunsPanel,
    x_axis: XAxis,
    devices: Devices,
    data_location: Option<(DatasetKind, Option<PathBuf>, Result<PathBuf, String>)>,
    fetch: Option<FetchJob>,
    fetch_message: Option<String>,
    /// The last message for the person (export written, rename failed…).
    pub notice: Option<String>,
    /// The "Try the model" window, when open.
    pub try_model: Option<TryModel>,
    /// The one ticked past run's predictions, read once: its folder and what it holds.
    past_predictions: Option<(PathBuf, Option<TestPredictions>)>,
}

impl KilnApp {
    /// Builds the app; the runs list is read at once, devices are listed in the background.
    pub fn new(cc: &eframe::CreationContext<'_>, options: AppOptions) -> Self {
        let remembered: Remembered = if options.restore {
            cc.storage
                .and_then(|s| eframe::get_value(s, eframe::APP_KEY))
                .unwrap_or_default()
        } else {
            Remembered::default()
        };
        let ctx = cc.egui_ctx.clone();
        // A blinking cursor repaints the window several times a second for as long as a field
        // has focus; on a software renderer that steals CPU from a run on the same cores.
        ctx.all_styles_mut(|style| style.visuals.text_cursor.blink = false);
        let devices = match options.devices {
            Some(list) => Devices::Ready(list),
            None => list_devices_in_background(ctx.clone()),
        };
        let mut app = Self {
            ctx,
            form: remembered.form,
            runs_dir: options.runs_dir,
            session: None,
            runs: RunsPanel::default(),
            x_axis: if remembered.wall_time_axis {
                XAxis::WallSecs
            } else {
                XAxis::Steps
            },
            devices,
            data_location: None,
            fetch: None,
            fetch_message: None,
            notice: None,
            try_model: None,
            past_predictions: None,
        };
        app.refresh_runs();
        app
    }

    fn refresh_runs(&mut self) {
        if let Err(reason) = self.runs.refresh(&self.runs_dir) {
            self.notice = Some(reason);
        }
    }

    fn device_list(&self) -> Option<&[DeviceInfo]> {
        match &self.devices {
            Devices::Ready(list) => Some(list),
            Devices::Listing(_) => None,
        }
    }

    /// Whether a run is going.
    pub fn is_training(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.state.is_active())
    }

    /// Starts a run of the form's experiment; does nothing while one is going.
    pub fn start(&mut self) {
        if self.is_training() {
            return;
        }
        let check = self.form.check();
        if let Some(reason) = self.start_blocker(&check) {
            self.notice = Some(reason);
            return;
        }
        let Some(experiment) = check.experiment else {
            return;
        };
        let ctx = self.ctx.clone();
        match Session::start(experiment, self.runs_dir.clone(), move || wake(&ctx)) {
            Ok(session) => {
                self.session = Some(session);
                self.notice = None;
                // The form is locked while training; a focused field would only keep repainting.
                self.ctx.memory_mut(|memory| memory.stop_text_input());
            }
            Err(e) => self.notice = Some(format!("could not start the training thread: {e}")),
        }
    }

    /// Continues the stopped run in `folder` from its last checkpoint; does nothing while a run
    /// is going.
    pub fn resume(&mut self, folder: &Path) {
        if self.is_training() {
            self.notice = Some("a run is going; resume this one when it ends".to_owned());
            return;
        }
        let ctx = self.ctx.clone();
        match Session::resume_run(folder, move || wake(&ctx)) {
            Ok(session) => {
                self.session = Some(session);
                self.notice = None;
            }
            Err(reason) => self.notice = Some(reason),
        }
    }

    /// Why Start cannot run now: a field of the form, or a named data set not on this computer.
    fn start_blocker(&mut self, check: &FormCheck) -> Option<String> {
        check
            .blocking_reason()
            .or_else(|| match self.data_location() {
                Some(Err(reason)) => Some(format!("Data set: {reason}")),
                _ => None,
            })
    }

    /// Pauses a running run or resumes a paused one.
    pub fn toggle_pause(&mut self) {
        if let Some(session) = &mut self.session {
            match session.state {
                SessionState::Running => session.pause(),
                SessionState::Paused => session.resume(),
                _ => {}
            }
        }
    }

    /// Cancels the run; its folder keeps what was done.
    pub fn cancel(&mut self) {
        if let Some(session) = &mut self.session {
            session.cancel();
        }
    }

    fn poll_background(&mut self) {
        if let Devices::Listing(receiver) = &self.devices
            && let Ok(list) = receiver.try_recv()
        {
            self.devices = Devices::Ready(list);
        }
        let mut finished = false;
        if let Some(session) = &mut self.session {
            let was_active = session.state.is_active();
            session.drain(DRAIN_BUDGET);
            finished = was_active && !session.state.is_active();
        }
        if finished {
            self.refresh_runs();
        }
        if let Some(job) = &mut self.fetch
            && let Some(result) = job.poll()
        {
            self.fetch_message = Some(match result {
                Ok(path) => format!(
                    "{} is ready in {} (checksums verified)",
                    job.dataset.display_name(),
                    path.display()
                ),
                Err(reason) => reason,
            });
            self.fetch = None;
            self.data_location = None;
        }
    }

    fn data_location(&mut self) -> Option<Result<PathBuf, String>> {
        let remote = self.form.dataset.remote()?;
        let stale = self
            .data_location
            .as_ref()
            .is_none_or(|(kind, dir, _)| *kind != self.form.dataset || *dir != self.form.data_dir);
        if stale {
            let found = data::locate(remote, self.form.data_dir.as_deref()).map_err(|e| match e {
                DataError::NotFound { .. } => {
                    format!(
                        "not found on this computer; press Fetch to download {}",
                        remote.display_name()
                    )
                }
                other => other.to_string(),
            });
            self.data_location = Some((self.form.dataset, self.form.data_dir.clone(), found));
        }
        self.data_location
            .as_ref()
            .map(|(_, _, found)| found.clone())
    }

    fn handle_setup_action(&mut self, action: SetupAction) {
        match action {
            SetupAction::ChooseImageFolder => {
                if let Some(folder) = rfd::FileDialog::new()
                    .set_title("Folder with one sub-folder of images per class")
                    .pick_folder()
                {
                    self.form.folder = Some(folder);
                }
            }
            SetupAction::ChooseDataDir => {
                if let Some(folder) = rfd::FileDialog::new()
                    .set_title("Folder holding the data set's files")
                    .pick_folder()
                {
                    self.form.data_dir = Some(folder);
                }
            }
            SetupAction::Fetch => self.start_fetch(),
            SetupAction::CancelFetch => {
                if let Some(job) = &self.fetch {
                    job.cancel();
                }
            }
        }
    }

    fn start_fetch(&mut self) {
        let Some(remote) = self.form.dataset.remote() else {
            return;
        };
        let root = self
            .form
            .data_dir
            .clone()
            .or_else(|| std::env::var_os(data::DATA_DIR_ENV).map(PathBuf::from))
            .or_else(data::default_data_root);
        let Some(root) = root else {
            self.fetch_message = Some(
                "this system has no per-user data folder; choose a data folder first".to_owned(),
            );
            return;
        };
        let ctx = self.ctx.clone();
        match FetchJob::start(remote, root, move || wake(&ctx)) {
            Ok(job) => {
                self.fetch = Some(job);
                self.fetch_message = None;
            }
            Err(e) => self.fetch_message = Some(format!("could not start the download: {e}")),
        }
    }

    fn handle_runs_action(&mut self, action: RunsAction) {
        match action {
            RunsAction::Refresh => self.refresh_runs(),
            RunsAction::Rename { path, name } => {
                match run_folder::rename_run(&path, &name) {
                    Ok(new_path) => {
                        if self.runs.selected.remove(&path) {
                            self.runs.selected.insert(new_path);
                        }
                        self.notice = None;
                    }
                    Err(e) => self.notice = Some(e.to_string()),
                }
                self.refresh_runs();
            }
            RunsAction::Delete(path) => {
                if let Err(e) = run_folder::delete_run(&path) {
                    self.notice = Some(e.to_string());
                }
                self.refresh_runs();
            }
            RunsAction::TryModel(path) => self.try_model = Some(TryModel::open(&path)),
            RunsAction::Resume(path) => self.resume(&path),
            RunsAction::UseSettings(path) => {
                match self
                    .runs
                    .runs
                    .iter()
                    .find(|r| r.path == path)
                    .and_then(|r| r.config.as_ref())
                {
                    Some(config) => self.form = SetupForm::from_draft(config),
                    None => {
                        self.notice =
                            Some(format!("{} has no readable config.toml", path.display()))
                    }
                }
            }
            RunsAction::Export(kind) => self.export(kind),
        }
    }

    /// The runs to export: the ticked ones, else the current run.
    fn export_runs(&self) -> Vec<&RunHistory> {
        let selected = self.runs.selected_runs();
        if !selected.is_empty() {
            return selected;
        }
        self.session.iter().map(|s| &s.history).collect()
    }

    fn export(&mut self, kind: ExportKind) {
        let runs = self.export_runs();
        if runs.is_empty() {
            self.notice = Some("tick one or more runs to export".to_owned());
            return;
        }
        let default_name = match runs.as_slice() {
            [one] => format!("{}.{}", one.folder_name(), kind.extension()),
            _ => format!("kiln-{}-runs.{}", runs.len(), kind.extension()),
        };
        let Some(path) = rfd::FileDialog::new()
            .set_title("Export")
            .add_filter(kind.extension().to_uppercase(), &[kind.extension()])
            .set_file_name(default_name)
            .save_file()
        else {
            return;
        };
        self.notice = Some(match export_to(&runs, kind, &path, self.x_axis) {
            Ok(()) => format!("wrote {}", path.display()),
            Err(reason) => reason,
        });
    }

    /// The runs on the plots: the current one first, then the ticked ones.
    fn plotted(&self) -> Vec<&RunHistory> {
        let mut runs: Vec<&RunHistory> = Vec::new();
        let live_path = self.session.as_ref().map(|s| s.history.path.clone());
        if let Some(session) = &self.session {
            runs.push(&session.history);
        }
        runs.extend(
            self.runs
                .selected_runs()
                .into_iter()
                .filter(|r| Some(&r.path) != live_path.as_ref()),
        );
        runs
    }

    fn shortcuts(&mut self, ctx: &egui::Context) {
        let (start, pause, cancel) = ctx.input_mut(|i| {
            (
                i.consume_shortcut(&START_SHORTCUT),
                i.consume_shortcut(&PAUSE_SHORTCUT),
                i.consume_shortcut(&CANCEL_SHORTCUT),
            )
        });
        if start {
            self.start();
        }
        if pause {
            self.toggle_pause();
        }
        if cancel {
            self.cancel();
        }
    }

    fn controls_ui(&mut self, ui: &mut egui::Ui, check: &FormCheck) {
        let ctx = ui.ctx().clone();
        let training = self.is_training();
        let blocked = self.start_blocker(check);
        ui.horizontal(|ui| {
            let start = ui
                .add_enabled(
                    !training && blocked.is_none(),
                    egui::Button::new("▶ Start")
                        .shortcut_text(ctx.format_shortcut(&START_SHORTCUT)),
                )
                .on_hover_text(format!(
                    "Train with these settings ({})",
                    ctx.format_shortcut(&START_SHORTCUT)
                ))
                .on_disabled_hover_text(
                    blocked
                        .clone()
                        .unwrap_or_else(|| "a run is going".to_owned()),
                );
            if start.clicked() {
                self.start();
            }
            let state = self.session.as_ref().map(|s| s.state.clone());
            let paused = state == Some(SessionState::Paused);
            let pause_text = if paused { "⏵ Resume" } else { "⏸ Pause" };
            let can_pause = matches!(state, Some(SessionState::Running | SessionState::Paused));
            if ui
                .add_enabled(can_pause, egui::Button::new(pause_text))
                .on_hover_text(format!(
                    "Hold or continue the run at a step boundary ({})",
                    ctx.format_shortcut(&PAUSE_SHORTCUT)
                ))
                .clicked()
            {
                self.toggle_pause();
            }
            if ui
                .add_enabled(training, egui::Button::new("⏹ Cancel"))
                .on_hover_text(format!(
                    "Stop the run; its folder keeps every row so far ({})",
                    ctx.format_shortcut(&CANCEL_SHORTCUT)
                ))
                .clicked()
            {
                self.cancel();
            }
            ui.separator();
            let mut wall = self.x_axis == XAxis::WallSecs;
            ui.label("x axis:");
            if ui
                .selectable_label(!wall, "steps")
                .on_hover_text("Plot against optimizer steps.")
                .clicked()
            {
                wall = false;
            }
            if ui
                .selectable_label(wall, "wall time")
                .on_hover_text("Plot against seconds since the run started.")
                .clicked()
            {
                wall = true;
            }
            self.x_axis = if wall { XAxis::WallSecs } else { XAxis::Steps };
        });
        // On its own wrapped line: a long reason in the button row would widen the panel.
        if let Some(reason) = blocked.filter(|_| !training) {
            ui.add(
                egui::Label::new(
                    egui::RichText::new(format!("Start is disabled: {reason}"))
                        .color(ui.visuals().error_fg_color),
                )
                .wrap(),
            );
        } else if let Some(notice) = &self.notice {
            ui.add(egui::Label::new(notice.as_str()).wrap());
        }
        if let Some(session) = &self.session {
            for warning in &session.warnings {
                ui.colored_label(ui.visuals().warn_fg_color, format!("⚠ {warning}"));
            }
            if let SessionState::Failed(reason) = &session.state {
                ui.colored_label(
                    ui.visuals().error_fg_color,
                    format!("The run failed: {reason}"),
                );
            }
        }
    }

    /// With no finished run in this window and exactly one past run ticked, reads that run's
    /// predictions once, so its per-class results can be shown.
    fn refresh_past_predictions(&mut self) {
        let live = self
            .session
            .as_ref()
            .is_some_and(|s| s.predictions.is_some());
        let wanted = match self.runs.selected.iter().collect::<Vec<_>>().as_slice() {
            [one] if !live => Some((*one).clone()),
            _ => None,
        };
        match wanted {
            None => self.past_predictions = None,
            Some(path) => {
                if self
                    .past_predictions
                    .as_ref()
                    .is_some_and(|(p, _)| *p == path)
                {
                    return;
                }
                let loaded = run_folder::load_predictions(&path).unwrap_or_else(|e| {
                    self.notice = Some(e.to_string());
                    None
                });
                self.past_predictions = Some((path, loaded));
            }
        }
    }

    fn central_ui(&mut self, ui: &mut egui::Ui, check: &FormCheck) {
        ui.heading("Training");
        self.controls_ui(ui, check);
        ui.separator();
        self.refresh_past_predictions();
        let histories = self.plotted();
        let labels = kiln_core::plot::legend_labels(&histories);
        let predictions = self
            .session
            .as_ref()
            .and_then(|s| s.predictions.as_ref())
            .or_else(|| self.past_predictions.as_ref().and_then(|(_, p)| p.as_ref()));
        if let Some(predictions) = predictions {
            egui::CollapsingHeader::new("Per-class results")
                .id_salt("per-class")
                .show(ui, |ui| {
                    // Ten classes do not fit beside the plots; scroll rather than push them out.
                    egui::ScrollArea::both()
                        .id_salt("per-class-scroll")
                        .max_height(ui.available_height() * 0.5)
                        .show(ui, |ui| confusion_ui(ui, predictions));
                });
        }
        let profiled: Vec<ProfiledRun<'_>> = histories
            .iter()
            .zip(&labels)
            .enumerate()
            .filter_map(|(i, (history, label))| {
                let profile = history.summary.as_ref()?.profile.as_ref()?;
                Some(ProfiledRun {
                    label,
                    color: run_color(i),
                    profile,
                })
            })
            .collect();
        if !profiled.is_empty() {
            egui::CollapsingHeader::new("Where a step's time goes (profiling mode)")
                .id_salt("step-profile")
                .default_open(true)
                .show(ui, |ui| step_profile_ui(ui, &profiled));
        }
        let mut bands = Vec::new();
        if histories.len() >= 2 {
            let comparison = compare(&histories);
            egui::CollapsingHeader::new("Compare runs")
                .id_salt("compare")
                .show(ui, |ui| compare_ui(ui, &comparison));
            bands = comparison
                .seed_groups
                .iter()
                .map(|group| SeedBand {
                    runs: group.runs.iter().map(|&i| histories[i]).collect(),
                    color: run_color(group.runs[0]),
                })
                .collect();
        }
        let plot_runs = plots::plot_runs(&histories, &labels);
        if plot_runs.is_empty() {
            ui.label("Press Start to train, or tick past runs on the right to compare them.");
        }
        plots_ui(ui, &plot_runs, &bands, self.x_axis);
    }
}

/// The runs side by side: settings that differ, then final figures and speed with their
/// difference to the first run, then the spread over seeds.
pub fn compare_ui(ui: &mut egui::Ui, comparison: &Comparison) {
    egui::ScrollArea::horizontal()
        .id_salt("compare-scroll")
        .show(ui, |ui| {
            egui::Grid::new("compare-grid")
                .striped(true)
                .spacing([16.0, 2.0])
                .show(ui, |ui| {
                    ui.label("");
                    for (i, label) in comparison.labels.iter().enumerate() {
                        ui.colored_label(run_color(i), label)
                            .on_hover_text(&comparison.folders[i]);
                    }
                    ui.end_row();
                    for (name, values) in &comparison.settings {
                        ui.label(*name);
                        for value in values {
                            ui.label(value);
                        }
                        ui.end_row();
                    }
                    for figure in &comparison.figures {
                        ui.label(figure.name);
                        for i in 0..figure.values.len() {
                            ui.label(figure.cell(i));
                        }
                        ui.end_row();
                    }
                });
        });
    for group in &comparison.seed_groups {
        let names: Vec<&str> = group
            .runs
            .iter()
            .map(|&i| comparison.labels[i].as_str())
            .collect();
        ui.label(format!(
            "Seeds only differ between {}: final test accuracy {:.2} ± {:.2} % (mean ± std).",
            names.join(", "),
            group.mean_accuracy_pct,
            group.std_accuracy_pct
        ));
    }
}

/// The confusion matrix as a heat map (each cell shaded by its share of the true class), the
/// accuracy of each class, and the test images the model got wrong with the most confidence.
pub fn confusion_ui(ui: &mut egui::Ui, predictions: &TestPredictions) {
    let confusion = predictions.confusion();
    let accuracy = predictions.per_class_accuracy();
    let short = |name: &str| name.chars().take(9).collect::<String>();
    let base = ui.visuals().selection.bg_fill;
    ui.vertical(|ui| {
        egui::Grid::new("confusion")
            .spacing([2.0, 2.0])
            .show(ui, |ui| {
                ui.label("true \\ predicted");
                for name in &predictions.class_names {
                    ui.label(short(name)).on_hover_text(name);
                }
                ui.label("accuracy");
                ui.end_row();
                for (class, row) in confusion.iter().enumerate() {
                    let name = predictions
                        .class_names
                        .get(class)
                        .map_or("", String::as_str);
                    ui.label(short(name)).on_hover_text(name);
                    let total = row.iter().sum::<u64>().max(1) as f32;
                    for (guess, count) in row.iter().enumerate() {
                        let share = *count as f32 / total;
                        let fill = base.gamma_multiply(share.sqrt());
                        let (rect, response) =
                            ui.allocate_exact_size(egui::vec2(58.0, 20.0), egui::Sense::hover());
                        ui.painter().rect_filled(rect, 2.0, fill);
                        ui.painter().text(
                            rect.center(),
                            egui::Align2::CENTER_CENTER,
                            count.to_string(),
                            egui::FontId::monospace(12.0),
                            ui.visuals().text_color(),
                        );
                        let guess_name = predictions
                            .class_names
                            .get(guess)
                            .map_or("", String::as_str);
                        response.on_hover_text(format!(
                            "{count} {name} images predicted as {guess_name} ({:.1} % of {name})",
                            share * 100.0
                        ));
                    }
                    ui.label(match accuracy.get(class).copied().flatten() {
                        Some(a) => format!("{:.1} %", a * 100.0),
                        None => "-".to_owned(),
                    });
                    ui.end_row();
                }
            });
        ui.add_space(6.0);
        ui.vertical(|ui| {
            ui.strong("Most confidently wrong");
            let name = |label: u8| {
                predictions
                    .class_names
                    .get(usize::from(label))
                    .map_or("?", String::as_str)
            };
            egui::Grid::new("gallery")
                .spacing([6.0, 4.0])
                .show(ui, |ui| {
                    for (n, image) in predictions.gallery.iter().enumerate() {
                        let index = image.index;
                        let caption = format!(
                            "#{index}: {} taken for {} ({:.1} %)",
                            name(predictions.labels[index]),
                            name(predictions.predicted[index]),
                            predictions.confidence[index] * 100.0
                        );
                        ui.vertical(|ui| {
                            ui.set_max_width(96.0);
                            let texture =
                                gallery_texture(ui.ctx(), image, predictions.confidence[index]);
                            ui.add(
                                egui::Image::new(&texture)
                                    .fit_to_exact_size(egui::vec2(56.0, 56.0)),
                            )
                            .on_hover_text(&caption);
                            ui.add(egui::Label::new(egui::RichText::new(caption).small()).wrap());
                        });
                        if n % 4 == 3 {
                            ui.end_row();
                        }
                    }
                });
        });
    });
}

/// The texture of a gallery image, made once and kept in egui's memory; the key includes the
/// confidence so the images of a new run never show an old run's texture.
fn gallery_texture(
    ctx: &egui::Context,
    image: &kiln_core::results::GalleryImage,
    confidence: f32,
) -> egui::TextureHandle {
    let id = egui::Id::unique(("gallery", image.index, confidence.to_bits()));
    if let Some(texture) = ctx.data(|d| d.get_temp::<egui::TextureHandle>(id)) {
        return texture;
    }
    let [_, height, width] = image.shape;
    let pixels = egui::ColorImage::from_rgba_unmultiplied([width, height], &image.to_rgba());
    let texture = ctx.load_texture(
        format!("gallery-{}", image.index),
        pixels,
        egui::TextureOptions::NEAREST,
    );
    ctx.data_mut(|d| d.insert_temp(id, texture.clone()));
    texture
}

/// The status line: what the run is doing, how fast, and how long it has left.
pub fn status_ui(ui: &mut egui::Ui, session: Option<&Session>) {
    let Some(session) = session else {
        ui.label("Idle.");
        return;
    };
    let mut parts: Vec<String> = Vec::new();
    parts.push(match &session.state {
        SessionState::Preparing(what) => what.clone(),
        SessionState::Running => "training".to_owned(),
        SessionState::Paused => "paused".to_owned(),
        SessionState::Cancelling => "cancelling…".to_owned(),
        SessionState::Finished(outcome) => format!("finished ({outcome:?})").to_lowercase(),
        SessionState::Failed(_) => "failed".to_owned(),
    });
    if let Some(progress) = &session.last_progress {
        parts.push(format!("epoch {}/{}", progress.epoch, session.epochs));
        if let Some(start) = &session.start {
            parts.push(format!("step {}/{}", progress.step, start.steps_per_epoch));
        }
        parts.push(format!("{:.0} samples/s", progress.samples_per_sec));
        parts.push(format!("{:.2} ms/step", progress.step_ms));
    }
    if session.state.is_active()
        && let Some(eta) = session.eta_secs()
    {
        parts.push(format!("ETA {}", duration_text(eta)));
    }
    if let Some(warmup) = session.warmup_secs {
        parts.push(format!("warm-up {warmup:.2} s"));
    }
    if let Some(start) = &session.start {
        parts.push(format!("{} ({})", start.device_name, start.device_id));
    }
    // f32 goes unsaid, as in the runs list.
    if session
        .history
        .config
        .as_ref()
        .is_some_and(|config| config.precision == kiln_core::config::Precision::F16)
    {
        parts.push("f16".to_owned());
    }
    parts.push(format!("elapsed {}", duration_text(session.elapsed_secs())));
    ui.label(parts.join(" · "));
}

fn duration_text(secs: f64) -> String {
    let secs = secs.max(0.0).round() as u64;
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, secs % 3600 / 60),
    }
}

/// Writes one export file; the error is a sentence for the notice line.
fn export_to(
    runs: &[&RunHistory],
    kind: ExportKind,
    path: &Path,
    x_axis: XAxis,
) -> Result<(), String> {
    let options = PlotOptions {
        x_axis,
        ..PlotOptions::default()
    };
    let (csv, png, svg) = match kind {
        ExportKind::Csv => (Some(path), None, None),
        ExportKind::Png => (None, Some(path), None),
        ExportKind::Svg => (None, None, Some(path)),
    };
    export::save(runs, &options, csv, png, svg).map_err(|e| e.to_string())
}

fn list_devices_in_background(ctx: egui::Context) -> Devices {
    let (sender, receiver) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("kiln-devices".to_owned())
        .spawn(move || {
            // Adapter probing can take seconds; the window stays live meanwhile.
            let _ = sender.send(kiln_core::device::list_devices());
            wake(&ctx);
        });
    match spawned {
        Ok(_) => Devices::Listing(receiver),
        Err(_) => Devices::Ready(vec![DeviceInfo::cpu()]),
    }
}

impl eframe::App for KilnApp {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        self.poll_background();
        self.shortcuts(ctx);
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let check = self.form.check();
        egui::Panel::top("top-bar").show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.heading("Kiln");
                ui.label("train image classifiers and see where the time goes");
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    egui::widgets::global_theme_preference_buttons(ui);
                });
            });
        });
        egui::Panel::bottom("status").show(ui, |ui| {
            status_ui(ui, self.session.as_ref());
        });
        let data_location = self.data_location();
        let fetch_progress = self.fetch.as_ref().map(FetchJob::status);
        let locked = self.is_training();
        // Cloned so the panel can borrow the form mutably; a handful of entries.
        let devices: Option<Vec<DeviceInfo>> = self.device_list().map(<[DeviceInfo]>::to_vec);
        let mut setup_actions = Vec::new();
        egui::Panel::left("setup")
            .resizable(true)
            .default_size(340.0)
            .show(ui, |ui| {
                ui.heading("Setup");
                egui::ScrollArea::vertical()
                    .id_salt("setup-scroll")
                    .show(ui, |ui| {
                        let context = SetupContext {
                            data_location,
                            fetch_progress,
                            fetch_message: self.fetch_message.clone(),
                            devices: devices.as_deref(),
                            locked,
                        };
                        setup_actions = setup_ui(ui, &mut self.form, &check, &context);
                    });
            });
        let active = self
            .session
            .as_ref()
            .filter(|s| s.state.is_active())
            .map(|s| s.history.path.clone());
        let mut runs_actions = Vec::new();
        egui::Panel::right("runs")
            .resizable(true)
            .default_size(300.0)
            .show(ui, |ui| {
                runs_actions = runs_ui(ui, &mut self.runs, active.as_deref());
            });
        egui::CentralPanel::default().show(ui, |ui| self.central_ui(ui, &check));
        if let Some(try_model) = &mut self.try_model {
            let mut open = true;
            egui::Window::new("Try the model")
                .open(&mut open)
                .default_width(360.0)
                .show(ui.ctx(), |ui| try_model_ui(ui, try_model));
            if !open {
                self.try_model = None;
            }
        }
        for action in setup_actions {
            self.handle_setup_action(action);
        }
        for action in runs_actions {
            self.handle_runs_action(action);
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        let remembered = Remembered {
            form: self.form.clone(),
            wall_time_axis: self.x_axis == XAxis::WallSecs,
        };
        eframe::set_value(storage, eframe::APP_KEY, &remembered);
    }
}

/// The window icon, shipped in assets/.
const ICON_PNG: &[u8] = include_bytes!("../../../assets/icon.png");

/// Opens the window and returns when it is closed.
pub fn run(runs_dir: PathBuf) -> anyhow::Result<()> {
    let mut viewport = egui::ViewportBuilder::default()
        .with_title("Kiln")
        .with_app_id("kiln")
        .with_inner_size([1280.0, 800.0])
        .with_min_inner_size([960.0, 600.0]);
    match eframe::icon_data::from_png_bytes(ICON_PNG) {
        Ok(icon) => viewport = viewport.with_icon(icon),
        Err(e) => eprintln!("warning: the window icon could not be read: {e}"),
    }
    let options = eframe::NativeOptions {
        viewport,
        persist_window: true,
        ..eframe::NativeOptions::default()
    };
    eframe::run_native(
        "kiln",
        options,
        Box::new(move |cc| {
            Ok(Box::new(KilnApp::new(
                cc,
                AppOptions {
                    runs_dir,
                    devices: None,
                    restore: true,
                },
            )))
        }),
    )
    .map_err(|e| {
        anyhow::anyhow!(
            "the window could not open ({e}); without a display, `kiln train` trains headless and `kiln --help` lists the rest"
        )
    })
}
