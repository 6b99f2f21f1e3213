//! The flags of the settings that are one number or one choice of the draft, made from the rows
//! of `kiln_core::settings::NUMBERS` and `CHOICES` as ripgrep makes its flags from one list:
//! each flag's name, help, values and parsing come from its row, so such a setting needs no
//! line here.

use std::marker::PhantomData;

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use kiln_core::config::{ExperimentDraft, Setting};
use kiln_core::settings::{CHOICES, ChoiceSetting, NUMBERS, NumberSetting};

/// Spellings a flag had before it was named after its key; they keep working.
const OLD_SPELLINGS: &[(Setting, &str)] = &[(Setting::BatchSize, "batch")];

/// A row of `NUMBERS` or `CHOICES`, as its flag sees it.
pub(super) trait FlagRow: Sync {
    /// Which setting it sets.
    fn setting(&self) -> Setting;
    /// The flag's name, without the dashes.
    fn flag(&self) -> String {
        self.setting().flag()
    }
    /// What the help shows for the value.
    fn value_name(&self) -> String;
    /// Sets it in `draft` from the text after the flag.
    fn read_into(&self, draft: &mut ExperimentDraft, text: &str) -> Result<(), String>;
}

impl FlagRow for NumberSetting {
    fn setting(&self) -> Setting {
        self.setting
    }

    fn value_name(&self) -> String {
        self.value_name.to_owned()
    }

    fn read_into(&self, draft: &mut ExperimentDraft, text: &str) -> Result<(), String> {
        NumberSetting::read_into(self, draft, text)
    }
}

impl FlagRow for ChoiceSetting {
    fn setting(&self) -> Setting {
        self.setting
    }

    fn value_name(&self) -> String {
        self.words().collect::<Vec<_>>().join("|")
    }

    fn read_into(&self, draft: &mut ExperimentDraft, text: &str) -> Result<(), String> {
        ChoiceSetting::read_into(self, draft, text)
    }
}

/// Which rows a flattened set of flags holds.
pub(super) trait FlagGroup {
    /// Its rows, in the order the help lists them.
    fn rows() -> Vec<&'static dyn FlagRow>;
}

/// The numbers of the training augmentation, which `kiln data inspect` shares.
#[derive(Debug, Default)]
pub(super) struct Augmentation;

impl FlagGroup for Augmentation {
    fn rows() -> Vec<&'static dyn FlagRow> {
        NUMBERS
            .iter()
            .filter(|n| n.augmentation)
            .map(|n| n as &dyn FlagRow)
            .collect()
    }
}

/// Every other number of `kiln train`.
#[derive(Debug, Default)]
pub(super) struct Training;

impl FlagGroup for Training {
    fn rows() -> Vec<&'static dyn FlagRow> {
        NUMBERS
            .iter()
            .filter(|n| !n.augmentation)
            .map(|n| n as &dyn FlagRow)
            .collect()
    }
}

/// Every choice of `kiln train`.
#[derive(Debug, Default)]
pub(super) struct Choices;

impl FlagGroup for Choices {
    fn rows() -> Vec<&'static dyn FlagRow> {
        CHOICES.iter().map(|c| c as &dyn FlagRow).collect()
    }
}

/// The flags of group `G` given on the command line, each already known to read.
pub(super) struct SettingFlags<G> {
    given: Vec<(&'static dyn FlagRow, String)>,
    group: PhantomData<G>,
}

impl<G> std::fmt::Debug for SettingFlags<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let given: Vec<(Setting, &str)> = self
            .given
            .iter()
            .map(|(row, text)| (row.setting(), text.as_str()))
            .collect();
        f.debug_struct("SettingFlags")
            .field("given", &given)
            .finish()
    }
}

impl<G: FlagGroup> SettingFlags<G> {
    /// Sets every setting given in `draft`.
    pub(super) fn apply(&self, draft: &mut ExperimentDraft) -> anyhow::Result<()> {
        for (row, text) in &self.given {
            row.read_into(draft, text)
                .map_err(|reason| anyhow::anyhow!("--{} {text}: {reason}", row.flag()))?;
        }
        Ok(())
    }

    /// Whether `setting`'s flag was given.
    pub(super) fn gave(&self, setting: Setting) -> bool {
        self.given.iter().any(|(row, _)| row.setting() == setting)
    }
}

impl<G: FlagGroup> Args for SettingFlags<G> {
    fn augment_args(command: Command) -> Command {
        G::rows().into_iter().fold(command, |command, row| {
            let mut arg = Arg::new(row.setting().key())
                .long(row.flag())
                .value_name(row.value_name())
                .help(row.setting().help())
                .action(ArgAction::Set)
                // Read at parse time with the engine's own sentence for a bad value, as
                // config.toml gets it.
                .value_parser(move |text: &str| {
                    let mut scratch = ExperimentDraft::default();
                    row.read_into(&mut scratch, text).map(|()| text.to_owned())
                });
            for (_, old) in OLD_SPELLINGS.iter().filter(|(s, _)| *s == row.setting()) {
                arg = arg.alias(*old);
            }
            command.arg(arg)
        })
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

impl<G: FlagGroup> FromArgMatches for SettingFlags<G> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = Self {
            given: Vec::new(),
            group: PhantomData,
        };
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        for row in G::rows() {
            if let Some(text) = matches.get_one::<String>(row.setting().key()) {
                self.given.retain(|(r, _)| r.setting() != row.setting());
                self.given.push((row, text.clone()));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    #[derive(Debug, Parser)]
    struct All {
        #[command(flatten)]
        training: SettingFlags<Training>,
        #[command(flatten)]
        augmentation: SettingFlags<Augmentation>,
        #[command(flatten)]
        choices: SettingFlags<Choices>,
    }

    #[test]
    fn every_number_and_choice_has_its_flag_and_the_flags_set_the_draft() {
        let command = All::command();
        let rows = NUMBERS
            .iter()
            .map(|n| n as &dyn FlagRow)
            .chain(CHOICES.iter().map(|c| c as &dyn FlagRow));
        for row in rows {
            let flag = row.flag();
            let arg = command
                .get_arguments()
                .find(|a| a.get_long() == Some(flag.as_str()));
            assert!(arg.is_some(), "no --{flag}");
        }
        let parsed = All::try_parse_from([
            "kiln",
            "--lr",
            "0.05",
            "--batch",
            "32",
            "--brightness",
            "0.2",
            "--monitor",
            "val-accuracy",
            "--keep",
            "last",
        ])
        .unwrap();
        let mut draft = ExperimentDraft::default();
        parsed.training.apply(&mut draft).unwrap();
        parsed.augmentation.apply(&mut draft).unwrap();
        parsed.choices.apply(&mut draft).unwrap();
        assert_eq!(
            (draft.lr, draft.batch_size, draft.brightness),
            (0.05, 32, 0.2)
        );
        assert_eq!(draft.monitor.to_string(), "val-accuracy");
        assert_eq!(draft.keep.to_string(), "last");
        assert!(parsed.training.gave(Setting::BatchSize));
        assert!(!parsed.training.gave(Setting::Epochs));
    }

    #[test]
    fn a_value_that_does_not_read_is_refused_with_its_flag_named() {
        let text = All::try_parse_from(["kiln", "--epochs", "many"])
            .unwrap_err()
            .to_string();
        assert!(text.contains("--epochs <N>"), "{text}");
        assert!(text.contains("'many' is not a whole number"), "{text}");
        let text = All::try_parse_from(["kiln", "--loss", "cosine"])
            .unwrap_err()
            .to_string();
        assert!(text.contains("--loss <logits|probabilities>"), "{text}");
        assert!(text.contains("expected logits or probabilities"), "{text}");
    }
}
