//! A judge outside the run asked after each evaluated epoch whether the run should end there:
//! a sweep's pruning rule, which compares the trial with the others at the same epoch. A run a
//! judge ends has completed; its summary names the rule and the epoch.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Decides, after each evaluated epoch, whether a run ends there for a reason outside it.
pub trait EpochJudge {
    /// Hears epoch `epoch` (1-based) and its held-out (loss, accuracy), if any; says why the
    /// run ends after it, or `None` to go on.
    fn judge(&mut self, epoch: usize, evaluation: Option<(f64, f64)>) -> Option<Pruned>;
}

/// Why a judge ended a run, as summary.json, `kiln sweep` and the window say it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pruned {
    /// The rule's word (`median`, `asha`).
    pub rule: String,
    /// The last epoch trained (1-based).
    pub after_epoch: usize,
    /// The comparison that ended it, in a sentence.
    pub reason: String,
}

impl fmt::Display for Pruned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "pruned by the {} rule after epoch {}: {}",
            self.rule, self.after_epoch, self.reason
        )
    }
}
