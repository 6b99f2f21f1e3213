//! What would test a parting's likely cause: for two Kiln runs, `kiln explain` between them;
//! for a Kiln run beside another framework's, the Kiln run again under that framework's
//! defaults (trained once, or explained setting by setting against the run as it was).

use std::path::PathBuf;

use super::Parting;
use crate::config::{self, ExperimentDraft, Flavour};
use crate::run_folder::RunHistory;

/// A run that would test where a parting comes from, offered beside it.
#[derive(Debug, Clone, PartialEq)]
pub enum CauseTest {
    /// Both runs are Kiln's and differ in settings that change what they learn: `kiln explain`
    /// splits the gap between those settings.
    Explain {
        /// The reference run's folder (A).
        a: PathBuf,
        /// The parted run's folder (B).
        b: PathBuf,
    },
    /// One run is another framework's: the Kiln run under that framework's defaults is what
    /// the other framework would have trained, were the loop and the data the same.
    Flavour {
        /// The Kiln run's folder.
        run: PathBuf,
        /// Its config as it trained.
        base: Box<ExperimentDraft>,
        /// Its config under the other framework's defaults.
        flavoured: Box<ExperimentDraft>,
        /// Whose defaults.
        flavour: Flavour,
        /// The settings the defaults change, as `key (a → b)`.
        changes: Vec<String>,
    },
}

impl CauseTest {
    /// One sentence naming what it would run.
    pub fn describe(&self) -> String {
        match self {
            CauseTest::Explain { .. } => {
                "explain the difference setting by setting (kiln explain)".to_owned()
            }
            CauseTest::Flavour {
                flavour, changes, ..
            } => format!(
                "train the Kiln run with {}'s defaults ({})",
                flavour.name(),
                changes.join(", ")
            ),
        }
    }

    /// The command lines that run it.
    pub fn commands(&self) -> Vec<String> {
        match self {
            CauseTest::Explain { a, b } => {
                vec![format!("kiln explain {} {}", quoted(a), quoted(b))]
            }
            CauseTest::Flavour { run, flavour, .. } => {
                let config = quoted(&run.join(crate::run_folder::CONFIG_FILE));
                vec![
                    format!("kiln train --config {config} --flavour {}", flavour.word()),
                    format!("kiln explain {} --flavour {}", quoted(run), flavour.word()),
                ]
            }
        }
    }
}

/// A path as a shell reads it back: quoted when it holds anything but plain characters.
fn quoted(path: &std::path::Path) -> String {
    let text = path.display().to_string();
    let plain = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c));
    match plain {
        true => text,
        false => format!("'{}'", text.replace('\'', r"'\''")),
    }
}

/// The tests of `parting`'s likely cause between `runs[0]` and the run it names: none where
/// neither run has a config (two imported logs) or nothing would change.
pub fn cause_tests(runs: &[&RunHistory], parting: &Parting) -> Vec<CauseTest> {
    let (Some(a), Some(b)) = (runs.first(), runs.get(parting.run)) else {
        return Vec::new();
    };
    match (&a.config, &b.config) {
        (Some(config_a), Some(config_b)) => {
            let differ = !config::differences(config_a, config_b).causes.is_empty();
            differ
                .then(|| CauseTest::Explain {
                    a: a.path.clone(),
                    b: b.path.clone(),
                })
                .into_iter()
                .collect()
        }
        (Some(config), None) => flavour_tests(a, config, b),
        (None, Some(config)) => flavour_tests(b, config, a),
        (None, None) => Vec::new(),
    }
}

/// The Kiln run under the imported run's framework's defaults (both frameworks' where its log
/// does not say which framework wrote it), where they change something.
fn flavour_tests(
    kiln: &RunHistory,
    config: &ExperimentDraft,
    other: &RunHistory,
) -> Vec<CauseTest> {
    let framework = other.source.as_ref().map(|s| s.framework.as_str());
    let flavours = match framework.and_then(Flavour::of_framework) {
        Some(flavour) => vec![flavour],
        None => Flavour::ALL.to_vec(),
    };
    flavours
        .into_iter()
        .filter_map(|flavour| {
            let flavoured = flavour.apply(config);
            let changes: Vec<String> = config::differences(config, &flavoured)
                .causes
                .iter()
                .map(config::Difference::describe)
                .collect();
            (!changes.is_empty()).then(|| CauseTest::Flavour {
                run: kiln.path.clone(),
                base: Box::new(config.clone()),
                flavoured: Box::new(flavoured),
                flavour,
                changes,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::compare;
    use crate::run_folder::ImportedSource;

    fn curve(path: &str, accuracies: &[f64], config: Option<ExperimentDraft>) -> RunHistory {
        RunHistory {
            path: path.into(),
            config,
            ..crate::compare::parting::tests::run(accuracies)
        }
    }

    fn imported(framework: &str, accuracies: &[f64]) -> RunHistory {
        RunHistory {
            source: Some(ImportedSource {
                name: "training".to_owned(),
                framework: framework.to_owned(),
                source: "training.log".to_owned(),
                imported_at: "20261207-070000".to_owned(),
                hparams: Vec::new(),
                notes: Vec::new(),
            }),
            ..curve("runs/2-keras-training", accuracies, None)
        }
    }

    #[test]
    fn a_kiln_run_parted_from_a_keras_log_is_offered_again_under_keras_defaults() {
        let kiln = curve(
            "runs/1-mine",
            &[0.70, 0.74, 0.78],
            Some(ExperimentDraft::default()),
        );
        let keras = imported("Keras", &[0.78, 0.82, 0.84]);
        let comparison = compare(&[&kiln, &keras]);
        assert_eq!(comparison.partings.len(), 1);
        let [
            CauseTest::Flavour {
                run,
                flavour,
                changes,
                flavoured,
                ..
            },
        ] = comparison.cause_tests[0].as_slice()
        else {
            panic!("one Keras flavour test: {:?}", comparison.cause_tests);
        };
        assert_eq!(
            (run.as_path(), *flavour),
            ("runs/1-mine".as_ref(), Flavour::Keras)
        );
        assert!(changes.iter().any(|c| c.starts_with("init")), "{changes:?}");
        assert_eq!(
            **flavoured,
            Flavour::Keras.apply(&ExperimentDraft::default())
        );
        let text = comparison.to_text();
        assert!(
            text.contains("kiln train --config runs/1-mine/config.toml --flavour keras")
                && text.contains("kiln explain runs/1-mine --flavour keras"),
            "{text}"
        );
    }

    #[test]
    fn a_log_that_does_not_name_its_framework_is_offered_both_flavours() {
        let kiln = curve(
            "runs/1-mine",
            &[0.70, 0.78],
            Some(ExperimentDraft::default()),
        );
        let board = imported("TensorBoard", &[0.80, 0.88]);
        let tests = &compare(&[&board, &kiln]).cause_tests[0];
        let flavours: Vec<Flavour> = tests
            .iter()
            .filter_map(|t| match t {
                CauseTest::Flavour { flavour, .. } => Some(*flavour),
                CauseTest::Explain { .. } => None,
            })
            .collect();
        // The default draft already has PyTorch's defaults, so only Keras's change anything.
        assert_eq!(flavours, [Flavour::Keras]);
    }

    #[test]
    fn two_kiln_runs_that_part_are_offered_kiln_explain_and_seed_twins_nothing() {
        let draft = |lr: f64, seed: u64| ExperimentDraft {
            lr,
            seed,
            ..ExperimentDraft::default()
        };
        let a = curve("runs/a b", &[0.70, 0.72], Some(draft(0.001, 1)));
        let b = curve("runs/b", &[0.80, 0.85], Some(draft(0.01, 1)));
        let comparison = compare(&[&a, &b]);
        assert_eq!(
            comparison.cause_tests,
            [vec![CauseTest::Explain {
                a: "runs/a b".into(),
                b: "runs/b".into()
            }]]
        );
        assert!(
            comparison
                .to_text()
                .contains("kiln explain 'runs/a b' runs/b")
        );
        let twin = curve("runs/c", &[0.80, 0.85], Some(draft(0.001, 2)));
        let comparison = compare(&[&a, &twin]);
        assert_eq!(comparison.partings.len(), 1);
        assert_eq!(comparison.cause_tests, [Vec::<CauseTest>::new()]);
    }
}
