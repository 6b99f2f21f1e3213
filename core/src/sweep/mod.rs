//! Sweeps: a base config and the settings its `[sweep]` table varies, run as trials over the
//! devices given, and read back as one table that tells a real difference from seed noise.
//!
//! [`plan`] turns the config into trials (grid, random, or one-at-a-time from the base, each
//! setting with N seeds); [`runner`] runs them as a queue over devices into one sweep folder
//! that a second start resumes; [`report`] reads that folder as a row per setting; [`explain`]
//! makes the sweep between two configs and reads it as each difference's effect.

pub mod explain;
pub mod plan;
pub mod report;
pub mod runner;
pub mod stats;

pub use explain::{Difference, ExplainReport, differences, explain_config};
pub use plan::{Axis, PlanError, Search, Sweep, SweepSpec, Trial, Values};
pub use report::{SettingRow, SweepReport, VersusBest};
pub use runner::{
    SWEEP_CONFIG_FILE, SweepError, SweepEvent, SweepTally, create_sweep_folder, open_sweep_folder,
    run_sweep, trial_folders,
};

#[cfg(test)]
mod tests;
