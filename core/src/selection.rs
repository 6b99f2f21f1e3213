//! How a run chooses the model it keeps, honestly: each epoch is evaluated on a validation split
//! carved from the training images (or, for the parity presets, on the test split, and then
//! labelled so); the best epoch and early stopping are decided on that evaluation only; the test
//! split is measured once, at the end, on the weights the run keeps.
//!
//! ```text
//! Validation   where epochs are evaluated (config: validation = "split" | "test")
//! Monitor      the figure that picks the best epoch (val-loss | val-accuracy)
//! Keep         which weights the run keeps, saves and tests (best | last)
//! ValidatedOn  what a finished run was evaluated on, as summary.json and compare say it
//! Selection    the rule applied after each epoch; its state survives a resume
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::settings::choice;

choice! {
    /// Where each epoch is evaluated.
    Validation for Validation {
        /// A stratified validation split carved from the training images (`val_split`), or the
        /// data set's own `val/` folder.
        #[default]
        Split => "split", "a validation split",
        /// The test split, as Keras's `validation_data=(test_images, test_labels)` does: the
        /// parity presets reproduce that, and such runs are labelled "validated on test".
        Test => "test", "the test split (parity)",
    }
}

impl Validation {
    /// What a run keeps once its validation moves from `self` to `to`, where the move changes
    /// it: a preset validated on test keeps its last epoch, as the frameworks it matches do;
    /// with a validation split to choose on, the best epoch is what a run keeps.
    pub fn keep_after_switch_to(self, to: Validation) -> Option<Keep> {
        (self == Validation::Test && to == Validation::Split).then_some(Keep::Best)
    }
}

choice! {
    /// The evaluation figure that picks the best epoch and drives early stopping.
    Monitor for Monitor {
        /// Lower is better.
        #[default]
        ValLoss => "val-loss", "validation loss",
        /// Higher is better.
        ValAccuracy => "val-accuracy", "validation accuracy",
        /// Higher is better; for a data set of several labels per image: the mean over labels
        /// of their average precision on the validation images.
        ValMap => "val-map", "validation mAP",
    }
}

choice! {
    /// Which epoch's weights a run keeps: saved as model.bpk, tested, used by Try.
    Keep for Keep {
        /// The epoch the monitor liked best.
        #[default]
        Best => "best", "the best epoch",
        /// The last epoch trained.
        Last => "last", "the last epoch",
    }
}

/// What a run's epochs were evaluated on, as its summary records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ValidatedOn {
    /// A validation split apart from the test split: the honest case.
    Validation,
    /// The test split itself. Run folders written before validation splits existed read so.
    #[default]
    Test,
    /// Nothing (`val_split = 0`): no epoch was chosen, the last one is kept.
    Nothing,
}

impl ValidatedOn {
    /// How a person reads it beside a run: "validated on test" is the one that needs saying.
    pub fn label(self) -> &'static str {
        match self {
            Self::Validation => "validation split",
            Self::Test => "validated on test",
            Self::Nothing => "no validation",
        }
    }

    /// The split's name in a sentence or a chart legend.
    pub fn split_name(self) -> &'static str {
        match self {
            Self::Validation | Self::Nothing => "validation",
            Self::Test => "test",
        }
    }
}

/// The rule applied after each evaluated epoch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Selection {
    /// The figure watched.
    pub monitor: Monitor,
    /// The least change that counts as an improvement.
    pub min_delta: f64,
    /// Epochs without improvement before stopping; 0 never stops early.
    pub patience: usize,
}

/// Where a run stands in choosing its epoch; kept in each checkpoint so a resumed run chooses
/// as the uninterrupted run would have.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SelectionState {
    /// 1-based epoch of the best evaluation so far; 0 before any.
    pub best_epoch: usize,
    /// Its monitored figure.
    pub best_score: f64,
    /// Evaluated epochs since that one.
    pub epochs_since_best: usize,
}

/// What the rule says about one epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// The epoch is the best so far: its weights are the ones to keep.
    pub best: bool,
    /// Patience ran out: the run stops after this epoch.
    pub stop: bool,
}

impl Selection {
    /// Records `epoch`'s (1-based) evaluation, `None` when there is nothing to evaluate on
    /// (then every epoch is the best, being the newest, and the run never stops early). The
    /// evaluation is the loss and the figure a higher-is-better monitor watches: the accuracy,
    /// or for `val-map` the mAP.
    pub fn observe(
        &self,
        state: &mut SelectionState,
        epoch: usize,
        evaluation: Option<(f64, f64)>,
    ) -> Verdict {
        let Some((loss, accuracy)) = evaluation else {
            state.best_epoch = epoch;
            return Verdict {
                best: true,
                stop: false,
            };
        };
        let score = match self.monitor {
            Monitor::ValLoss => loss,
            Monitor::ValAccuracy | Monitor::ValMap => accuracy,
        };
        let improved = score.is_finite()
            && (state.best_epoch == 0
                || match self.monitor {
                    Monitor::ValLoss => score < state.best_score - self.min_delta,
                    Monitor::ValAccuracy | Monitor::ValMap => {
                        score > state.best_score + self.min_delta
                    }
                });
        if improved {
            state.best_epoch = epoch;
            state.best_score = score;
            state.epochs_since_best = 0;
        } else {
            state.epochs_since_best += 1;
        }
        Verdict {
            best: improved,
            stop: self.patience > 0 && state.epochs_since_best >= self.patience,
        }
    }
}

/// Why a run ended before its last epoch, as summary.json and the window say it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EarlyStop {
    /// The last epoch trained (1-based).
    pub after_epoch: usize,
    /// The best epoch (1-based).
    pub best_epoch: usize,
    /// The figure watched.
    pub monitor: Monitor,
    /// Epochs without improvement that ended it.
    pub patience: usize,
}

impl fmt::Display for EarlyStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let figure = match self.monitor {
            Monitor::ValLoss => "validation loss",
            Monitor::ValAccuracy => "validation accuracy",
            Monitor::ValMap => "validation mAP",
        };
        write!(
            f,
            "stopped early after epoch {}: {figure} had not improved for {} epochs since epoch {}",
            self.after_epoch, self.patience, self.best_epoch
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(monitor: Monitor, min_delta: f64, patience: usize) -> Selection {
        Selection {
            monitor,
            min_delta,
            patience,
        }
    }

    #[test]
    fn the_best_epoch_is_the_lowest_validation_loss_and_patience_counts_from_it() {
        let rule = rule(Monitor::ValLoss, 0.0, 2);
        let mut state = SelectionState::default();
        let losses = [0.9, 0.7, 0.8, 0.6, 0.65, 0.61];
        let verdicts: Vec<Verdict> = losses
            .iter()
            .enumerate()
            .map(|(i, &loss)| rule.observe(&mut state, i + 1, Some((loss, 0.5))))
            .collect();
        let best: Vec<bool> = verdicts.iter().map(|v| v.best).collect();
        assert_eq!(best, [true, true, false, true, false, false]);
        let stop: Vec<bool> = verdicts.iter().map(|v| v.stop).collect();
        assert_eq!(stop, [false, false, false, false, false, true]);
        assert_eq!(state.best_epoch, 4);
    }

    #[test]
    fn accuracy_must_rise_by_more_than_min_delta_and_nan_never_improves() {
        let rule = rule(Monitor::ValAccuracy, 0.01, 0);
        let mut state = SelectionState::default();
        assert!(rule.observe(&mut state, 1, Some((1.0, 0.50))).best);
        assert!(!rule.observe(&mut state, 2, Some((1.0, 0.505))).best);
        assert!(rule.observe(&mut state, 3, Some((1.0, 0.52))).best);
        let nan = rule.observe(&mut state, 4, Some((f64::NAN, f64::NAN)));
        assert!(!nan.best && !nan.stop, "patience 0 never stops");
        assert_eq!(state.best_epoch, 3);
    }

    #[test]
    fn without_validation_the_newest_epoch_is_kept_and_nothing_stops() {
        let rule = rule(Monitor::ValLoss, 0.0, 1);
        let mut state = SelectionState::default();
        for epoch in 1..=3 {
            let verdict = rule.observe(&mut state, epoch, None);
            assert!(verdict.best && !verdict.stop);
        }
        assert_eq!(state.best_epoch, 3);
    }

    #[test]
    fn choices_read_their_words_and_refuse_others_by_setting() {
        assert_eq!(
            "val-accuracy".parse::<Monitor>().unwrap(),
            Monitor::ValAccuracy
        );
        assert_eq!("test".parse::<Validation>().unwrap(), Validation::Test);
        let err = "first".parse::<Keep>().unwrap_err();
        assert_eq!(err.to_string(), "keep = first: expected best or last");
        assert_eq!(serde_json::to_string(&Keep::Last).unwrap(), "\"last\"");
    }
}
