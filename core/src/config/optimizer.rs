//! The optimizer and its own settings, with their defaults (the one place they are written).

use serde::{Deserialize, Serialize};

use super::{ConfigError, Setting, invalid};

crate::settings::choice! {
    /// How SGD's and Adam's weight decay reaches the weights.
    WeightDecayMode for WeightDecayMode {
        /// An L2 term added to the gradient, as PyTorch's `weight_decay` (it then passes through
        /// momentum and Adam's scaling).
        #[default]
        L2 => "l2", "L2 in the gradient (PyTorch)",
        /// The weights shrink by lr × decay each step apart from the gradient, as Keras 3's
        /// `weight_decay` and AdamW do.
        Decoupled => "decoupled", "decoupled (Keras, AdamW)",
    }
}

/// The optimizer and its own settings; the learning rate lives in [`ExperimentDraft::lr`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum OptimizerSpec {
    /// Stochastic gradient descent, PyTorch semantics (no dampening).
    Sgd {
        /// Momentum factor; 0 turns momentum off.
        #[serde(default)]
        momentum: f64,
        /// Nesterov momentum (needs momentum > 0).
        #[serde(default)]
        nesterov: bool,
        /// L2 penalty added to the gradient.
        #[serde(default)]
        weight_decay: f64,
    },
    /// Adam with L2 weight decay added to the gradient.
    Adam {
        /// First-moment decay.
        #[serde(default = "default_beta_1")]
        beta_1: f64,
        /// Second-moment decay.
        #[serde(default = "default_beta_2")]
        beta_2: f64,
        /// Added to the denominator; PyTorch uses 1e-8, Keras 1e-7.
        #[serde(default = "default_epsilon")]
        epsilon: f64,
        /// L2 penalty added to the gradient.
        #[serde(default)]
        weight_decay: f64,
    },
    /// Adam with decoupled weight decay.
    AdamW {
        /// First-moment decay.
        #[serde(default = "default_beta_1")]
        beta_1: f64,
        /// Second-moment decay.
        #[serde(default = "default_beta_2")]
        beta_2: f64,
        /// Added to the denominator.
        #[serde(default = "default_epsilon")]
        epsilon: f64,
        /// Decoupled decay factor, PyTorch's default 0.01.
        #[serde(default = "default_adamw_decay")]
        weight_decay: f64,
    },
}

fn default_beta_1() -> f64 {
    0.9
}
fn default_beta_2() -> f64 {
    0.999
}
fn default_epsilon() -> f64 {
    1e-8
}
fn default_adamw_decay() -> f64 {
    0.01
}

impl OptimizerSpec {
    /// SGD with PyTorch's defaults: no momentum, no decay.
    pub fn sgd() -> Self {
        Self::Sgd {
            momentum: 0.0,
            nesterov: false,
            weight_decay: 0.0,
        }
    }

    /// Adam with PyTorch's defaults.
    pub fn adam() -> Self {
        Self::Adam {
            beta_1: default_beta_1(),
            beta_2: default_beta_2(),
            epsilon: default_epsilon(),
            weight_decay: 0.0,
        }
    }

    /// AdamW with PyTorch's defaults (its decoupled decay 0.01).
    pub fn adamw() -> Self {
        Self::AdamW {
            beta_1: default_beta_1(),
            beta_2: default_beta_2(),
            epsilon: default_epsilon(),
            weight_decay: default_adamw_decay(),
        }
    }

    /// The named optimizer with its usual defaults (`sgd`, `adam`, `adamw`).
    pub fn from_name(name: &str) -> Result<Self, ConfigError> {
        match name {
            "sgd" => Ok(Self::sgd()),
            "adam" => Ok(Self::adam()),
            "adamw" => Ok(Self::adamw()),
            other => Err(invalid(
                Setting::Optimizer,
                other,
                "expected sgd, adam or adamw",
            )),
        }
    }

    /// Short name: `sgd`, `adam` or `adamw`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Sgd { .. } => "sgd",
            Self::Adam { .. } => "adam",
            Self::AdamW { .. } => "adamw",
        }
    }

    /// Its weight decay, whatever the optimizer.
    pub fn weight_decay(&self) -> f64 {
        match self {
            Self::Sgd { weight_decay, .. }
            | Self::Adam { weight_decay, .. }
            | Self::AdamW { weight_decay, .. } => *weight_decay,
        }
    }

    /// Sets the weight decay, whatever the optimizer.
    pub fn set_weight_decay(&mut self, value: f64) {
        match self {
            Self::Sgd { weight_decay, .. }
            | Self::Adam { weight_decay, .. }
            | Self::AdamW { weight_decay, .. } => *weight_decay = value,
        }
    }

    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let unit = |field: Setting, v: f64| {
            if v.is_finite() && (0.0..1.0).contains(&v) {
                Ok(())
            } else {
                Err(invalid(field, v, "must be at least 0 and below 1"))
            }
        };
        let decay = |v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(invalid(
                    Setting::WeightDecay,
                    v,
                    "must be a finite number of at least 0",
                ))
            }
        };
        match *self {
            Self::Sgd {
                momentum,
                nesterov,
                weight_decay,
            } => {
                unit(Setting::Momentum, momentum)?;
                decay(weight_decay)?;
                if nesterov && momentum == 0.0 {
                    return Err(invalid(
                        Setting::Nesterov,
                        true,
                        "Nesterov momentum needs a momentum above 0",
                    ));
                }
            }
            Self::Adam {
                beta_1,
                beta_2,
                epsilon,
                weight_decay,
            }
            | Self::AdamW {
                beta_1,
                beta_2,
                epsilon,
                weight_decay,
            } => {
                unit(Setting::Beta1, beta_1)?;
                unit(Setting::Beta2, beta_2)?;
                decay(weight_decay)?;
                if !(epsilon.is_finite() && epsilon > 0.0) {
                    return Err(invalid(
                        Setting::Epsilon,
                        epsilon,
                        "must be a small positive number such as 1e-8",
                    ));
                }
            }
        }
        Ok(())
    }
}
