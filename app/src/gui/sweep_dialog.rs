//! The *Sweep…* window (under Start): tick the settings to vary, give each its values (a list,
//! or a range), choose the search, the seeds and the pruning; Start writes the Setup form's
//! config with that `[sweep]` table, which plans exactly as `kiln sweep` would plan it. Or
//! resume an earlier sweep that stopped short, as `kiln sweep --resume` does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kiln_core::config::ExperimentDraft;
use kiln_core::sweep::{Search, Sweep, SweepFolder};

/// Keys a sweep does not vary from here: they name a run or say where it trains, or are
/// tables whose parts the window edits apart (the data set, the model, the weights).
const NOT_SWEPT: &[&str] = &[
    "name",
    "seed",
    "device",
    "readback_interval_ms",
    "profile_steps",
    "stop_on_non_finite_loss",
    "dataset",
    "model",
    "weights",
];

/// The searches the window offers, with their words.
const SEARCHES: [(Search, &str); 4] = [
    (Search::Grid, "grid: every combination"),
    (Search::Random, "random: N settings drawn"),
    (Search::OneAtATime, "one at a time from Setup's"),
    (Search::Tpe, "TPE: each next setting from the results"),
];

/// The pruning rules the window offers: off, or the word a `[sweep]` table writes.
const PRUNING: [(Option<&str>, &str); 3] = [
    (None, "off"),
    (Some("median"), "median rule"),
    (Some("asha"), "ASHA (successive halving)"),
];

/// What the window holds between frames.
pub struct SweepDialog {
    /// By config key: whether it is ticked, and its values as typed.
    axes: BTreeMap<&'static str, (bool, String)>,
    search: Search,
    seeds: String,
    trials: String,
    prune: Option<&'static str>,
    /// Why the last Start was refused.
    error: Option<String>,
    /// The sweep folders beside the runs, read when the window opens.
    earlier: Option<Vec<SweepFolder>>,
}

/// What the person did in the window.
pub enum SweepDialogAction {
    /// Start the sweep this config plans; it plans (checked).
    Start {
        /// The config with its `[sweep]` table, as `sweep.toml` keeps it.
        text: String,
        /// The plan.
        sweep: Box<Sweep>,
    },
    /// Go on with the sweep in this folder where it stopped.
    Resume(PathBuf),
    /// Ask for a sweep folder to resume anywhere on the disk.
    PickFolderToResume,
    /// Close the window.
    Close,
}

impl Default for SweepDialog {
    fn default() -> Self {
        Self {
            axes: BTreeMap::new(),
            search: Search::Grid,
            seeds: "1".to_owned(),
            trials: "20".to_owned(),
            prune: None,
            error: None,
            earlier: None,
        }
    }
}

impl SweepDialog {
    /// The window over the Setup form's `draft`, offering to resume the sweeps of
    /// `sweeps_dir` that stopped short; what the person chose.
    pub fn window_ui(
        &mut self,
        ctx: &egui::Context,
        draft: &ExperimentDraft,
        sweeps_dir: &Path,
    ) -> Option<SweepDialogAction> {
        let mut open = true;
        let mut action = None;
        let earlier = self
            .earlier
            .take()
            .unwrap_or_else(|| kiln_core::sweep::sweep_folders(sweeps_dir));
        let mut resume = None;
        egui::Window::new("Sweep")
            .open(&mut open)
            .collapsible(false)
            .default_size([520.0, 520.0])
            .show(ctx, |ui| {
                resume = resume_ui(ui, &earlier);
                action = self.contents_ui(ui, draft);
            });
        self.earlier = Some(earlier);
        if resume.is_some() {
            return resume;
        }
        if !open {
            return Some(SweepDialogAction::Close);
        }
        action
    }

    fn contents_ui(
        &mut self,
        ui: &mut egui::Ui,
        draft: &ExperimentDraft,
    ) -> Option<SweepDialogAction> {
        ui.label("Tick the settings to vary and give their values: a list (0.001, 0.01, 0.1) or a range (1e-4..1e-1 log, with steps 4 for a grid). Every other setting is Setup's.");
        egui::ScrollArea::vertical()
            .max_height(ui.available_height() - 150.0)
            .show(ui, |ui| {
                egui::Grid::new("sweep-axes").num_columns(2).show(ui, |ui| {
                    for row in kiln_core::settings::rows()
                        .iter()
                        .filter(|row| row.applies(draft))
                        .filter(|row| !NOT_SWEPT.contains(&row.setting().key()))
                    {
                        let setting = row.setting();
                        let (ticked, values) = self
                            .axes
                            .entry(setting.key())
                            .or_insert_with(|| (false, String::new()));
                        ui.checkbox(ticked, setting.label())
                            .on_hover_text(setting.help());
                        let field = egui::TextEdit::singleline(values)
                            .hint_text(format!("now {}", row.show(draft)));
                        if ui.add(field).on_hover_text(row.accepts()).changed()
                            && !values.is_empty()
                        {
                            *ticked = true;
                        }
                        ui.end_row();
                    }
                });
            });
        ui.separator();
        self.options_ui(ui);
        if let Some(error) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, error);
        }
        let mut action = None;
        ui.horizontal(|ui| {
            if ui.button("▶ Start sweep").clicked() {
                match self.plan(draft) {
                    Ok((text, sweep)) => {
                        self.error = None;
                        action = Some(SweepDialogAction::Start {
                            text,
                            sweep: Box::new(sweep),
                        });
                    }
                    Err(reason) => self.error = Some(reason),
                }
            }
            if ui.button("Close").clicked() {
                action = Some(SweepDialogAction::Close);
            }
        });
        action
    }

    /// The search, seeds, trials and pruning.
    fn options_ui(&mut self, ui: &mut egui::Ui) {
        egui::Grid::new("sweep-options").num_columns(2).show(ui, |ui| {
            let label = ui.label("Search");
            egui::ComboBox::from_id_salt("sweep-search")
                .selected_text(SEARCHES.iter().find(|s| s.0 == self.search).map_or("", |s| s.1))
                .show_ui(ui, |ui| {
                    for (search, words) in SEARCHES {
                        ui.selectable_value(&mut self.search, search, words);
                    }
                })
                .response
                .labelled_by(label.id);
            ui.end_row();
            if matches!(self.search, Search::Random | Search::Tpe) {
                let label = ui.label("Settings to try");
                ui.text_edit_singleline(&mut self.trials).labelled_by(label.id);
                ui.end_row();
            }
            let label = ui.label("Seeds per setting");
            ui.text_edit_singleline(&mut self.seeds)
                .labelled_by(label.id)
                .on_hover_text("Runs of each setting with the seed, +1, +2…: two or more tell a real difference from seed noise");
            ui.end_row();
            let label = ui.label("Pruning");
            egui::ComboBox::from_id_salt("sweep-prune")
                .selected_text(PRUNING.iter().find(|p| p.0 == self.prune).map_or("", |p| p.1))
                .show_ui(ui, |ui| {
                    for (rule, words) in PRUNING {
                        ui.selectable_value(&mut self.prune, rule, words);
                    }
                })
                .response
                .labelled_by(label.id);
            ui.end_row();
        });
    }

    /// The config `draft` with the `[sweep]` table the window says, and its plan; or why not.
    fn plan(&self, draft: &ExperimentDraft) -> Result<(String, Sweep), String> {
        let mut table = String::from("\n[sweep]\n");
        table.push_str(&format!("search = \"{}\"\n", self.search.word()));
        let whole = |text: &str, what: &str| -> Result<usize, String> {
            text.trim()
                .parse::<usize>()
                .map_err(|_| format!("{what} is a whole number, not \"{}\"", text.trim()))
        };
        table.push_str(&format!(
            "seeds = {}\n",
            whole(&self.seeds, "Seeds per setting")?
        ));
        if matches!(self.search, Search::Random | Search::Tpe) {
            table.push_str(&format!(
                "trials = {}\n",
                whole(&self.trials, "Settings to try")?
            ));
        }
        if let Some(rule) = self.prune {
            table.push_str(&format!("prune = \"{rule}\"\n"));
        }
        let mut varied = 0;
        for (key, (ticked, values)) in &self.axes {
            if !*ticked {
                continue;
            }
            let values = axis_values(values).map_err(|e| format!("{key}: {e}"))?;
            table.push_str(&format!("{key} = {values}\n"));
            varied += 1;
        }
        if varied == 0 {
            return Err("tick at least one setting and give its values".to_owned());
        }
        let text = format!("{}{table}", draft.to_toml());
        let sweep = Sweep::from_toml(&text, "the Sweep window").map_err(|e| e.problem)?;
        Ok((text, sweep))
    }
}

/// The earlier sweeps that stopped short, each with its Resume button, and a button for a
/// sweep folder elsewhere.
fn resume_ui(ui: &mut egui::Ui, earlier: &[SweepFolder]) -> Option<SweepDialogAction> {
    let mut action = None;
    let unfinished: Vec<&SweepFolder> = earlier.iter().filter(|f| f.unfinished()).collect();
    let title = format!("Resume an earlier sweep ({})", unfinished.len());
    egui::CollapsingHeader::new(title)
        .id_salt("sweep-resume")
        .default_open(!unfinished.is_empty())
        .show(ui, |ui| {
            for folder in unfinished.iter().take(8) {
                ui.horizontal(|ui| {
                    if ui.button("Resume").clicked() {
                        action = Some(SweepDialogAction::Resume(folder.folder.clone()));
                    }
                    let name = folder
                        .folder
                        .file_name()
                        .map_or_else(|| folder.name.clone(), |n| n.to_string_lossy().into());
                    ui.label(format!(
                        "{name}: {} of {} trials finished",
                        folder.finished, folder.planned
                    ));
                });
            }
            if unfinished.is_empty() {
                ui.label("Every sweep beside the runs has finished.");
            }
            if ui.button("Sweep folder elsewhere…").clicked() {
                action = Some(SweepDialogAction::PickFolderToResume);
            }
        });
    ui.separator();
    action
}

/// A field's values as a `[sweep]` table writes them: `[a, b, c]` for a list, or
/// `{ min = a, max = b, log = true, steps = N }` for `a..b log steps N`. Words that are not
/// TOML values (`raw`, `unit-range`) are taken as text.
fn axis_values(typed: &str) -> Result<String, String> {
    let typed = typed.trim();
    if typed.is_empty() {
        return Err("give its values, e.g. 0.001, 0.01 or 1e-4..1e-1 log".to_owned());
    }
    if let Some((min, rest)) = typed.split_once("..") {
        let mut words = rest.split_whitespace();
        let max = words.next().unwrap_or_default();
        let number = |text: &str| {
            text.parse::<f64>()
                .map(|_| text.to_owned())
                .map_err(|_| format!("\"{text}\" is not a number a range can start or end at"))
        };
        let mut range = format!("{{ min = {}, max = {}", number(min.trim())?, number(max)?);
        while let Some(word) = words.next() {
            match word {
                "log" => range.push_str(", log = true"),
                "steps" => {
                    let steps = words.next().unwrap_or_default();
                    range.push_str(&format!(", steps = {}", number(steps)?));
                }
                other => {
                    return Err(format!(
                        "a range takes \"log\" and \"steps N\" after it, not \"{other}\""
                    ));
                }
            }
        }
        range.push_str(" }");
        return Ok(range);
    }
    let values: Vec<String> = typed
        .split(',')
        .map(str::trim)
        .filter(|word| !word.is_empty())
        .map(
            |word| match toml::from_str::<toml::Table>(&format!("v = {word}")) {
                Ok(table) if table.contains_key("v") => word.to_owned(),
                _ => toml::Value::String(word.to_owned()).to_string(),
            },
        )
        .collect();
    Ok(format!("[{}]", values.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_values_read_as_a_list_of_numbers_or_words_or_as_a_range() {
        assert_eq!(axis_values("0.001, 0.01").unwrap(), "[0.001, 0.01]");
        assert_eq!(
            axis_values("raw, unit-range").unwrap(),
            "[\"raw\", \"unit-range\"]"
        );
        assert_eq!(axis_values("true,false").unwrap(), "[true, false]");
        assert_eq!(
            axis_values("1e-4..1e-1 log steps 4").unwrap(),
            "{ min = 1e-4, max = 1e-1, log = true, steps = 4 }"
        );
        assert!(
            axis_values("1e-4..big")
                .unwrap_err()
                .contains("\"big\" is not a number")
        );
        assert!(axis_values("  ").unwrap_err().contains("give its values"));
    }

    #[test]
    fn the_window_plans_the_setup_form_with_its_sweep_table_or_says_why_not() {
        let draft = ExperimentDraft::default();
        let mut dialog = SweepDialog::default();
        assert!(
            dialog
                .plan(&draft)
                .unwrap_err()
                .contains("tick at least one setting")
        );
        dialog.axes.insert("lr", (true, "0.001, 0.01".to_owned()));
        dialog
            .axes
            .insert("input_scaling", (true, "raw, unit-range".to_owned()));
        dialog.seeds = "2".to_owned();
        let (text, sweep) = dialog.plan(&draft).unwrap();
        assert!(text.contains("[sweep]"), "{text}");
        assert_eq!(sweep.trials.len(), 2 * 2 * 2);
        dialog.axes.insert("lr", (true, "-1".to_owned()));
        let error = dialog.plan(&draft).unwrap_err();
        assert!(
            error.contains("lr=-1"),
            "the refused trial is named: {error}"
        );
        dialog.axes.insert("lr", (true, "0.01".to_owned()));
        dialog.search = Search::Tpe;
        dialog.trials = "many".to_owned();
        assert!(
            dialog
                .plan(&draft)
                .unwrap_err()
                .contains("Settings to try is a whole number")
        );
    }
}
