//! The *Name series* window: before *Import run…* brings in a log whose series no convention
//! names (`holdout/top1`, `objective`), each such series gets a choice of the figure it is, as
//! `kiln import --series FIGURE=SERIES` names it on the command line.

use std::path::PathBuf;

use kiln_core::run_folder::{LogFigure, SeriesNames};

/// A log about to be imported and the figure chosen for each of its unnamed series.
pub struct SeriesDialog {
    /// The file or folder the person picked.
    pub path: PathBuf,
    /// Each series the conventions do not name, with the figure chosen for it (none: left out).
    pub series: Vec<(String, Option<LogFigure>)>,
}

/// What the person did in the window.
pub enum SeriesDialogAction {
    /// Import the log, reading the named series as their figures.
    Import(PathBuf, SeriesNames),
    /// Import nothing.
    Cancel,
}

impl SeriesDialog {
    /// The window for `path`'s `unnamed` series, each left out until the person names it.
    pub fn new(path: PathBuf, unnamed: Vec<String>) -> Self {
        let series = unnamed.into_iter().map(|name| (name, None)).collect();
        SeriesDialog { path, series }
    }

    /// The chosen names, as `kiln import --series` would read them.
    pub fn names(&self) -> SeriesNames {
        let mut names = SeriesNames::default();
        for (series, figure) in &self.series {
            if let Some(figure) = figure {
                // A spec built from a figure's own key always reads back.
                let _ = names.add(&format!("{}={series}", figure.key()));
            }
        }
        names
    }

    /// Draws the window; an action once the person imports, cancels or closes it.
    pub fn window_ui(&mut self, ctx: &egui::Context) -> Option<SeriesDialogAction> {
        let mut open = true;
        let mut action = None;
        egui::Window::new("Name series")
            .open(&mut open)
            .collapsible(false)
            .default_width(460.0)
            .show(ctx, |ui| action = self.contents_ui(ui));
        match open {
            true => action,
            false => Some(SeriesDialogAction::Cancel),
        }
    }

    fn contents_ui(&mut self, ui: &mut egui::Ui) -> Option<SeriesDialogAction> {
        let file = self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        ui.label(format!(
            "{file} holds series whose names do not say which figure they are. Choose what each is; a series left out is not imported."
        ));
        egui::ScrollArea::vertical()
            .max_height(320.0)
            .show(ui, |ui| {
                egui::Grid::new("series-names")
                    .num_columns(2)
                    .striped(true)
                    .show(ui, |ui| {
                        for (index, (series, figure)) in self.series.iter_mut().enumerate() {
                            let label = ui.label(series.as_str());
                            egui::ComboBox::from_id_salt(("series-figure", index))
                                .selected_text(figure.map_or("left out", LogFigure::label))
                                .show_ui(ui, |ui| {
                                    ui.selectable_value(figure, None, "left out");
                                    for choice in LogFigure::ALL {
                                        ui.selectable_value(figure, Some(choice), choice.label());
                                    }
                                })
                                .response
                                .labelled_by(label.id);
                            ui.end_row();
                        }
                    });
            });
        let spec: Vec<String> = self
            .series
            .iter()
            .filter_map(|(series, figure)| figure.map(|f| format!("--series {}={series}", f.key())))
            .collect();
        if !spec.is_empty() {
            ui.weak(format!("as kiln import {} does", spec.join(" ")));
        }
        let mut action = None;
        ui.horizontal(|ui| {
            if ui.button("Import").clicked() {
                action = Some(SeriesDialogAction::Import(self.path.clone(), self.names()));
            }
            if ui.button("Cancel").clicked() {
                action = Some(SeriesDialogAction::Cancel);
            }
        });
        action
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_series_given_a_figure_are_named() {
        let mut dialog = SeriesDialog::new(
            PathBuf::from("logs/run.csv"),
            vec!["holdout/top1".to_owned(), "objective".to_owned()],
        );
        dialog.series[0].1 = Some(LogFigure::ValAccuracy);
        let mut expected = SeriesNames::default();
        expected.add("val_accuracy=holdout/top1").unwrap();
        assert_eq!(dialog.names(), expected);
    }
}
