//! Kiln in a browser page: the desktop's window (`kiln::gui`) drawn in a canvas, and the same
//! training loop as the app and `kiln train` ([`kiln_core::run::execute_in_page`]), awaited on the
//! page's event loop, on the visitor's GPU through WebGPU, or on the CPU backend where the browser
//! has none.
//!
//! ```text
//! web/index.html        the window: loads pkg/kiln_web.js, calls start_window on its canvas
//! web/engine.html       the engine alone: train_builtin, one line per event
//! web/src/lib.rs        start_window (and the handle a check drives it with), train_builtin
//! bench/web_check.sh    builds the pages, serves them on 127.0.0.1, drives them in headless Chromium
//! ```
//!
//! Everything here is for `wasm32`; a native build of the workspace compiles an empty crate.

#![cfg(target_arch = "wasm32")]

use kiln::gui::{
    AppOptions, DataChoice, DatasetKind, ExportKind, KilnApp, ModelKind, RunsAction, RunsDir,
};
use kiln_core::config::{self, Experiment, Setting};
use kiln_core::device::DeviceChoice;
use kiln_core::run;
use kiln_core::train::{self, Control, TrainEvent};
use serde::Serialize;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

/// What a run in the page measured, as the page and `bench/web_check.sh` read it.
#[derive(Serialize)]
struct Report {
    /// The device the run trained on: WebGPU or the CPU backend, and why.
    device: String,
    /// Seconds from the call to a ready device.
    device_secs: f64,
    /// Epoch rows the run reported.
    epochs: Vec<train::EpochRow>,
    /// Progress rows (readbacks) the run reported.
    progress_rows: usize,
    /// The run's summary, as `summary.json` holds it.
    summary: train::RunSummary,
    /// Training steps per second over the run's steady windows.
    steps_per_sec: Option<f64>,
}

/// Trains `preset` (a name `kiln presets` lists, or "default": the window's own first run) for
/// `epochs` on the built-in data set, on WebGPU or, with `device` "cpu", on the CPU backend,
/// telling `on_line` one line per event, and resolves to a JSON report of the run.
#[wasm_bindgen]
pub async fn train_builtin(
    preset: String,
    epochs: usize,
    device: String,
    on_line: js_sys::Function,
) -> Result<String, JsValue> {
    let say = |line: &str| {
        let _ = on_line.call1(&JsValue::NULL, &JsValue::from_str(line));
    };
    report_to_console();
    tune_briefly();
    let experiment = experiment(&preset, epochs, &device).map_err(|e| JsValue::from_str(&e))?;
    let started = web_time::Instant::now();
    let (mut device_name, mut device_secs) = (String::new(), 0.0);
    let control = Control::new();
    let (mut epoch_rows, mut progress_rows) = (Vec::new(), 0);
    let record = run::execute_in_page(
        &experiment,
        &control,
        &mut |stage| say(&stage.to_string()),
        &mut |event| match event {
            TrainEvent::Started(info) => {
                device_secs = started.elapsed().as_secs_f64();
                device_name = info.device_name.clone();
                say(&format!("device: {device_name} ({device_secs:.2} s)"));
            }
            TrainEvent::Progress(row) => {
                progress_rows += 1;
                say(&format!(
                    "epoch {} step {}: loss {:.4}, {:.0} samples/s",
                    row.epoch, row.step, row.train_loss, row.samples_per_sec
                ));
            }
            TrainEvent::EpochEnd(row) => {
                say(&format!(
                    "epoch {} done: train accuracy {:?}, test accuracy {:?}",
                    row.epoch, row.train_accuracy, row.test_accuracy
                ));
                epoch_rows.push(row.clone());
            }
            TrainEvent::Warning(warning) => say(&format!("warning: {warning:?}")),
            _ => {}
        },
    )
    .await
    .map_err(|e| JsValue::from_str(&e.to_string()))?;
    let summary = record.summary;
    let steps_per_sec = steady_steps_per_sec(&summary, experiment.batch_size);
    let report = Report {
        device: device_name,
        device_secs,
        epochs: epoch_rows,
        progress_rows,
        summary,
        steps_per_sec,
    };
    serde_json::to_string(&report).map_err(|e| JsValue::from_str(&e.to_string()))
}

/// Optimizer steps per second over the run's steady windows (the engine counts samples).
fn steady_steps_per_sec(summary: &train::RunSummary, batch_size: usize) -> Option<f64> {
    summary.steady_rate().map(|rate| rate / batch_size as f64)
}

/// Panics and the engine's warnings go to the page's console, once per page.
fn report_to_console() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            // A panic aborts the module (`unreachable` in the console): its sentence goes first.
            web_sys::console::error_1(&JsValue::from_str(&format!("Kiln panicked: {info}")));
        }));
        static LOGGER: ConsoleLog = ConsoleLog;
        if log::set_logger(&LOGGER).is_ok() {
            log::set_max_level(log::LevelFilter::Warn);
        }
    });
}

/// Warnings and errors of the engine's crates, in the page's console: CubeCL tells why the
/// browser refused a shader (with its WGSL) only through `log`, and a page has no stderr.
struct ConsoleLog;

impl log::Log for ConsoleLog {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::Level::Warn
    }

    fn log(&self, record: &log::Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let line = JsValue::from_str(&format!("{}: {}", record.target(), record.args()));
        match record.level() {
            log::Level::Error => web_sys::console::error_1(&line),
            _ => web_sys::console::warn_1(&line),
        }
    }

    fn flush(&self) {}
}

/// CubeCL's least autotuning: a page keeps no autotune cache, so every load would pay the full
/// search again, and on a software adapter that search takes minutes.
fn tune_briefly() {
    use cubecl::config::autotune::AutotuneLevel;
    use cubecl::config::{CubeClRuntimeConfig, RuntimeConfig};
    let mut config = CubeClRuntimeConfig::default();
    config.autotune.level = AutotuneLevel::Minimal;
    let _ = CubeClRuntimeConfig::try_set(config);
}

/// `preset` with `epochs` on `device` ("cpu", else the page's WebGPU), checked as the app checks it.
fn experiment(preset: &str, epochs: usize, device: &str) -> Result<Experiment, String> {
    let mut draft = match preset {
        "default" => config::ExperimentDraft::default(),
        name => config::preset(name).map_err(|e| e.to_string())?,
    };
    draft.epochs = epochs;
    draft.device = match device {
        "cpu" => DeviceChoice::Cpu,
        _ => DeviceChoice::Auto,
    };
    draft.validate().map_err(|e| e.to_string())
}

/// The window running in a page's canvas; the page keeps it (dropping it would stop the window)
/// and `bench/web_check.sh` drives a run through it as a person would through the buttons.
#[wasm_bindgen]
pub struct Window {
    runner: eframe::WebRunner,
}

/// Opens Kiln's window in the canvas with id `canvas_id`, drawn with WebGL (or WebGPU where the
/// browser has no WebGL), so the page's WebGPU adapter is the training's alone. Settings are
/// remembered in the page's local storage.
#[wasm_bindgen]
pub async fn start_window(canvas_id: String) -> Result<Window, JsValue> {
    report_to_console();
    tune_briefly();
    let canvas = web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.get_element_by_id(&canvas_id))
        .ok_or_else(|| JsValue::from_str(&format!("the page has no element #{canvas_id}")))?
        .dyn_into::<web_sys::HtmlCanvasElement>()
        .map_err(|_| JsValue::from_str(&format!("#{canvas_id} is not a canvas")))?;
    let runner = eframe::WebRunner::new();
    let mut failures = Vec::new();
    for renderer in [eframe::Renderer::Glow, eframe::Renderer::Wgpu] {
        let options = eframe::WebOptions {
            renderer,
            ..eframe::WebOptions::default()
        };
        match runner
            .start(canvas.clone(), options, Box::new(open_app))
            .await
        {
            Ok(()) => return Ok(Window { runner }),
            Err(e) => failures.push(format!("{renderer:?}: {e:?}")),
        }
    }
    Err(JsValue::from_str(&format!(
        "the window could not be drawn in this browser ({})",
        failures.join("; ")
    )))
}

/// The window as the desktop opens it, offering the page's devices.
fn open_app(
    cc: &eframe::CreationContext<'_>,
) -> Result<Box<dyn eframe::App>, Box<dyn std::error::Error + Send + Sync>> {
    let options = AppOptions {
        // A page keeps its runs in its memory (kiln_core::run_folder::page_runs).
        runs_dir: RunsDir::Fixed(kiln_core::run_folder::page_runs::RUNS_DIR.into()),
        devices: Some(kiln_core::device::page_devices()),
        restore: true,
    };
    Ok(Box::new(KilnApp::new(cc, options)))
}

#[wasm_bindgen]
impl Window {
    /// Presses Start: the form's run, as the window's Start button starts it.
    pub fn start_run(&self) -> Result<(), JsValue> {
        self.app()?.start();
        Ok(())
    }

    /// Sets the form's epochs, as typing in the Epochs field would.
    pub fn set_epochs(&self, epochs: usize) -> Result<(), JsValue> {
        *self.app()?.form.text_mut(Setting::Epochs) = epochs.to_string();
        Ok(())
    }

    /// Sets the form's batch size, as typing in the Batch size field would.
    pub fn set_batch_size(&self, batch_size: usize) -> Result<(), JsValue> {
        *self.app()?.form.text_mut(Setting::BatchSize) = batch_size.to_string();
        Ok(())
    }

    /// Picks the form's device ("cpu" or "gpu:0", the page's WebGPU), as the Device list would.
    pub fn set_device(&self, device: String) -> Result<(), JsValue> {
        self.app()?.form.device = device;
        Ok(())
    }

    /// Picks the form's architecture, as the list would: one of Kiln's own by its name in the
    /// Model list's type (`"Mlp"`, `"Cnn"`, `"Vgg16"`, `"ResNet18"` for the CIFAR form), or a
    /// torchvision architecture by its spec or torchvision name (`"resnet18-imagenet"`,
    /// `"efficientnet_b0"`).
    pub fn set_model(&self, kind: String) -> Result<(), JsValue> {
        let own = serde_json::from_value(serde_json::Value::String(kind.clone()));
        let kind = match own {
            Ok(own) => own,
            Err(_) => kind
                .parse::<kiln_core::model::TorchvisionArch>()
                .map(ModelKind::Torchvision)
                .map_err(|_| JsValue::from_str(&format!("no model kind {kind}")))?,
        };
        self.app()?.form.model = kind;
        Ok(())
    }

    /// Starts the form's network from a weights file as the page's chooser would deliver it
    /// (its name and bytes), as picking *Weights: file* and *Choose file…* would; the file
    /// reaches the form on the next frame.
    pub fn start_from_weights(&self, name: String, bytes: Vec<u8>) -> Result<(), JsValue> {
        let mut app = self.app()?;
        app.form.start_from = kiln::gui::StartFrom::File;
        app.receive_file(kiln::gui::FileChoice::Weights, name, bytes);
        Ok(())
    }

    /// Chooses an image folder as the page's folder chooser would deliver it: `paths` (each
    /// starting with the folder's name, as the browser's `webkitRelativePath`) and their
    /// `contents` (one `Uint8Array` each); then picks *Image folder…* in the Data set list with
    /// images resized to `image_size_px`. The folder reaches the form on the next frame.
    pub fn choose_image_folder(
        &self,
        paths: Vec<String>,
        contents: js_sys::Array,
        image_size_px: u32,
    ) -> Result<(), JsValue> {
        if paths.len() != contents.length() as usize {
            return Err(JsValue::from_str("one content per path, please"));
        }
        let files = paths
            .into_iter()
            .zip(contents.iter())
            .map(|(path, bytes)| (path, js_sys::Uint8Array::new(&bytes).to_vec()))
            .collect();
        let mut app = self.app()?;
        app.receive_data_folder(DataChoice::ImageFolder, files);
        app.form.dataset = DatasetKind::Folder;
        *app.form.text_mut(Setting::FolderImageSize) = image_size_px.to_string();
        Ok(())
    }

    /// Presses the runs panel's CSV export: the current run's rows, as a download.
    pub fn export_csv(&self) -> Result<(), JsValue> {
        self.app()?.act_on_runs(RunsAction::Export(ExportKind::Csv));
        Ok(())
    }

    /// Presses the current run's *Archive…* in the runs panel: its run folder, as a download.
    pub fn archive_run(&self) -> Result<(), JsValue> {
        let mut app = self.app()?;
        let path = current_run(&app)?;
        app.act_on_runs(RunsAction::Archive(path));
        Ok(())
    }

    /// Presses the current run's *Export model*: its model as safetensors and ONNX downloads.
    pub fn export_model(&self) -> Result<(), JsValue> {
        let mut app = self.app()?;
        let path = current_run(&app)?;
        app.act_on_runs(RunsAction::ExportModel(path));
        Ok(())
    }

    /// Presses the current run's *Try…* and hands its window the image file `bytes` (PNG or
    /// JPEG) called `name`, as its *Open image…* would; `status` tells the verdict.
    pub fn try_image(&self, name: String, bytes: Vec<u8>) -> Result<(), JsValue> {
        let mut app = self.app()?;
        let path = current_run(&app)?;
        app.act_on_runs(RunsAction::TryModel(path));
        app.receive_file(kiln::gui::FileChoice::ImageToTry, name, bytes);
        Ok(())
    }

    /// Imports a run folder archive (`name` and its `bytes`) as the runs panel's *Import run…*
    /// does once the browser's chooser has read the file; the run is listed on the next frame.
    pub fn import_archive(&self, name: String, bytes: Vec<u8>) -> Result<(), JsValue> {
        let app = self.app()?;
        app.receive_file(kiln::gui::FileChoice::RunArchive, name, bytes);
        Ok(())
    }

    /// Presses Cancel: the run under way ends at its next step boundary, keeping its checkpoints.
    pub fn cancel_run(&self) -> Result<(), JsValue> {
        self.app()?.cancel();
        Ok(())
    }

    /// Presses the listed run's *Resume run*: the stopped run named `name` goes on from its last
    /// checkpoint among the page's runs; a run that cannot says why in the notice line.
    pub fn resume_run(&self, name: String) -> Result<(), JsValue> {
        let mut app = self.app()?;
        let path = listed_run(&app, &name)?;
        app.act_on_runs(RunsAction::Resume(path));
        Ok(())
    }

    /// Deletes the listed run whose folder is named `name`, as its *Delete…* does once confirmed.
    pub fn delete_run(&self, name: String) -> Result<(), JsValue> {
        let mut app = self.app()?;
        let path = listed_run(&app, &name)?;
        app.act_on_runs(RunsAction::Delete(path));
        Ok(())
    }

    /// Renames the listed run whose folder is named `name` to `new_name`, as its *Rename…* does.
    pub fn rename_run(&self, name: String, new_name: String) -> Result<(), JsValue> {
        let mut app = self.app()?;
        let path = listed_run(&app, &name)?;
        app.act_on_runs(RunsAction::Rename {
            path,
            name: new_name,
        });
        Ok(())
    }

    /// Where the window's run stands, as JSON: its state, the points its plots have, its last
    /// epoch's test accuracy and the window's notice line.
    pub fn status(&self) -> Result<String, JsValue> {
        let app = self.app()?;
        let session = app.session.as_ref();
        let status = serde_json::json!({
            "state": session.map(|s| format!("{:?}", s.state)),
            "finished": session.is_some_and(|s| !s.state.is_active()),
            "progress_points": session.map_or(0, |s| s.history.metrics.len()),
            "epochs": session.map_or(0, |s| s.history.epochs.len()),
            "first_epoch": session.and_then(|s| s.start.as_ref()).map(|start| start.first_epoch),
            "run": session.map(|s| s.history.folder_name()),
            "test_accuracy": session
                .and_then(|s| s.history.summary.as_ref())
                .and_then(|summary| summary.final_test_accuracy),
            "device": session
                .and_then(|s| s.start.as_ref())
                .map(|start| start.device_name.clone()),
            "steps_per_sec": session
                .and_then(|s| s.history.summary.as_ref().zip(s.history.config.as_ref()))
                .and_then(|(summary, config)| steady_steps_per_sec(summary, config.batch_size)),
            "notice": app.notice.clone(),
            "tried": app.try_model.as_ref().and_then(|t| t.result.as_ref()).map(|result| {
                match &result.outcome {
                    Ok((_, ranked)) => ranked.first().map_or_else(String::new, |(c, _)| c.clone()),
                    Err(reason) => format!("error: {reason}"),
                }
            }),
            "runs_listed": app.runs.runs.len(),
            "storage_busy": app.page_storage_busy(),
            "runs": app.runs.runs.iter().map(|run| run.folder_name()).collect::<Vec<_>>(),
            "folder": app.form.folder.as_ref().map(|folder| folder.display().to_string()),
            "pretrained_tensors": session
                .and_then(|s| s.start.as_ref())
                .and_then(|start| start.pretrained.as_ref())
                .map(|loaded| loaded.tensors),
            "weights_file": app.form.weights_file.as_ref().map(|f| f.display().to_string()),
            "model": session
                .and_then(|s| s.history.config.as_ref())
                .map(|config| config.model.title()),
            "split_images": session
                .and_then(|s| s.start.as_ref())
                .map(|start| [start.train_len, start.val_len, start.test_len]),
        });
        Ok(status.to_string())
    }

    fn app(&self) -> Result<std::cell::RefMut<'_, KilnApp>, JsValue> {
        self.runner
            .app_mut::<KilnApp>()
            .ok_or_else(|| JsValue::from_str("the window is not running (it may have panicked)"))
    }
}

/// The folder of the window's current run.
fn current_run(app: &KilnApp) -> Result<std::path::PathBuf, JsValue> {
    let path = app.session.as_ref().map(|s| s.history.path.clone());
    path.ok_or_else(|| JsValue::from_str("the window has no run"))
}

/// The folder of the listed run named `name`.
fn listed_run(app: &KilnApp, name: &str) -> Result<std::path::PathBuf, JsValue> {
    let listed = app.runs.runs.iter().find(|run| run.folder_name() == name);
    let path = listed.map(|run| run.path.clone());
    path.ok_or_else(|| JsValue::from_str(&format!("no run {name} is listed")))
}
