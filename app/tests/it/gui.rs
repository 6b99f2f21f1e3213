//! The window, headless: each panel as a PNG snapshot, and a real run started with a click.
//!
//! Snapshots render through wgpu (lavapipe on machines without a GPU); refresh them with
//! `UPDATE_SNAPSHOTS=true cargo test --workspace --test it gui::` after an intended change.

// A failed unwrap in a test or an example is a failure that names its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use kiln::gui::{
    AppOptions, Arrangement, DataChoice, DatasetKind, KilnApp, ModelKind, Pane, PlotRun, RunsDir,
    RunsPanel, SeedBand, SetupContext, SetupForm, Stage, StartFrom, Tiled, arrangement_ui,
    chart_ui, legend_ui, plot_runs, runs_ui, setup_ui,
};
use kiln_core::config::{ExperimentDraft, Precision, Setting};
use kiln_core::device::{DeviceClass, DeviceInfo};
use kiln_core::plot::{Chart, XAxis};
use kiln_core::run_folder::{EpochRow, MetricsRow, RunHistory};
use kiln_test_support::{scratch_dir, scratch_file};

/// A device list that reads the same on every machine, so snapshots do not depend on core count.
fn fixed_devices() -> Vec<DeviceInfo> {
    vec![
        DeviceInfo {
            id: "gpu:0".to_owned(),
            name: "llvmpipe (LLVM 15.0.6, 256 bits)".to_owned(),
            backend: "Vulkan".to_owned(),
            class: DeviceClass::Software,
            driver: "llvmpipe".to_owned(),
            driver_info: String::new(),
            shader_f16: true,
        },
        DeviceInfo {
            id: "cpu".to_owned(),
            name: "CPU".to_owned(),
            backend: "flex".to_owned(),
            class: DeviceClass::Cpu,
            driver: String::new(),
            driver_info: String::new(),
            shader_f16: false,
        },
    ]
}

/// A made-up run that learns, for plots and the runs list.
fn fake_history(name: &str, lr: f64, speed: f64) -> RunHistory {
    let mut metrics = Vec::new();
    let mut epochs = Vec::new();
    for epoch in 1..=3 {
        for k in 1..=8 {
            let step = (epoch - 1) * 8 + k;
            let t = step as f64;
            metrics.push(MetricsRow {
                wall_secs: t * 0.25,
                epoch,
                step: k,
                global_step: step * 10,
                samples_seen: step as u64 * 640,
                train_loss: 2.3 / (1.0 + t * lr * 10.0),
                train_accuracy: 1.0 - 0.9 / (1.0 + t * lr * 10.0),
                samples_per_sec: speed * (1.0 + 0.05 * (t * 1.7).sin()),
                step_ms: 64_000.0 / speed,
                data_ms: 0.1,
                compute_ms: 1.0,
                sync_ms: 0.2,
                lr,
            });
        }
        let t = (epoch * 8) as f64;
        epochs.push(EpochRow {
            epoch,
            train_loss: Some(2.3 / (1.0 + t * lr * 10.0)),
            train_accuracy: Some(1.0 - 0.9 / (1.0 + t * lr * 10.0)),
            val_loss: None,
            val_accuracy: None,
            test_loss: Some(2.4 / (1.0 + t * lr * 9.0)),
            test_accuracy: Some(1.0 - 0.95 / (1.0 + t * lr * 9.0)),
            epoch_secs: Some(2.0),
            eval_secs: Some(0.2),
            samples_per_sec: Some(speed),
        });
    }
    let draft = kiln_core::config::ExperimentDraft {
        name: name.to_owned(),
        lr,
        ..Default::default()
    };
    RunHistory {
        path: PathBuf::from(format!("runs/20261129-120000-{name}")),
        name: name.to_owned(),
        config: Some(draft),
        metrics,
        epochs,
        summary: None,
        source: None,
        problems: Vec::new(),
    }
}

/// The setup panel alone, showing `form`, with the fixed device list.
fn setup_harness(form: SetupForm) -> Harness<'static, SetupForm> {
    let devices = fixed_devices();
    Harness::builder().with_size([380.0, 900.0]).build_ui_state(
        move |ui, form: &mut SetupForm| {
            let check = form.check();
            let context = SetupContext {
                devices: Some(&devices),
                ..SetupContext::default()
            };
            setup_ui(ui, form, &check, &context);
        },
        form,
    )
}

#[test]
fn setup_panel_snapshot() {
    let mut harness = setup_harness(SetupForm::default());
    harness.run();
    harness.snapshot("setup_panel");
}

/// The settings table's promise for the window: each row has its field in the Setup panel (the
/// panel draws rows from the table, so a new row needs no line in the panel). The form chosen
/// here makes every row apply: a folder data set (test split), a pretrained start and a linear
/// probe (fine-tuning rows), a validation split, weight decay on Adam (how it decays).
#[test]
fn every_row_of_the_settings_table_has_its_field_in_the_setup_panel() {
    let mut form = SetupForm {
        dataset: DatasetKind::Folder,
        folder: Some(PathBuf::from("photos")),
        model: ModelKind::Torchvision(kiln_core::model::TorchvisionArch::ResNet18),
        start_from: StartFrom::ImageNet,
        ..SetupForm::default()
    };
    form.draft.fine_tune = kiln_core::config::FineTune::LinearProbe;
    *form.text_mut(Setting::WeightDecay) = "0.0001".to_owned();
    let mut harness = Harness::builder()
        .with_size([380.0, 2400.0])
        .build_ui_state(
            |ui, form: &mut SetupForm| {
                let check = form.check();
                setup_ui(ui, form, &check, &SetupContext::default());
            },
            form,
        );
    harness.run();
    for row in kiln_core::settings::rows() {
        let label = row.setting().label();
        assert!(
            harness.query_all_by_label(label).next().is_some(),
            "the Setup panel has no field labelled {label}"
        );
    }
}

/// Rough edge seen in the page's screenshot: a long weights file name widened the Setup panel
/// and squeezed the plots off the central panel; a long folder path did the same.
#[test]
fn a_long_chosen_path_leaves_the_setup_panel_its_width() {
    let long = "/home/someone/photos/a-folder-with-a-long-name-for-every-photo-of-the-garden";
    let mut draft = kiln_core::config::ExperimentDraft {
        model: kiln_core::model::ModelSpec::ResNet18ImageNet,
        weights: Some(kiln_core::weights::WeightsSource::File(PathBuf::from(
            format!("{long}/resnet18-fine-tuned-on-the-garden-photos-of-this-summer.safetensors"),
        ))),
        ..Default::default()
    };
    draft.dataset = kiln_core::data::DatasetSpec::Folder {
        path: PathBuf::from(long),
        image_size: 64,
    };
    let mut harness = setup_harness(SetupForm::from_draft(&draft));
    harness.run();
    for button in ["Choose folder…", "Choose file…"] {
        let rect = harness.get_by_label(button).rect();
        assert!(rect.max.x <= 380.0, "{button} at {rect:?}");
    }
    harness.get_by_label("resnet18-fine-tuned-on-the-garden-photos-of-this-summer.safetensors");
}

#[test]
fn a_changed_setting_is_marked_with_a_reset_and_the_search_box_finds_a_setting() {
    let form = SetupForm::default()
        .with_text(Setting::Lr, "0.01")
        .with_text(Setting::Epsilon, "0.00000001");
    let mut harness = setup_harness(form);
    harness.run();
    // Only the learning rate differs: 0.00000001 is the default ε written another way.
    let resets: Vec<_> = harness.get_all_by_label("⟳").collect();
    assert_eq!(resets.len(), 1);
    resets[0].click();
    harness.run();
    let default_lr = SetupForm::default().text_mut(Setting::Lr).clone();
    assert_eq!(*harness.state_mut().text_mut(Setting::Lr), default_lr);
    assert!(harness.query_by_label("⟳").is_none());

    harness.get_by_label("Epochs");
    harness.get_by_label("Find").focus();
    harness.run();
    harness.get_by_label("Find").type_text("momentum");
    harness.run();
    assert!(
        harness.query_by_label("Epochs").is_none(),
        "a row the search does not find"
    );
    assert!(harness.query_by_label("Learning rate").is_none());

    // The device row, which is not a typed field, is marked, reset and found too.
    let mut harness = setup_harness(SetupForm {
        device: "cpu".to_owned(),
        ..SetupForm::default()
    });
    harness.run();
    harness.get_by_label("Find").focus();
    harness.run();
    harness.get_by_label("Find").type_text("device");
    harness.run();
    harness.get_by_label("Device");
    assert!(harness.query_by_label("Epochs").is_none());
    // Found, it is at the top of the panel: its ⟳ can be clicked.
    harness.get_by_label("⟳").click();
    harness.run();
    assert_eq!(harness.state().device, "auto");
}

#[test]
fn setup_panel_marks_bad_values_where_typed() {
    let form = SetupForm::default()
        .with_text(Setting::Lr, "-1")
        .with_text(Setting::BatchSize, "lots");
    let mut harness = setup_harness(form);
    harness.run();
    harness.get_by_label_contains("'lots' is not a whole number");
    harness.snapshot("setup_panel_errors");
}

#[test]
fn f16_is_marked_on_a_device_without_16_bit_shaders_and_not_on_one_with_them() {
    let on_cpu = SetupForm {
        device: "cpu".to_owned(),
        draft: ExperimentDraft {
            precision: Precision::F16,
            ..ExperimentDraft::default()
        },
        ..SetupForm::default()
    };
    let mut harness = setup_harness(on_cpu);
    harness.run();
    harness.get_by_label_contains("the CPU trains in f32 only");
    // The fixed listing's lavapipe has SHADER_F16.
    let on_gpu = SetupForm {
        device: "gpu:0".to_owned(),
        draft: ExperimentDraft {
            precision: Precision::F16,
            ..ExperimentDraft::default()
        },
        ..SetupForm::default()
    };
    let mut harness = setup_harness(on_gpu);
    harness.run();
    assert!(
        harness
            .query_by_label_contains("trains in f32 only")
            .is_none()
    );
}

#[test]
fn runs_panel_snapshot() {
    let mut slow = fake_history("slow", 0.01, 3000.0);
    let mut summary = kiln_core::train::RunSummary::new("CPU", 100, 0.1, 0.0);
    summary.outcome = kiln_core::train::RunOutcome::Completed;
    summary.epochs_completed = 3;
    summary.steady_samples_per_sec = 3000.0;
    summary.warmup_secs = 0.4;
    slow.summary = Some(summary);
    let mut panel = RunsPanel::with_runs(vec![fake_history("fast", 0.1, 9000.0), slow]);
    panel.selected.insert(panel.runs[0].path.clone());
    let mut harness = Harness::builder().with_size([320.0, 420.0]).build_ui_state(
        |ui, panel: &mut RunsPanel| {
            runs_ui(ui, panel, None, std::path::Path::new("runs"));
        },
        panel,
    );
    harness.run();
    // Speed and warm-up side by side, so a second launch shows what the kept cache saved.
    harness.get_by_label_contains("3000 samples/s, warm-up 0.40 s");
    harness.snapshot("runs_panel");
}

/// The Train view's legend and four charts in their default arrangement.
fn plots_ui(ui: &mut egui::Ui, runs: &[PlotRun<'_>], bands: &[SeedBand<'_>], x_axis: XAxis) {
    legend_ui(ui, runs, bands);
    let mut arrangement = Arrangement::new(Tiled::Train);
    arrangement_ui(ui, &mut arrangement, &mut |ui, pane| {
        chart_ui(ui, pane.chart().unwrap(), runs, bands, &[], x_axis);
    });
}

/// The Train view's legend and charts of `histories`, labelled `labels`, in a 900×620 panel,
/// settled.
fn plots_harness<'a>(histories: &'a [&'a RunHistory], labels: &'a [String]) -> Harness<'a> {
    let mut harness = Harness::builder()
        .with_size([900.0, 620.0])
        .build_ui(move |ui| {
            plots_ui(ui, &plot_runs(histories, labels), &[], XAxis::Steps);
        });
    harness.run();
    harness
}

/// Rough edge: the step time chart's legend sat over its lines. The runs are named once, above
/// every chart, where no line is.
#[test]
fn the_legend_is_drawn_once_above_the_charts_where_it_covers_no_line() {
    let runs = [
        fake_history("lr-0.1", 0.1, 9000.0),
        fake_history("lr-0.01", 0.01, 3000.0),
    ];
    let labels = ["lr 0.1".to_owned(), "lr 0.01".to_owned()];
    let histories: Vec<&RunHistory> = runs.iter().collect();
    let harness = plots_harness(&histories, &labels);
    let entry = harness.get_by_label("lr 0.1");
    let first_chart = harness.get_by_label("Loss");
    assert!(
        entry.rect().max.y <= first_chart.rect().min.y,
        "the legend ({:?}) reaches into the charts ({:?})",
        entry.rect(),
        first_chart.rect()
    );
    harness.get_by_label("test");

    // A sweep's two dozen runs: the legend scrolls past three lines rather than push the
    // charts down.
    let many: Vec<RunHistory> = (0..24)
        .map(|i| fake_history(&format!("trial-{i}"), 0.1, 9000.0))
        .collect();
    let labels: Vec<String> = (0..24)
        .map(|i| format!("trial {i}: lr 0.00{i}, batch 256, init glorot-uniform"))
        .collect();
    let histories: Vec<&RunHistory> = many.iter().collect();
    let harness = plots_harness(&histories, &labels);
    let top = harness.get_by_label("Loss").rect().min.y;
    assert!(top < 90.0, "the charts start {top} points down");
}

/// The Results view's panels of a run's predictions in their default arrangement (its step
/// profile panel left empty).
fn results_ui(
    ui: &mut egui::Ui,
    predictions: &kiln_core::results::TestPredictions,
    validation: Option<&kiln_core::results::ClassReport>,
) {
    let mut arrangement = Arrangement::new(Tiled::Results);
    arrangement_ui(ui, &mut arrangement, &mut |ui, pane| match pane {
        Pane::ConfusionMatrix => {
            kiln::gui::confusion_matrix_ui(ui, predictions);
        }
        Pane::ClassReport => kiln::gui::class_report_panel_ui(ui, predictions, validation),
        Pane::Mistakes => kiln::gui::mistakes_ui(ui, predictions),
        _ => {}
    });
}

#[test]
fn plots_snapshot_overlays_two_runs() {
    let runs = [
        fake_history("lr-0.1", 0.1, 9000.0),
        fake_history("lr-0.01", 0.01, 3000.0),
    ];
    let labels = ["lr 0.1".to_owned(), "lr 0.01".to_owned()];
    let histories: Vec<&RunHistory> = runs.iter().collect();
    let mut harness = plots_harness(&histories, &labels);
    harness.snapshot("plots");
}

#[test]
fn plots_of_a_run_without_rows_yet_show_each_charts_own_range() {
    // Seen in a page: a started run waiting for its first readback drew −0.5…0.5 on every
    // chart, a negative accuracy among them.
    let mut waiting = fake_history("started", 0.1, 9000.0);
    waiting.metrics.clear();
    waiting.epochs.clear();
    let labels = ["started".to_owned()];
    let histories = [&waiting];
    let mut harness = plots_harness(&histories, &labels);
    harness.snapshot("plots_waiting");
}

#[test]
fn plots_mark_a_warm_up_step_time_off_the_scale_so_the_steady_steps_can_be_read() {
    // A GPU's first readback window holds its shader compilation: scaled to it, every later
    // step sat flat on the axis.
    let mut warm = fake_history("gpu", 0.1, 9000.0);
    let steady_ms = warm.metrics[1].step_ms;
    warm.metrics[0].step_ms = steady_ms * 200.0;
    let labels = ["gpu".to_owned()];
    let histories = [&warm];
    let mut harness = plots_harness(&histories, &labels);
    harness.get_by_label_contains("gpu: 1 readback off the scale, up to");
    harness.snapshot("plots_warm_up");
}

/// Pixels of `image` within a few levels of `color`: a line's anti-aliased edges are blends,
/// so what counts is its core and whatever area is filled with the run's colour.
fn pixels_of(image: &image::RgbaImage, color: egui::Color32) -> usize {
    let near = |a: u8, b: u8| a.abs_diff(b) <= 8;
    image
        .pixels()
        .filter(|p| near(p[0], color.r()) && near(p[1], color.g()) && near(p[2], color.b()))
        .count()
}

#[test]
fn a_one_window_spike_between_sparse_readbacks_is_drawn_as_a_line_not_a_filled_triangle() {
    // Rough edge: the README's throughput chart showed a filled triangle where an epoch's last
    // window (four steps, one pixel column after the readback before it) dipped: egui_plot
    // merged the column into a band and filled from it to the next readback, 40 pixels on.
    let mut spiky = fake_history("spiky", 0.1, 9000.0);
    spiky.metrics.truncate(1);
    spiky.metrics = (1..=24)
        .flat_map(|k| {
            let row = spiky.metrics[0].clone();
            let at = |global_step: usize, samples_per_sec: f64| MetricsRow {
                global_step,
                samples_per_sec,
                ..row.clone()
            };
            let mut rows = vec![at(k * 100, 9000.0)];
            if k == 12 {
                rows.push(at(k * 100 + 1, 500.0));
            }
            rows
        })
        .collect();
    let labels = ["spiky".to_owned()];
    let histories = [&spiky];
    let mut harness = Harness::builder().with_size([900.0, 620.0]).build_ui(|ui| {
        let runs = plot_runs(&histories, &labels);
        chart_ui(ui, Chart::Throughput, &runs, &[], &[], XAxis::Steps);
    });
    harness.run();
    let image = harness.render().unwrap();
    let colored = pixels_of(&image, plot_runs(&histories, &labels)[0].color);
    // Measured on lavapipe: the line's core is some 140 pixels, the triangle filled 16 700.
    assert!(
        colored < 4_000,
        "{colored} pixels in the run's colour: an area is filled"
    );
}

fn app_harness(runs_dir: &Path) -> Harness<'static, KilnApp> {
    app_harness_of_size(runs_dir, [1280.0, 800.0])
}

/// The window of `size`, its runs in `runs_dir`, on the fixed device list, nothing remembered.
fn app_harness_of_size(runs_dir: &Path, size: [f32; 2]) -> Harness<'static, KilnApp> {
    let runs_dir = runs_dir.to_owned();
    Harness::builder().with_size(size).build_eframe(move |cc| {
        KilnApp::new(
            cc,
            AppOptions {
                runs_dir: RunsDir::Fixed(runs_dir),
                devices: Some(fixed_devices()),
                restore: false,
            },
        )
    })
}

/// A small MLP on the built-in data on the CPU.
fn small_run_form(name: &str, epochs: u32, batch: u32) -> SetupForm {
    let mut form = SetupForm {
        device: "cpu".to_owned(),
        ..SetupForm::default()
    }
    .with_text(Setting::MlpWidths, "32")
    .with_text(Setting::Epochs, &epochs.to_string())
    .with_text(Setting::BatchSize, &batch.to_string());
    form.draft.name = name.to_owned();
    form
}

/// Fills the form with a small run and clicks Start.
fn start_small_run(harness: &mut Harness<'static, KilnApp>, name: &str, epochs: u32, batch: u32) {
    start_run(harness, small_run_form(name, epochs, batch));
}

/// Fills the form with `form` and clicks Start.
fn start_run(harness: &mut Harness<'static, KilnApp>, form: SetupForm) {
    harness.state_mut().form = form;
    harness.run();
    harness.get_by_label_contains("▶ Start").click();
    // A run wakes the window as it goes, so the UI never settles: step, do not `run`.
    harness.run_steps(2);
}

#[test]
fn window_snapshot_before_a_run() {
    // The Runs panel prints its folder, so the snapshot needs a path that reads the same on
    // every machine: a relative one that the idle window must not create.
    let runs_dir = Path::new("runs");
    assert!(
        !runs_dir.exists(),
        "app/runs exists; move it away, the window snapshot shows an empty runs folder"
    );
    let mut harness = app_harness(runs_dir);
    harness.run();
    harness.snapshot("window_idle");
    assert!(!runs_dir.exists(), "an idle window created its runs folder");
}

#[test]
fn a_dropped_folder_is_the_named_sets_folder_when_one_is_chosen_else_an_image_folder() {
    let runs_dir = scratch_dir("gui-dropped-folder");
    let mut harness = app_harness(&runs_dir);
    let app = harness.state_mut();
    app.form.dataset = DatasetKind::Mnist;
    app.use_data_folder(DataChoice::Dropped, "digits".into());
    assert_eq!(
        app.form.draft.data_dir.as_deref(),
        Some(Path::new("digits"))
    );
    assert_eq!(app.form.dataset, DatasetKind::Mnist);
    app.form.dataset = DatasetKind::Synthetic;
    app.use_data_folder(DataChoice::Dropped, "pets".into());
    assert_eq!(app.form.dataset, DatasetKind::Folder);
    assert_eq!(app.form.folder.as_deref(), Some(Path::new("pets")));
    app.use_data_folder(DataChoice::NamedSetFolder, "fashion".into());
    assert_eq!(
        app.form.draft.data_dir.as_deref(),
        Some(Path::new("fashion"))
    );
    std::fs::remove_dir_all(&runs_dir).ok();
}

#[test]
fn a_start_click_trains_plots_and_lists_the_run() {
    let runs_dir = scratch_dir("interaction");
    let mut harness = app_harness(&runs_dir);
    start_small_run(&mut harness, "from-the-window", 2, 128);
    assert!(harness.state().session.is_some(), "Start made no session");

    let deadline = Instant::now() + Duration::from_secs(300);
    while harness.state().is_training() {
        assert!(Instant::now() < deadline, "the run did not finish in time");
        std::thread::sleep(Duration::from_millis(50));
        harness.step();
    }
    harness.run();

    let app = harness.state();
    let session = app.session.as_ref().unwrap();
    assert_eq!(
        session.state,
        kiln::gui::SessionState::Finished(kiln_core::train::RunOutcome::Completed),
        "{:?}",
        session.warnings
    );
    assert!(
        !session.history.metrics.is_empty(),
        "the plots have no training points"
    );
    assert_eq!(session.history.epochs.len(), 2, "one test point per epoch");
    let folder = session.history.path.clone();
    assert!(
        folder.join("summary.json").is_file(),
        "{}",
        folder.display()
    );
    assert!(
        app.runs.runs.iter().any(|r| r.path == folder),
        "the finished run is not in the list"
    );
    // The list reads back from disk what the live plots showed.
    let listed = app.runs.runs.iter().find(|r| r.path == folder).unwrap();
    assert_eq!(listed.epochs.len(), 2);
    assert_eq!(listed.metrics.len(), session.history.metrics.len());
}

#[test]
fn a_started_run_is_listed_while_it_trains() {
    // Seen in a page: the runs panel said "No runs yet: press Start." for a whole run.
    let runs_dir = scratch_dir("listed-live");
    let mut harness = app_harness(&runs_dir);
    start_small_run(&mut harness, "live", 200, 128);
    step_until(&mut harness, 300, |app| {
        app.session.as_ref().is_some_and(|s| s.start.is_some())
    });
    let app = harness.state();
    let session = app.session.as_ref().unwrap();
    assert!(session.state.is_active(), "{:?}", session.state);
    assert!(
        app.runs.runs.iter().any(|r| r.path == session.history.path),
        "the running run is not in the list"
    );
    harness.state_mut().session.as_mut().unwrap().cancel();
    step_until(&mut harness, 300, |app| !app.is_training());
}

#[test]
fn a_profiled_run_shows_where_the_step_time_goes() {
    let runs_dir = scratch_dir("profiled");
    let mut harness = app_harness(&runs_dir);
    let form = small_run_form("profiled", 1, 256).with_text(Setting::ProfileSteps, "5");
    start_run(&mut harness, form);
    step_until(&mut harness, 300, |app| !app.is_training());
    harness.run();
    let profile = harness
        .state()
        .session
        .as_ref()
        .and_then(|s| s.history.summary.as_ref())
        .and_then(|s| s.profile.clone())
        .expect("a profiled run's summary has its profile");
    assert_eq!(profile.steps, 5);
    harness.get_by_label("Results").click();
    harness.run();
    harness.get_by_label_contains("Step profile").click();
    harness.run();
    harness.get_by_label("host sync");
}

#[test]
fn start_is_disabled_with_the_reason_shown() {
    let runs_dir = scratch_dir("disabled");
    let mut harness = app_harness(&runs_dir);
    *harness.state_mut().form.text_mut(Setting::Epochs) = "0".to_owned();
    harness.run();
    harness.get_by_label_contains("Start is disabled: Epochs");
    harness.get_by_label_contains("▶ Start").click();
    harness.run();
    assert!(harness.state().session.is_none());
    assert!(std::fs::read_dir(&runs_dir).unwrap().next().is_none());
}

/// Steps the window until `done` holds, failing after `secs`.
fn step_until(harness: &mut Harness<'static, KilnApp>, secs: u64, done: impl Fn(&KilnApp) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !done(harness.state()) {
        assert!(Instant::now() < deadline, "timed out");
        std::thread::sleep(Duration::from_millis(20));
        harness.step();
    }
}

#[test]
fn pause_holds_the_run_resume_continues_and_cancel_keeps_the_folder() {
    let runs_dir = scratch_dir("pause");
    let mut harness = app_harness(&runs_dir);
    start_small_run(&mut harness, "paused", 1000, 16);
    let steps = |app: &KilnApp| {
        app.session
            .as_ref()
            .and_then(|s| s.last_progress.as_ref())
            .map_or(0, |p| p.global_step)
    };
    step_until(&mut harness, 120, |app| steps(app) > 0);

    harness.get_by_label_contains("Pause").click();
    harness.run_steps(2);
    step_until(&mut harness, 30, |app| {
        app.session.as_ref().is_some_and(|s| s.is_paused())
    });
    // The step in flight when Pause was pressed may still report; wait until nothing arrives
    // for a while (a loaded machine can take long), then nothing may move while paused.
    let settle_deadline = Instant::now() + Duration::from_secs(30);
    let mut held = steps(harness.state());
    loop {
        std::thread::sleep(Duration::from_millis(500));
        harness.step();
        let now = steps(harness.state());
        if now == held {
            break;
        }
        assert!(
            Instant::now() < settle_deadline,
            "the run never settled after Pause"
        );
        held = now;
    }
    std::thread::sleep(Duration::from_millis(800));
    harness.step();
    assert_eq!(
        steps(harness.state()),
        held,
        "the run advanced while paused"
    );

    harness.get_by_label("⏵ Resume").click();
    harness.run_steps(2);
    step_until(&mut harness, 60, |app| steps(app) > held);

    harness.get_by_label_contains("Cancel").click();
    harness.run_steps(2);
    step_until(&mut harness, 60, |app| !app.is_training());
    let session = harness.state().session.as_ref().unwrap();
    assert_eq!(
        session.state,
        kiln::gui::SessionState::Finished(kiln_core::train::RunOutcome::Cancelled)
    );
    let summary = std::fs::read_to_string(session.history.path.join("summary.json")).unwrap();
    assert!(summary.contains("\"cancelled\""), "{summary}");
}

#[test]
fn start_waits_for_a_named_data_set_that_is_not_here() {
    let runs_dir = scratch_dir("no-data");
    let empty = scratch_dir("no-data-dir");
    let mnist = kiln_core::data::fetch::RemoteDataset::Mnist;
    if kiln_core::data::locate(mnist, Some(&empty)).is_ok() {
        eprintln!("MNIST is installed on this machine; the missing-data case cannot be shown");
        return;
    }
    let mut harness = app_harness(&runs_dir);
    harness.state_mut().form.dataset = kiln::gui::DatasetKind::Mnist;
    harness.state_mut().form.draft.data_dir = Some(empty.path_buf());
    harness.run();
    harness.get_by_label_contains("Start is disabled: Data set: not found");
    harness.get_by_role_and_label(egui::accesskit::Role::Button, "Fetch");
    harness.get_by_label_contains("▶ Start").click();
    harness.run();
    assert!(harness.state().session.is_none());
    assert!(std::fs::read_dir(&runs_dir).unwrap().next().is_none());
}

#[test]
fn compare_table_snapshot() {
    let fast = fake_history("lr-0.1", 0.1, 9000.0);
    let mut slow = fake_history("lr-0.01", 0.01, 3000.0);
    let mut summary = kiln_core::train::RunSummary::new("CPU", 100, 0.1, 0.0);
    summary.steady_samples_per_sec = 3000.0;
    summary.warmup_secs = 0.4;
    summary.final_test_accuracy = slow.epochs.last().and_then(|e| e.test_accuracy);
    slow.summary = Some(summary);
    let comparison = kiln_core::compare::compare(&[&fast, &slow]);
    let mut harness = Harness::builder().with_size([640.0, 260.0]).build_ui(|ui| {
        kiln::gui::compare_ui(ui, &comparison, &[&fast, &slow]);
    });
    harness.run();
    harness.get_by_label_contains("(+");
    harness.snapshot("compare_table");
}

#[test]
fn step_profile_snapshot_draws_runs_to_one_scale() {
    let profile = |forward_ms: f64, backward_ms: f64| kiln_core::train::StepProfile {
        mode: "profiling".into(),
        steps: 20,
        data_ms: 0.1,
        forward_ms,
        backward_ms,
        optimizer_ms: 0.4,
        host_sync_ms: 0.05,
    };
    let (cpu, gpu) = (profile(0.9, 1.2), profile(0.2, 0.3));
    let runs = [
        kiln::gui::ProfiledRun {
            label: "cpu",
            color: kiln::gui::run_color(0),
            profile: &cpu,
        },
        kiln::gui::ProfiledRun {
            label: "gpu:0",
            color: kiln::gui::run_color(1),
            profile: &gpu,
        },
    ];
    let mut harness = Harness::builder()
        .with_size([760.0, 140.0])
        .build_ui(|ui| kiln::gui::step_profile_ui(ui, &runs));
    harness.run();
    // Each phase in ms and the whole step, per run.
    harness.get_by_label("1.20");
    harness.get_by_label("2.65");
    harness.get_by_label("1.05");
    assert_eq!(harness.get_all_by_label("0.40").count(), 2);
    harness.snapshot("step_profile");
}

#[test]
fn per_class_results_snapshot() {
    let class_names: Vec<String> = ["circle", "square", "cross"].map(String::from).to_vec();
    let labels = vec![0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2];
    let predicted = vec![0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 0, 2];
    let confidence = vec![0.9, 0.8, 0.7, 0.95, 0.9, 0.6, 0.7, 0.8, 0.9, 0.9, 0.55, 0.9];
    // A 4×4 "image" per wrong answer: a bright diagonal on black.
    let diagonal: Vec<u8> = (0..16).map(|i| if i % 5 == 0 { 255 } else { 0 }).collect();
    let gallery = [3, 10]
        .map(|index| kiln_core::results::GalleryImage {
            index,
            shape: [1, 4, 4],
            pixels: diagonal.clone(),
        })
        .to_vec();
    let predictions = kiln_core::results::TestPredictions {
        class_names,
        labels,
        predicted,
        confidence,
        label_rank: Vec::new(),
        gallery,
    };
    // The validation split's report: half of four images right.
    let validation = kiln_core::results::TestPredictions {
        labels: vec![0, 1, 2, 2],
        predicted: vec![0, 1, 0, 1],
        confidence: vec![0.9; 4],
        gallery: Vec::new(),
        ..predictions.clone()
    }
    .report();
    let mut harness = Harness::builder().with_size([900.0, 520.0]).build_ui(|ui| {
        results_ui(ui, &predictions, Some(&validation));
    });
    harness.run();
    harness.get_by_label("Test accuracy 83.33 %.");
    harness.get_by_label_contains("Validation accuracy 50.00 %.");
    // The caption under the image (its tooltip names it too).
    assert!(
        harness
            .query_all_by_label_contains("circle taken for square (95.0 %)")
            .next()
            .is_some()
    );
    // Circle: precision, recall and F1 of 75 %; cross: recall 75 %, precision 100 %.
    assert_eq!(harness.get_all_by_label("75.0 %").count(), 4);
    assert_eq!(
        harness.get_all_by_label("100.0 %").count(),
        2,
        "square recall, cross precision"
    );
    harness.get_by_label("88.9 %"); // square's F1: precision 80 %, recall 100 %
    // Equal supports: the macro and weighted precision are both (75 + 80 + 100) / 3.
    assert_eq!(harness.get_all_by_label("85.0 %").count(), 2);
    harness.snapshot("per_class_results");
}

#[test]
fn seed_band_snapshot() {
    let seeded = |seed: u64, offset: f64| {
        let mut run = fake_history(&format!("seed-{seed}"), 0.02, 5000.0);
        if let Some(config) = run.config.as_mut() {
            config.seed = seed;
        }
        for epoch in &mut run.epochs {
            epoch.test_accuracy = epoch.test_accuracy.map(|a| a + offset);
            epoch.test_loss = epoch.test_loss.map(|l| l - offset);
        }
        run
    };
    let runs = [seeded(1, -0.03), seeded(2, 0.0), seeded(3, 0.04)];
    let histories: Vec<&RunHistory> = runs.iter().collect();
    let comparison = kiln_core::compare::compare(&histories);
    assert_eq!(
        comparison.seed_groups.len(),
        1,
        "three runs that differ only in seed"
    );
    let labels = kiln_core::plot::legend_labels(&histories);
    let bands = [kiln::gui::SeedBand {
        runs: histories.clone(),
        color: kiln::gui::run_color(0),
    }];
    let mut harness = Harness::builder().with_size([900.0, 620.0]).build_ui(|ui| {
        plots_ui(ui, &plot_runs(&histories, &labels), &bands, XAxis::Steps);
    });
    harness.run();
    harness.snapshot("plots_seed_band");
}

/// A file dropped on the window, as the windowing layer hands it to egui.
#[derive(Debug)]
struct DroppedPath(PathBuf);

impl egui::DroppedFile for DroppedPath {
    fn path(&self) -> &Path {
        &self.0
    }

    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

/// `image` as PNG bytes with an eXIf chunk giving its EXIF orientation (1 to 8), as a camera
/// stores a photo it did not turn.
fn png_with_orientation(image: &image::RgbImage, orientation: u16) -> Vec<u8> {
    use image::ImageEncoder;
    // A big-endian TIFF header and one IFD entry: Orientation (0x0112), SHORT, count 1.
    let mut exif = b"MM\x00\x2a\x00\x00\x00\x08\x00\x01\x01\x12\x00\x03\x00\x00\x00\x01".to_vec();
    exif.extend(orientation.to_be_bytes());
    exif.extend([0, 0, 0, 0, 0, 0]);
    let mut png = Vec::new();
    let mut encoder = image::codecs::png::PngEncoder::new(&mut png);
    encoder.set_exif_metadata(exif).unwrap();
    encoder
        .write_image(
            image.as_raw(),
            image.width(),
            image.height(),
            image::ExtendedColorType::Rgb8,
        )
        .unwrap();
    png
}

#[test]
fn a_finished_run_can_classify_an_opened_image() {
    let runs_dir = scratch_dir("try");
    let mut harness = app_harness(&runs_dir);
    start_small_run(&mut harness, "try", 1, 128);
    step_until(&mut harness, 300, |app| !app.is_training());
    harness.run();
    let folder = harness
        .state()
        .session
        .as_ref()
        .unwrap()
        .history
        .path
        .clone();
    assert!(
        folder.join("model.bpk").is_file(),
        "a completed run keeps its model"
    );

    // The runs list offers the model; clicking opens it in the Predict view.
    harness.get_by_label_contains("Try…").click();
    harness.run();
    assert!(harness.state().try_model.is_some());
    assert_eq!(harness.state().stage, Stage::Predict);

    // An image of another size and colour: it is resized and made grayscale as training saw.
    let image_path = scratch_file("cross.png");
    let image = image::RgbImage::from_fn(64, 48, |x, y| {
        if x.abs_diff(y) < 4 || (63 - x).abs_diff(y) < 4 {
            image::Rgb([250, 240, 230])
        } else {
            image::Rgb([10, 20, 30])
        }
    });
    image.save(&image_path).unwrap();
    // Dropped on the window, as a person would.
    harness
        .input_mut()
        .dropped_files
        .push(std::sync::Arc::new(DroppedPath(image_path.to_path_buf())));
    harness.step();
    let try_model = harness.state_mut().try_model.as_mut().unwrap();
    assert_eq!(
        try_model.result.as_ref().map(|r| r.name.clone()),
        Some(image_path.display().to_string()),
        "the dropped image was classified"
    );
    try_model.try_file(&image_path);
    let result = try_model.result.as_ref().unwrap();
    let (_, ranked) = result.outcome.as_ref().expect("the image is classified");
    assert_eq!(ranked.len(), 5);
    assert!(
        ranked.windows(2).all(|w| w[0].1 >= w[1].1),
        "most likely first"
    );
    let total: f32 = ranked.iter().map(|(_, p)| p).sum();
    assert!(total > 0.0 && total <= 1.0 + 1e-5);
    let best = format!("{}:", ranked[0].0);
    harness.run();
    harness.get_by_label_contains(&best);

    // A phone photo stored upside down with EXIF saying so is shown, and classified, upright,
    // as training reads it (Try once ignored the orientation).
    let top_row_white = image::RgbImage::from_fn(28, 28, |_, y| match y {
        0 => image::Rgb([255, 255, 255]),
        _ => image::Rgb([0, 0, 0]),
    });
    let upside_down = png_with_orientation(&top_row_white, 3);
    let try_model = harness.state_mut().try_model.as_mut().unwrap();
    try_model.try_bytes("phone.png", &upside_down);
    let (seen, _) = try_model.result.as_ref().unwrap().outcome.as_ref().unwrap();
    let row_is_white = |y: usize| (0..28).all(|x| seen.pixels[y * 28 + x].r() > 200);
    assert!(
        row_is_white(27) && !row_is_white(0),
        "the EXIF orientation was not applied"
    );

    // Predict folder…: every image at any depth, the broken file listed with its reason.
    let photos = scratch_dir("try-folder");
    std::fs::create_dir_all(photos.join("nested")).unwrap();
    image.save(photos.join("nested").join("cross.png")).unwrap();
    top_row_white.save(photos.join("line.png")).unwrap();
    std::fs::write(photos.join("broken.png"), b"not a png").unwrap();
    harness.state_mut().predict_folder(photos.path_buf());
    let deadline = Instant::now() + Duration::from_secs(120);
    while harness
        .state_mut()
        .folder_predictions
        .as_mut()
        .unwrap()
        .predictions()
        .is_none()
    {
        assert!(
            Instant::now() < deadline,
            "the folder was not predicted in time"
        );
        std::thread::sleep(Duration::from_millis(20));
        harness.step();
    }
    harness.run();
    harness.get_by_label("2 image(s) classified, 1 file(s) could not be read.");
    let listed = photos.join("nested").join("cross.png");
    harness.get_by_label(&listed.display().to_string());
    harness.get_by_label("1 file(s) could not be read").click();
    harness.run();
    let broken = photos.join("broken.png").display().to_string();
    harness.get_by_label_contains(&format!("could not decode image {broken}"));
    let folder_predictions = harness.state_mut().folder_predictions.as_mut().unwrap();
    let predictions = folder_predictions.predictions().unwrap().to_vec();
    let csv = folder_predictions.csv(&predictions);
    assert_eq!(csv.lines().count(), 4, "{csv}");
    assert!(csv.starts_with("path,label_1,probability_1,"), "{csv}");

    // A file that is not an image gets a sentence, not a panic.
    let bad = scratch_file("not-an-image.png");
    std::fs::write(&bad, b"not a png").unwrap();
    let try_model = harness.state_mut().try_model.as_mut().unwrap();
    try_model.try_file(&bad);
    let outcome = &try_model.result.as_ref().unwrap().outcome;
    assert!(
        outcome
            .as_ref()
            .is_err_and(|e| e.contains("could not decode"))
    );
    harness.run();

    // Later, in a new window, ticking that run shows its per-class results from disk.
    drop(harness);
    let mut harness = app_harness(&runs_dir);
    harness.run();
    harness.get_by_label("Results").click();
    harness.run();
    assert_eq!(harness.state().stage, Stage::Results);
    assert!(harness.query_by_label_contains("Test accuracy").is_none());
    let folder_name = folder.file_name().unwrap().to_string_lossy().into_owned();
    harness.get_by_label_contains(&folder_name).click();
    harness.run();
    harness.get_by_label_contains("Test accuracy");
}

#[test]
fn a_stopped_run_resumes_from_the_runs_list() {
    use kiln_core::train::{Control, RunOutcome, TrainEvent};
    use std::sync::Arc;
    let runs_dir = scratch_dir("resume");
    // A run stopped after its first epoch, as Ctrl-C or a closed window leaves it.
    let experiment = kiln_core::config::ExperimentDraft {
        name: "stopped".into(),
        model: "mlp:16".parse().unwrap(),
        epochs: 2,
        device: kiln_core::device::DeviceChoice::Cpu,
        ..Default::default()
    }
    .validate()
    .unwrap();
    let control = Arc::new(Control::new());
    let stopper = Arc::clone(&control);
    let stopped =
        kiln_core::run::execute(&experiment, &runs_dir, &control, &mut |_| {}, &mut |e| {
            if let TrainEvent::EpochEnd(_) = e {
                stopper.cancel();
            }
        })
        .unwrap();
    assert_eq!(stopped.summary.outcome, RunOutcome::Cancelled);

    let mut harness = app_harness(&runs_dir);
    harness.run_steps(2);
    harness.get_by_label("Resume run").click();
    harness.run_steps(2);
    step_until(&mut harness, 120, |app| {
        app.session.as_ref().is_some_and(|s| !s.state.is_active())
    });
    let session = harness.state().session.as_ref().unwrap();
    assert_eq!(
        session.state,
        kiln::gui::SessionState::Finished(RunOutcome::Completed)
    );
    // The epoch from before the stop is on the plots with the one trained now.
    assert_eq!(session.history.epochs.len(), 2);
    assert_eq!(session.history.path, stopped.path);
    let epochs = std::fs::read_to_string(stopped.path.join("epochs.csv")).unwrap();
    assert_eq!(epochs.lines().count(), 3, "{epochs}");
}

#[test]
fn data_view_snapshot_shows_counts_samples_left_out_files_and_leaks() {
    use kiln_core::data::{ImageDataset, ImageShape, SkippedFile, SourceFormat, Split, inspect};
    // Three classes of 4×4 grey squares, each class its own shade; one test image repeats a
    // training one.
    let shade = |label: u8, n: usize| Split {
        images: (0..n)
            .flat_map(|i| vec![label * 90 + i as u8 * 5; 16])
            .collect(),
        labels: vec![label; n],
        files: Vec::new(),
        label_sets: Vec::new(),
    };
    let join = |parts: Vec<Split>| Split {
        images: parts.iter().flat_map(|p| p.images.clone()).collect(),
        labels: parts.iter().flat_map(|p| p.labels.clone()).collect(),
        files: Vec::new(),
        label_sets: Vec::new(),
    };
    let data = ImageDataset {
        name: "shapes".into(),
        shape: ImageShape {
            channels: 1,
            height: 4,
            width: 4,
        },
        class_names: vec!["round".into(), "square".into(), "star".into()],
        train: join(vec![shade(0, 9), shade(1, 3), shade(2, 2)]),
        val: join(vec![shade(0, 1), shade(1, 1)]),
        test: join(vec![shade(1, 1), shade(2, 2)]),
        skipped: vec![SkippedFile {
            path: "photos/star/notes.txt".into(),
            reason: "it is not an image Kiln reads".into(),
        }],
        notes: Vec::new(),
        sources: SourceFormat::tally([(640, 480, "RGB"), (640, 480, "RGB"), (300, 400, "RGBA")]),
    };
    let inspected = kiln::gui::Inspected {
        report: inspect::inspect(&data),
        grid: inspect::sample_grid(&data, 10),
        preview_images: inspect::preview_images(&data, 8),
        shape: data.shape,
    };
    let mut view = kiln::gui::DataView::ready("shapes", inspected);
    let mut harness = Harness::builder()
        .with_size([520.0, 420.0])
        .build_ui(|ui| kiln::gui::data_view_ui(ui, &mut view));
    harness.run();
    harness.get_by_label("shapes: 3 classes, 4×4 pixels, grayscale");
    harness.get_by_label("Read from: 2 × 640×480 RGB, 1 × 300×400 RGBA");
    harness.get_by_label("photos/star/notes.txt: it is not an image Kiln reads");
    assert!(
        harness
            .query_all_by_label_contains("Unbalanced: the largest class has 4.5×")
            .next()
            .is_some()
    );
    // Every class's first image is in validation too, and square's and star's in test.
    harness.get_by_label_contains("image(s) appear in more than one split");
    harness.snapshot("data_view");
}

/// Rough edge: at 1280×800 a 10-class confusion matrix was cut off at the right, hiding the last
/// classes and the per-class figures. The Results view's central area is about 960 px wide.
#[test]
fn a_ten_class_confusion_matrix_fits_the_central_panel_at_1280_by_800() {
    let class_names: Vec<String> = kiln_core::data::FASHION_MNIST_CLASSES
        .iter()
        .map(|n| n.to_string())
        .collect();
    let labels: Vec<u8> = (0..200).map(|i| (i % 10) as u8).collect();
    let predicted: Vec<u8> = labels.iter().map(|&l| if l == 6 { 0 } else { l }).collect();
    let predictions = test_predictions(class_names, labels, predicted);
    // The Results view's central area at 1280×800, beside the runs list.
    let width = 960.0;
    let mut harness = Harness::builder().with_size([width, 700.0]).build_ui(|ui| {
        results_ui(ui, &predictions, None);
    });
    harness.run();
    // The last class's row in the report is on screen, its whole name and its support.
    let last_row = harness.get_by_label("Ankle boot");
    assert!(last_row.rect().max.x <= width);
    let support = harness.get_all_by_label("support").next().unwrap();
    assert!(support.rect().max.x <= width, "{:?}", support.rect());
}

/// Test predictions of `labels` taken for `predicted`, each at 90 % confidence, with no gallery.
fn test_predictions(
    class_names: Vec<String>,
    labels: Vec<u8>,
    predicted: Vec<u8>,
) -> kiln_core::results::TestPredictions {
    kiln_core::results::TestPredictions {
        class_names,
        confidence: vec![0.9; labels.len()],
        label_rank: Vec::new(),
        gallery: Vec::new(),
        labels,
        predicted,
    }
}

/// A hundred classes with long names in the Results view's central area of a window of `size`:
/// the whole matrix in its panel, the report scrolled.
fn hundred_class_results_snapshot(size: [f32; 2], name: &str) {
    let class_names: Vec<String> = (0..100)
        .map(|i| format!("species number {i} of the garden survey"))
        .collect();
    let labels: Vec<u8> = (0..2000).map(|i| (i % 100) as u8).collect();
    // Each class mistaken for its neighbour one time in five.
    let predicted: Vec<u8> = (0..2000)
        .map(|i: usize| ((i % 100 + usize::from(i.is_multiple_of(5))) % 100) as u8)
        .collect();
    let predictions = test_predictions(class_names, labels, predicted);
    let mut harness = Harness::builder().with_size(size).build_ui(|ui| {
        results_ui(ui, &predictions, None);
    });
    harness.run();
    harness.get_by_label("Test accuracy 80.00 %.");
    harness.snapshot(name);
}

#[test]
fn a_hundred_class_result_fits_the_results_view_at_1280_by_800() {
    hundred_class_results_snapshot([960.0, 700.0], "results_100_classes_1280");
}

#[test]
fn a_hundred_class_result_fits_the_results_view_at_1920_by_1080() {
    hundred_class_results_snapshot([1600.0, 980.0], "results_100_classes_1920");
}

/// A finished run written as training writes it, under a fixed name (`20261129-120000-NAME`)
/// so snapshots read the same on every day: `fake_history`'s rows, `predictions` as its test
/// result, and a summary saying it completed on the CPU.
fn finished_run(
    runs_dir: &Path,
    history: &RunHistory,
    predictions: &kiln_core::results::TestPredictions,
) -> PathBuf {
    use kiln_core::run_folder::RunFolder;
    use kiln_core::train::{RunSummary, TrainEvent};
    let experiment = history.config.clone().unwrap().validate().unwrap();
    let mut folder = RunFolder::create(runs_dir, &experiment).unwrap();
    for row in &history.metrics {
        folder.record(&TrainEvent::Progress(row.clone())).unwrap();
    }
    for row in &history.epochs {
        folder.record(&TrainEvent::EpochEnd(row.clone())).unwrap();
    }
    folder.write_predictions(predictions).unwrap();
    let last = history.epochs.last().unwrap();
    let accuracy = predictions.report().accuracy;
    let summary: RunSummary = serde_json::from_value(serde_json::json!({
        "outcome": "completed",
        "epochs_completed": history.epochs.len(),
        "steps": history.metrics.last().unwrap().global_step,
        "samples_seen": history.metrics.last().unwrap().samples_seen,
        "final_test_accuracy": accuracy,
        "final_test_loss": last.test_loss,
        "best_test_accuracy": accuracy,
        "final_train_accuracy": last.train_accuracy,
        "final_train_loss": last.train_loss,
        "warmup_secs": 0.4,
        "steady_samples_per_sec": last.samples_per_sec,
        "mean_epoch_train_secs": last.epoch_secs,
        "total_secs": 7.0,
        "load_secs": 0.1,
        "upload_secs": 0.0,
        "device_name": "CPU",
        "parameter_count": 25_450,
        "error": null,
    }))
    .unwrap();
    folder.write_summary(&summary).unwrap();
    let written = folder.path().to_owned();
    drop(folder);
    let fixed = runs_dir.join(format!("20261129-120000-{}", history.name));
    std::fs::rename(written, &fixed).unwrap();
    fixed
}

/// Every view of the window of `size`, each opened with a click on its tab, with two finished
/// ten-class runs ticked: what a person sees at that screen size.
fn every_view_snapshots(size: [f32; 2], suffix: &str) {
    // Relative, so the runs panel prints the same folder on every machine.
    let runs_dir = PathBuf::from(format!("view-snapshot-runs-{suffix}"));
    std::fs::remove_dir_all(&runs_dir).ok();
    std::fs::create_dir_all(&runs_dir).unwrap();
    let class_names: Vec<String> = kiln_core::data::FASHION_MNIST_CLASSES
        .iter()
        .map(|n| n.to_string())
        .collect();
    let labels: Vec<u8> = (0..500).map(|i| (i % 10) as u8).collect();
    for (name, lr, speed, confused) in [("lr-0.1", 0.1, 9000.0, 6), ("lr-0.01", 0.01, 3000.0, 2)] {
        // Shirts (or pullovers) taken for T-shirts, every fourth coat for a pullover.
        let predicted: Vec<u8> = labels
            .iter()
            .enumerate()
            .map(|(i, &l)| match l {
                l if l == confused => 0,
                4 if i % 4 == 0 => 2,
                l => l,
            })
            .collect();
        let predictions = test_predictions(class_names.clone(), labels.clone(), predicted);
        finished_run(&runs_dir, &fake_history(name, lr, speed), &predictions);
    }
    let mut harness = app_harness_of_size(&runs_dir, size);
    harness.run();
    for run in ["20261129-120000-lr-0.1", "20261129-120000-lr-0.01"] {
        harness.get_by_label_contains(run).click();
        harness.run();
    }
    for (stage, tab) in [
        (Stage::Data, "Data"),
        (Stage::Train, "Train"),
        (Stage::Results, "Results"),
        (Stage::Predict, "Predict"),
        (Stage::Compare, "Compare (2)"),
    ] {
        // The top bar's tab comes first ("Data" also heads a setup section).
        harness.get_all_by_label(tab).next().unwrap().click();
        harness.step();
        if stage == Stage::Data {
            // The report and the augmentation preview are read on threads.
            let deadline = Instant::now() + Duration::from_secs(120);
            while !harness
                .state_mut()
                .data_view
                .as_mut()
                .is_some_and(|view| view.report().is_some() && view.preview().is_some())
            {
                assert!(Instant::now() < deadline, "the data report never came");
                std::thread::sleep(Duration::from_millis(50));
                harness.step();
            }
        }
        harness.run();
        assert_eq!(harness.state().stage, stage);
        harness.snapshot(format!(
            "view_{}_{suffix}",
            tab.split(' ').next().unwrap().to_lowercase()
        ));
    }
    drop(harness);
    std::fs::remove_dir_all(&runs_dir).unwrap();
}

#[test]
fn every_view_reads_whole_at_1280_by_800() {
    every_view_snapshots([1280.0, 800.0], "1280");
}

#[test]
fn every_view_reads_whole_at_1920_by_1080() {
    every_view_snapshots([1920.0, 1080.0], "1920");
}

#[test]
fn a_clicked_confusion_cell_shows_its_test_images_read_back_from_the_data_set() {
    use kiln_core::config::ExperimentDraft;
    let draft = ExperimentDraft::default();
    let data = kiln_core::data::make_splits(
        kiln_core::data::synthetic(),
        &draft.clone().validate().unwrap(),
    )
    .unwrap();
    let labels = data.test.labels.clone();
    // Every image of class 1 taken for class 0.
    let predicted: Vec<u8> = labels.iter().map(|&l| if l == 1 { 0 } else { l }).collect();
    let predictions = kiln_core::results::TestPredictions {
        class_names: data.class_names.clone(),
        confidence: vec![0.9; labels.len()],
        label_rank: Vec::new(),
        gallery: Vec::new(),
        labels: labels.clone(),
        predicted,
    };
    let ones: Vec<usize> = (0..labels.len()).filter(|&i| labels[i] == 1).collect();
    let mut cell = kiln::gui::CellImages::open(draft.clone(), &predictions, (1, 0), || {});
    assert!(
        cell.title.starts_with(&format!("{} ", ones.len())),
        "{}",
        cell.title
    );
    assert!(
        cell.title
            .ends_with(&format!("images taken for {}", data.class_names[0]))
    );
    let mut harness = Harness::builder()
        .with_size([480.0, 360.0])
        .build_ui(|ui| kiln::gui::cell_images_ui(ui, &mut cell));
    let deadline = Instant::now() + Duration::from_secs(30);
    while harness.query_by_label(&format!("#{}", ones[0])).is_none() {
        assert!(Instant::now() < deadline, "the images never came");
        std::thread::sleep(Duration::from_millis(20));
        // A spinner repaints for as long as the images are read.
        harness.step();
    }
    assert!(harness.query_by_label(&format!("#{}", ones[1])).is_some());

    // Predictions made on other images are not shown as if they were these.
    let mut other = predictions.clone();
    other.labels[ones[0]] = 2;
    let mut cell = kiln::gui::CellImages::open(draft, &other, (1, 1), || {});
    let mut harness = Harness::builder()
        .with_size([480.0, 200.0])
        .build_ui(|ui| kiln::gui::cell_images_ui(ui, &mut cell));
    let deadline = Instant::now() + Duration::from_secs(30);
    while harness
        .query_by_label_contains("the data set changed since this run")
        .is_none()
    {
        assert!(Instant::now() < deadline, "no error was shown");
        std::thread::sleep(Duration::from_millis(20));
        // A spinner repaints for as long as the images are read.
        harness.step();
    }
}

#[test]
fn the_data_window_reads_the_data_again_when_its_split_changes() {
    use kiln_core::config::ExperimentDraft;
    let experiment = |val_split: f64| {
        ExperimentDraft {
            val_split,
            device: kiln_core::device::DeviceChoice::Cpu,
            ..ExperimentDraft::default()
        }
        .validate()
        .expect("valid")
    };
    let validation_images = |view: &mut kiln::gui::DataView| -> usize {
        for _ in 0..600 {
            if let Some(report) = view.report() {
                return report.counts[1].iter().sum();
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the data was not read in 30 s");
    };
    let tenth = experiment(0.1);
    let mut view = kiln::gui::DataView::open(tenth.clone(), || {});
    // The built-in data's 12 000 training images.
    assert_eq!(validation_images(&mut view), 1200);
    view.follow(Ok(&tenth), || {});
    assert_eq!(validation_images(&mut view), 1200);
    view.follow(Ok(&experiment(0.25)), || {});
    assert_eq!(validation_images(&mut view), 3000);
}

#[test]
fn the_data_window_redraws_the_augmentation_preview_when_a_setting_changes() {
    use kiln_core::config::ExperimentDraft;
    use kiln_core::data::{ImageShape, Split, inspect};
    // Two classes of 6×6 images, bright on the left half only, so flips and turns show.
    let image: Vec<u8> = (0..36).map(|i| if i % 6 < 3 { 220 } else { 20 }).collect();
    let data = kiln_core::data::ImageDataset {
        name: "halves".into(),
        shape: ImageShape {
            channels: 1,
            height: 6,
            width: 6,
        },
        class_names: vec!["a".into(), "b".into()],
        train: Split {
            images: image.repeat(4),
            labels: vec![0, 1, 0, 1],
            files: Vec::new(),
            label_sets: Vec::new(),
        },
        val: Split::default(),
        test: Split::default(),
        skipped: Vec::new(),
        notes: Vec::new(),
        sources: Vec::new(),
    };
    let inspected = kiln::gui::Inspected {
        report: inspect::inspect(&data),
        grid: inspect::sample_grid(&data, 10),
        preview_images: inspect::preview_images(&data, 8),
        shape: data.shape,
    };
    let mut view = kiln::gui::DataView::ready("halves", inspected);
    let experiment = |draft: ExperimentDraft| {
        ExperimentDraft {
            device: kiln_core::device::DeviceChoice::Cpu,
            ..draft
        }
        .validate()
        .expect("valid")
    };
    let flips = experiment(ExperimentDraft {
        flip: true,
        ..ExperimentDraft::default()
    });
    let wait = |view: &mut kiln::gui::DataView| {
        for _ in 0..600 {
            if let Some(grid) = view.preview() {
                return grid.clone();
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the preview was not drawn in 30 s");
    };
    view.follow(Ok(&flips), || {});
    let first = wait(&mut view);
    // Four images of 6 + 1 pixels across; the evaluated row and four draws of 6 + 1 down.
    assert_eq!((first.1, first.2), (28, 35));
    // The same settings keep the grid; a changed one redraws it.
    view.follow(Ok(&flips), || {});
    assert!(view.preview().is_some());
    let turns = experiment(ExperimentDraft {
        flip: true,
        rotation_degrees: 20.0,
        ..ExperimentDraft::default()
    });
    view.follow(Ok(&turns), || {});
    let second = wait(&mut view);
    assert_ne!(first.0, second.0);
    // A form that cannot run says why in the window instead of a stale grid.
    view.follow(Err("the learning rate is empty".to_owned()), || {});
    let mut harness = Harness::builder()
        .with_size([520.0, 520.0])
        .build_ui(|ui| kiln::gui::data_view_ui(ui, &mut view));
    harness.run();
    harness.get_by_label("not shown: the learning rate is empty");
}

#[test]
fn add_remote_box_opens_a_window_that_says_what_is_wrong_with_the_address() {
    let runs_dir = scratch_dir("add-box");
    let mut harness = app_harness(&runs_dir);
    harness.run();
    // The device choice, labelled by its row, at the foot of the scrolled Setup panel.
    harness.get_by_label("Device").scroll_to_me();
    harness.run();
    harness.get_by_label("Device").click_accesskit();
    harness.run();
    harness.get_by_label("Add remote box…").click_accesskit();
    harness.run();
    harness.get_by_label("Address").focus();
    harness.run();
    harness.get_by_label("Address").type_text("gpu-box");
    harness.run();
    harness.get_by_label("Add").click();
    harness.run();
    harness.get_by_label_contains("\"gpu-box\" is not a box address");
}

#[test]
fn find_lr_runs_the_range_test_and_one_click_takes_its_suggestion_into_setup() {
    let runs_dir = scratch_dir("find-lr");
    let mut harness = app_harness(&runs_dir);
    harness.state_mut().form = small_run_form("lr-test", 1, 32);
    harness.run();
    harness.get_by_label("Find lr…").scroll_to_me();
    harness.run();
    harness.get_by_label("Find lr…").click();
    let deadline = Instant::now() + Duration::from_secs(120);
    // The test runs on its thread; the window waits, then offers the suggestion.
    let label = loop {
        harness.step();
        if let Some(button) = harness.query_by_label_contains("Use ") {
            break button.accesskit_node().label().unwrap_or_default();
        }
        assert!(Instant::now() < deadline, "timed out");
        std::thread::sleep(Duration::from_millis(20));
    };
    let suggested: f64 = label.trim_start_matches("Use ").parse().unwrap();
    harness.get_by_label(&label).click();
    harness.run();
    let experiment = harness.state().form.check().experiment.unwrap();
    assert_eq!(experiment.lr, suggested);
    assert!(
        harness.query_by_label("Find a learning rate").is_none(),
        "the window closed"
    );
    assert!(
        !runs_dir.exists() || std::fs::read_dir(&runs_dir).unwrap().next().is_none(),
        "the range test leaves no run folder"
    );
}

/// Waits, stepping the window, until a label containing `text` shows.
fn step_until_label(harness: &mut Harness<'static, KilnApp>, text: &str, secs: u64) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        harness.step();
        if harness.query_by_label_contains(text).is_some() {
            return;
        }
        assert!(Instant::now() < deadline, "\"{text}\" never showed");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_sweep_window_runs_a_grid_of_the_ticked_setting_and_compare_shows_its_table() {
    let root = scratch_dir("gui-sweep");
    let runs_dir = root.join("runs");
    let mut harness = app_harness(&runs_dir);
    harness.state_mut().form = small_run_form("swept", 1, 64);
    harness.run();
    harness.get_by_label("Sweep…").click();
    harness.run();
    harness
        .get_by_role_and_label(egui::accesskit::Role::CheckBox, "Learning rate")
        .click();
    harness.run();
    // Refused in a sentence while the ticked setting has no values.
    harness.get_by_label("▶ Start sweep").click();
    harness.run();
    harness.get_by_label_contains("give its values");
    let field = harness.get(
        egui_kittest::kittest::by()
            .role(egui::accesskit::Role::TextInput)
            .predicate(|node| node.placeholder().is_some_and(|p| p == "now 0.001")),
    );
    field.focus();
    harness.run();
    harness
        .get(
            egui_kittest::kittest::by()
                .role(egui::accesskit::Role::TextInput)
                .predicate(|node| node.placeholder().is_some_and(|p| p == "now 0.001")),
        )
        .type_text("0.001, 0.02");
    harness.run();
    harness.get_by_label("▶ Start sweep").click();
    // The sweep's spinner keeps the window busy: step, do not `run`.
    harness.step();
    assert_eq!(harness.state().stage, Stage::Compare);
    step_until_label(&mut harness, "finished now", 120);
    harness.step();
    harness.get_by_label("lr=0.001");
    harness.get_by_label("lr=0.02");
    harness.get_by_label_contains("2 finished now");
    // The chart against the axis is a plot to hover and zoom, not a picture of one.
    harness.get_by_label("validation accuracy against lr");
    // The sweep folder sits beside the runs folder, its trials inside it.
    let sweeps: Vec<PathBuf> = std::fs::read_dir(root.join("sweeps"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(sweeps.len(), 1);
    assert!(sweeps[0].join("sweep.toml").is_file());
    // Its chart is written beside the trials, as `kiln sweep` writes it.
    assert!(sweeps[0].join("sweep-lr.png").is_file());
}

#[test]
fn the_sweep_window_resumes_an_earlier_sweep_that_stopped_short() {
    let root = scratch_dir("gui-sweep-resume");
    let runs_dir = root.join("runs");
    let draft = small_run_form("again", 1, 64)
        .check()
        .experiment
        .unwrap()
        .draft()
        .clone();
    let text = format!("{}\n[sweep]\nlr = [0.001, 0.02]\n", draft.to_toml());
    let sweep = kiln_core::sweep::Sweep::from_toml(&text, "sweep.toml").unwrap();
    let sweeps_dir = root.join("sweeps");
    let folder = kiln_core::sweep::create_sweep_folder(&sweeps_dir, &sweep, &text).unwrap();
    let mut harness = app_harness(&runs_dir);
    harness.state_mut().form = small_run_form("again", 1, 64);
    harness.run();
    harness.get_by_label("Sweep…").click_accesskit();
    harness.run();
    harness.get_by_label_contains("0 of 2 trials finished");
    harness.get_by_label("Resume").click();
    // The sweep's spinner keeps the window busy: step, do not `run`.
    harness.step();
    assert_eq!(harness.state().stage, Stage::Compare);
    step_until_label(&mut harness, "finished now", 120);
    harness.step();
    harness.get_by_label_contains("2 finished now");
    let found = kiln_core::sweep::sweep_folders(&sweeps_dir);
    assert_eq!(found.len(), 1, "no second sweep folder: {found:?}");
    assert_eq!(
        (&found[0].folder, found[0].finished, found[0].unfinished()),
        (&folder, 2, false)
    );
}

/// The window on `runs_dir` with the runs whose labels hold each of `names` ticked, showing
/// the Compare view.
fn compare_of(runs_dir: &Path, names: &[&str]) -> Harness<'static, KilnApp> {
    let mut harness = app_harness(runs_dir);
    harness.run();
    for name in names {
        harness.get_by_label_contains(name).click_accesskit();
        harness.run();
    }
    harness
        .get_all_by_label(&format!("Compare ({})", names.len()))
        .next()
        .unwrap()
        .click();
    harness.run();
    harness
}

#[test]
fn explain_the_difference_runs_the_explain_sweep_between_two_ticked_runs() {
    let root = scratch_dir("gui-explain");
    let runs_dir = root.join("runs");
    std::fs::create_dir_all(&runs_dir).unwrap();
    for (name, lr) in [("slow", 0.001), ("fast", 0.02)] {
        // Runs with rows to plot, whose configs are small enough to train again quickly.
        let mut form = small_run_form(name, 1, 64);
        *form.text_mut(Setting::Lr) = lr.to_string();
        let mut history = fake_history(name, lr, 3000.0);
        history.config = Some(form.check().experiment.unwrap().draft().clone());
        let labels: Vec<u8> = (0..20).map(|i| (i % 10) as u8).collect();
        let names: Vec<String> = (0..10).map(|i| format!("class {i}")).collect();
        let predictions = test_predictions(names, labels.clone(), labels);
        finished_run(&runs_dir, &history, &predictions);
    }
    let mut harness = compare_of(&runs_dir, &["-slow", "-fast"]);
    harness.get_by_label("Explain the difference").click();
    // The sweep's spinner keeps the window busy: step, do not `run`.
    harness.step();
    step_until_label(&mut harness, "finished now", 180);
    harness.step();
    // The one difference, applied alone and undone alone over three seeds each.
    harness.get_by_label_contains("lr (0.0");
    harness.get_by_label_contains("6 finished now");
    let sweep = std::fs::read_dir(root.join("sweeps"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert!(sweep.join("explain.png").is_file());
}

#[test]
fn a_kiln_run_parted_from_an_imported_keras_log_trains_again_with_keras_defaults_from_compare() {
    let root = scratch_dir("gui-flavour");
    let runs_dir = root.join("runs");
    std::fs::create_dir_all(&runs_dir).unwrap();
    let labels: Vec<u8> = (0..20).map(|i| (i % 10) as u8).collect();
    let names: Vec<String> = (0..10).map(|i| format!("class {i}")).collect();
    let mut history = fake_history("mine", 0.001, 3000.0);
    history.config = Some(
        small_run_form("mine", 1, 64)
            .check()
            .experiment
            .unwrap()
            .draft()
            .clone(),
    );
    finished_run(
        &runs_dir,
        &history,
        &test_predictions(names, labels.clone(), labels),
    );
    // A Keras CSVLogger file whose accuracy leads the Kiln run's by far at every epoch.
    let log = root.join("training.log");
    std::fs::write(
        &log,
        "epoch,accuracy,loss,val_accuracy,val_loss\n0,0.9,0.3,0.91,0.3\n1,0.92,0.25,0.93,0.25\n2,0.94,0.2,0.95,0.2\n",
    )
    .unwrap();
    kiln_core::run_folder::import_path(&log, &runs_dir, &Default::default(), Default::default())
        .unwrap();

    let mut harness = compare_of(&runs_dir, &["-mine", "keras"]);
    harness.get_by_label_contains("Where the curves part");
    harness.get_by_label("Explain Keras's defaults");
    harness.get_by_label("Train with Keras's defaults").click();
    harness.step();
    harness.step();
    let app = harness.state();
    let session = app
        .session
        .as_ref()
        .unwrap_or_else(|| panic!("the click started no run: {:?}", app.notice));
    let draft = session.history.config.as_ref().unwrap();
    assert_eq!(draft.name, "mine-keras");
    let shown = |setting: Setting| setting.row().unwrap().show(draft);
    assert_eq!(
        (shown(Setting::Init), shown(Setting::InputScaling)),
        ("glorot-uniform".to_owned(), "raw".to_owned())
    );
    // Everything that is not a framework default is the Kiln run's own.
    assert_eq!((draft.epochs, draft.batch_size), (1, 64));
    step_until(&mut harness, 300, |app| !app.is_training());
}

#[test]
fn a_log_whose_series_no_convention_names_is_imported_as_the_figures_the_person_chooses() {
    let root = scratch_dir("gui-series");
    let runs_dir = root.join("runs");
    std::fs::create_dir_all(&runs_dir).unwrap();
    let log = root.join("script.csv");
    std::fs::write(
        &log,
        "epoch,objective,holdout/top1\n1,0.9,0.5\n2,0.7,0.625\n",
    )
    .unwrap();
    let mut harness = app_harness(&runs_dir);
    harness.run();
    harness.state_mut().import_picked(log);
    step_until(&mut harness, 60, |app| app.series_dialog.is_some());
    harness.run();
    harness.get_by_label_contains("holds series whose names do not say");
    harness.get_by_label("objective");
    // holdout/top1 is the validation accuracy; objective stays left out.
    harness
        .get_by_role_and_label(egui::accesskit::Role::ComboBox, "holdout/top1")
        .click();
    harness.run();
    harness.get_by_label("validation accuracy").click();
    harness.run();
    harness.get_by_label_contains("--series val_accuracy=holdout/top1");
    harness.get_by_label("Import").click();
    harness.step();
    step_until(&mut harness, 60, |app| {
        app.notice
            .as_deref()
            .is_some_and(|n| n.starts_with("imported"))
    });
    let imported = std::fs::read_dir(&runs_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let epochs = std::fs::read_to_string(imported.join("epochs.csv")).unwrap();
    assert!(epochs.contains("0.625"), "{epochs}");
    assert!(!epochs.contains("0.7"), "objective was left out: {epochs}");
}

#[test]
fn a_labels_file_read_as_label_sets_from_setup_shows_its_labels_together_then_trains_to_a_bar_per_label()
 {
    let root = scratch_dir("gui-label-sets");
    let mut rows = String::from("path,tags\n");
    for i in 0..12u8 {
        let name = format!("{i}.png");
        std::fs::write(root.join(&name), kiln_test_support::grey_png(i * 20)).unwrap();
        rows.push_str(&format!(
            "{name},{}\n",
            if i % 3 == 0 { "sky|sea" } else { "sky" }
        ));
    }
    let labels = root.join("labels.csv");
    std::fs::write(&labels, rows).unwrap();
    let runs_dir = root.join("runs");
    let mut harness = app_harness(&runs_dir);
    let mut form = small_run_form("sets", 1, 4);
    form.dataset = DatasetKind::LabelsFile;
    form.labels_file = Some(labels);
    harness.state_mut().form = form;
    harness.run();
    // `|` parts this file's labels: until Setup says so, `sky|sea` is one label of its own.
    let separator = || {
        egui_kittest::kittest::by()
            .role(egui::accesskit::Role::TextInput)
            .label("Label separator")
    };
    harness.get(separator()).focus();
    harness.run();
    harness.get(separator()).type_text("|");
    harness.run();
    harness.get_by_label("Several labels per image").click();
    harness.run();
    let dataset = harness
        .state()
        .form
        .check()
        .experiment
        .unwrap()
        .dataset
        .clone();
    assert_eq!(
        dataset,
        kiln_core::data::DatasetSpec::LabelsFile {
            path: root.join("labels.csv"),
            image_size: 32,
            path_column: None,
            label_column: None,
            label_separator: Some("|".into()),
            multi_label: true,
        }
    );
    harness.get_by_label("Look at the data…").click();
    harness.step();
    step_until_label(&mut harness, "several labels per image:", 60);
    harness.get_by_label_contains("`sea` and `sky` together on");

    // It trains, and its results are per label: a bar each, whose click shows what it got wrong.
    harness.get_all_by_label("Train").next().unwrap().click();
    harness.run();
    harness.get_by_label_contains("▶ Start").click();
    harness.run_steps(2);
    step_until(&mut harness, 300, |app| !app.is_training());
    harness.run();
    let session = harness.state().session.as_ref().unwrap();
    assert!(
        session.label_predictions.is_some(),
        "{:?}",
        session.warnings
    );
    harness.get_all_by_label("Results").next().unwrap().click();
    harness.run();
    for tab in ["Labels", "Per-label report"] {
        harness.get_by_label(tab);
    }
    assert!(harness.get_all_by_label_contains("Test mAP ").count() >= 1);
    harness.get_by_label("sky: average precision").click();
    // The images are read back on a thread, a spinner turning meanwhile.
    harness.step();
    let title = harness.state().cell_images.as_ref().unwrap().title.clone();
    assert!(
        title.starts_with("sky: 0 false positive(s), then "),
        "{title}"
    );
}
