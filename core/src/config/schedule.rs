//! How the learning rate changes over a run.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{ConfigError, Setting, invalid};

/// How the learning rate changes over the run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Schedule {
    /// The same rate every step.
    #[default]
    Constant,
    /// Multiply by `gamma` every `every_epochs` epochs.
    Step {
        /// Epochs between two drops.
        every_epochs: usize,
        /// Factor applied at each drop.
        gamma: f64,
    },
    /// Cosine decay from the base rate to `min_lr` over the whole run, updated every step.
    Cosine {
        /// Rate at the very end.
        #[serde(default)]
        min_lr: f64,
    },
}

impl Schedule {
    /// The rate for a step, from the base rate and the position in the run; a pure function so a
    /// resumed run gets exactly the rates of an uninterrupted one.
    pub fn lr_at(&self, base_lr: f64, epoch: usize, step_in_run: usize, total_steps: usize) -> f64 {
        match *self {
            Self::Constant => base_lr,
            Self::Step {
                every_epochs,
                gamma,
            } => {
                let drops = epoch / every_epochs.max(1);
                base_lr * gamma.powi(i32::try_from(drops).unwrap_or(i32::MAX))
            }
            Self::Cosine { min_lr } => {
                let progress = step_in_run as f64 / total_steps.max(1) as f64;
                min_lr + (base_lr - min_lr) * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos())
            }
        }
    }

    pub(super) fn validate(&self, base_lr: f64) -> Result<(), ConfigError> {
        match *self {
            Self::Constant => Ok(()),
            Self::Step {
                every_epochs,
                gamma,
            } => {
                if every_epochs == 0 {
                    return Err(invalid(
                        Setting::StepEvery,
                        every_epochs,
                        "must be at least 1",
                    ));
                }
                if !(gamma.is_finite() && gamma > 0.0 && gamma <= 1.0) {
                    return Err(invalid(
                        Setting::StepGamma,
                        gamma,
                        "must be above 0 and at most 1",
                    ));
                }
                Ok(())
            }
            Self::Cosine { min_lr } => {
                if !(min_lr.is_finite() && min_lr >= 0.0 && min_lr <= base_lr) {
                    return Err(invalid(
                        Setting::CosineMinLr,
                        min_lr,
                        "must be at least 0 and at most the learning rate",
                    ));
                }
                Ok(())
            }
        }
    }
}

impl FromStr for Schedule {
    type Err = ConfigError;

    /// `constant`, `step:EVERY_EPOCHS:GAMMA` (e.g. `step:5:0.1`), `cosine` or `cosine:MIN_LR`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut parts = text.split(':');
        let bad = || {
            invalid(
                Setting::Schedule,
                text,
                "expected constant, step:EVERY_EPOCHS:GAMMA (e.g. step:5:0.1), cosine or cosine:MIN_LR",
            )
        };
        let schedule = match parts.next() {
            Some("constant") => Self::Constant,
            Some("step") => {
                let every_epochs = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
                let gamma = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
                Self::Step {
                    every_epochs,
                    gamma,
                }
            }
            Some("cosine") => Self::Cosine {
                min_lr: match parts.next() {
                    Some(p) => p.parse().map_err(|_| bad())?,
                    None => 0.0,
                },
            },
            _ => return Err(bad()),
        };
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(schedule)
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Constant => f.write_str("constant"),
            Self::Step {
                every_epochs,
                gamma,
            } => write!(f, "step:{every_epochs}:{gamma}"),
            Self::Cosine { min_lr } => write!(f, "cosine:{min_lr}"),
        }
    }
}
