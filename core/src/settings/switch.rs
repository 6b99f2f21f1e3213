//! Settings that are one on/off switch of the draft, off by default: a flag turns it on.

use crate::config::ExperimentDraft;

use super::number::always;
use super::{Section, Setting};

/// A setting that is one switch of [`ExperimentDraft`], off unless asked for: everything the
/// window, the command line, the legends and the docs need to handle it without a line of
/// their own.
#[derive(Debug, Clone, Copy)]
pub struct SwitchSetting {
    /// Which setting: its key, label and help. Filled in by the settings table.
    pub setting: Setting,
    /// Where the window shows it.
    pub section: Section,
    /// The word a legend and `kiln compare` name it by when runs differ in it (`flip on`).
    pub legend: &'static str,
    /// Part of the training augmentation, whose flags `kiln data inspect` shares.
    pub augmentation: bool,
    /// When it matters: the window hides its box otherwise.
    pub applies: fn(&ExperimentDraft) -> bool,
    get: fn(&ExperimentDraft) -> bool,
    set: fn(&mut ExperimentDraft, bool),
}

impl SwitchSetting {
    /// This row, of `setting` (the settings table's last step).
    pub(super) const fn row(self, setting: Setting) -> super::Row {
        super::Row::Switch(SwitchSetting { setting, ..self })
    }

    /// The row of the draft's field read and set by these functions; the settings table makes
    /// them with `switch_of!(field)` and sets the rest with the builders below.
    pub const fn new(
        get: fn(&ExperimentDraft) -> bool,
        set: fn(&mut ExperimentDraft, bool),
    ) -> Self {
        SwitchSetting {
            setting: Setting::Name,
            section: Section::Run,
            legend: "",
            augmentation: false,
            applies: always,
            get,
            set,
        }
    }

    /// Shown in the window's `section`.
    pub const fn section(self, section: Section) -> Self {
        SwitchSetting { section, ..self }
    }

    /// Named by `word` in legends and compare tables.
    pub const fn legend(self, legend: &'static str) -> Self {
        SwitchSetting { legend, ..self }
    }

    /// Part of the training augmentation.
    pub const fn augmentation(self) -> Self {
        SwitchSetting {
            augmentation: true,
            ..self
        }
    }

    /// Shown in the window only when `applies` says it matters.
    pub const fn applies(self, applies: fn(&ExperimentDraft) -> bool) -> Self {
        SwitchSetting { applies, ..self }
    }

    /// Whether it is on in `draft`.
    pub fn get(&self, draft: &ExperimentDraft) -> bool {
        (self.get)(draft)
    }

    /// Turns it on or off in `draft`.
    pub fn set(&self, draft: &mut ExperimentDraft, on: bool) {
        (self.set)(draft, on);
    }

    /// Its value as a legend shows it: `on` or `off`.
    pub fn show(&self, draft: &ExperimentDraft) -> String {
        if self.get(draft) { "on" } else { "off" }.to_owned()
    }
}

/// The row of a switch field of the draft: `switch_of!(flip)`, then the builders.
macro_rules! switch_of {
    ($field:ident) => {
        $crate::settings::SwitchSetting::new(|draft| draft.$field, |draft, on| draft.$field = on)
    };
}

pub(crate) use switch_of;
