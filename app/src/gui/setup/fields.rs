//! The Setup panel's rows: a label with its tooltip beside a field, and the error mark under it.
//! A row of the settings table is drawn from the row alone (`table_row_ui`). A row whose value
//! differs from a new form's has its label in bold and a ⟳ that puts the default back; a row
//! the search box's text does not find is not drawn.

use std::collections::BTreeMap;
use std::path::Path;

use kiln_core::config::{ExperimentDraft, Setting};
use kiln_core::settings::Row;

use super::form::{SetupForm, new_form};

/// Where the search box keeps its text for the rows of the frame.
fn search_id() -> egui::Id {
    egui::Id::unique("setup-search")
}

/// The search box over the settings; returns whether it holds text (every section then opens).
pub(super) fn search_ui(ui: &mut egui::Ui) -> bool {
    let mut query: String = ui.data(|d| d.get_temp(search_id())).unwrap_or_default();
    ui.horizontal(|ui| {
        let label = ui.label("Find");
        ui.add(
            egui::TextEdit::singleline(&mut query)
                .hint_text("a setting by name, key or meaning")
                .desired_width(f32::INFINITY),
        )
        .labelled_by(label.id);
    });
    let searching = !query.trim().is_empty();
    ui.data_mut(|d| d.insert_temp(search_id(), query));
    searching
}

/// Whether `setting`'s row is drawn under the search box's text: every row while it is empty,
/// else those whose label, key or tooltip holds it, in any case.
pub(super) fn found(ui: &egui::Ui, setting: Setting) -> bool {
    let query: String = ui.data(|d| d.get_temp(search_id())).unwrap_or_default();
    matches_search(&query, setting)
}

/// Whether a row that is none of the settings table's (a file or folder picker) is drawn under
/// the search box's text: by its label and its tooltip, as [`found`] finds a setting.
pub(super) fn found_row(ui: &egui::Ui, label: &str, help: &str) -> bool {
    let query: String = ui.data(|d| d.get_temp(search_id())).unwrap_or_default();
    matches_any(&query, &[label, help])
}

fn matches_search(query: &str, setting: Setting) -> bool {
    matches_any(query, &[setting.label(), setting.key(), setting.help()])
}

fn matches_any(query: &str, texts: &[&str]) -> bool {
    let query = query.trim().to_lowercase();
    query.is_empty()
        || texts
            .iter()
            .any(|text| text.to_lowercase().contains(&query))
}

/// A setting's label: in bold when its value is not the default.
fn label_ui(ui: &mut egui::Ui, setting: Setting, changed: bool) -> egui::Response {
    row_label_ui(ui, setting.label(), setting.help(), changed)
}

/// A row's label with its tooltip, in bold when its value is not the default.
pub(super) fn row_label_ui(
    ui: &mut egui::Ui,
    label: &str,
    help: &str,
    changed: bool,
) -> egui::Response {
    let mut text = egui::RichText::new(label);
    if changed {
        text = text.strong();
    }
    ui.label(text).on_hover_text(help)
}

/// The ⟳ beside a changed field; returns whether it was clicked.
pub(super) fn reset_ui(ui: &mut egui::Ui, default_shown: &str) -> bool {
    let default_shown = match default_shown.trim() {
        "" => "empty".to_owned(),
        shown => shown.to_owned(),
    };
    ui.small_button("⟳")
        .on_hover_text(format!("Back to the default: {default_shown}"))
        .clicked()
}

/// Whether two texts of a field say the same: as written, or as the same number (`1e-3` and
/// `0.001`).
fn same_value(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim(), b.trim());
    a == b || matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y)
}

/// A labelled single-line text field with its error mark under it, marked and resettable when
/// it differs from `default`; returns whether it changed.
pub(super) fn text_row(
    ui: &mut egui::Ui,
    field: Setting,
    value: &mut String,
    errors: &BTreeMap<Setting, String>,
    default: Option<&str>,
) -> bool {
    if !found(ui, field) {
        return false;
    }
    let tip = field.help();
    let changed = default.is_some_and(|default| !same_value(value, default));
    let label = label_ui(ui, field, changed);
    let error = errors.get(&field);
    let mut edited = false;
    ui.horizontal(|ui| {
        let mut edit = egui::TextEdit::singleline(value).desired_width(140.0);
        if error.is_some() {
            edit = edit.text_color(ui.visuals().error_fg_color);
        }
        edited = ui
            .add(edit)
            .labelled_by(label.id)
            .on_hover_text(tip)
            .changed();
        if let Some(default) = default.filter(|_| changed)
            && reset_ui(ui, default)
        {
            *value = default.to_owned();
            edited = true;
        }
    });
    ui.end_row();
    if let Some(reason) = error {
        ui.label("");
        error_label(ui, reason);
        ui.end_row();
    }
    edited
}

/// The text field of a typed setting, holding the form's text for it.
pub(super) fn typed_row(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    field: Setting,
    errors: &BTreeMap<Setting, String>,
) -> bool {
    let default = form.default_text(field);
    text_row(ui, field, form.text_mut(field), errors, Some(&default))
}

/// A row of the settings table, drawn from the row: a number's text field, a choice's list, a
/// switch's box; with its error mark.
pub(super) fn table_row_ui(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    row: &Row,
    errors: &BTreeMap<Setting, String>,
) {
    let setting = row.setting();
    if !found(ui, setting) {
        return;
    }
    let defaults = &new_form().draft;
    match row {
        Row::Number(_) => {
            typed_row(ui, form, setting, errors);
        }
        Row::Choice(choice) => {
            let current = choice.show(&form.draft);
            let default = choice.show(defaults);
            let mut word = current.as_str();
            combo_row(
                ui,
                setting,
                &mut word,
                choice.options,
                Some(&default.as_str()),
            );
            if word != current {
                // A word of its own list always reads.
                let _ = choice.read_into(&mut form.draft, word);
            }
            error_row(ui, setting, errors);
        }
        Row::Switch(switch) => {
            let mut on = switch.get(&form.draft);
            let default = switch.get(defaults);
            ui.label("");
            ui.horizontal(|ui| {
                let mut text = egui::RichText::new(setting.label());
                if on != default {
                    text = text.strong();
                }
                ui.checkbox(&mut on, text).on_hover_text(setting.help());
                if on != default && reset_ui(ui, if default { "on" } else { "off" }) {
                    on = default;
                }
            });
            ui.end_row();
            switch.set(&mut form.draft, on);
            error_row(ui, setting, errors);
        }
    }
}

/// Rows of the table the panel draws under a field of a spec rather than in their section's
/// run: *Decay as* under the optimizer's *Weight decay*.
const DRAWN_APART: &[Setting] = &[Setting::WeightDecayMode];

/// Draws every row of the settings table in `section` that applies to `shown` (the draft the
/// form would start now), in the table's order; `after` adds what belongs under a row (a
/// warning) or follows from its change.
pub(super) fn section_rows_ui(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    section: kiln_core::settings::Section,
    shown: &ExperimentDraft,
    errors: &BTreeMap<Setting, String>,
    mut after: impl FnMut(&mut egui::Ui, &mut SetupForm, Setting),
) {
    for row in kiln_core::settings::rows().iter().filter(|row| {
        row.section() == section && row.applies(shown) && !DRAWN_APART.contains(&row.setting())
    }) {
        table_row_ui(ui, form, row, errors);
        after(ui, form, row.setting());
    }
}

/// A chosen folder's or file's name, cut to fit beside its button with the whole path on hover:
/// a long path would otherwise widen the Setup panel and squeeze the plots.
pub(super) fn path_label(ui: &mut egui::Ui, path: Option<&Path>) {
    let Some(path) = path else {
        ui.label("(none chosen)");
        return;
    };
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    ui.scope(|ui| {
        ui.set_max_width(120.0);
        ui.add(egui::Label::new(name).truncate())
            .on_hover_text(path.display().to_string());
    });
}

/// A reason in the error colour, wrapped to the field column so it never runs off the panel.
pub(super) fn error_label(ui: &mut egui::Ui, reason: &str) {
    let color = ui.visuals().error_fg_color;
    ui.vertical(|ui| {
        ui.set_max_width(210.0);
        ui.add(egui::Label::new(egui::RichText::new(reason).color(color)).wrap());
    });
}

/// The error mark of `field`, on a row of its own, when it has one (and its row is drawn).
pub(super) fn error_row(ui: &mut egui::Ui, field: Setting, errors: &BTreeMap<Setting, String>) {
    if let Some(reason) = errors.get(&field).filter(|_| found(ui, field)) {
        ui.label("");
        error_label(ui, reason);
        ui.end_row();
    }
}

/// A labelled list of `options`, each a value and what the list shows for it; marked and
/// resettable when it differs from `default`.
pub(super) fn combo_row<T: PartialEq + Clone>(
    ui: &mut egui::Ui,
    setting: Setting,
    value: &mut T,
    options: &[(T, &str)],
    default: Option<&T>,
) {
    if !found(ui, setting) {
        return;
    }
    let (label, tip) = (setting.label(), setting.help());
    let changed = default.is_some_and(|default| default != value);
    let label_response = label_ui(ui, setting, changed);
    let shown = |value: &T| {
        options
            .iter()
            .find(|(option, _)| option == value)
            .map_or("", |(_, text)| *text)
    };
    let selected = shown(value);
    ui.horizontal(|ui| {
        egui::ComboBox::from_id_salt(label)
            .selected_text(selected)
            .width(180.0)
            .show_ui(ui, |ui| {
                for (option, text) in options {
                    ui.selectable_value(value, option.clone(), *text);
                }
            })
            .response
            .labelled_by(label_response.id)
            .on_hover_text(tip);
        if let Some(default) = default.filter(|_| changed)
            && reset_ui(ui, shown(default))
        {
            *value = default.clone();
        }
    });
    ui.end_row();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_finds_a_setting_by_label_key_or_meaning_in_any_case() {
        assert!(matches_search("", Setting::Epochs));
        assert!(matches_search("  EPOCH ", Setting::Epochs));
        assert!(matches_search(Setting::Lr.key(), Setting::Lr));
        assert!(!matches_search("momentum", Setting::Epochs));
    }

    #[test]
    fn a_number_written_another_way_is_not_a_change() {
        assert!(same_value("0.001", " 1e-3"));
        assert!(same_value("512,512", "512,512"));
        assert!(!same_value("0.01", "0.001"));
        assert!(!same_value("", "0"));
    }
}
