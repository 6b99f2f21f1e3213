//! The setup panel: every setting the engine takes, typed as text where people type numbers, so
//! a bad value is marked where it was typed instead of being silently clamped. The rows of the
//! settings table draw themselves in their section (`fields::section_rows_ui`); this file draws
//! the specs' own rows (data set, architecture, optimizer, schedule, device) around them.

mod devices;
mod fields;
mod form;

use std::collections::BTreeMap;
use std::path::PathBuf;

use kiln_core::config::{self, ExperimentDraft, Setting};
use kiln_core::device::DeviceInfo;
use kiln_core::model::{Activation, TorchvisionArch};
use kiln_core::settings::Section;
use kiln_core::weights::fetch::ImageNetWeights;

pub use form::{
    DatasetKind, FormCheck, ModelKind, OptimizerKind, ScheduleKind, SetupForm, StartFrom,
};

use super::fetch::Download;
use devices::{device_row, precision_problem_ui};
use fields::{
    combo_row, error_row, found_row, path_label, row_label_ui, search_ui, section_rows_ui,
    table_row_ui, text_row, typed_row,
};
use form::new_form;

/// Width of the label column, shared by every group so the fields line up.
const LABEL_WIDTH: f32 = 104.0;

/// What the person asked for in the setup panel this frame.
#[derive(Debug, Clone, PartialEq)]
pub enum SetupAction {
    /// Pick a folder of class sub-folders.
    ChooseImageFolder,
    /// Pick a CSV or JSON-lines file of image paths and labels.
    ChooseLabelsFile,
    /// Pick the folder holding MNIST / Fashion-MNIST / CIFAR-10 files.
    ChooseDataDir,
    /// Download the chosen data set.
    Fetch,
    /// Download torchvision's ImageNet weights of an architecture.
    FetchWeights(TorchvisionArch),
    /// Pick a weights file to start from.
    ChooseWeightsFile,
    /// Cancel the download.
    CancelFetch,
    /// Open the Data window on the chosen data set.
    InspectData,
    /// Open the *Add remote box* window.
    AddRemoteBox,
    /// Run the learning-rate range test on the form's workload.
    FindLr,
}

/// What the panel shows about the data set and devices, gathered outside the form.
#[derive(Debug, Default)]
pub struct SetupContext<'a> {
    /// Where the chosen data set was found, or why not.
    pub data_location: Option<Result<PathBuf, String>>,
    /// The running download: what, its file and the fraction done (none when unknown).
    pub fetch_progress: Option<(Download, (String, Option<f32>))>,
    /// The last download's outcome.
    pub fetch_message: Option<String>,
    /// Devices, or none while they are being listed.
    pub devices: Option<&'a [DeviceInfo]>,
    /// Why a remembered remote box could not be listed, one sentence each.
    pub box_problems: &'a [String],
    /// Whether a run is going (the form is then read-only).
    pub locked: bool,
}

/// The setup panel; returns the actions to carry out (pickers, downloads) outside the frame.
pub fn setup_ui(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    check: &FormCheck,
    context: &SetupContext<'_>,
) -> Vec<SetupAction> {
    let mut actions = Vec::new();
    let errors = &check.errors;
    // Which rows apply is asked of the draft the form would start now (a pretrained start, a
    // folder data set), typos and all.
    let shown = form.to_draft(&mut BTreeMap::new());
    ui.add_enabled_ui(!context.locked, |ui| {
        presets_ui(ui, form);
        let searching = search_ui(ui);
        section_ui(ui, Section::Data, searching, |ui| {
            data_rows_ui(ui, form, errors, context, &mut actions);
            section_rows_ui(ui, form, Section::Data, &shown, errors, |_, _, _| {});
        });
        section_ui(ui, Section::Model, searching, |ui| {
            model_rows_ui(ui, form, errors, context, &mut actions);
            section_rows_ui(ui, form, Section::Model, &shown, errors, |_, _, _| {});
        });
        section_ui(ui, Section::Optimizer, searching, |ui| {
            optimizer_rows_ui(ui, form, &shown, errors, &mut actions);
        });
        section_ui(ui, Section::Validation, searching, |ui| {
            let validated_on = form.draft.validation;
            section_rows_ui(
                ui,
                form,
                Section::Validation,
                &shown,
                errors,
                |_, form, setting| {
                    if setting == Setting::Validation
                        && let Some(keep) = validated_on.keep_after_switch_to(form.draft.validation)
                    {
                        form.draft.keep = keep;
                    }
                },
            );
        });
        section_ui(ui, Section::Run, searching, |ui| {
            run_rows_ui(ui, form, &shown, errors, context, &mut actions);
        });
    });
    actions
}

/// A titled group of rows that folds, in a two-column grid whose label column lines up with
/// the others; every group opens while the search box holds text.
fn section_ui(
    ui: &mut egui::Ui,
    section: Section,
    searching: bool,
    add_rows: impl FnOnce(&mut egui::Ui),
) {
    ui.separator();
    let id = ui.make_persistent_id(("setup-section", section.title()));
    let mut state =
        egui::collapsing_header::CollapsingState::load_with_default_open(ui.ctx(), id, true);
    if searching {
        state.set_open(true);
    }
    // Unindented, so the fields of every section keep the panel's width.
    state
        .show_header(ui, |ui| ui.strong(section.title()))
        .body_unindented(|ui| {
            egui::Grid::new(format!("setup-{}", section.title().to_lowercase()))
                .num_columns(2)
                .min_col_width(LABEL_WIDTH)
                .spacing([8.0, 4.0])
                .show(ui, add_rows);
        });
}

/// The rows of a labels file: the file, the columns of its paths and labels (blank: found by
/// their usual names), and the image size.
fn labels_file_rows_ui(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    errors: &BTreeMap<Setting, String>,
    actions: &mut Vec<SetupAction>,
) {
    const FILE_HELP: &str = "A CSV or JSON-lines file with a row per image: its path (relative to the file, or absolute), its label, and optionally its split (train, val or test).";
    if found_row(ui, "Labels file", FILE_HELP) {
        ui.label("Labels file").on_hover_text(FILE_HELP);
        ui.horizontal(|ui| {
            path_label(ui, form.labels_file.as_deref());
            if ui
                .button("Choose labels file…")
                .on_hover_text(FILE_HELP)
                .clicked()
            {
                actions.push(SetupAction::ChooseLabelsFile);
            }
        });
        ui.end_row();
    }
    let columns = [
        (
            "Path column",
            "The header of the column of image paths; blank finds it (file_name, path, image…, or the column of image file names).",
            &mut form.path_column,
        ),
        (
            "Label column",
            "The header of the column of labels; blank finds it (label, class…, or the one column left).",
            &mut form.label_column,
        ),
    ];
    for (label, help, text) in columns {
        if found_row(ui, label, help) {
            let label = ui.label(label).on_hover_text(help);
            let response = ui.add(
                egui::TextEdit::singleline(text)
                    .hint_text("found by its name")
                    .desired_width(120.0),
            );
            response.labelled_by(label.id).on_hover_text(help);
            ui.end_row();
        }
    }
    const SEPARATOR_HELP: &str = "What parts several labels in one label cell (cat;outdoor); blank is ;. A cell holding several, a JSON array or one 0/1 column per label gives each image a set of labels (multi-label): Look at the data counts each label's images and the labels that go together.";
    if found_row(ui, "Label separator", SEPARATOR_HELP) {
        let label = ui.label("Label separator").on_hover_text(SEPARATOR_HELP);
        ui.add(
            egui::TextEdit::singleline(&mut form.label_separator)
                .hint_text(";")
                .desired_width(40.0),
        )
        .labelled_by(label.id)
        .on_hover_text(SEPARATOR_HELP);
        ui.end_row();
    }
    const SETS_HELP: &str =
        "Read each image's labels as a set (multi-label) even where every row gives one label.";
    if found_row(ui, "Several labels per image", SETS_HELP) {
        ui.label("");
        ui.checkbox(&mut form.multi_label, "Several labels per image")
            .on_hover_text(SETS_HELP);
        ui.end_row();
    }
    typed_row(ui, form, Setting::FolderImageSize, errors);
}

/// The data set's rows: which one, where its files are (or a folder of images), a look at it.
fn data_rows_ui(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    errors: &BTreeMap<Setting, String>,
    context: &SetupContext<'_>,
    actions: &mut Vec<SetupAction>,
) {
    // A page holds only the files of a folder it was given: a labels file names files it has
    // not got (an image folder with a metadata.csv serves there instead).
    let options: Vec<(DatasetKind, &str)> = DatasetKind::ALL
        .iter()
        .filter(|k| cfg!(not(target_arch = "wasm32")) || **k != DatasetKind::LabelsFile)
        .map(|k| (*k, k.label()))
        .collect();
    let defaults = new_form();
    combo_row(
        ui,
        Setting::Dataset,
        &mut form.dataset,
        &options,
        Some(&defaults.dataset),
    );
    error_row(ui, Setting::Dataset, errors);
    const FOLDER_HELP: &str = "A folder with one sub-folder of PNG/JPEG images per class.";
    if form.dataset == DatasetKind::Folder && found_row(ui, "Folder", FOLDER_HELP) {
        ui.label("Folder").on_hover_text(FOLDER_HELP);
        ui.horizontal(|ui| {
            path_label(ui, form.folder.as_deref());
            if ui
                .button("Choose folder…")
                .on_hover_text(FOLDER_HELP)
                .clicked()
            {
                actions.push(SetupAction::ChooseImageFolder);
            }
        });
        ui.end_row();
        typed_row(ui, form, Setting::FolderImageSize, errors);
    }
    if form.dataset == DatasetKind::LabelsFile {
        labels_file_rows_ui(ui, form, errors, actions);
    }
    const DATA_DIR_HELP: &str = "The folder holding the data set's files, or a parent of mnist/, fashion-mnist/, cifar-10-batches-bin/.";
    if let Some(remote) = form.dataset.remote()
        && found_row(ui, "Data folder", DATA_DIR_HELP)
    {
        // In bold when chosen: *Use default folders* is its reset.
        row_label_ui(
            ui,
            "Data folder",
            DATA_DIR_HELP,
            form.draft.data_dir.is_some(),
        );
        ui.vertical(|ui| {
            match &context.data_location {
                Some(Ok(path)) => {
                    ui.label(format!("found in {}", path.display()));
                }
                Some(Err(reason)) => {
                    ui.colored_label(ui.visuals().warn_fg_color, reason);
                }
                None => {
                    ui.label("looking…");
                }
            }
            ui.horizontal(|ui| {
                if ui
                    .button("Choose data folder…")
                    .on_hover_text(DATA_DIR_HELP)
                    .clicked()
                {
                    actions.push(SetupAction::ChooseDataDir);
                }
                if form.draft.data_dir.is_some() && ui.button("Use default folders").clicked() {
                    form.draft.data_dir = None;
                }
            });
            let fetch = (
                "Fetch",
                "Download the data set and check every file's SHA-256 before keeping it.",
            );
            download_ui(ui, context, fetch, Download::Dataset(remote), actions);
        });
        ui.end_row();
    }
    const LOOK_HELP: &str = "Images per class and split, samples of each class, files left out, and images found in more than one split.";
    if !found_row(ui, "Look at the data", LOOK_HELP) {
        return;
    }
    ui.label("");
    if ui
        .button("Look at the data…")
        .on_hover_text(LOOK_HELP)
        .clicked()
    {
        actions.push(SetupAction::InspectData);
    }
    ui.end_row();
}

/// The bar with Cancel of the download `what`, or the button that starts it; and the last
/// download's outcome.
fn download_ui(
    ui: &mut egui::Ui,
    context: &SetupContext<'_>,
    (button, tip): (&str, &str),
    what: Download,
    actions: &mut Vec<SetupAction>,
) {
    match &context.fetch_progress {
        Some((running, (file, fraction))) if *running == what => {
            ui.horizontal(|ui| {
                let bar = egui::ProgressBar::new(fraction.unwrap_or(0.0))
                    .text(format!("downloading {file}"))
                    .desired_width(180.0);
                ui.add(bar);
                if ui.button("Cancel download").clicked() {
                    actions.push(SetupAction::CancelFetch);
                }
            });
        }
        _ => {
            if ui.button(button).on_hover_text(tip).clicked() {
                actions.push(match what {
                    Download::Dataset(_) => SetupAction::Fetch,
                    Download::Weights(arch) => SetupAction::FetchWeights(arch),
                });
            }
        }
    }
    if let Some(message) = &context.fetch_message {
        ui.label(message);
    }
}

/// The "Start from" rows of a torchvision architecture: random, ImageNet's (downloaded here),
/// or a file.
fn start_from_ui(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    arch: TorchvisionArch,
    context: &SetupContext<'_>,
    actions: &mut Vec<SetupAction>,
) {
    let before = form.start_from;
    let options: Vec<(StartFrom, &str)> = StartFrom::ALL.iter().map(|s| (*s, s.label())).collect();
    combo_row(
        ui,
        Setting::Weights,
        &mut form.start_from,
        &options,
        Some(&new_form().start_from),
    );
    if before == StartFrom::Scratch && form.start_from != StartFrom::Scratch {
        form.take_pretrained_defaults(arch);
    }
    match form.start_from {
        StartFrom::Scratch => {}
        StartFrom::ImageNet => {
            ui.label("");
            ui.vertical(|ui| {
                let published = ImageNetWeights::of(arch);
                let kept = kiln_core::data::data_roots(form.draft.data_dir.as_deref())
                    .iter()
                    .find_map(|root| published.find_in(root));
                match kept {
                    Some(path) => {
                        ui.label(format!("downloaded: {}", path.display()));
                    }
                    None => {
                        ui.label(format!(
                            "{} ({:.1} % top-1 on ImageNet), not downloaded yet",
                            published.file_name, published.top1_percent
                        ));
                        let fetch = (
                            "Download",
                            "Download torchvision's weights once and check their SHA-256 before keeping them.",
                        );
                        download_ui(ui, context, fetch, Download::Weights(arch), actions);
                    }
                }
            });
            ui.end_row();
        }
        StartFrom::File => {
            ui.label("");
            ui.horizontal(|ui| {
                path_label(ui, form.weights_file.as_deref());
                if ui.button("Choose file…").clicked() {
                    actions.push(SetupAction::ChooseWeightsFile);
                }
            });
            ui.end_row();
        }
    }
}

/// The architecture's rows: which one, its parts, where its weights start.
fn model_rows_ui(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    errors: &BTreeMap<Setting, String>,
    context: &SetupContext<'_>,
    actions: &mut Vec<SetupAction>,
) {
    let options: Vec<(ModelKind, &str)> = ModelKind::all()
        .into_iter()
        .map(|k| (k, k.label()))
        .collect();
    let defaults = new_form();
    combo_row(
        ui,
        Setting::Model,
        &mut form.model,
        &options,
        Some(&defaults.model),
    );
    match form.model {
        ModelKind::Mlp => {
            typed_row(ui, form, Setting::MlpWidths, errors);
            let options: Vec<(Activation, &str)> =
                Activation::ALL.iter().map(|a| (*a, a.name())).collect();
            combo_row(
                ui,
                Setting::Activation,
                &mut form.activation,
                &options,
                Some(&defaults.activation),
            );
            typed_row(ui, form, Setting::Dropout, errors);
        }
        ModelKind::Vgg16 => {
            let label = ui
                .label("Batch norm")
                .on_hover_text("Adds batch normalization after each convolution (VGG16-BN).");
            ui.checkbox(&mut form.vgg_batch_norm, "")
                .labelled_by(label.id);
            ui.end_row();
            typed_row(ui, form, Setting::VggInputSize, errors);
        }
        _ => error_row(ui, Setting::Model, errors),
    }
    if let Some(arch) = form.model.plain_spec().and_then(|spec| spec.torchvision()) {
        start_from_ui(ui, form, arch, context, actions);
        error_row(ui, Setting::Weights, errors);
    }
}

/// The Optimizer rows: the update rule, the rate, the rule's parameters and the schedule.
fn optimizer_rows_ui(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    shown: &ExperimentDraft,
    errors: &BTreeMap<Setting, String>,
    actions: &mut Vec<SetupAction>,
) {
    let mut kind = form.optimizer;
    let options = [
        (OptimizerKind::Sgd, "SGD"),
        (OptimizerKind::Adam, "Adam"),
        (OptimizerKind::AdamW, "AdamW"),
    ];
    combo_row(
        ui,
        Setting::Optimizer,
        &mut kind,
        &options,
        Some(&new_form().optimizer),
    );
    form.set_optimizer(kind);
    section_rows_ui(
        ui,
        form,
        Section::Optimizer,
        shown,
        errors,
        |ui, _, setting| {
            // A page runs one thread: a range test there would hold the page for its length.
            if setting == Setting::Lr && cfg!(not(target_arch = "wasm32")) {
                ui.label("");
                if ui
                .button("Find lr…")
                .on_hover_text(
                    "Train a fresh model of this setup while the rate grows from 1e-7 until the loss diverges, and suggest the rate where the loss fell fastest",
                )
                .clicked()
            {
                actions.push(SetupAction::FindLr);
            }
                ui.end_row();
            }
        },
    );
    match form.optimizer {
        OptimizerKind::Sgd => {
            typed_row(ui, form, Setting::Momentum, errors);
            let label = ui
                .label(Setting::Nesterov.label())
                .on_hover_text(Setting::Nesterov.help());
            ui.checkbox(&mut form.nesterov, "").labelled_by(label.id);
            ui.end_row();
            error_row(ui, Setting::Nesterov, errors);
        }
        OptimizerKind::Adam | OptimizerKind::AdamW => {
            typed_row(ui, form, Setting::Beta1, errors);
            typed_row(ui, form, Setting::Beta2, errors);
            typed_row(ui, form, Setting::Epsilon, errors);
        }
    }
    typed_row(ui, form, Setting::WeightDecay, errors);
    if let Some(row) = Setting::WeightDecayMode.row()
        && row.applies(shown)
    {
        table_row_ui(ui, form, row, errors);
    }
    let options = [
        (ScheduleKind::Constant, "constant"),
        (ScheduleKind::Step, "step decay"),
        (ScheduleKind::Cosine, "cosine"),
    ];
    combo_row(
        ui,
        Setting::Schedule,
        &mut form.schedule,
        &options,
        Some(&new_form().schedule),
    );
    match form.schedule {
        ScheduleKind::Constant => {}
        ScheduleKind::Step => {
            typed_row(ui, form, Setting::StepEvery, errors);
            typed_row(ui, form, Setting::StepGamma, errors);
        }
        ScheduleKind::Cosine => {
            typed_row(ui, form, Setting::CosineMinLr, errors);
        }
    }
}

/// The Run rows: the table's (batch, epochs, seed, precision, profiling, readback) with the
/// device after the seed, then the name and NaN handling.
fn run_rows_ui(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    shown: &ExperimentDraft,
    errors: &BTreeMap<Setting, String>,
    context: &SetupContext<'_>,
    actions: &mut Vec<SetupAction>,
) {
    section_rows_ui(
        ui,
        form,
        Section::Run,
        shown,
        errors,
        |ui, form, setting| match setting {
            Setting::Seed => {
                device_row(ui, form, context.devices, actions);
                for problem in context.box_problems {
                    ui.label("");
                    ui.colored_label(ui.visuals().warn_fg_color, problem);
                    ui.end_row();
                }
                error_row(ui, Setting::Device, errors);
            }
            Setting::Precision => precision_problem_ui(ui, form, context.devices),
            _ => {}
        },
    );
    text_row(ui, Setting::Name, &mut form.draft.name, errors, None);
    ui.label("");
    ui.checkbox(
        &mut form.draft.stop_on_non_finite_loss,
        Setting::StopOnNonFiniteLoss.label(),
    )
    .on_hover_text(Setting::StopOnNonFiniteLoss.help());
    ui.end_row();
}

fn presets_ui(ui: &mut egui::Ui, form: &mut SetupForm) {
    ui.horizontal(|ui| {
        let label = ui.label("Preset");
        egui::ComboBox::from_id_salt("preset")
            .selected_text("load a reference workload…")
            .show_ui(ui, |ui| {
                for name in config::preset_names() {
                    if ui.selectable_label(false, name).clicked()
                        && let Ok(draft) = config::preset(name)
                    {
                        *form = SetupForm::from_draft(&draft);
                    }
                }
                ui.separator();
                if ui.selectable_label(false, "defaults").clicked() {
                    *form = SetupForm::default();
                }
            })
            .response
            .labelled_by(label.id)
            .on_hover_text("Fill the form with one of the reference workloads from user reports.");
    });
}
