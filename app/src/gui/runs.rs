//! The runs list: past runs read back from the runs folder, chosen for overlay, renamed,
//! deleted, exported, or loaded back into the setup form.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use kiln_core::config::Precision;
use kiln_core::data::files::FileTree;
use kiln_core::run_folder::{self, RunHistory};
use kiln_core::selection::ValidatedOn;
use kiln_core::train::RunOutcome;

/// What the person asked the runs list to do this frame.
#[derive(Debug, Clone, PartialEq)]
pub enum RunsAction {
    /// Read the runs folder again.
    Refresh,
    /// Choose another runs folder with a folder dialog.
    ChooseFolder,
    /// Rename a run's folder and config.
    Rename {
        /// The run folder.
        path: PathBuf,
        /// The new name.
        name: String,
    },
    /// Delete a run folder (already confirmed).
    Delete(PathBuf),
    /// Fill the setup form with a run's config.
    UseSettings(PathBuf),
    /// Open the run's trained model to classify images.
    TryModel(PathBuf),
    /// Write the run's trained model for PyTorch.
    ExportModel(PathBuf),
    /// Continue a stopped run from its last checkpoint.
    Resume(PathBuf),
    /// Export the overlaid runs.
    Export(ExportKind),
    /// Pack a run's folder into one .tar file.
    Archive(PathBuf),
    /// Bring runs into the runs folder: an archive, or other frameworks' logs.
    Import(ImportKind),
}

/// What *Import run…* asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportKind {
    /// One file: a run folder archive or a training log.
    File,
    /// A folder of logs: one run's (Lightning's, TensorBoard's) or several runs'.
    Folder,
}

/// Which file an export writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// All rows as CSV.
    Csv,
    /// The four plots as a PNG image.
    Png,
    /// The four plots as an SVG image.
    Svg,
}

impl ExportKind {
    /// File extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Csv => "csv",
            Self::Png => "png",
            Self::Svg => "svg",
        }
    }
}

/// The runs found in the runs folder and which of them are overlaid.
#[derive(Debug, Default)]
pub struct RunsPanel {
    /// Every run read from disk, newest first.
    pub runs: Vec<RunHistory>,
    /// Folders of the runs overlaid on the plots.
    pub selected: BTreeSet<PathBuf>,
    /// Folders that could not be read, with the reason.
    pub unreadable: Vec<(PathBuf, String)>,
    /// Folders that hold a trained model, looked up once per refresh rather than per frame.
    with_model: BTreeSet<PathBuf>,
    /// Folders of stopped runs with a checkpoint to go on from, also looked up per refresh.
    resumable: BTreeSet<PathBuf>,
    renaming: Option<(PathBuf, String)>,
    confirm_delete: Option<PathBuf>,
    /// *Import run…*'s switch: the logs' validation series were computed on the test set.
    pub import_validation_was_test: bool,
}

impl RunsPanel {
    /// A panel listing `runs`, none ticked.
    pub fn with_runs(runs: Vec<RunHistory>) -> Self {
        Self {
            runs,
            ..Self::default()
        }
    }

    /// Reads every run under `runs_dir` of `tree` (the disk, or a page's runs); a folder that
    /// cannot be read is listed with its reason.
    pub fn refresh(&mut self, tree: &dyn FileTree, runs_dir: &Path) -> Result<(), String> {
        let folders = run_folder::list_runs_in(tree, runs_dir).map_err(|e| e.to_string())?;
        self.runs.clear();
        self.unreadable.clear();
        for folder in folders {
            match RunHistory::load_in(tree, &folder) {
                Ok(run) => self.runs.push(run),
                Err(e) => self.unreadable.push((folder, e.to_string())),
            }
        }
        self.with_model = self
            .runs
            .iter()
            .filter(|r| tree.is_file(&r.path.join(kiln_core::run_folder::MODEL_FILE)))
            .map(|r| r.path.clone())
            .collect();
        self.resumable = self
            .runs
            .iter()
            .filter(|r| {
                // The config is already read; only the checkpoint's state is looked up.
                r.config
                    .as_ref()
                    .is_some_and(|c| kiln_core::run_folder::can_resume_in(tree, &r.path, c))
            })
            .map(|r| r.path.clone())
            .collect();
        let present: BTreeSet<PathBuf> = self.runs.iter().map(|r| r.path.clone()).collect();
        self.selected.retain(|p| present.contains(p));
        Ok(())
    }

    /// The overlaid runs, in list order.
    pub fn selected_runs(&self) -> Vec<&RunHistory> {
        self.runs
            .iter()
            .filter(|r| self.selected.contains(&r.path))
            .collect()
    }
}

fn outcome_text(run: &RunHistory) -> String {
    if let Some(source) = &run.source {
        // What Kiln did not see (device, speed) is not shown at all rather than as zero.
        let evaluated = run
            .epochs
            .iter()
            .rev()
            .find_map(|e| e.val_accuracy.or(e.test_accuracy))
            .map_or_else(String::new, |accuracy| {
                format!(", validation {:.1} %", accuracy * 100.0)
            });
        return format!(
            "imported ({}), {} epochs{evaluated}",
            source.describe(),
            run.epochs.len()
        );
    }
    match &run.summary {
        None => "no summary (running or interrupted)".to_owned(),
        Some(summary) => {
            let accuracy = summary.final_test_accuracy.map_or_else(String::new, |a| {
                let caveat = match summary.validated_on {
                    ValidatedOn::Test => " (validated on test)",
                    ValidatedOn::Validation | ValidatedOn::Nothing => "",
                };
                // Several labels per image: the accuracy counts label decisions; mAP says more.
                match &summary.label_report {
                    Some(report) => format!(
                        ", test mAP {:.3}, label accuracy {:.1} %{caveat}",
                        report.mean_average_precision,
                        a * 100.0
                    ),
                    None => format!(", test {:.1} %{caveat}", a * 100.0),
                }
            });
            let stopped = match (&summary.stopped_early, &summary.pruned) {
                (Some(stop), _) => format!(", stopped early (best epoch {})", stop.best_epoch),
                (None, Some(pruned)) => format!(
                    ", pruned by the {} rule after epoch {}",
                    pruned.rule, pruned.after_epoch
                ),
                (None, None) => String::new(),
            };
            let outcome = match summary.outcome {
                RunOutcome::Completed => "completed",
                RunOutcome::Cancelled => "cancelled",
                RunOutcome::Diverged => "diverged",
                RunOutcome::Failed => "failed",
            };
            // Warm-up beside speed: a second launch of a workload shows what the kept
            // autotune cache saved.
            let speed = summary
                .steady_rate()
                .map_or_else(|| "- samples/s".to_owned(), |r| format!("{r:.0} samples/s"));
            format!(
                "{outcome}, {} epochs{stopped}{accuracy}, {speed}, warm-up {:.2} s",
                summary.epochs_completed, summary.warmup_secs
            )
        }
    }
}

/// `folder` as a person reads it: under the home folder as `~/…` on Unix, which keeps the
/// panel narrow and a screenshot free of the user's name; elsewhere the path as it is.
fn folder_for_display(folder: &Path, home: Option<&Path>) -> String {
    match home.and_then(|home| folder.strip_prefix(home).ok()) {
        Some(rest) if cfg!(unix) && rest.as_os_str().is_empty() => "~".to_owned(),
        Some(rest) if cfg!(unix) => format!("~/{}", rest.display()),
        _ => folder.display().to_string(),
    }
}

/// The runs list; `active` is the folder of the run in progress, which cannot be renamed or
/// deleted while it is written.
pub fn runs_ui(
    ui: &mut egui::Ui,
    panel: &mut RunsPanel,
    active: Option<&Path>,
    runs_dir: &Path,
) -> Vec<RunsAction> {
    let mut actions = Vec::new();
    ui.horizontal(|ui| {
        ui.heading("Runs");
        if ui
            .button("⟳ Refresh")
            .on_hover_text("Read the runs folder again.")
            .clicked()
        {
            actions.push(RunsAction::Refresh);
        }
    });
    ui.horizontal(|ui| {
        if cfg!(target_arch = "wasm32") {
            ui.label("kept in this browser").on_hover_text(
                "A page keeps its runs in the browser's storage, where they outlast a reload; Archive… downloads one as a run folder.",
            );
        } else {
            let shown = folder_for_display(runs_dir, dirs::home_dir().as_deref());
            ui.label(format!("in {shown}")).on_hover_text(format!(
                "Where new runs are kept and past runs are read from: {}",
                runs_dir.display()
            ));
            if ui
                .add_enabled(active.is_none(), egui::Button::new("Change…"))
                .on_hover_text("Keep and read runs in another folder (not while a run trains).")
                .clicked()
            {
                actions.push(RunsAction::ChooseFolder);
            }
        }
        ui.menu_button("Import run…", |ui| {
            if ui
                .button("Archive or log file…")
                .on_hover_text("A .tar archive that Archive… or `kiln archive` wrote, on this machine or another; or another framework's training log: a Keras CSVLogger file or History JSON, a TensorBoard event file, a CSV with an epoch column.")
                .clicked()
            {
                actions.push(RunsAction::Import(ImportKind::File));
                ui.close();
            }
            if ui
                .button("Folder of logs…")
                .on_hover_text("A Lightning log folder (metrics.csv, hparams.yaml), a TensorBoard log folder (Keras's train/ and validation/, or event files), or a folder holding several runs' logs: each becomes a run.")
                .clicked()
            {
                actions.push(RunsAction::Import(ImportKind::Folder));
                ui.close();
            }
            ui.separator();
            ui.checkbox(&mut panel.import_validation_was_test, "Its validation data was the test set")
                .on_hover_text("As Keras's validation_data=(x_test, y_test): the log's validation figures are imported as test figures, beside Kiln runs validated on test (kiln import --validated-on-test).");
        });
    });
    ui.label("Tick runs to overlay them on the plots.");
    ui.horizontal(|ui| {
        let any = !panel.selected.is_empty();
        for (kind, tip) in [
            (
                ExportKind::Csv,
                "Every row of the ticked runs (or the current run) as CSV.",
            ),
            (
                ExportKind::Png,
                "The four plots of the ticked runs (or the current run) as a PNG image.",
            ),
            (
                ExportKind::Svg,
                "The four plots of the ticked runs (or the current run) as an SVG image.",
            ),
        ] {
            let text = format!("Export {}…", kind.extension().to_uppercase());
            let response = ui.add_enabled(any || active.is_some(), egui::Button::new(text));
            if response.on_hover_text(tip).clicked() {
                actions.push(RunsAction::Export(kind));
            }
        }
    });
    ui.separator();
    egui::ScrollArea::vertical()
        .id_salt("runs-list")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            if panel.runs.is_empty() {
                ui.label("No runs yet: press Start.");
            }
            let RunsPanel {
                runs,
                selected,
                renaming,
                confirm_delete,
                with_model,
                resumable,
                ..
            } = panel;
            for run in runs.iter() {
                let is_active = active == Some(run.path.as_path());
                ui.push_id(&run.path, |ui| {
                    let status = RowStatus {
                        active: is_active,
                        has_model: with_model.contains(&run.path),
                        resumable: resumable.contains(&run.path),
                    };
                    run_row_ui(
                        ui,
                        run,
                        status,
                        selected,
                        renaming,
                        confirm_delete,
                        &mut actions,
                    );
                });
                ui.separator();
            }
            for (path, reason) in &panel.unreadable {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    format!("{}: {reason}", path.display()),
                );
            }
        });
    actions
}

/// What a row shows besides the run: whether it is being written, has a model to try, or a
/// checkpoint to resume from.
#[derive(Debug, Clone, Copy)]
struct RowStatus {
    active: bool,
    has_model: bool,
    resumable: bool,
}

fn run_row_ui(
    ui: &mut egui::Ui,
    run: &RunHistory,
    status: RowStatus,
    selected: &mut BTreeSet<PathBuf>,
    renaming: &mut Option<(PathBuf, String)>,
    confirm_delete: &mut Option<PathBuf>,
    actions: &mut Vec<RunsAction>,
) {
    let mut ticked = selected.contains(&run.path);
    let folder = run.folder_name();
    if ui
        .checkbox(&mut ticked, folder.as_str())
        .on_hover_text(run.path.display().to_string())
        .changed()
    {
        if ticked {
            selected.insert(run.path.clone());
        } else {
            selected.remove(&run.path);
        }
    }
    if let Some(config) = &run.config {
        // f32 is the default and goes unsaid; an f16 run says so.
        let precision = match config.precision {
            Precision::F32 => "",
            Precision::F16 => ", f16",
        };
        ui.small(format!(
            "{} on {}, {} lr {}, batch {}{precision}",
            config.model,
            config.dataset,
            config.optimizer.name(),
            config.lr,
            config.batch_size
        ));
    }
    ui.small(if status.active {
        "running now".to_owned()
    } else {
        outcome_text(run)
    });
    for problem in &run.problems {
        ui.small(problem);
    }
    match renaming {
        Some((path, text)) if *path == run.path => {
            let mut done = false;
            ui.horizontal(|ui| {
                let label = ui.label("New name");
                let response = ui.text_edit_singleline(text).labelled_by(label.id);
                let enter = response.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                if ui.button("Rename").clicked() || enter {
                    actions.push(RunsAction::Rename {
                        path: run.path.clone(),
                        name: text.trim().to_owned(),
                    });
                    done = true;
                }
                if ui.button("Cancel").clicked() {
                    done = true;
                }
            });
            if done {
                *renaming = None;
            }
        }
        _ => {}
    }
    if confirm_delete.as_ref() == Some(&run.path) {
        ui.horizontal(|ui| {
            ui.colored_label(ui.visuals().warn_fg_color, "Delete this run's folder?");
            if ui.button("Delete").clicked() {
                actions.push(RunsAction::Delete(run.path.clone()));
                *confirm_delete = None;
            }
            if ui.button("Keep").clicked() {
                *confirm_delete = None;
            }
        });
        return;
    }
    // Wrapped: a narrow panel puts the later buttons on a second line, not past its edge.
    ui.horizontal_wrapped(|ui| {
        if ui
            .add_enabled(run.config.is_some(), egui::Button::new("Use settings").small())
            .on_hover_text("Fill the setup panel with this run's configuration.")
            .on_disabled_hover_text("This run has no Kiln configuration to use (a run imported from another framework's log has none).")
            .clicked()
        {
            actions.push(RunsAction::UseSettings(run.path.clone()));
        }
        if ui
            .add_enabled(status.has_model, egui::Button::new("Try…").small())
            .on_hover_text("Classify your own images with this run's trained model.")
            .on_disabled_hover_text("Only runs that completed keep their trained model.")
            .clicked()
        {
            actions.push(RunsAction::TryModel(run.path.clone()));
        }
        if ui
            .add_enabled(status.has_model, egui::Button::new("Export model…").small())
            .on_hover_text("Write the trained model as a .safetensors file with PyTorch's names (for load_state_dict), or as an .onnx model that takes raw 0–255 pixels.")
            .on_disabled_hover_text("Only runs that completed keep their trained model.")
            .clicked()
        {
            actions.push(RunsAction::ExportModel(run.path.clone()));
        }
        let editable = !status.active;
        if ui
            .add_enabled(editable, egui::Button::new("Archive…").small())
            .on_hover_text("Save the whole run folder (rows, summary, model, checkpoints) as one .tar file, to keep, send, or import on another machine.")
            .clicked()
        {
            actions.push(RunsAction::Archive(run.path.clone()));
        }
        if status.resumable
            && ui
                .add_enabled(editable, egui::Button::new("Resume run").small())
                .on_hover_text(
                    "Go on from the last finished epoch, in this folder, on the device chosen in Setup: the run ends as if it had never stopped.",
                )
                .clicked()
        {
            actions.push(RunsAction::Resume(run.path.clone()));
        }
        if ui
            .add_enabled(editable, egui::Button::new("Rename…").small())
            .on_hover_text("Give the run a new name; its folder is renamed too.")
            .clicked()
        {
            *renaming = Some((run.path.clone(), run.name.clone()));
        }
        if ui
            .add_enabled(editable, egui::Button::new("Delete…").small())
            .on_hover_text("Remove the run and its folder (in a page: from this browser's storage).")
            .clicked()
        {
            *confirm_delete = Some(run.path.clone());
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runs_folder_is_shown_from_the_home_folder_as_a_tilde_on_unix() {
        let home = Path::new("/home/ada");
        let data = Path::new("/home/ada/.local/share/kiln/runs");
        let elsewhere = Path::new("/mnt/usb/runs");
        let expected = if cfg!(unix) {
            "~/.local/share/kiln/runs"
        } else {
            "/home/ada/.local/share/kiln/runs"
        };
        assert_eq!(folder_for_display(data, Some(home)), expected);
        assert_eq!(folder_for_display(elsewhere, Some(home)), "/mnt/usb/runs");
        assert_eq!(folder_for_display(Path::new("runs"), Some(home)), "runs");
        assert_eq!(folder_for_display(data, None), data.display().to_string());
        // /home/adam is not inside /home/ada: paths compare by component, not by text.
        let neighbour = Path::new("/home/adam/runs");
        assert_eq!(folder_for_display(neighbour, Some(home)), "/home/adam/runs");
    }

    #[test]
    fn a_multi_label_run_is_listed_by_its_test_map_and_its_label_accuracy() {
        use kiln_core::results::multi_label::{LabelScores, report};
        let scores = LabelScores {
            labels: 2,
            probabilities: vec![0.9, 0.2, 0.4, 0.7],
            truth: vec![vec![0], vec![1]],
        };
        let mut summary = kiln_core::train::RunSummary::new("CPU", 10, 0.0, 0.0);
        summary.final_test_accuracy = Some(0.75);
        summary.validated_on = ValidatedOn::Validation;
        summary.epochs_completed = 3;
        let mut run = RunHistory {
            summary: Some(summary.clone()),
            ..RunHistory::default()
        };
        assert!(
            outcome_text(&run).contains(", test 75.0 %,"),
            "{}",
            outcome_text(&run)
        );
        summary.label_report = Some(report(&scores, &[0.5, 0.5]));
        run.summary = Some(summary);
        let text = outcome_text(&run);
        assert!(
            text.contains(", test mAP 1.000, label accuracy 75.0 %,"),
            "{text}"
        );
    }
}
