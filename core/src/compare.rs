//! Runs side by side: which settings differ, the final figures with their differences, and the
//! spread over seeds, so a real gap can be told from seed noise.

use std::fmt::Write as _;

use crate::plot::{Settings, describe, legend_labels};
use crate::run_folder::RunHistory;
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
    /// The settings that differ: name and one value per run (`-` where it does not apply).
    pub settings: Vec<(&'static str, Vec<String>)>,
    /// Final figures and speed, one value per run.
    pub figures: Vec<Figure>,
    /// Groups of two or more runs that differ only in the seed.
    pub seed_groups: Vec<SeedGroup>,
}

fn final_test_accuracy(run: &RunHistory) -> Option<f64> {
    run.summary
        .as_ref()
        .and_then(|s| s.final_test_accuracy)
        .or_else(|| run.epochs.last().and_then(|e| e.test_accuracy))
}

/// The name of the row that says what each run's epochs were evaluated on.
pub const EVALUATED_ON: &str = "epochs evaluated on";

/// Reads one phase's milliseconds out of a step profile.
type PhaseMs = fn(&StepProfile) -> f64;

/// Compares `runs`; the first is the reference the differences are taken against.
pub fn compare(runs: &[&RunHistory]) -> Comparison {
    let described: Vec<Option<Settings>> = runs
        .iter()
        .map(|r| r.config.as_ref().map(describe))
        .collect();
    let field_count = described.iter().flatten().map(Vec::len).next().unwrap_or(0);
    let mut settings = Vec::new();
    for i in 0..field_count {
        let values: Vec<String> = described
            .iter()
            .map(|d| {
                d.as_ref()
                    .and_then(|d| d[i].1.clone())
                    .unwrap_or_else(|| "-".to_owned())
            })
            .collect();
        let mut distinct = values.clone();
        distinct.sort();
        distinct.dedup();
        if distinct.len() > 1 {
            let name = described
                .iter()
                .flatten()
                .map(|d| d[i].0)
                .next()
                .unwrap_or("");
            settings.push((name, values));
        }
    }
    let summary = |f: fn(&crate::train::RunSummary) -> Option<f64>| -> Vec<Option<f64>> {
        runs.iter()
            .map(|r| r.summary.as_ref().and_then(f))
            .collect()
    };
    let percent = |v: Vec<Option<f64>>| v.into_iter().map(|x| x.map(|x| x * 100.0)).collect();
    let mut figures = vec![
        Figure {
            name: "final test accuracy (%)",
            values: runs
                .iter()
                .map(|r| final_test_accuracy(r).map(|a| a * 100.0))
                .collect(),
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
            values: percent(summary(|s| s.final_train_accuracy)),
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
    ];
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
    Comparison {
        labels: legend_labels(runs),
        folders: runs.iter().map(|r| r.folder_name()).collect(),
        validated_on: runs.iter().map(|r| r.validated_on()).collect(),
        settings,
        figures,
        seed_groups: seed_groups(runs, &described),
    }
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
            let mut row = vec![(*name).to_owned()];
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
                train_loss: 1.0,
                train_accuracy: 0.5,
                val_loss: None,
                val_accuracy: None,
                test_loss: Some(0.7),
                test_accuracy: Some(accuracy),
                epoch_secs: 1.0,
                eval_secs: 0.1,
                samples_per_sec: speed,
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
            vec![("lr", vec!["0.01".to_owned(), "0.1".to_owned()])]
        );
        let accuracy = &comparison.figures[0];
        assert_eq!(accuracy.values, vec![Some(80.0), Some(85.0)]);
        let text = comparison.to_text();
        assert!(text.contains("85.00 (+5.00)"), "{text}");
        assert!(text.contains("1100 (+100)"), "{text}");
        assert!(comparison.seed_groups.is_empty());
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
