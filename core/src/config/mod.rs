//! What to train, as a person or a preset says it, and the checked form every later stage trusts.
//!
//! An [`ExperimentDraft`] is the raw form (TOML file, preset, GUI fields, CLI flags). It becomes an
//! [`Experiment`] only through [`ExperimentDraft::validate`], so the loop never re-checks a value.

mod choices;
mod differences;
mod draft;
mod flavour;
mod optimizer;
mod presets;
mod schedule;
mod validate;

#[cfg(test)]
mod tests;

use std::fmt;

pub use crate::selection::{Keep, Monitor, Validation};
pub use crate::settings::Setting;
pub use choices::{
    ClassWeights, FineTune, InputScaling, LossInput, Precision, ResizeFilter, Threshold,
};
pub use differences::{Difference, Differences, differences, value_text};
pub use draft::{
    DEFAULT_TEST_SPLIT, DEFAULT_VAL_SPLIT, ExperimentDraft, MAX_BATCH_SIZE, MAX_CROP_PADDING,
    MAX_EPOCHS, MAX_HOLDOUT_SPLIT, MAX_PROFILE_STEPS,
};
pub use flavour::Flavour;
pub use optimizer::{OptimizerSpec, WeightDecayMode};
pub use presets::{FRAMEWORK_DEFAULTS, preset, preset_names};
pub use schedule::Schedule;
pub use validate::Experiment;

/// Why a configuration was refused: the field and the reason, in one sentence.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A field holds a value the engine cannot use.
    #[error("{field} = {value}: {reason}")]
    Invalid {
        /// The setting; it displays as its key in config.toml.
        field: Setting,
        /// The offending value, as text.
        value: String,
        /// What is wrong and what would be accepted.
        reason: String,
    },
    /// The TOML text could not be read as a configuration.
    #[error("{source_name} is not a valid Kiln configuration: {message}")]
    Parse {
        /// File name or preset name.
        source_name: String,
        /// What the TOML parser said.
        message: String,
    },
    /// No preset has that name.
    #[error("there is no preset named '{0}'; the presets are: {names}", names = preset_names().join(", "))]
    UnknownPreset(String),
}

/// The error for `field` holding `value`, refused for `reason`.
pub(crate) fn invalid(
    field: Setting,
    value: impl fmt::Display,
    reason: impl Into<String>,
) -> ConfigError {
    ConfigError::Invalid {
        field,
        value: value.to_string(),
        reason: reason.into(),
    }
}
