//! Pruning a sweep's trials that are clearly behind, with epochs as the budget: the median
//! stopping rule (Golovin et al., 2017, as Optuna's `MedianPruner`) and asynchronous successive
//! halving (ASHA, Li et al., 2018, as Optuna's `SuccessiveHalvingPruner`). Off unless a
//! `[sweep]` table asks (`prune = "median"` or `"asha"`, or a table with the rule's settings).
//!
//! Every trial reports its held-out accuracy after each epoch to one board the sweep's trials
//! share; a trial folder's `epochs.csv` fills the board when a sweep resumes. A pruned trial has
//! completed: its summary names the rule and the epoch, and it is not run again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::run_folder::RunHistory;
use crate::train::{EpochJudge, Pruned, RunOutcome};

/// A rule that ends trials that are behind the others at the same epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PruneRule {
    /// End a trial whose best accuracy so far is below the median of the finished trials'
    /// accuracies at the same epoch.
    Median {
        /// Trials that must finish before any is pruned.
        startup_trials: usize,
        /// Epochs every trial trains before it can be pruned.
        warmup_epochs: usize,
    },
    /// At each rung (epoch `min_epochs`, then each `reduction` times as many), go on only in
    /// the top 1/`reduction` of the trials that reached that rung so far.
    Asha {
        /// The first rung's epoch.
        min_epochs: usize,
        /// How much fewer trials each rung keeps, and how much longer the next rung is.
        reduction: usize,
    },
}

impl PruneRule {
    /// The rule's word in a config and a summary.
    pub fn word(self) -> &'static str {
        match self {
            Self::Median { .. } => "median",
            Self::Asha { .. } => "asha",
        }
    }

    /// Reads `prune = "median" | "asha"` or `prune = { rule = …, <its settings> }`.
    pub fn from_toml(value: &toml::Value) -> Result<Self, String> {
        let (rule, table) = match value {
            toml::Value::String(rule) => (rule.as_str(), toml::Table::new()),
            toml::Value::Table(table) => match table.get("rule").and_then(|r| r.as_str()) {
                Some(rule) => (rule, table.clone()),
                None => {
                    return Err(
                        "a prune table names its rule: prune = { rule = \"median\" } or { rule = \"asha\" }".into(),
                    );
                }
            },
            other => {
                return Err(format!(
                    "prune = {other} is not a rule; use \"median\" or \"asha\""
                ));
            }
        };
        let whole = |key: &str, default: usize, least: usize| -> Result<usize, String> {
            match table.get(key) {
                None => Ok(default),
                Some(value) => value
                    .as_integer()
                    .and_then(|n| usize::try_from(n).ok())
                    .filter(|n| *n >= least)
                    .ok_or_else(|| {
                        format!("prune's `{key}` is a whole number of at least {least}")
                    }),
            }
        };
        let (parsed, known): (Self, &[&str]) = match rule {
            "median" => (
                Self::Median {
                    startup_trials: whole("startup_trials", 5, 1)?,
                    warmup_epochs: whole("warmup_epochs", 0, 0)?,
                },
                &["rule", "startup_trials", "warmup_epochs"],
            ),
            "asha" => (
                Self::Asha {
                    min_epochs: whole("min_epochs", 1, 1)?,
                    reduction: whole("reduction", 3, 2)?,
                },
                &["rule", "min_epochs", "reduction"],
            ),
            other => {
                return Err(format!(
                    "prune = \"{other}\" is not a rule Kiln knows; use \"median\" or \"asha\""
                ));
            }
        };
        if let Some(unknown) = table.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(format!(
                "the {rule} rule has no `{unknown}`; it takes {}",
                known[1..].join(" and ")
            ));
        }
        Ok(parsed)
    }

    /// What the rule does, in a clause for the sweep's one-line description.
    pub fn describe(self) -> String {
        match self {
            Self::Median {
                startup_trials,
                warmup_epochs,
            } => format!(
                "pruning by the median rule (after {startup_trials} finished trials and {warmup_epochs} warm-up epochs)"
            ),
            Self::Asha {
                min_epochs,
                reduction,
            } => format!(
                "pruning by ASHA (rungs at epoch {min_epochs}, ×{reduction} each, the top 1/{reduction} going on)"
            ),
        }
    }
}

/// Every trial's held-out accuracy per epoch, shared by a sweep's trials.
#[derive(Debug, Default)]
pub struct PruneBoard {
    /// By trial (its place in the plan): its accuracy after each epoch, in order.
    curves: BTreeMap<usize, Vec<f64>>,
    /// Trials that trained to their end, neither pruned nor cut: the median rule's yardstick.
    finished: BTreeSet<usize>,
}

impl PruneBoard {
    /// The board of the trials whose run `folders` (by place in the plan) exist.
    pub fn read(folders: &[Option<PathBuf>]) -> Self {
        let mut board = Self::default();
        for (i, folder) in folders.iter().enumerate() {
            let Some(history) = folder.as_deref().and_then(|f| RunHistory::load(f).ok()) else {
                continue;
            };
            let curve: Vec<f64> = history
                .epochs
                .iter()
                .map_while(|row| row.val_accuracy.or(row.test_accuracy))
                .collect();
            board.curves.insert(i + 1, curve);
            if history
                .summary
                .is_some_and(|s| s.outcome == RunOutcome::Completed && s.pruned.is_none())
            {
                board.finished.insert(i + 1);
            }
        }
        board
    }

    /// Records how trial `trial` ended: whether it trained to its end unpruned.
    pub fn finish(&mut self, trial: usize, trained_to_its_end: bool) {
        if trained_to_its_end {
            self.finished.insert(trial);
        }
    }

    /// Records trial `trial`'s accuracy after `epoch` (1-based), forgetting any later epochs a
    /// resumed trial trains again.
    fn report(&mut self, trial: usize, epoch: usize, accuracy: f64) {
        let curve = self.curves.entry(trial).or_default();
        curve.truncate(epoch - 1);
        while curve.len() < epoch - 1 {
            curve.push(f64::NAN);
        }
        curve.push(accuracy);
    }

    /// The accuracies after `epoch` of `trials` that reached it.
    fn at_epoch<'a>(&self, epoch: usize, trials: impl Iterator<Item = &'a usize>) -> Vec<f64> {
        trials
            .filter_map(|t| self.curves.get(t)?.get(epoch - 1).copied())
            .filter(|v| v.is_finite())
            .collect()
    }

    /// What `rule` says of `trial` after `epoch`.
    fn verdict(&self, rule: PruneRule, trial: usize, epoch: usize) -> Option<Pruned> {
        let curve = self.curves.get(&trial)?;
        let value = *curve.get(epoch - 1)?;
        let pct = |v: f64| format!("{:.2} %", 100.0 * v);
        match rule {
            PruneRule::Median {
                startup_trials,
                warmup_epochs,
            } => {
                if self.finished.len() < startup_trials || epoch <= warmup_epochs {
                    return None;
                }
                let others: Vec<&usize> = self.finished.iter().filter(|t| **t != trial).collect();
                let mut values = self.at_epoch(epoch, others.into_iter());
                let median = median(&mut values)?;
                let best = curve
                    .iter()
                    .take(epoch)
                    .copied()
                    .filter(|v| v.is_finite())
                    .fold(f64::NEG_INFINITY, f64::max);
                (best < median).then(|| Pruned {
                    rule: rule.word().into(),
                    after_epoch: epoch,
                    reason: format!(
                        "its best held-out accuracy by then, {}, is below the median at epoch {epoch} of {} finished trials, {}",
                        pct(best),
                        values.len(),
                        pct(median)
                    ),
                })
            }
            PruneRule::Asha {
                min_epochs,
                reduction,
            } => {
                let mut rung = min_epochs;
                while rung < epoch {
                    rung = rung.saturating_mul(reduction);
                }
                if rung != epoch {
                    return None;
                }
                let mut competing = self.at_epoch(epoch, self.curves.keys());
                competing.sort_by(|a, b| b.total_cmp(a));
                // Optuna's rule: the first trials at a rung, too few for a top 1/η, go on
                // only when they lead it.
                let kept = (competing.len() / reduction).max(1);
                let cut = competing[kept - 1];
                (value < cut).then(|| Pruned {
                    rule: rule.word().into(),
                    after_epoch: epoch,
                    reason: format!(
                        "its held-out accuracy at the rung of epoch {epoch}, {}, is outside the top {kept} of the {} trials that reached it (the cut is {})",
                        pct(value),
                        competing.len(),
                        pct(cut)
                    ),
                })
            }
        }
    }
}

/// The median of `values` (the mean of the middle two for an even count); `None` when empty.
fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}

/// One trial's judge: reports each epoch to the shared board and asks the rule.
pub struct TrialJudge {
    /// The rule.
    pub rule: PruneRule,
    /// The trial's place in the plan.
    pub trial: usize,
    /// The board the sweep's trials share.
    pub board: Arc<Mutex<PruneBoard>>,
}

impl EpochJudge for TrialJudge {
    fn judge(&mut self, epoch: usize, evaluation: Option<(f64, f64)>) -> Option<Pruned> {
        let (_, accuracy) = evaluation?;
        let mut board = self.board.lock().ok()?;
        board.report(self.trial, epoch, accuracy);
        board.verdict(self.rule, self.trial, epoch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A board where trials 1… have these curves, every one finished.
    fn board(curves: &[&[f64]]) -> PruneBoard {
        let mut board = PruneBoard::default();
        for (i, curve) in curves.iter().enumerate() {
            for (e, v) in curve.iter().enumerate() {
                board.report(i + 1, e + 1, *v);
            }
            board.finish(i + 1, true);
        }
        board
    }

    fn judge_at(
        board: &mut PruneBoard,
        rule: PruneRule,
        trial: usize,
        curve: &[f64],
    ) -> Option<Pruned> {
        curve.iter().enumerate().find_map(|(e, v)| {
            board.report(trial, e + 1, *v);
            board.verdict(rule, trial, e + 1)
        })
    }

    const MEDIAN: PruneRule = PruneRule::Median {
        startup_trials: 3,
        warmup_epochs: 1,
    };

    #[test]
    fn the_median_rule_prunes_a_trial_whose_best_so_far_is_below_the_finished_trials_median() {
        let mut board = board(&[&[0.5, 0.7, 0.8], &[0.4, 0.6, 0.7], &[0.6, 0.8, 0.9]]);
        // Epoch 1 is warm-up; at epoch 2 the median of 0.7, 0.6, 0.8 is 0.7 and 0.55 < 0.7.
        let pruned = judge_at(&mut board, MEDIAN, 4, &[0.1, 0.55, 0.9]).expect("behind at epoch 2");
        assert_eq!((pruned.rule.as_str(), pruned.after_epoch), ("median", 2));
        assert!(
            pruned.reason.contains("55.00 %") && pruned.reason.contains("70.00 %"),
            "{}",
            pruned.reason
        );
        // A trial level with the median at every epoch goes on.
        assert_eq!(judge_at(&mut board, MEDIAN, 5, &[0.5, 0.7, 0.8]), None);
    }

    #[test]
    fn the_median_rule_waits_for_its_startup_trials_and_counts_no_unfinished_one() {
        let mut board = board(&[&[0.9, 0.9], &[0.9, 0.9]]);
        board.report(3, 1, 0.95);
        board.report(3, 2, 0.95);
        // Two finished (and one still running): fewer than three, so nothing is pruned.
        assert_eq!(judge_at(&mut board, MEDIAN, 4, &[0.1, 0.1]), None);
        board.finish(3, true);
        assert!(judge_at(&mut board, MEDIAN, 5, &[0.1, 0.1]).is_some());
    }

    #[test]
    fn asha_keeps_the_top_third_at_each_rung_and_judges_only_at_rungs() {
        let asha = PruneRule::Asha {
            min_epochs: 1,
            reduction: 3,
        };
        let mut board = PruneBoard::default();
        // The first trial leads its rung alone; the second, behind it, is cut at epoch 1.
        assert_eq!(judge_at(&mut board, asha, 1, &[0.5, 0.6, 0.7, 0.8]), None);
        let second = judge_at(&mut board, asha, 2, &[0.4, 0.9]).expect("behind at the first rung");
        assert_eq!(second.after_epoch, 1);
        assert!(
            second.reason.contains("top 1 of the 2 trials"),
            "{}",
            second.reason
        );
        // Six trials at rung 1 keep the top two; a third-best goes.
        for (trial, v) in [(3, 0.45), (4, 0.2), (5, 0.3)] {
            let _ = judge_at(&mut board, asha, trial, &[v]);
        }
        assert!(judge_at(&mut board, asha, 6, &[0.44]).is_some());
        assert_eq!(
            judge_at(&mut board, asha, 7, &[0.46, 0.1]),
            None,
            "epoch 2 is no rung"
        );
        // Epoch 3 is the next rung: trial 8's 0.1 there is behind trial 1's 0.7.
        assert!(judge_at(&mut board, asha, 8, &[0.9, 0.1, 0.1]).is_some());
    }

    #[test]
    fn a_prune_setting_reads_its_rule_and_refuses_what_it_does_not_take() {
        let read = |text: &str| {
            let table: toml::Table = toml::from_str(&format!("prune = {text}")).unwrap();
            PruneRule::from_toml(&table["prune"])
        };
        assert_eq!(
            read("\"asha\""),
            Ok(PruneRule::Asha {
                min_epochs: 1,
                reduction: 3
            })
        );
        assert_eq!(
            read("{ rule = \"median\", startup_trials = 2, warmup_epochs = 3 }"),
            Ok(PruneRule::Median {
                startup_trials: 2,
                warmup_epochs: 3
            })
        );
        for (text, expected) in [
            ("\"hyperband\"", "not a rule Kiln knows"),
            (
                "{ rule = \"asha\", reduction = 1 }",
                "`reduction` is a whole number of at least 2",
            ),
            (
                "{ rule = \"median\", min_epochs = 2 }",
                "the median rule has no `min_epochs`",
            ),
            ("{ min_epochs = 2 }", "names its rule"),
            ("3", "is not a rule"),
        ] {
            let error = read(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }
}
