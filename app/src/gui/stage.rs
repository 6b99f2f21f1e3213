//! The window's views, one per stage of the work (as Create ML gives each stage its own): the
//! tabs in the top bar that switch them, and the keyboard shortcut of each.

use egui::{Key, KeyboardShortcut, Modifiers};
use serde::{Deserialize, Serialize};

/// A stage of the work, drawn as a view of its own between the top bar and the status line; the
/// runs list stays at the right of every one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stage {
    /// The data report: counts, samples, the augmentation preview, skipped files and leaks.
    Data,
    /// The setup and the live plots.
    #[default]
    Train,
    /// Per-class results, the confusion matrix, mistakes and the step profile of one run.
    Results,
    /// A trained model tried on images it has not seen.
    Predict,
    /// The ticked runs side by side: their settings, results and overlaid plots.
    Compare,
}

impl Stage {
    /// Every stage, in the order of the tabs and of their shortcuts (Ctrl+1 … Ctrl+5).
    pub const ALL: [Stage; 5] = [
        Self::Data,
        Self::Train,
        Self::Results,
        Self::Predict,
        Self::Compare,
    ];

    /// The tab's text.
    pub fn title(self) -> &'static str {
        match self {
            Self::Data => "Data",
            Self::Train => "Train",
            Self::Results => "Results",
            Self::Predict => "Predict",
            Self::Compare => "Compare",
        }
    }

    /// What the view holds, for the tab's tooltip.
    fn about(self) -> &'static str {
        match self {
            Self::Data => "What the chosen data set holds: counts, samples, augmentation, problems",
            Self::Train => "The settings and the live plots",
            Self::Results => "Per class: confusion matrix, precision and recall, surest mistakes",
            Self::Predict => "A trained model on images of your own",
            Self::Compare => "The ticked runs' settings, results and plots side by side",
        }
    }

    /// Ctrl+1 … Ctrl+5 (⌘ on macOS), in the order of the tabs.
    pub fn shortcut(self) -> KeyboardShortcut {
        let key = match self {
            Self::Data => Key::Num1,
            Self::Train => Key::Num2,
            Self::Results => Key::Num3,
            Self::Predict => Key::Num4,
            Self::Compare => Key::Num5,
        };
        KeyboardShortcut::new(Modifiers::COMMAND, key)
    }

    /// The stage whose shortcut was pressed this frame, consuming it.
    pub fn pressed(ctx: &egui::Context) -> Option<Stage> {
        ctx.input_mut(|i| {
            Self::ALL
                .into_iter()
                .find(|stage| i.consume_shortcut(&stage.shortcut()))
        })
    }
}

/// The stage tabs; returns the stage clicked, if any. `badges` adds a word after a tab's title
/// (a count of runs, a finished run's results), so a person sees where there is something new.
pub fn stage_tabs_ui(
    ui: &mut egui::Ui,
    current: Stage,
    badge: impl Fn(Stage) -> Option<String>,
) -> Option<Stage> {
    let mut chosen = None;
    for stage in Stage::ALL {
        let text = match badge(stage) {
            Some(badge) => format!("{} {badge}", stage.title()),
            None => stage.title().to_owned(),
        };
        let shortcut = ui.ctx().format_shortcut(&stage.shortcut());
        if ui
            .selectable_label(stage == current, text)
            .on_hover_text(format!("{} ({shortcut})", stage.about()))
            .clicked()
        {
            chosen = Some(stage);
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_stage_has_its_own_shortcut_in_the_order_of_the_tabs() {
        let keys: Vec<Key> = Stage::ALL
            .iter()
            .map(|s| s.shortcut().logical_key)
            .collect();
        assert_eq!(
            keys,
            [Key::Num1, Key::Num2, Key::Num3, Key::Num4, Key::Num5]
        );
        assert_eq!(
            Stage::default(),
            Stage::Train,
            "a first launch opens on the setup"
        );
    }
}
