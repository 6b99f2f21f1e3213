//! A sweep read as one result: a row per setting with its figures over seeds, the best marked by
//! validation (never by test), and each other row's gap to it tested against seed noise with
//! Welch's t-test.

use std::path::{Path, PathBuf};

use crate::run_folder::RunHistory;
use crate::train::{RunOutcome, RunSummary};

use super::plan::{Axis, Sweep, setting_text};
use super::runner::{SweepError, open_sweep_folder, trial_folders};
use super::stats::{mean_std, welch_p};

/// The p-value at or above which a gap to the best is said to be within seed noise.
pub const NOISE_P: f64 = 0.05;

/// What a row's mean ± std is of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Mean over the seeds that finished.
    pub mean: f64,
    /// Sample standard deviation (0 for one seed).
    pub std: f64,
}

/// How a row compares with the best one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum VersusBest {
    /// It is the best by the validation figure.
    Best,
    /// Welch's t-test on the seeds' validation figures: its p-value.
    Tested {
        /// The two-sided p-value.
        p: f64,
    },
    /// One seed (here or in the best): seed noise cannot be measured.
    Untested,
}

impl VersusBest {
    /// What the table says: `best`, `within seed noise (p = 0.41)`, `apart (p = 0.003)`, or
    /// `one seed: untested`.
    pub fn describe(&self) -> String {
        match self {
            Self::Best => "best".to_string(),
            Self::Tested { p } if *p >= NOISE_P => format!("within seed noise (p = {p:.2})"),
            Self::Tested { p } => format!("apart (p = {p:.3})"),
            Self::Untested => "one seed: untested".to_string(),
        }
    }
}

/// One setting of a sweep and its figures over seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingRow {
    /// Its values as `key=value` words (`base` for the base config).
    pub setting: String,
    /// Its values, by axis.
    pub values: Vec<(String, toml::Value)>,
    /// Trials planned for it (one per seed).
    pub planned: usize,
    /// Trials of it that finished (pruned ones left out).
    pub finished: usize,
    /// Trials of it a pruning rule ended early: their figures, from fewer epochs, are left out.
    pub pruned: usize,
    /// The run folders of its trials that exist.
    pub folders: Vec<PathBuf>,
    /// The validation figure each finished seed reached (on test for runs validated on it).
    pub val_accuracy: Option<Spread>,
    /// Test accuracy over seeds.
    pub test_accuracy: Option<Spread>,
    /// Validation loss over seeds.
    pub val_loss: Option<Spread>,
    /// Training seconds per epoch over seeds.
    pub epoch_secs: Option<Spread>,
    /// Steady training images per second over seeds.
    pub samples_per_sec: Option<Spread>,
    /// The validation figures themselves, for the test against the best.
    pub val_samples: Vec<f64>,
    /// Each finished seed's test accuracy.
    pub test_samples: Vec<f64>,
    /// Each finished seed's training seconds per epoch.
    pub secs_samples: Vec<f64>,
    /// How it compares with the best.
    pub versus_best: Option<VersusBest>,
}

/// A sweep folder's table.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepReport {
    /// The folder.
    pub folder: PathBuf,
    /// The plan's one-line description.
    pub plan: String,
    /// One row per setting, in plan order.
    pub rows: Vec<SettingRow>,
    /// Whether the runs validated on the test set (their "validation" figure is test's).
    pub validated_on_test: bool,
    /// The axes the sweep varies, for its charts.
    pub axes: Vec<Axis>,
    /// The base config, every default written out: the value of an axis a row leaves alone.
    pub base: toml::Table,
}

impl SweepReport {
    /// Reads the sweep folder `folder`: its plan, and every trial's summary that exists.
    pub fn read(folder: &Path) -> Result<Self, SweepError> {
        let sweep = open_sweep_folder(folder)?;
        let folders = trial_folders(&sweep, folder);
        Ok(Self::of(&sweep, folder, &folders))
    }

    /// The report of `sweep` from its trials' run `folders` (as [`trial_folders`] finds them).
    pub fn of(sweep: &Sweep, folder: &Path, folders: &[Option<PathBuf>]) -> Self {
        let mut rows: Vec<SettingRow> = Vec::new();
        let mut summaries: Vec<Vec<RunSummary>> = Vec::new();
        for (trial, run) in sweep.trials.iter().zip(folders) {
            let text = trial.setting_text();
            let at = match rows.iter().position(|r| r.setting == text) {
                Some(at) => at,
                None => {
                    rows.push(empty_row(&trial.setting));
                    summaries.push(Vec::new());
                    rows.len() - 1
                }
            };
            rows[at].planned += 1;
            let Some(run) = run else { continue };
            rows[at].folders.push(run.clone());
            let summary = RunHistory::load(run).ok().and_then(|h| h.summary);
            match summary.filter(|s| s.outcome == RunOutcome::Completed) {
                Some(summary) if summary.pruned.is_some() => rows[at].pruned += 1,
                Some(summary) => summaries[at].push(summary),
                None => {}
            }
        }
        let validated_on_test = summaries
            .iter()
            .flatten()
            .any(|s| s.final_val_accuracy.is_none() && s.final_test_accuracy.is_some());
        for (row, finished) in rows.iter_mut().zip(&summaries) {
            fill(row, finished);
        }
        mark_best(&mut rows);
        Self {
            folder: folder.to_path_buf(),
            plan: sweep.describe(),
            rows,
            validated_on_test,
            axes: sweep.spec.axes.clone(),
            base: sweep.base.clone(),
        }
    }

    /// The name of the figure rows are ranked by: `validation`, or `test` for runs validated on
    /// the test set.
    pub fn figure_name(&self) -> &'static str {
        if self.validated_on_test {
            "test (validated on)"
        } else {
            "validation"
        }
    }

    /// The table as CSV: one row per setting, means and standard deviations in columns.
    pub fn to_csv(&self) -> String {
        let quote = |text: &str| format!("\"{}\"", text.replace('"', "\"\""));
        let mut text = String::from(
            "setting,planned,finished,val_accuracy_mean,val_accuracy_std,test_accuracy_mean,test_accuracy_std,val_loss_mean,val_loss_std,epoch_secs_mean,epoch_secs_std,samples_per_sec_mean,samples_per_sec_std,versus_best,pruned\n",
        );
        let pair = |spread: Option<Spread>| {
            spread.map_or_else(|| ",".to_string(), |s| format!("{},{}", s.mean, s.std))
        };
        for row in &self.rows {
            text.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{}\n",
                quote(&row.setting),
                row.planned,
                row.finished,
                pair(row.val_accuracy),
                pair(row.test_accuracy),
                pair(row.val_loss),
                pair(row.epoch_secs),
                pair(row.samples_per_sec),
                quote(&row.versus_best.map(|v| v.describe()).unwrap_or_default()),
                row.pruned,
            ));
        }
        text
    }
}

/// The order a sweep's table lists its settings in: the plan's, or best first by one figure
/// (rows without that figure last, in plan order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortBy {
    /// The order the plan lists its settings in.
    #[default]
    Plan,
    /// The highest mean validation figure first.
    Validation,
    /// The highest mean test accuracy first.
    Test,
    /// The lowest mean validation loss first.
    ValLoss,
    /// The fewest training seconds per epoch first.
    EpochSecs,
    /// The most training images per second first.
    Throughput,
}

impl SortBy {
    /// Every order with the word `kiln sweep show --sort` takes for it.
    pub const WORDS: [(SortBy, &'static str); 6] = [
        (SortBy::Plan, "plan"),
        (SortBy::Validation, "validation"),
        (SortBy::Test, "test"),
        (SortBy::ValLoss, "val-loss"),
        (SortBy::EpochSecs, "secs"),
        (SortBy::Throughput, "throughput"),
    ];

    /// How two rows compare in this order: by the figure, smaller key first, a row without it
    /// after one with it; equal throughout in the plan's order, which a stable sort then keeps.
    fn compare(self, a: &SettingRow, b: &SettingRow) -> std::cmp::Ordering {
        match (self.key(a), self.key(b)) {
            (Some(a), Some(b)) => a.total_cmp(&b),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
    }

    /// What a row is sorted on, smaller first; none where the row lacks the figure.
    fn key(self, row: &SettingRow) -> Option<f64> {
        match self {
            Self::Plan => None,
            Self::Validation => row.val_accuracy.map(|s| -s.mean),
            Self::Test => row.test_accuracy.map(|s| -s.mean),
            Self::ValLoss => row.val_loss.map(|s| s.mean),
            Self::EpochSecs => row.epoch_secs.map(|s| s.mean),
            Self::Throughput => row.samples_per_sec.map(|s| -s.mean),
        }
    }
}

impl std::str::FromStr for SortBy {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::WORDS
            .iter()
            .find(|(_, word)| *word == text.trim())
            .map(|(by, _)| *by)
            .ok_or_else(|| {
                let words: Vec<&str> = Self::WORDS.iter().map(|(_, word)| *word).collect();
                format!(
                    "`{text}` is no order of a sweep's table; use {}",
                    crate::settings::one_of(&words)
                )
            })
    }
}

impl SweepReport {
    /// Its rows in the order `by` gives; a stable sort, so ties keep the plan's order.
    pub fn sorted_rows(&self, by: SortBy) -> Vec<&SettingRow> {
        let mut rows: Vec<&SettingRow> = self.rows.iter().collect();
        rows.sort_by(|a, b| by.compare(a, b));
        rows
    }

    /// Lists its rows in the order `by` gives, for a table and its CSV alike.
    pub fn sort(&mut self, by: SortBy) {
        self.rows.sort_by(|a, b| by.compare(a, b));
    }
}

fn empty_row(setting: &[(String, toml::Value)]) -> SettingRow {
    SettingRow {
        setting: setting_text(setting),
        values: setting.to_vec(),
        planned: 0,
        finished: 0,
        pruned: 0,
        folders: Vec::new(),
        val_accuracy: None,
        test_accuracy: None,
        val_loss: None,
        epoch_secs: None,
        samples_per_sec: None,
        val_samples: Vec::new(),
        test_samples: Vec::new(),
        secs_samples: Vec::new(),
        versus_best: None,
    }
}

/// A row's figures from the summaries of its finished seeds.
fn fill(row: &mut SettingRow, finished: &[RunSummary]) {
    let spread = |values: Vec<f64>| mean_std(&values).map(|(mean, std)| Spread { mean, std });
    let of = |figure: fn(&RunSummary) -> Option<f64>| -> Vec<f64> {
        finished.iter().filter_map(figure).collect()
    };
    row.finished = finished.len();
    // The figure the run chose its model by: validation's, or test's where it validated on test.
    row.val_samples = of(|s| s.final_val_accuracy.or(s.final_test_accuracy));
    row.val_accuracy = spread(row.val_samples.clone());
    row.test_samples = of(|s| s.final_test_accuracy);
    row.test_accuracy = spread(row.test_samples.clone());
    row.val_loss = spread(of(|s| s.final_val_loss.or(s.final_test_loss)));
    row.secs_samples = of(|s| Some(s.mean_epoch_train_secs));
    row.epoch_secs = spread(row.secs_samples.clone());
    row.samples_per_sec = spread(of(|s| Some(s.steady_samples_per_sec)));
}

/// Marks the row with the best mean validation figure, and tests every other against it.
fn mark_best(rows: &mut [SettingRow]) {
    let best = rows
        .iter()
        .enumerate()
        .filter_map(|(i, row)| row.val_accuracy.map(|s| (i, s.mean)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i);
    let Some(best) = best else { return };
    let best_samples = rows[best].val_samples.clone();
    for (i, row) in rows.iter_mut().enumerate() {
        if row.val_accuracy.is_none() {
            continue;
        }
        row.versus_best = Some(if i == best {
            VersusBest::Best
        } else {
            match welch_p(&row.val_samples, &best_samples) {
                Some(p) => VersusBest::Tested { p },
                None => VersusBest::Untested,
            }
        });
    }
}
