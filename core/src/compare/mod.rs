//! Runs side by side: which settings differ, the final figures with their differences, and the
//! spread over seeds, so a real gap can be told from seed noise.

use std::fmt::Write as _;

mod cause_test;
mod parting;
pub use cause_test::{CauseTest, cause_tests};
pub use parting::{DEFAULT_NOISE_PCT, Parting, parting};

use crate::plot::{Settings, describe, legend_labels};
use crate::run_folder::{EpochRow, RunHistory};
use crate::selection::ValidatedOn;
use crate::train::StepProfile;

/// One figure compared across runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// What it is, with its unit.
    pub name: &'static str,
    /// One value per run; none where the run does not have it (no summary yet).
    pub values: Vec<Option<f64>>,
    /// Decimals to print.
    pub decimals: usize,
}

impl Figure {
    /// The value of run `index` as shown in a table, with its difference to the first run.
    pub fn cell(&self, index: usize) -> String {
        let prec = self.decimals;
        let reference = self.values.first().copied().flatten();
        match (self.values.get(index).copied().flatten(), reference) {
            (None, _) => "-".to_owned(),
            (Some(v), Some(r)) if index > 0 => format!("{v:.prec$} ({:+.prec$})", v - r),
            (Some(v), _) => format!("{v:.prec$}"),
        }
    }
}

/// Runs that differ only in their seed: the spread of their final test accuracy.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedGroup {
    /// Indexes of the runs, in the order given to [`compare`].
    pub runs: Vec<usize>,
    /// Mean final test accuracy, in percent.
    pub mean_accuracy_pct: f64,
    /// Sample standard deviation of the final test accuracy, in percent points.
    pub std_accuracy_pct: f64,
}

/// What [`compare`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// One label per run, naming what differs (the plots' legend).
    pub labels: Vec<String>,
    /// Each run's folder name, which tells runs apart when their settings do not.
    pub folders: Vec<String>,
    /// What each run's epochs were evaluated on; always shown, since a run validated on test
    /// chose its epoch on the figure it reports.
    pub validated_on: Vec<ValidatedOn>,
    /// The settings that differ: name and one value per run (`-` where it does not apply, or
    /// an imported run's log does not say). Imported runs' hyperparameters sit in the rows of
    /// the Kiln settings they name (`learning_rate` under `lr`), the others in rows of their own.
    pub settings: Vec<(String, Vec<String>)>,
    /// Final figures and speed, one value per run.
    pub figures: Vec<Figure>,
    /// Groups of two or more runs that differ only in the seed.
    pub seed_groups: Vec<SeedGroup>,
    /// Where each later run's evaluated accuracy parts from the first run's, for those that
    /// end apart by more than seed noise.
    pub partings: Vec<Parting>,
    /// What would test each parting's likely cause, beside the parting of the same index.
    pub cause_tests: Vec<Vec<CauseTest>>,
}

fn final_test_accuracy(run: &RunHistory) -> Option<f64> {
    run.summary
        .as_ref()
        .and_then(|s| s.final_test_accuracy)
        .or_else(|| run.epochs.last().and_then(|e| e.test_accuracy))
}

/// `figure` of the last epoch that has it.
fn last_epoch(run: &RunHistory, figure: fn(&EpochRow) -> Option<f64>) -> Option<f64> {
    run.epochs.iter().rev().find_map(figure)
}

/// The name of the row that says what each run's epochs were evaluated on.
pub const EVALUATED_ON: &str = "epochs evaluated on";

/// Reads one phase's milliseconds out of a step profile.
type PhaseMs = fn(&StepProfile) -> f64;

/// The final figures and speed of `runs`, one row each, a value per run (none where a run lacks
/// it), before rows that no run has are dropped.
fn result_figures(runs: &[&RunHistory]) -> Vec<Figure> {
    let summary = |f: fn(&crate::train::RunSummary) -> Option<f64>| -> Vec<Option<f64>> {
        runs.iter()
            .map(|r| r.summary.as_ref().and_then(f))
            .collect()
    };
    let percent = |v: Vec<Option<f64>>| v.into_iter().map(|x| x.map(|x| x * 100.0)).collect();
    vec![
        Figure {
            name: "final test accuracy (%)",
            values: runs
                .iter()
                .map(|r| final_test_accuracy(r).map(|a| a * 100.0))
                .collect(),
            decimals: 2,
        },
        // A run on several labels per image: its accuracy counts label decisions, and these
        // say more.
        Figure {
            name: "test mAP",
            values: summary(|s| s.label_report.as_ref().map(|r| r.mean_average_precision)),
            decimals: 4,
        },
        Figure {
            name: "test micro F1",
            values: summary(|s| s.label_report.as_ref().map(|r| r.micro_avg.f1)),
            decimals: 4,
        },
        Figure {
            name: "test subset accuracy (%)",
            values: percent(summary(|s| {
                s.label_report.as_ref().map(|r| r.subset_accuracy)
            })),
            decimals: 2,
        },
        Figure {
            name: "best test accuracy (%)",
            values: percent(summary(|s| s.best_test_accuracy)),
            decimals: 2,
        },
        Figure {
            name: "best validation accuracy (%)",
            values: percent(summary(|s| s.best_val_accuracy)),
            decimals: 2,
        },
        // The last evaluated epoch's: the one figure a run imported from a log has beside its
        // training figures.
        Figure {
            name: "final validation accuracy (%)",
            values: runs
                .iter()
                .map(|r| last_epoch(r, |e| e.val_accuracy).map(|a| a * 100.0))
                .collect(),
            decimals: 2,
        },
        Figure {
            name: "final validation loss",
            values: runs.iter().map(|r| last_epoch(r, |e| e.val_loss)).collect(),
            decimals: 4,
        },
        Figure {
            name: "best epoch",
            values: summary(|s| s.best_epoch.map(|e| e as f64)),
            decimals: 0,
        },
        Figure {
            name: "kept epoch",
            values: summary(|s| s.kept_epoch.map(|e| e as f64)),
            decimals: 0,
        },
        Figure {
            name: "final test loss",
            values: runs
                .iter()
                .map(|r| {
                    r.summary
                        .as_ref()
                        .and_then(|s| s.final_test_loss)
                        .or_else(|| r.epochs.last().and_then(|e| e.test_loss))
                })
                .collect(),
            decimals: 4,
        },
        Figure {
            name: "final train accuracy (%)",
            values: runs
                .iter()
                .map(|r| {
                    r.summary
                        .as_ref()
                        .and_then(|s| s.final_train_accuracy)
                        .or_else(|| last_epoch(r, |e| e.train_accuracy))
                        .map(|a| a * 100.0)
                })
                .collect(),
            decimals: 2,
        },
        Figure {
            name: "warm-up (s)",
            values: summary(|s| Some(s.warmup_secs)),
            decimals: 2,
        },
        Figure {
            name: "steady samples/s",
            values: summary(|s| s.steady_rate()),
            decimals: 0,
        },
        Figure {
            name: "train seconds per epoch",
            values: summary(|s| Some(s.mean_epoch_train_secs)),
            decimals: 2,
        },
    ]
}

/// Compares `runs`; the first is the reference the differences are taken against.
pub fn compare(runs: &[&RunHistory]) -> Comparison {
    let described: Vec<Option<Settings>> = runs
        .iter()
        .map(|r| r.config.as_ref().map(describe))
        .collect();
    let settings = differing_settings(runs, &described);
    let mut figures = result_figures(runs);
    // A figure no run has (best validation accuracy of runs validated on test) says nothing.
    figures.retain(|f| f.values.iter().any(Option::is_some));
    // Where a step's time goes, once any run was trained in profiling mode: the question after
    // "which is slower" is "in which phase".
    let profiles: Vec<Option<&StepProfile>> = runs
        .iter()
        .map(|r| r.summary.as_ref().and_then(|s| s.profile.as_ref()))
        .collect();
    if profiles.iter().any(Option::is_some) {
        let phases: [(&'static str, PhaseMs); 5] = [
            ("profiled data (ms/step)", |p| p.data_ms),
            ("profiled forward (ms/step)", |p| p.forward_ms),
            ("profiled backward (ms/step)", |p| p.backward_ms),
            ("profiled optimizer (ms/step)", |p| p.optimizer_ms),
            ("profiled host sync (ms/step)", |p| p.host_sync_ms),
        ];
        for (name, phase) in phases {
            figures.push(Figure {
                name,
                values: profiles.iter().map(|p| p.map(phase)).collect(),
                decimals: 3,
            });
        }
    }
    let seed_groups = seed_groups(runs, &described);
    let partings = partings(runs, &seed_groups);
    let cause_tests = partings.iter().map(|p| cause_tests(runs, p)).collect();
    Comparison {
        labels: legend_labels(runs),
        folders: runs.iter().map(|r| r.folder_name()).collect(),
        validated_on: runs.iter().map(|r| r.validated_on()).collect(),
        settings,
        figures,
        seed_groups,
        partings,
        cause_tests,
    }
}

/// Where each run after the first parts from it, with twice the widest seed spread as noise
/// where runs that differ only in their seed measured one, else [`DEFAULT_NOISE_PCT`].
fn partings(runs: &[&RunHistory], seed_groups: &[SeedGroup]) -> Vec<Parting> {
    let seed_noise = seed_groups
        .iter()
        .map(|g| 2.0 * g.std_accuracy_pct)
        .fold(None, |widest: Option<f64>, noise| {
            Some(widest.map_or(noise, |w| w.max(noise)))
        });
    runs.iter()
        .enumerate()
        .skip(1)
        .filter_map(|(index, run)| {
            parting(
                runs[0],
                run,
                index,
                seed_noise.unwrap_or(DEFAULT_NOISE_PCT),
                seed_noise.is_some(),
            )
        })
        .collect()
}

/// Kiln's setting (its legend word) that an imported run's hyperparameter names, by the names
/// Keras, Lightning and training scripts give them; none for the others.
fn kiln_setting_of(hparam: &str) -> Option<&'static str> {
    let last = hparam
        .rsplit('.')
        .next()
        .unwrap_or(hparam)
        .to_ascii_lowercase();
    Some(match last.replace('-', "_").as_str() {
        "lr" | "learning_rate" | "learningrate" | "base_lr" | "initial_lr" => "lr",
        "batch_size" | "batchsize" | "bs" | "train_batch_size" => "batch",
        "epochs" | "max_epochs" | "num_epochs" | "n_epochs" => "epochs",
        "seed" | "random_seed" => "seed",
        "optimizer" | "optim" | "optimizer_name" => "optimizer",
        "weight_decay" | "wd" => "weight decay",
        "momentum" => "momentum",
        "model" | "arch" | "architecture" | "model_name" => "model",
        _ => return None,
    })
}

/// The rows of [`Comparison::settings`]: Kiln's settings, imported runs' hyperparameters and,
/// when a run was imported, the framework each came from. A row is kept when its values differ;
/// an imported run's unknown value differs from nothing (its log is silent, not different).
fn differing_settings(
    runs: &[&RunHistory],
    described: &[Option<Settings>],
) -> Vec<(String, Vec<String>)> {
    // (name, one value per run; None: not applicable or unknown)
    let mut rows: Vec<(String, Vec<Option<String>>)> = Vec::new();
    let field_count = described.iter().flatten().map(Vec::len).next().unwrap_or(0);
    for i in 0..field_count {
        let name = described
            .iter()
            .flatten()
            .map(|d| d[i].0)
            .next()
            .unwrap_or("");
        let values = described
            .iter()
            .map(|d| d.as_ref().and_then(|d| d[i].1.clone()))
            .collect();
        rows.push((name.to_owned(), values));
    }
    let imported = |index: usize| {
        runs[index]
            .source
            .as_ref()
            .filter(|_| described[index].is_none())
    };
    for (index, _) in runs.iter().enumerate() {
        let Some(source) = imported(index) else {
            continue;
        };
        for hparam in &source.hparams {
            let name = kiln_setting_of(&hparam.name).unwrap_or(&hparam.name);
            let row = match rows.iter().position(|(n, _)| n == name) {
                Some(row) => row,
                None => {
                    rows.push((name.to_owned(), vec![None; runs.len()]));
                    rows.len() - 1
                }
            };
            rows[row].1[index] = Some(hparam.value.clone());
        }
    }
    if (0..runs.len()).any(|i| runs[i].source.is_some()) {
        let frameworks = runs
            .iter()
            .map(|r| {
                Some(
                    r.source
                        .as_ref()
                        .map_or("Kiln", |s| s.framework.as_str())
                        .to_owned(),
                )
            })
            .collect();
        rows.insert(0, ("framework".to_owned(), frameworks));
    }
    rows.into_iter()
        .filter(|(_, values)| {
            let mut distinct: Vec<&str> = values
                .iter()
                .enumerate()
                .filter(|(index, value)| value.is_some() || imported(*index).is_none())
                .map(|(_, value)| value.as_deref().unwrap_or("-"))
                .collect();
            distinct.sort_unstable();
            distinct.dedup();
            distinct.len() > 1
        })
        .map(|(name, values)| {
            let shown = values
                .into_iter()
                .map(|value| value.unwrap_or_else(|| "-".to_owned()))
                .collect();
            (name, shown)
        })
        .collect()
}

/// Groups runs whose settings are equal but for the seed.
fn seed_groups(runs: &[&RunHistory], described: &[Option<Settings>]) -> Vec<SeedGroup> {
    let without_seed = |d: &Settings| -> Settings {
        d.iter()
            .filter(|(name, _)| *name != "seed")
            .cloned()
            .collect()
    };
    let mut groups: Vec<(Settings, Vec<usize>)> = Vec::new();
    for (index, d) in described.iter().enumerate() {
        let Some(d) = d else { continue };
        let key = without_seed(d);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(index),
            None => groups.push((key, vec![index])),
        }
    }
    groups
        .into_iter()
        .filter_map(|(_, members)| {
            let accuracies: Vec<f64> = members
                .iter()
                .filter_map(|&i| final_test_accuracy(runs[i]).map(|a| a * 100.0))
                .collect();
            if members.len() < 2 || accuracies.len() < 2 {
                return None;
            }
            let n = accuracies.len() as f64;
            let mean = accuracies.iter().sum::<f64>() / n;
            let variance = accuracies.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / (n - 1.0);
            Some(SeedGroup {
                runs: members,
                mean_accuracy_pct: mean,
                std_accuracy_pct: variance.sqrt(),
            })
        })
        .collect()
}

/// Per-epoch (x, mean − std, mean + std) of a seed band.
pub type Band = Vec<(f64, f64, f64)>;

/// Per epoch that every run has: x (mean over the runs of the epoch's last readback, in steps or
/// wall seconds), mean − std and mean + std of `value` (sample std). The band drawn for runs
/// that differ only in their seed.
pub fn seed_band(
    runs: &[&RunHistory],
    x_axis: crate::plot::XAxis,
    value: impl Fn(&crate::run_folder::EpochRow) -> Option<f64>,
) -> Band {
    let epochs = runs.iter().map(|r| r.epochs.len()).min().unwrap_or(0);
    let mut band = Vec::new();
    if runs.len() < 2 {
        return band;
    }
    for e in 0..epochs {
        let positions: Vec<f64> = runs
            .iter()
            .filter_map(|r| crate::plot::epoch_x(r, &r.epochs[e], x_axis))
            .collect();
        let values: Vec<f64> = runs.iter().filter_map(|r| value(&r.epochs[e])).collect();
        if positions.len() != runs.len()
            || values.len() != runs.len()
            || values.iter().any(|v| !v.is_finite())
        {
            continue;
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let std = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        band.push((positions.iter().sum::<f64>() / n, mean - std, mean + std));
    }
    band
}

impl Comparison {
    /// The comparison as an aligned text table, differences against the first run in brackets.
    pub fn to_text(&self) -> String {
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut header = vec!["".to_owned()];
        header.extend(self.folders.iter().cloned());
        rows.push(header);
        let mut evaluated = vec![EVALUATED_ON.to_owned()];
        evaluated.extend(self.validated_on.iter().map(|v| v.label().to_owned()));
        rows.push(evaluated);
        for (name, values) in &self.settings {
            let mut row = vec![name.clone()];
            row.extend(values.iter().cloned());
            rows.push(row);
        }
        for figure in &self.figures {
            let mut row = vec![figure.name.to_owned()];
            row.extend((0..figure.values.len()).map(|i| figure.cell(i)));
            rows.push(row);
        }
        let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                rows.iter()
                    .filter_map(|r| r.get(c))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut text = String::new();
        for row in &rows {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(c, cell)| format!("{cell:<width$}", width = widths[c]))
                .collect();
            let _ = writeln!(text, "{}", cells.join("  ").trim_end());
        }
        for group in &self.seed_groups {
            let names: Vec<&str> = group
                .runs
                .iter()
                .map(|&i| self.labels[i].as_str())
                .collect();
            let _ = writeln!(
                text,
                "\nseeds only differ between {}: final test accuracy {:.2} ± {:.2} % (mean ± std over {} runs); a gap smaller than about twice that is seed noise",
                names.join(", "),
                group.mean_accuracy_pct,
                group.std_accuracy_pct,
                group.runs.len()
            );
        }
        for (parting, tests) in self.partings.iter().zip(&self.cause_tests) {
            let _ = writeln!(
                text,
                "\nwhere the curves part: {}",
                parting.describe(&self.labels)
            );
            for test in tests {
                let _ = writeln!(text, "to test its likely cause, {}:", test.describe());
                for command in test.commands() {
                    let _ = writeln!(text, "  {command}");
                }
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ExperimentDraft;
    use crate::run_folder::EpochRow;
    use crate::train::RunSummary;

    fn run(name: &str, lr: f64, seed: u64, accuracy: f64, speed: f64) -> RunHistory {
        let mut summary = RunSummary::new("CPU", 10, 0.0, 0.0);
        summary.final_test_accuracy = Some(accuracy);
        summary.best_test_accuracy = Some(accuracy);
        summary.steady_samples_per_sec = speed;
        summary.warmup_secs = 0.5;
        RunHistory {
            path: format!("runs/1-{name}").into(),
            name: name.to_owned(),
            config: Some(ExperimentDraft {
                name: name.to_owned(),
                lr,
                seed,
                ..ExperimentDraft::default()
            }),
            summary: Some(summary),
            epochs: vec![EpochRow {
                epoch: 1,
                train_loss: Some(1.0),
                train_accuracy: Some(0.5),
                val_loss: None,
                val_accuracy: None,
                test_loss: Some(0.7),
                test_accuracy: Some(accuracy),
                epoch_secs: Some(1.0),
                eval_secs: Some(0.1),
                samples_per_sec: Some(speed),
            }],
            ..RunHistory::default()
        }
    }

    #[test]
    fn only_differing_settings_are_listed_with_differences_to_the_first_run() {
        let a = run("a", 0.01, 1, 0.80, 1000.0);
        let b = run("b", 0.1, 1, 0.85, 1100.0);
        let comparison = compare(&[&a, &b]);
        assert_eq!(
            comparison.settings,
            vec![("lr".to_owned(), vec!["0.01".to_owned(), "0.1".to_owned()])]
        );
        let accuracy = &comparison.figures[0];
        assert_eq!(accuracy.values, vec![Some(80.0), Some(85.0)]);
        let text = comparison.to_text();
        assert!(text.contains("85.00 (+5.00)"), "{text}");
        assert!(text.contains("1100 (+100)"), "{text}");
        assert!(comparison.seed_groups.is_empty());
    }

    #[test]
    fn multi_label_runs_are_compared_by_their_map_and_others_show_no_such_row() {
        use crate::results::multi_label::{LabelScores, report};
        let labelled = |name: &str, probabilities: Vec<f32>| {
            let mut run = run(name, 0.01, 1, 0.9, 1000.0);
            let scores = LabelScores {
                labels: 2,
                probabilities,
                truth: vec![vec![0], vec![1]],
            };
            if let Some(summary) = run.summary.as_mut() {
                summary.label_report = Some(report(&scores, &[0.5, 0.5]));
            }
            run
        };
        let a = labelled("a", vec![0.9, 0.1, 0.2, 0.8]);
        let b = labelled("b", vec![0.4, 0.6, 0.7, 0.3]);
        let comparison = compare(&[&a, &b]);
        let map = comparison
            .figures
            .iter()
            .find(|f| f.name == "test mAP")
            .expect("a mAP row");
        assert_eq!(map.values, vec![Some(1.0), Some(0.5)]);
        let subset = comparison
            .figures
            .iter()
            .find(|f| f.name == "test subset accuracy (%)")
            .expect("a subset accuracy row");
        assert_eq!(subset.values, vec![Some(100.0), Some(0.0)]);
        let plain = compare(&[&run("c", 0.01, 1, 0.8, 1.0), &run("d", 0.1, 1, 0.8, 1.0)]);
        assert!(plain.figures.iter().all(|f| f.name != "test mAP"));
    }

    #[test]
    fn runs_differing_only_in_seed_give_mean_and_spread() {
        let runs = [
            run("s1", 0.01, 1, 0.80, 1000.0),
            run("s2", 0.01, 2, 0.82, 1000.0),
            run("s3", 0.01, 3, 0.84, 1000.0),
            run("other", 0.1, 1, 0.90, 1000.0),
        ];
        let refs: Vec<&RunHistory> = runs.iter().collect();
        let comparison = compare(&refs);
        assert_eq!(comparison.seed_groups.len(), 1);
        let group = &comparison.seed_groups[0];
        assert_eq!(group.runs, vec![0, 1, 2]);
        assert!((group.mean_accuracy_pct - 82.0).abs() < 1e-9);
        assert!((group.std_accuracy_pct - 2.0).abs() < 1e-9);
        assert!(comparison.to_text().contains("82.00 ± 2.00 %"));
    }

    #[test]
    fn profiled_phases_are_compared_only_when_a_run_has_them() {
        let a = run("a", 0.01, 1, 0.80, 1000.0);
        let mut b = run("b", 0.1, 1, 0.85, 1100.0);
        let plain = compare(&[&a, &b]);
        assert!(!plain.figures.iter().any(|f| f.name.starts_with("profiled")));
        if let Some(summary) = b.summary.as_mut() {
            summary.profile = Some(StepProfile {
                mode: "profiling".into(),
                steps: 10,
                data_ms: 0.05,
                forward_ms: 0.9,
                backward_ms: 1.4,
                optimizer_ms: 0.35,
                host_sync_ms: 0.01,
            });
        }
        let profiled = compare(&[&a, &b]);
        let backward = profiled
            .figures
            .iter()
            .find(|f| f.name == "profiled backward (ms/step)")
            .expect("a backward row");
        assert_eq!(backward.values, vec![None, Some(1.4)]);
        assert!(profiled.to_text().contains("profiled forward (ms/step)"));
    }

    #[test]
    fn an_imported_runs_hyperparameters_sit_under_the_kiln_settings_they_name() {
        use crate::run_folder::{Hparam, ImportedSource};
        let kiln = run("a", 0.01, 1, 0.80, 1000.0);
        let hparam = |name: &str, value: &str| Hparam {
            name: name.to_owned(),
            value: value.to_owned(),
        };
        let keras = RunHistory {
            name: "keras".to_owned(),
            source: Some(ImportedSource {
                name: "training".to_owned(),
                framework: "Keras".to_owned(),
                source: "logs/training.log".to_owned(),
                imported_at: "20261207-070000".to_owned(),
                hparams: vec![
                    hparam("optimizer.learning_rate", "0.001"),
                    hparam("batch_size", "64"),
                    hparam("dropout", "0.2"),
                ],
                notes: Vec::new(),
            }),
            epochs: vec![EpochRow {
                epoch: 1,
                train_loss: Some(0.5),
                train_accuracy: None,
                val_loss: Some(0.4),
                val_accuracy: Some(0.86),
                test_loss: None,
                test_accuracy: None,
                epoch_secs: None,
                eval_secs: None,
                samples_per_sec: None,
            }],
            ..RunHistory::default()
        };
        let comparison = compare(&[&kiln, &keras]);
        let rows: Vec<(&str, Vec<&str>)> = comparison
            .settings
            .iter()
            .map(|(name, values)| (name.as_str(), values.iter().map(String::as_str).collect()))
            .collect();
        // The batch sizes agree, and what the log does not say (the model, the seed…) is no
        // difference: neither is listed.
        assert_eq!(
            rows,
            [
                ("framework", vec!["Kiln", "Keras"]),
                ("lr", vec!["0.01", "0.001"]),
                ("dropout", vec!["-", "0.2"]),
            ]
        );
        let figure = |name: &str| {
            comparison
                .figures
                .iter()
                .find(|f| f.name == name)
                .map(|f| f.values.clone())
        };
        assert_eq!(
            figure("final validation accuracy (%)"),
            Some(vec![None, Some(86.0)])
        );
        // Speed Kiln did not measure is unknown, not zero.
        assert_eq!(figure("steady samples/s"), Some(vec![Some(1000.0), None]));
    }

    #[test]
    fn a_run_without_summary_shows_dashes_not_zeros() {
        let a = run("a", 0.01, 1, 0.80, 1000.0);
        let mut b = run("b", 0.1, 1, 0.85, 1100.0);
        b.summary = None;
        let comparison = compare(&[&a, &b]);
        let speed = comparison
            .figures
            .iter()
            .find(|f| f.name == "steady samples/s")
            .unwrap();
        assert_eq!(speed.values[1], None);
        // The last epoch still gives the accuracy of a run that has no summary yet.
        assert_eq!(comparison.figures[0].values[1], Some(85.0));
    }
}
