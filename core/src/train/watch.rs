//! The loss watch: warnings about a loss that went NaN or blows up, from one place for the
//! readbacks and the epoch ends.

use super::{TrainEvent, TrainWarning};
use crate::selection::ValidatedOn;

/// Watches the running training loss: warns once about a NaN or infinite loss and once about
/// divergence, and says when the run must stop.
pub(super) struct LossWatch {
    /// The accuracy of uniform guessing, 1 / classes.
    chance: f64,
    stop_on_non_finite: bool,
    non_finite_warned: bool,
    /// Survives a resume, so a resumed run does not warn twice.
    pub(super) diverging_warned: bool,
}

impl LossWatch {
    /// A watch for a run over `classes` classes; `diverging_warned` carries a resumed run's past.
    pub(super) fn new(classes: usize, stop_on_non_finite: bool, diverging_warned: bool) -> Self {
        Self {
            chance: 1.0 / classes.max(1) as f64,
            stop_on_non_finite,
            non_finite_warned: false,
            diverging_warned,
        }
    }

    /// Warns when an epoch's evaluation accuracy is no better than guessing (for more than two
    /// classes, where guessing is rare enough to mean something).
    pub(super) fn check_accuracy(
        &self,
        accuracy: f64,
        on: ValidatedOn,
        epoch: usize,
        on_event: &mut dyn FnMut(TrainEvent),
    ) {
        if accuracy <= self.chance + 0.02 && self.chance < 0.5 {
            on_event(TrainEvent::Warning(TrainWarning::StuckAtChance {
                epoch,
                accuracy,
                on,
            }));
        }
    }

    /// Looks at the running `train_loss` of `epoch`; true when the run must stop because of it.
    pub(super) fn stops(
        &mut self,
        train_loss: f64,
        epoch: usize,
        on_event: &mut dyn FnMut(TrainEvent),
    ) -> bool {
        if !train_loss.is_finite() {
            if !self.non_finite_warned {
                self.non_finite_warned = true;
                on_event(TrainEvent::Warning(TrainWarning::NonFiniteLoss {
                    epoch,
                    stopped: self.stop_on_non_finite,
                }));
            }
            if self.stop_on_non_finite {
                return true;
            }
        }
        if !self.diverging_warned && is_diverging(train_loss, self.chance) {
            self.diverging_warned = true;
            on_event(TrainEvent::Warning(TrainWarning::Diverging {
                epoch,
                loss: train_loss,
            }));
        }
        false
    }
}

/// Uniform guessing costs ln(classes); a running loss four times that means the run blows up.
fn is_diverging(train_loss: f64, chance: f64) -> bool {
    train_loss > 4.0 * chance.recip().ln().max(0.1)
}
