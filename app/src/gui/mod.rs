//! The window: a view per stage of the work (Data, Train, Results, Predict, Compare) switched by
//! the tabs of the top bar, the runs list at the right of every view, a status line at the
//! bottom. Training runs on a named thread (in a browser page, as a task on the page's event
//! loop); its events are drained once per frame.
//!
//! ```text
//! mod.rs             the app's state (KilnApp) and eframe's entry points: logic, ui, save
//! logic.rs           per frame: drain workers within a time budget, keep derived state current
//! actions.rs         what a person asked for: start, pause, cancel, resume, panel actions, export
//! stage.rs           the stages, their tabs and shortcuts
//! views.rs           the central area of each stage's view
//! arrangement.rs     a view's panels as a person arranges them (egui_tiles), kept between launches
//! training_panel.rs  the Train view's controls: Start, Pause, Cancel, the x axis
//! setup/             the Setup panel: form.rs its model (a draft plus typed text, one check),
//!                    fields.rs its rows (the settings table's drawn by section), devices.rs the
//!                    device list, mod.rs the drawing of each section
//! runs.rs            the runs list, a panel that owns its state and returns actions
//! compare_panel.rs, results_panel.rs, status.rs, plots.rs, profile.rs, try_model.rs  one view each
//!                    (the compare table also offers the runs that test where two curves part)
//! data_view.rs       the Data view's report, which owns its loading and preview threads
//! cell_images.rs     the test images of a clicked confusion-matrix cell (or a label's wrong
//!                    ones), read back on a thread
//! label_results.rs   a multi-label run's results: a bar per label, the per-label table
//! predict_folder.rs  the Predict view's folder of predictions: its thread, table and export
//! session.rs, fetch.rs  the workers: a training run, a download
//! files.rs           file dialogs on a desktop; downloads and the folder chooser in a page
//! remote_boxes.rs    the Add remote box window and the boxes the window remembers
//! series_dialog.rs   the Name series window: a picked log's unnamed series, each given a figure
//! lr_finder.rs       the Find lr… window: the learning-rate range test on a thread, its chart
//! experiments.rs     starting a sweep or an explain sweep from the window, where their folders go
//! sweep_dialog.rs    the Sweep… window: the settings to vary, the search, seeds and pruning
//! sweep_job.rs       a sweep the window runs (Sweep…, Explain the difference), its table
//! sweep_charts.rs    a finished sweep's charts: a plot per axis to hover and zoom, drawn images
//! page_store.rs      a browser page's runs kept in its IndexedDB between visits
//! background_job.rs  one answer computed on a named thread: the Data and cell windows, a model export
//! ```

mod actions;
mod arrangement;
mod background_job;
mod cell_images;
mod compare_panel;
mod data_view;
#[cfg(not(target_arch = "wasm32"))]
mod experiments;
mod fetch;
mod files;
mod label_results;
mod logic;
#[cfg(not(target_arch = "wasm32"))]
mod lr_finder;
#[cfg(target_arch = "wasm32")]
mod page_store;
mod plots;
#[cfg(not(target_arch = "wasm32"))]
mod predict_folder;
mod profile;
mod remote_boxes;
mod results_panel;
mod runs;
#[cfg(not(target_arch = "wasm32"))]
mod series_dialog;
mod session;
mod setup;
mod stage;
mod status;
#[cfg(not(target_arch = "wasm32"))]
mod sweep_charts;
#[cfg(not(target_arch = "wasm32"))]
mod sweep_dialog;
#[cfg(not(target_arch = "wasm32"))]
mod sweep_job;
mod training_panel;
mod try_model;
mod views;

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

pub use arrangement::{Arrangement, Arrangements, Pane, Tiled, arrangement_ui};
pub use plots::{PlotRun, SeedBand, chart_ui, legend_ui, per_epoch_note_ui, plot_runs, run_color};
pub use profile::{ProfiledRun, step_profile_ui};

pub use runs::{ExportKind, ImportKind, RunsAction, RunsPanel, runs_ui};
pub use session::{Session, SessionState};
pub use setup::{
    DatasetKind, FormCheck, ModelKind, OptimizerKind, ScheduleKind, SetupAction, SetupContext,
    SetupForm, StartFrom, setup_ui,
};

use background_job::BackgroundJob;
pub use cell_images::{CellImages, cell_images_ui};
pub use compare_panel::{CompareAction, compare_ui};
pub use data_view::{DataView, Inspected, data_view_ui};
use fetch::{Download, FetchJob};
pub use files::DataChoice;
#[cfg(target_arch = "wasm32")]
pub use files::FileChoice;
#[cfg(not(target_arch = "wasm32"))]
pub use predict_folder::{FolderPredictions, Ranked, SortBy, TableView, folder_predictions_ui};
pub use results_panel::{class_report_panel_ui, confusion_matrix_ui, mistakes_ui};
pub use stage::{Stage, stage_tabs_ui};
pub use status::status_ui;
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
    /// The plots' x axis (`steps`, `wall`, `epochs`).
    x_axis: String,
    /// The x axis as launches before the epochs axis kept it; read when `x_axis` is absent.
    wall_time_axis: bool,
    /// The folder last picked with the Runs panel's Change…, for launches from a menu.
    chosen_runs_dir: Option<PathBuf>,
    /// The addresses of the boxes added with *Add remote box…* (their tokens are kept apart).
    remote_boxes: Vec<String>,
    /// The view open when the window closed.
    stage: Stage,
    /// Where the person put the panels of each tiled view.
    arrangements: Arrangements,
}

/// Where the window keeps runs, as decided at launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunsDir {
    /// Named by `--runs-dir` or by the folder a shell started in: used as it is.
    Fixed(PathBuf),
    /// The per-user data folder: a folder picked with Change… at an earlier launch replaces it.
    PerUser(PathBuf),
}

impl RunsDir {
    /// The folder to open with, and a sentence when a remembered folder had to be passed over.
    fn at_launch(self, chosen_before: Option<&Path>) -> (PathBuf, Option<String>) {
        match (self, chosen_before) {
            (Self::Fixed(dir), _) | (Self::PerUser(dir), None) => (dir, None),
            (Self::PerUser(_), Some(chosen)) if chosen.is_dir() => (chosen.to_owned(), None),
            (Self::PerUser(dir), Some(chosen)) => {
                let notice = format!(
                    "The runs folder chosen last time, {}, is not there (a removed drive?); runs go to {} until Change… picks another.",
                    chosen.display(),
                    dir.display()
                );
                (dir, Some(notice))
            }
        }
    }
}

/// Settings fixed when the window opens.
#[derive(Debug, Clone)]
pub struct AppOptions {
    /// Where run folders go and are read from.
    pub runs_dir: RunsDir,
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
    /// What Change… picked, in this launch or an earlier one; kept for the next launch.
    chosen_runs_dir: Option<PathBuf>,
    /// The run started from this window, if any.
    pub session: Option<Session>,
    /// Past runs.
    pub runs: RunsPanel,
    x_axis: XAxis,
    devices: Devices,
    /// The boxes added with *Add remote box…* and their devices.
    remote_boxes: remote_boxes::RemoteBoxes,
    data_location: Option<(DatasetKind, Option<PathBuf>, Result<PathBuf, String>)>,
    fetch: Option<FetchJob>,
    fetch_message: Option<String>,
    /// The last message for the person (export written, rename failed…).
    pub notice: Option<String>,
    /// The "Try the model" window, when open.
    pub try_model: Option<TryModel>,
    /// A file being written off the window's thread (*Export model…*, *Archive…*, *Import
    /// run…*) until it is written or has failed: a sentence for the notice line either way.
    file_job: Option<BackgroundJob<String>>,
    /// The Data window, when open.
    pub data_view: Option<DataView>,
    /// The *Find lr…* window, when open.
    #[cfg(not(target_arch = "wasm32"))]
    lr_finder: Option<lr_finder::LrFinder>,
    /// The *Sweep…* window, when open.
    #[cfg(not(target_arch = "wasm32"))]
    sweep_dialog: Option<sweep_dialog::SweepDialog>,
    /// A picked log being read for series no convention names, before *Import run…* imports it.
    #[cfg(not(target_arch = "wasm32"))]
    series_scan: Option<BackgroundJob<(PathBuf, Vec<String>)>>,
    /// The *Name series* window, when a picked log has such series.
    #[cfg(not(target_arch = "wasm32"))]
    pub series_dialog: Option<series_dialog::SeriesDialog>,
    /// The sweep the window runs or ran last, shown in the Compare view.
    #[cfg(not(target_arch = "wasm32"))]
    sweep_job: Option<sweep_job::SweepJob>,
    /// The images of a clicked confusion-matrix cell, when open.
    pub cell_images: Option<CellImages>,
    /// The Predict view's folder of predictions, under way or done.
    #[cfg(not(target_arch = "wasm32"))]
    pub folder_predictions: Option<predict_folder::FolderPredictions>,
    /// The predictions of the past run the Results view shows, read once: its folder and what
    /// it holds.
    past_predictions: Option<(PathBuf, Option<TestPredictions>)>,
    /// The same run's predictions per label, when it trained on several labels per image.
    past_label_predictions: Option<kiln_core::results::multi_label::LabelPredictions>,
    /// The view shown between the top bar and the status line.
    pub stage: Stage,
    /// Where the panels of the tiled views are.
    pub arrangements: Arrangements,
    /// The run picked in the Results view's list, while it is live or ticked.
    results_of: Option<PathBuf>,
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
        #[cfg(target_arch = "wasm32")]
        let drop_notice = files::listen_for_dropped_folders(&ctx).err();
        // The runs of earlier visits come back a moment after the first frame.
        #[cfg(target_arch = "wasm32")]
        page_store::restore(&ctx);
        // A blinking cursor repaints the window several times a second for as long as a field
        // has focus; on a software renderer that steals CPU from a run on the same cores.
        ctx.all_styles_mut(|style| style.visuals.text_cursor.blink = false);
        let devices = match options.devices {
            Some(list) => Devices::Ready(list),
            None => list_devices_in_background(ctx.clone()),
        };
        let (runs_dir, runs_notice) = options
            .runs_dir
            .at_launch(remembered.chosen_runs_dir.as_deref());
        let mut form = remembered.form;
        let forgotten = forget_chosen_files(&mut form, cfg!(target_arch = "wasm32"));
        let mut app = Self {
            ctx,
            form,
            runs_dir,
            chosen_runs_dir: remembered.chosen_runs_dir,
            session: None,
            runs: RunsPanel::default(),
            x_axis: remembered
                .x_axis
                .parse()
                .unwrap_or(if remembered.wall_time_axis {
                    XAxis::WallSecs
                } else {
                    XAxis::Steps
                }),
            devices,
            remote_boxes: remote_boxes::RemoteBoxes::remembered(
                &remembered.remote_boxes,
                &cc.egui_ctx,
            ),
            data_location: None,
            fetch: None,
            fetch_message: None,
            notice: None,
            try_model: None,
            file_job: None,
            data_view: None,
            #[cfg(not(target_arch = "wasm32"))]
            lr_finder: None,
            #[cfg(not(target_arch = "wasm32"))]
            sweep_dialog: None,
            #[cfg(not(target_arch = "wasm32"))]
            series_scan: None,
            #[cfg(not(target_arch = "wasm32"))]
            series_dialog: None,
            #[cfg(not(target_arch = "wasm32"))]
            sweep_job: None,
            cell_images: None,
            #[cfg(not(target_arch = "wasm32"))]
            folder_predictions: None,
            past_predictions: None,
            past_label_predictions: None,
            stage: remembered.stage,
            arrangements: remembered.arrangements.repaired(),
            results_of: None,
        };
        app.refresh_runs();
        if app.notice.is_none() {
            app.notice = runs_notice;
        }
        #[cfg(target_arch = "wasm32")]
        if app.notice.is_none() {
            app.notice = drop_notice;
        }
        if forgotten.is_some() {
            app.notice = forgotten;
        }
        app
    }

    fn refresh_runs(&mut self) {
        // A page's runs folder is always page_runs::RUNS_DIR (`RunsDir::Fixed`, kiln-web).
        let read = with_run_files(|tree| self.runs.refresh(tree, &self.runs_dir));
        if let Err(reason) = read {
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
}

/// Runs `read` on where the window's run folders are: the disk, or in a page the runs it
/// keeps in its memory.
fn with_run_files<R>(read: impl FnOnce(&dyn data::files::FileTree) -> R) -> R {
    #[cfg(not(target_arch = "wasm32"))]
    {
        read(&data::files::Disk)
    }
    #[cfg(target_arch = "wasm32")]
    {
        run_folder::page_runs::with(|runs| read(runs))
    }
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
                ui.separator();
                let badge = |stage| self.stage_badge(stage);
                if let Some(stage) = stage_tabs_ui(ui, self.stage, badge) {
                    self.set_stage(stage);
                }
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    egui::widgets::global_theme_preference_buttons(ui);
                });
            });
        });
        egui::Panel::bottom("status").show(ui, |ui| {
            status_ui(ui, self.session.as_ref());
        });
        let data_location = self.data_location();
        let fetch_progress = self.fetch.as_ref().map(|job| (job.what, job.status()));
        let locked = self.is_training();
        // Cloned so the panel can borrow the form mutably; a handful of entries.
        let devices: Option<Vec<DeviceInfo>> = self.device_list().map(|local| {
            let mut all = local.to_vec();
            all.extend(self.remote_boxes.devices());
            all
        });
        let box_problems = self.remote_boxes.problems();
        let mut setup_actions = Vec::new();
        // The setup column belongs to the Train view; the others give its width to their panels.
        if self.stage == Stage::Train {
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
                                box_problems: &box_problems,
                                locked,
                            };
                            setup_actions = setup_ui(ui, &mut self.form, &check, &context);
                        });
                });
        }
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
                runs_actions = runs_ui(ui, &mut self.runs, active.as_deref(), &self.runs_dir);
            });
        egui::CentralPanel::default().show(ui, |ui| self.stage_ui(ui, &check));
        let ctx = ui.ctx().clone();
        self.remote_boxes.dialog_ui(&ctx);
        #[cfg(not(target_arch = "wasm32"))]
        self.lr_finder_ui(&ctx);
        #[cfg(not(target_arch = "wasm32"))]
        self.sweep_dialog_ui(&ctx);
        #[cfg(not(target_arch = "wasm32"))]
        self.series_dialog_ui(&ctx);
        if let Some(view) = &mut self.data_view {
            let experiment = check
                .experiment
                .as_ref()
                .ok_or_else(|| check.blocking_reason().unwrap_or_default());
            let waker = ctx.clone();
            view.follow(experiment, move || wake(&waker));
        }
        for action in setup_actions {
            self.handle_setup_action(action);
        }
        for action in runs_actions {
            self.handle_runs_action(action);
        }
    }

    /// Lets a browser page reach the window's state (`kiln-web`'s `Window` handle).
    #[cfg(target_arch = "wasm32")]
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(&mut *self)
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        let remembered = Remembered {
            form: self.form.clone(),
            x_axis: self.x_axis.to_string(),
            wall_time_axis: self.x_axis == XAxis::WallSecs,
            chosen_runs_dir: self.chosen_runs_dir.clone(),
            remote_boxes: self.remote_boxes.addresses(),
            stage: self.stage,
            arrangements: self.arrangements.clone(),
        };
        eframe::set_value(storage, eframe::APP_KEY, &remembered);
    }
}

/// The window's application id: the name of the desktop entry and the AppStream component the
/// Linux package installs (`packaging/linux/`), so a desktop shell puts the window under its
/// menu entry and icon. Reverse-DNS, as AppStream asks.
pub const APP_ID: &str = "dev.kiln.Kiln";

/// The window icon, shipped in assets/.
#[cfg(not(target_arch = "wasm32"))]
const ICON_PNG: &[u8] = include_bytes!("../../../assets/icon.png");

/// Opens the window and returns when it is closed.
#[cfg(not(target_arch = "wasm32"))]
pub fn run(runs_dir: RunsDir) -> anyhow::Result<()> {
    let mut viewport = egui::ViewportBuilder::default()
        .with_title("Kiln")
        .with_app_id(APP_ID)
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

/// A browser page keeps a visitor's chosen files only while it is open, so after a reload the
/// folders and weights file the remembered form names are gone: they are cleared, and the
/// sentence says to choose them again (a run would otherwise fail on a file that "does not
/// exist").
fn forget_chosen_files(form: &mut setup::SetupForm, in_page: bool) -> Option<String> {
    if !in_page {
        return None;
    }
    let chosen = [
        form.folder.take(),
        form.draft.data_dir.take(),
        form.weights_file.take(),
    ];
    let names: Vec<String> = chosen
        .into_iter()
        .flatten()
        .map(|chosen| chosen.display().to_string())
        .collect();
    let (listed, them) = match names.split_last() {
        None => return None,
        Some((last, [])) => (last.clone(), "it"),
        Some((last, rest)) => (format!("{} and {last}", rest.join(", ")), "them"),
    };
    Some(format!(
        "the page let go of {listed} when it was reloaded (a page keeps chosen files only while it is open); choose {them} again or drop {them} on the page"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reloaded_page_clears_the_chosen_files_it_no_longer_holds_and_says_so() {
        let mut form = setup::SetupForm {
            folder: Some(PathBuf::from("colours")),
            weights_file: Some(PathBuf::from("chosen weights/tuned.safetensors")),
            ..setup::SetupForm::default()
        };
        form.draft.data_dir = Some(PathBuf::from("fashion"));
        let kept = form.clone();
        assert_eq!(forget_chosen_files(&mut form, false), None);
        assert_eq!(form, kept, "the desktop's folders stay on its disk");
        let notice = forget_chosen_files(&mut form, true).unwrap();
        assert!(
            notice.contains("colours, fashion and chosen weights/tuned.safetensors"),
            "{notice}"
        );
        assert!(notice.contains("choose them again"), "{notice}");
        assert_eq!((&form.folder, &form.draft.data_dir), (&None, &None));
        assert_eq!(form.weights_file, None);
        form.folder = Some(PathBuf::from("colours"));
        let notice = forget_chosen_files(&mut form, true).unwrap();
        assert!(notice.contains("go of colours when") && notice.contains("choose it again"));
        let mut empty = setup::SetupForm::default();
        assert_eq!(forget_chosen_files(&mut empty, true), None);
    }

    #[test]
    fn a_menu_launch_opens_the_folder_picked_last_time_and_a_shell_launch_keeps_its_own() {
        let picked = std::env::temp_dir().join(format!("kiln-picked-{}", std::process::id()));
        std::fs::create_dir_all(&picked).unwrap();
        let default = PathBuf::from("/home/ada/.local/share/kiln/runs");

        let menu = RunsDir::PerUser(default.clone()).at_launch(Some(&picked));
        assert_eq!(menu, (picked.clone(), None));
        let shell = RunsDir::Fixed(PathBuf::from("runs")).at_launch(Some(&picked));
        assert_eq!(shell, (PathBuf::from("runs"), None));
        let first = RunsDir::PerUser(default.clone()).at_launch(None);
        assert_eq!(first, (default.clone(), None));

        std::fs::remove_dir(&picked).unwrap();
        let (dir, notice) = RunsDir::PerUser(default.clone()).at_launch(Some(&picked));
        assert_eq!(dir, default, "a folder that has gone is not written to");
        let notice = notice.expect("the person is told why the folder changed");
        assert!(notice.contains(&picked.display().to_string()), "{notice}");
    }

    /// Rough edge seen trying Kiln as a new user: the window's notices said "README.md shows how
    /// to load it", a file an installed package does not have. They say how, in the notice.
    #[test]
    fn no_notice_of_the_window_points_to_a_readme_and_exports_say_how_to_load_them() {
        fn sources(dir: &std::path::Path, found: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    sources(&path, found);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    found.push(path);
                }
            }
        }
        let mut files = Vec::new();
        sources(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut files,
        );
        assert!(files.len() > 20, "{files:?}");
        // Spelled in two halves, so this test's own line is not a hit.
        let readme = concat!("READ", "ME");
        let mut pointing = Vec::new();
        for file in &files {
            for (number, line) in std::fs::read_to_string(file).unwrap().lines().enumerate() {
                let code = line.trim_start();
                if !code.starts_with("//") && code.contains('"') && code.contains(readme) {
                    pointing.push(format!("{}:{}: {code}", file.display(), number + 1));
                }
            }
        }
        assert!(pointing.is_empty(), "{pointing:#?}");
        assert!(actions::LOAD_ONNX.contains("onnxruntime.InferenceSession"));
        assert!(actions::LOAD_SAFETENSORS.contains("load_state_dict"));
    }

    #[test]
    fn remembered_settings_from_before_the_runs_folder_was_remembered_still_load() {
        let old = r#"{"wall_time_axis":true}"#;
        let remembered: Remembered = serde_json::from_str(old).unwrap();
        assert!(remembered.wall_time_axis);
        assert_eq!(remembered.chosen_runs_dir, None);
    }
}
