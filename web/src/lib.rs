//! Kiln's engine in a browser page: the same training loop as the app and `kiln train`
//! ([`kiln_core::train::train_async`]), awaited on the page's event loop, on the visitor's GPU
//! through WebGPU, or on the CPU backend where the browser has no WebGPU.
//!
//! ```text
//! web/index.html        the page: loads pkg/kiln_web.js, calls train_builtin, shows each line
//! web/src/lib.rs        train_builtin: device, data, run, a JSON report
//! bench/web_check.sh    builds the page, serves it on 127.0.0.1, drives it in headless Chromium
//! ```
//!
//! Everything here is for `wasm32`; a native build of the workspace compiles an empty crate.

#![cfg(target_arch = "wasm32")]

use kiln_core::config::{self, Experiment};
use kiln_core::train::{self, Control, Preparation, TrainDevice, TrainEvent};
use serde::Serialize;
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
    let experiment = experiment(&preset, epochs).map_err(|e| JsValue::from_str(&e))?;
    let started = web_time::Instant::now();
    let target = match device.as_str() {
        "cpu" => TrainDevice::one(
            burn::tensor::Device::flex(),
            "cpu",
            "CPU (flex, one thread)",
        ),
        _ => webgpu_or_cpu().await,
    };
    let device_secs = started.elapsed().as_secs_f64();
    say(&format!("device: {} ({device_secs:.2} s)", target.name));
    let data = kiln_core::data::synthetic();
    let control = Control::new();
    let (mut epoch_rows, mut progress_rows) = (Vec::new(), 0);
    let summary = train::train_async(
        &experiment,
        &data,
        &target,
        Preparation::default(),
        &control,
        &mut |event| match event {
            TrainEvent::Progress(row) => {
                progress_rows += 1;
                say(&format!(
                    "epoch {} step {}: loss {:.4}, {:.0} samples/s",
                    row.epoch, row.step, row.train_loss, row.samples_per_sec
                ));
            }
            TrainEvent::EpochEnd(row) => {
                say(&format!(
                    "epoch {} done: train accuracy {:.4}, test accuracy {:?}",
                    row.epoch, row.train_accuracy, row.test_accuracy
                ));
                epoch_rows.push(row);
            }
            TrainEvent::Warning(warning) => say(&format!("warning: {warning:?}")),
            _ => {}
        },
    )
    .await
    .map_err(|e| JsValue::from_str(&e.to_string()))?;
    let steps_per_sec = summary
        .steady_rate()
        .map(|rate| rate / experiment.batch_size as f64);
    let report = Report {
        device: target.name.clone(),
        device_secs,
        epochs: epoch_rows,
        progress_rows,
        summary,
        steps_per_sec,
    };
    serde_json::to_string(&report).map_err(|e| JsValue::from_str(&e.to_string()))
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

/// `preset` with `epochs`, checked as the app checks it.
fn experiment(preset: &str, epochs: usize) -> Result<Experiment, String> {
    let mut draft = match preset {
        "default" => config::ExperimentDraft::default(),
        name => config::preset(name).map_err(|e| e.to_string())?,
    };
    draft.epochs = epochs;
    draft.validate().map_err(|e| e.to_string())
}

/// The browser's WebGPU adapter, asked for asynchronously (a page cannot block on it); the CPU
/// backend where the browser has none, named so.
async fn webgpu_or_cpu() -> TrainDevice {
    match burn::tensor::Device::wgpu_options().init_async().await {
        Ok(device) => TrainDevice::one(device, "gpu:0", "WebGPU (the browser's adapter)"),
        Err(e) => TrainDevice::one(
            burn::tensor::Device::flex(),
            "cpu",
            format!("CPU (flex, one thread): this browser gave no WebGPU adapter ({e})"),
        ),
    }
}
