//! The flags of the settings that are one number, choice or switch of the draft, made from the
//! rows of `kiln_core::settings` as ripgrep makes its flags from one list: each flag's name,
//! help, values and parsing come from its row, so such a setting needs no line here.

use std::marker::PhantomData;

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use kiln_core::config::{ExperimentDraft, Setting};
use kiln_core::settings::{Row, rows};

/// Spellings a flag had before it was named after its key; they keep working.
const OLD_SPELLINGS: &[(Setting, &str)] = &[(Setting::BatchSize, "batch")];

/// Which rows a flattened set of flags holds.
pub(super) trait FlagGroup {
    /// Whether a row's flag is in the group.
    fn holds(row: &Row) -> bool;

    /// Its rows, in the order the help lists them.
    fn rows() -> Vec<&'static Row> {
        rows().iter().filter(|row| Self::holds(row)).collect()
    }
}

/// The training augmentation's flags, which `kiln data inspect` shares with `kiln train`.
#[derive(Debug, Default)]
pub(super) struct Augmentation;

impl FlagGroup for Augmentation {
    fn holds(row: &Row) -> bool {
        row.augmentation()
    }
}

/// Every other row's flag of `kiln train`.
#[derive(Debug, Default)]
pub(super) struct Training;

impl FlagGroup for Training {
    fn holds(row: &Row) -> bool {
        !row.augmentation()
    }
}

/// The flags of group `G` given on the command line, each already known to read.
pub(super) struct SettingFlags<G> {
    given: Vec<(&'static Row, String)>,
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
                .map_err(|reason| anyhow::anyhow!("--{} {text}: {reason}", row.setting().flag()))?;
        }
        Ok(())
    }

    /// Whether `setting`'s flag was given.
    pub(super) fn gave(&self, setting: Setting) -> bool {
        self.given.iter().any(|(row, _)| row.setting() == setting)
    }
}

/// The flag of one row: its name, help and value from the row, its value read at parse time
/// with the engine's own sentence for a bad one, as config.toml gets it.
pub(super) fn flag_of(row: &'static Row) -> Arg {
    let setting = row.setting();
    let mut arg = Arg::new(setting.key())
        .long(setting.flag())
        .help(setting.help());
    arg = match row.value_name() {
        Some(value_name) => arg
            .value_name(value_name)
            .action(ArgAction::Set)
            .value_parser(move |text: &str| {
                let mut scratch = ExperimentDraft::default();
                row.read_into(&mut scratch, text).map(|()| text.to_owned())
            }),
        None => arg.action(ArgAction::SetTrue),
    };
    for (_, old) in OLD_SPELLINGS.iter().filter(|(s, _)| *s == setting) {
        arg = arg.alias(*old);
    }
    arg
}

impl<G: FlagGroup> Args for SettingFlags<G> {
    fn augment_args(command: Command) -> Command {
        G::rows()
            .into_iter()
            .fold(command, |command, row| command.arg(flag_of(row)))
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
            let key = row.setting().key();
            let text = match row {
                Row::Switch(_) => matches.get_flag(key).then(String::new),
                _ => matches.get_one::<String>(key).cloned(),
            };
            if let Some(text) = text {
                self.given.retain(|(r, _)| r.setting() != row.setting());
                self.given.push((row, text));
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
    }

    #[test]
    fn every_row_has_its_flag_and_the_flags_set_the_draft() {
        let command = All::command();
        for row in rows() {
            let flag = row.setting().flag();
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
            "--flip",
            "--monitor",
            "val-accuracy",
            "--keep",
            "last",
        ])
        .unwrap();
        let mut draft = ExperimentDraft::default();
        parsed.training.apply(&mut draft).unwrap();
        parsed.augmentation.apply(&mut draft).unwrap();
        assert_eq!(
            (draft.lr, draft.batch_size, draft.brightness, draft.flip),
            (0.05, 32, 0.2, true)
        );
        assert_eq!(draft.monitor.to_string(), "val-accuracy");
        assert_eq!(draft.keep.to_string(), "last");
        assert!(parsed.training.gave(Setting::BatchSize));
        assert!(!parsed.training.gave(Setting::Epochs));
        assert!(parsed.augmentation.gave(Setting::Flip));
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
