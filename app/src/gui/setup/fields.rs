//! The Setup panel's rows: a label with its tooltip beside a field, and the error mark under it.
//! A row of the settings table is drawn from the row alone (`table_row_ui`).

use std::collections::BTreeMap;
use std::path::Path;

use kiln_core::config::{ExperimentDraft, Setting};
use kiln_core::settings::Row;

use super::form::SetupForm;

/// A labelled single-line text field with its error mark under it; returns whether it changed.
pub(super) fn text_row(
    ui: &mut egui::Ui,
    field: Setting,
    value: &mut String,
    errors: &BTreeMap<Setting, String>,
) -> bool {
    let tip = field.help();
    let label = ui.label(field.label()).on_hover_text(tip);
    let error = errors.get(&field);
    let mut edit = egui::TextEdit::singleline(value).desired_width(140.0);
    if error.is_some() {
        edit = edit.text_color(ui.visuals().error_fg_color);
    }
    let response = ui.add(edit).labelled_by(label.id).on_hover_text(tip);
    ui.end_row();
    if let Some(reason) = error {
        ui.label("");
        error_label(ui, reason);
        ui.end_row();
    }
    response.changed()
}

/// The text field of a typed setting, holding the form's text for it.
pub(super) fn typed_row(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    field: Setting,
    errors: &BTreeMap<Setting, String>,
) -> bool {
    text_row(ui, field, form.text_mut(field), errors)
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
    match row {
        Row::Number(_) => {
            typed_row(ui, form, setting, errors);
        }
        Row::Choice(choice) => {
            let current = choice.show(&form.draft);
            let mut word = current.as_str();
            combo_row(ui, setting, &mut word, choice.options);
            if word != current {
                // A word of its own list always reads.
                let _ = choice.read_into(&mut form.draft, word);
            }
            error_row(ui, setting, errors);
        }
        Row::Switch(switch) => {
            let mut on = switch.get(&form.draft);
            ui.label("");
            ui.checkbox(&mut on, setting.label())
                .on_hover_text(setting.help());
            ui.end_row();
            switch.set(&mut form.draft, on);
            error_row(ui, setting, errors);
        }
    }
}

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
    for row in kiln_core::settings::rows()
        .iter()
        .filter(|row| row.section() == section && row.applies(shown))
    {
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

/// The error mark of `field`, on a row of its own, when it has one.
pub(super) fn error_row(ui: &mut egui::Ui, field: Setting, errors: &BTreeMap<Setting, String>) {
    if let Some(reason) = errors.get(&field) {
        ui.label("");
        error_label(ui, reason);
        ui.end_row();
    }
}

/// A labelled list of `options`, each a value and what the list shows for it.
pub(super) fn combo_row<T: PartialEq + Clone>(
    ui: &mut egui::Ui,
    setting: Setting,
    value: &mut T,
    options: &[(T, &str)],
) {
    let (label, tip) = (setting.label(), setting.help());
    let label_response = ui.label(label).on_hover_text(tip);
    let selected = options
        .iter()
        .find(|(option, _)| option == value)
        .map_or("", |(_, text)| *text);
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
    ui.end_row();
}
