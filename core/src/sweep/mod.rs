//! Sweeps: a base config and the settings its `[sweep]` table varies, run as trials over the
//! devices given, and read back as one table that tells a real difference from seed noise.
//!
//! [`plan`] turns the config into trials (grid, random, or one-at-a-time from the base, each
//! setting with N seeds); a model-based search ([`tpe`]) plans its first settings at random and
//! [`proposals`] the rest as results come in; [`runner`] runs them as a queue over devices into
//! one sweep folder that a second start resumes, [`pruning`] ending trials clearly behind;
//! [`report`] reads that folder as a row per setting and [`plots`] draws it; [`explain`] makes
//! the sweep between two configs and reads it as each difference's effect.

pub mod explain;
pub mod plan;
pub mod plots;
pub mod proposals;
pub mod pruning;
pub mod report;
pub mod runner;
pub mod stats;
pub mod tpe;

pub use crate::config::{Difference, Differences, differences};
pub use explain::{ExplainReport, explain_config, explain_name};
pub use plan::{Axis, PlanError, Search, Sweep, SweepSpec, Trial, Values};
pub use plots::{SweepChart, write_charts};
pub use proposals::{PROPOSALS_FILE, trial_score};
pub use pruning::PruneRule;
pub use report::{SettingRow, SweepReport, VersusBest};
pub use runner::{
    SWEEP_CONFIG_FILE, SweepError, SweepEvent, SweepFolder, SweepTally, create_sweep_folder,
    open_sweep_folder, run_sweep, sweep_folders, trial_folders,
};

#[cfg(test)]
mod tests;
