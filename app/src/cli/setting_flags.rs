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

/// Which of the numbers a subcommand takes.
pub(super) trait NumberGroup {
    /// Whether `number` is one of them.
    fn includes(number: &NumberSetting) -> bool;
}

/// The numbers of the training augmentation, which `kiln data inspect` shares.
#[derive(Debug, Default)]
pub(super) struct Augmentation;

impl NumberGroup for Augmentation {
    fn includes(number: &NumberSetting) -> bool {
        number.augmentation
    }
}

/// Every other number of `kiln train`.
#[derive(Debug, Default)]
pub(super) struct Training;

impl NumberGroup for Training {
    fn includes(number: &NumberSetting) -> bool {
        !number.augmentation
    }
}

/// The numbers of group `G` given on the command line, each already known to read.
#[derive(Debug, Default)]
pub(super) struct NumberFlags<G> {
    given: Vec<(&'static NumberSetting, String)>,
    group: PhantomData<G>,
}

impl<G: NumberGroup> NumberFlags<G> {
    fn members() -> impl Iterator<Item = &'static NumberSetting> {
        NUMBERS.iter().filter(|number| G::includes(number))
    }

    /// Sets every number given in `draft`.
    pub(super) fn apply(&self, draft: &mut ExperimentDraft) -> anyhow::Result<()> {
        for (number, text) in &self.given {
            number
                .read_into(draft, text)
                .map_err(|reason| anyhow::anyhow!("--{} {text}: {reason}", number.flag()))?;
        }
        Ok(())
    }

    /// Whether `setting`'s flag was given.
    pub(super) fn gave(&self, setting: Setting) -> bool {
        self.given
            .iter()
            .any(|(number, _)| number.setting == setting)
    }
}

impl<G: NumberGroup> Args for NumberFlags<G> {
    fn augment_args(command: Command) -> Command {
        Self::members().fold(command, |command, number| {
            let mut arg = Arg::new(number.setting.key())
                .long(number.flag())
                .value_name(number.value_name)
                .help(number.setting.help())
                .action(ArgAction::Set)
                // Read at parse time, so a bad value is refused as clap refuses any other.
                .value_parser(move |text: &str| {
                    let mut scratch = ExperimentDraft::default();
                    number
                        .read_into(&mut scratch, text)
                        .map(|()| text.to_owned())
                });
            for (_, old) in OLD_SPELLINGS.iter().filter(|(s, _)| *s == number.setting) {
                arg = arg.alias(*old);
            }
            command.arg(arg)
        })
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

impl<G: NumberGroup> FromArgMatches for NumberFlags<G> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = Self {
            given: Vec::new(),
            group: PhantomData,
        };
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        for number in Self::members() {
            if let Some(text) = matches.get_one::<String>(number.setting.key()) {
                self.given.retain(|(n, _)| n.setting != number.setting);
                self.given.push((number, text.clone()));
            }
        }
        Ok(())
    }
}

/// The choices given on the command line (all of them belong to `kiln train`).
#[derive(Debug, Default)]
pub(super) struct ChoiceFlags {
    given: Vec<(&'static ChoiceSetting, String)>,
}

impl ChoiceFlags {
    /// Sets every choice given in `draft`.
    pub(super) fn apply(&self, draft: &mut ExperimentDraft) -> anyhow::Result<()> {
        for (choice, word) in &self.given {
            choice
                .read_into(draft, word)
                .map_err(|reason| anyhow::anyhow!("--{} {word}: {reason}", choice.flag()))?;
        }
        Ok(())
    }
}

impl Args for ChoiceFlags {
    fn augment_args(command: Command) -> Command {
        CHOICES.iter().fold(command, |command, choice| {
            let words: Vec<&'static str> = choice.words().collect();
            command.arg(
                Arg::new(choice.setting.key())
                    .long(choice.flag())
                    .value_name(words.join("|"))
                    .help(choice.setting.help())
                    .action(ArgAction::Set)
                    // The engine's own sentence for a wrong word, as the config file gets it.
                    .value_parser(move |word: &str| {
                        let mut scratch = ExperimentDraft::default();
                        choice
                            .read_into(&mut scratch, word)
                            .map(|()| word.to_owned())
                    }),
            )
        })
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

impl FromArgMatches for ChoiceFlags {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = Self::default();
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        for choice in CHOICES {
            if let Some(word) = matches.get_one::<String>(choice.setting.key()) {
                self.given.retain(|(c, _)| c.setting != choice.setting);
                self.given.push((choice, word.clone()));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Both {
        #[command(flatten)]
        training: NumberFlags<Training>,
        #[command(flatten)]
        augmentation: NumberFlags<Augmentation>,
        #[command(flatten)]
        choices: ChoiceFlags,
    }

    #[test]
    fn every_number_has_its_flag_and_the_flags_set_the_draft() {
        let command = Both::command_for_test();
        for number in NUMBERS {
            let flag = number.flag();
            let arg = command
                .get_arguments()
                .find(|a| a.get_long() == Some(flag.as_str()));
            assert!(arg.is_some(), "no --{flag}");
        }
        let parsed = Both::try_parse_from([
            "kiln",
            "--lr",
            "0.05",
            "--batch",
            "32",
            "--brightness",
            "0.2",
        ])
        .unwrap();
        let mut draft = ExperimentDraft::default();
        parsed.training.apply(&mut draft).unwrap();
        parsed.augmentation.apply(&mut draft).unwrap();
        assert_eq!(
            (draft.lr, draft.batch_size, draft.brightness),
            (0.05, 32, 0.2)
        );
        assert!(parsed.training.gave(Setting::BatchSize));
        assert!(!parsed.training.gave(Setting::Epochs));
    }

    #[test]
    fn every_choice_has_its_flag_with_its_words_and_a_wrong_word_is_refused() {
        let parsed =
            Both::try_parse_from(["kiln", "--monitor", "val-accuracy", "--keep", "last"]).unwrap();
        let mut draft = ExperimentDraft::default();
        parsed.choices.apply(&mut draft).unwrap();
        assert_eq!(draft.monitor.to_string(), "val-accuracy");
        assert_eq!(draft.keep.to_string(), "last");
        let error = Both::try_parse_from(["kiln", "--loss", "cosine"]).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("--loss <logits|probabilities>"), "{text}");
        assert!(text.contains("expected logits or probabilities"), "{text}");
    }

    #[test]
    fn a_number_that_does_not_read_is_refused_with_its_flag_named() {
        let error = Both::try_parse_from(["kiln", "--epochs", "many"]).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("--epochs <N>"), "{text}");
        assert!(text.contains("'many' is not a whole number"), "{text}");
    }

    impl Both {
        fn command_for_test() -> Command {
            <Self as clap::CommandFactory>::command()
        }
    }
}
