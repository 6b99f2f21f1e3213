//! Settings that are one choice among a few words: the macro every choice enum is declared
//! with, and the row that ties such an enum to the draft's field.

use crate::config::ExperimentDraft;

use super::number::always;
use super::{Section, Setting};

/// A setting that is one choice of [`ExperimentDraft`] among a few words: everything the
/// window, the command line, the legends and the docs need to handle it without a line of
/// their own.
#[derive(Debug, Clone, Copy)]
pub struct ChoiceSetting {
    /// Which setting: its key, label and help. Filled in by the settings table.
    pub setting: Setting,
    /// Each choice as `(word, label)`, from the enum's [`choice!`] declaration: the word
    /// config.toml and the flag use, and the label the window's list shows.
    pub options: &'static [(&'static str, &'static str)],
    /// Where the window shows it.
    pub section: Section,
    /// The word a legend and `kiln compare` name it by when runs differ in it
    /// (`loss probabilities`).
    pub legend: &'static str,
    /// When it matters: the window hides its list otherwise.
    pub applies: fn(&ExperimentDraft) -> bool,
    show: fn(&ExperimentDraft) -> &'static str,
    read: fn(&mut ExperimentDraft, &str) -> Result<(), String>,
}

impl ChoiceSetting {
    /// This row, of `setting` (the settings table's last step).
    pub(super) const fn row(self, setting: Setting) -> super::Row {
        super::Row::Choice(ChoiceSetting { setting, ..self })
    }

    /// The row of the draft's field read and shown by these functions; the settings table
    /// makes them with `choice_of!(field: Type)` and sets the rest with the builders below.
    pub const fn new(
        options: &'static [(&'static str, &'static str)],
        show: fn(&ExperimentDraft) -> &'static str,
        read: fn(&mut ExperimentDraft, &str) -> Result<(), String>,
    ) -> Self {
        ChoiceSetting {
            setting: Setting::Name,
            options,
            section: Section::Run,
            legend: "",
            applies: always,
            show,
            read,
        }
    }

    /// Shown in the window's `section`.
    pub const fn section(self, section: Section) -> Self {
        ChoiceSetting { section, ..self }
    }

    /// Named by `word` in legends and compare tables.
    pub const fn legend(self, legend: &'static str) -> Self {
        ChoiceSetting { legend, ..self }
    }

    /// Shown in the window only when `applies` says it matters.
    pub const fn applies(self, applies: fn(&ExperimentDraft) -> bool) -> Self {
        ChoiceSetting { applies, ..self }
    }

    /// The words it takes, in the order the window lists them.
    pub fn words(&self) -> impl Iterator<Item = &'static str> {
        self.options.iter().map(|(word, _)| *word)
    }

    /// Its word in `draft`.
    pub fn show(&self, draft: &ExperimentDraft) -> String {
        (self.show)(draft).to_owned()
    }

    /// The window's label for its value in `draft`.
    pub fn label_in(&self, draft: &ExperimentDraft) -> &'static str {
        let word = (self.show)(draft);
        self.options
            .iter()
            .find(|(w, _)| *w == word)
            .map_or(word, |(_, label)| *label)
    }

    /// Sets it in `draft` from its word; on an error `draft` keeps its value.
    pub fn read_into(&self, draft: &mut ExperimentDraft, word: &str) -> Result<(), String> {
        (self.read)(draft, word)
    }
}

/// The row of a choice field of the draft: `choice_of!(loss: LossInput)`, then the builders.
macro_rules! choice_of {
    ($field:ident : $ty:ty) => {
        $crate::settings::ChoiceSetting::new(
            <$ty>::OPTIONS,
            |draft| draft.$field.word(),
            |draft, word| {
                draft.$field = word.parse::<$ty>().map_err(|e| e.to_string())?;
                Ok(())
            },
        )
    };
}

pub(crate) use choice_of;

/// Declares a choice written as one word in config.toml and on the command line, with the label
/// the window's list shows for each: `Variant => "word", "label"` (and `| "alias"` for older
/// spellings that still read).
macro_rules! choice {
    (
        $(#[$meta:meta])* $name:ident for $setting:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident => $word:literal $(| $alias:literal)*, $label:literal,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
        )]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $word $(, alias = $alias)*)] $variant,)*
        }

        impl $name {
            /// Every choice, in the order the window lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// Each choice's word and the window's label for it, in the order of [`Self::ALL`].
            pub const OPTIONS: &'static [(&'static str, &'static str)] = &[$(($word, $label)),*];

            /// The word config.toml and the command line use for it.
            pub fn word(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)*
                }
            }

            /// The label the window's list shows for it.
            pub fn label(self) -> &'static str {
                match self {
                    $($name::$variant => $label,)*
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.word())
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::config::ConfigError;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                let wanted = text.trim().to_ascii_lowercase();
                match wanted.as_str() {
                    $($word $(| $alias)* => Ok($name::$variant),)*
                    _ => {
                        let words: Vec<&str> = Self::ALL.iter().map(|c| c.word()).collect();
                        Err($crate::config::invalid(
                            $crate::settings::Setting::$setting,
                            text.trim(),
                            format!("expected {}", $crate::settings::one_of(&words)),
                        ))
                    }
                }
            }
        }
    };
}

pub(crate) use choice;
