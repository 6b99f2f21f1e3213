//! Every setting of an experiment, declared once (ripgrep declares its flags so): its key in
//! `config.toml` and in error messages, the label the window gives it, and the one-line
//! explanation its tooltip, its flag's help and the command-line reference show. A refused
//! value names its [`Setting`], so the window marks the field it was typed in without matching
//! strings.
//!
//! A setting that is one number, one choice or one switch of the draft also has its row in the
//! same declaration ([`Row`]): its field, its range or words, where the window shows it and the
//! word legends and `kiln compare` name it by. From that row alone `validate` checks its range,
//! the window draws its field, `kiln train` and `kiln data inspect` make its flag, `--resume`
//! refuses it, `kiln compare` and the legends name it and the command-line reference documents
//! it. So such a setting is three edits: its field and default in
//! [`ExperimentDraft`](crate::config::ExperimentDraft), its line in `table.rs`, and the code
//! that uses it. The settings that are part of a spec (the model's widths, the optimizer's
//! momentum, …) have no row: their spec parses and checks them.

mod choice;
mod number;
mod switch;

use std::fmt;

use crate::config::ExperimentDraft;

pub use choice::ChoiceSetting;
pub(crate) use choice::{choice, choice_of};
pub(crate) use number::number;
pub use number::{NumberSetting, Range, TypedNumber, show_number};
pub use switch::SwitchSetting;
pub(crate) use switch::switch_of;

/// The group of the window's Setup panel a setting is shown in, in the panel's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Section {
    /// What is trained on and how images reach the network.
    Data,
    /// The network, where its weights start, and its loss.
    Model,
    /// The update rule and the learning rate.
    Optimizer,
    /// How epochs are judged and which weights are kept.
    Validation,
    /// Batch, length, seed, device and what the run records.
    Run,
}

impl Section {
    /// Every section, in the panel's order.
    pub const ALL: [Section; 5] = [
        Section::Data,
        Section::Model,
        Section::Optimizer,
        Section::Validation,
        Section::Run,
    ];

    /// The section's title in the window and the docs.
    pub fn title(self) -> &'static str {
        match self {
            Section::Data => "Data",
            Section::Model => "Model",
            Section::Optimizer => "Optimizer",
            Section::Validation => "Validation",
            Section::Run => "Run",
        }
    }
}

/// The row of a setting that is one value of the draft.
#[derive(Debug, Clone, Copy)]
pub enum Row {
    /// One number.
    Number(NumberSetting),
    /// One choice among a few words.
    Choice(ChoiceSetting),
    /// One switch, off unless asked for.
    Switch(SwitchSetting),
}

impl Row {
    /// Which setting the row is of.
    pub fn setting(&self) -> Setting {
        match self {
            Row::Number(n) => n.setting,
            Row::Choice(c) => c.setting,
            Row::Switch(s) => s.setting,
        }
    }

    /// Where the window shows it.
    pub fn section(&self) -> Section {
        match self {
            Row::Number(n) => n.section,
            Row::Choice(c) => c.section,
            Row::Switch(s) => s.section,
        }
    }

    /// Whether it matters for `draft` (the window hides its field otherwise).
    pub fn applies(&self, draft: &ExperimentDraft) -> bool {
        match self {
            Row::Number(n) => (n.applies)(draft),
            Row::Choice(c) => (c.applies)(draft),
            Row::Switch(s) => (s.applies)(draft),
        }
    }

    /// Part of the training augmentation, whose flags `kiln data inspect` shares.
    pub fn augmentation(&self) -> bool {
        match self {
            Row::Number(n) => n.augmentation,
            Row::Choice(_) => false,
            Row::Switch(s) => s.augmentation,
        }
    }

    /// Its value in `draft` as a person writes it: the number, the word, `on` or `off`.
    pub fn show(&self, draft: &ExperimentDraft) -> String {
        match self {
            Row::Number(n) => n.show(draft),
            Row::Choice(c) => c.show(draft),
            Row::Switch(s) => s.show(draft),
        }
    }

    /// The word legends and `kiln compare` name it by, when they name it at all.
    pub fn legend(&self) -> Option<&'static str> {
        match self {
            Row::Number(n) => n.legend,
            Row::Choice(c) => Some(c.legend),
            Row::Switch(s) => Some(s.legend),
        }
    }

    /// How legends and `kiln compare` name its value in `draft` (`lr 0.01`, `flip on`).
    pub fn legend_entry(&self, draft: &ExperimentDraft) -> Option<(&'static str, String)> {
        match self {
            Row::Number(n) => n.legend_entry(draft),
            other => other.legend().map(|word| (word, other.show(draft))),
        }
    }

    /// What its value looks like after the flag (`RATE`, `logits|probabilities`); none for a
    /// switch, whose flag takes no value.
    pub fn value_name(&self) -> Option<String> {
        match self {
            Row::Number(n) => Some(n.value_name.to_owned()),
            Row::Choice(c) => Some(c.words().collect::<Vec<_>>().join("|")),
            Row::Switch(_) => None,
        }
    }

    /// What the command-line reference says it accepts: its range, or its words.
    pub fn accepts(&self) -> String {
        match self {
            Row::Number(n) => n.range.describe(),
            Row::Choice(c) => one_of(&c.words().collect::<Vec<_>>()),
            Row::Switch(_) => "on when given".to_owned(),
        }
    }

    /// Sets it in `draft` from the text after its flag (a switch: turned on); on an error
    /// `draft` keeps its value.
    pub fn read_into(&self, draft: &mut ExperimentDraft, text: &str) -> Result<(), String> {
        match self {
            Row::Number(n) => n.read_into(draft, text),
            Row::Choice(c) => c.read_into(draft, text),
            Row::Switch(s) => {
                s.set(draft, true);
                Ok(())
            }
        }
    }
}

/// Declares every setting once: its variant with its doc, then key, label and help, and, for a
/// setting that is one value of the draft, its row.
macro_rules! settings {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident => $key:literal, $label:literal, $help:literal $(, $row:expr)?;
    )*) => {
        /// One setting a person can choose.
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
            serde::Serialize, serde::Deserialize,
        )]
        pub enum Setting {
            $($(#[doc = $doc])* $name,)*
        }

        impl Setting {
            /// Every setting, in the order they are declared (the window's order).
            pub const ALL: &'static [Setting] = &[$(Setting::$name),*];

            /// (key, label, help) of this setting.
            pub(super) fn declaration(self) -> (&'static str, &'static str, &'static str) {
                match self {
                    $(Setting::$name => ($key, $label, $help),)*
                }
            }
        }

        /// The row of every setting that is one value of the draft, in declaration order.
        pub(super) static ROWS: &[Row] = &[$($($row.row(Setting::$name),)?)*];
    };
}

mod table;

pub use table::Setting;

impl Setting {
    /// The setting's key in `config.toml`, which error messages name too.
    pub fn key(self) -> &'static str {
        self.declaration().0
    }

    /// The label the window's Setup panel gives it.
    pub fn label(self) -> &'static str {
        self.declaration().1
    }

    /// One line that says what it does and what to choose: the window's tooltip and the flag's
    /// help.
    pub fn help(self) -> &'static str {
        self.declaration().2
    }

    /// Its flag on the command line, where it has one made from its key: the key with dashes
    /// (`--batch-size` for `batch_size`).
    pub fn flag(self) -> String {
        self.key().replace('_', "-")
    }

    /// Its row, when it is one number, choice or switch of the draft.
    pub fn row(self) -> Option<&'static Row> {
        rows().iter().find(|row| row.setting() == self)
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// Every row of the settings table, in declaration order.
pub fn rows() -> &'static [Row] {
    table::ROWS
}

/// Every setting that is one number of the draft.
pub fn numbers() -> impl Iterator<Item = &'static NumberSetting> {
    rows().iter().filter_map(|row| match row {
        Row::Number(n) => Some(n),
        _ => None,
    })
}

/// Every setting that is one choice of the draft.
pub fn choices() -> impl Iterator<Item = &'static ChoiceSetting> {
    rows().iter().filter_map(|row| match row {
        Row::Choice(c) => Some(c),
        _ => None,
    })
}

impl NumberSetting {
    /// The row of `setting`, when it is one number of the draft.
    pub fn of(setting: Setting) -> Option<&'static NumberSetting> {
        numbers().find(|n| n.setting == setting)
    }
}

impl ChoiceSetting {
    /// The row of `setting`, when it is one choice of the draft.
    pub fn of(setting: Setting) -> Option<&'static ChoiceSetting> {
        choices().find(|c| c.setting == setting)
    }
}

/// Checks every row's range in `draft`, in declaration order; the first refusal names its
/// setting.
pub(crate) fn check_ranges(draft: &ExperimentDraft) -> Result<(), crate::config::ConfigError> {
    numbers().try_for_each(|number| number.check(draft))
}

/// Words as a sentence lists them: "a", "a or b", "a, b or c".
pub fn one_of(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests;
