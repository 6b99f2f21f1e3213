//! The settings a model-based sweep proposes as it goes: each made from the results of the
//! trials before it ([`super::tpe`]) and kept in the sweep folder's `proposals.toml`, so a
//! resumed sweep plans the same trials again and goes on proposing from where it stopped.

use std::path::{Path, PathBuf};

use crate::run_folder::RunHistory;
use crate::train::{RunOutcome, RunSummary};

use super::plan::{Search, Sweep, Trial};
use super::runner::SweepError;
use super::tpe::{self, Observation};

/// The proposed settings of a sweep folder, in the order they were proposed.
pub const PROPOSALS_FILE: &str = "proposals.toml";

/// The figure a sweep ranks a finished trial by: its validation accuracy (test's for a run
/// validated on test); a diverged trial counts as 0, the worst an accuracy can be.
pub fn trial_score(outcome: RunOutcome, summary: &RunSummary) -> Option<f64> {
    match outcome {
        RunOutcome::Completed => summary.final_val_accuracy.or(summary.final_test_accuracy),
        RunOutcome::Diverged => Some(0.0),
        RunOutcome::Cancelled | RunOutcome::Failed => None,
    }
}

/// Plans again the settings a sweep folder's search proposed before (nothing for a search
/// that plans every trial up front).
pub fn read_proposals(sweep: &mut Sweep, folder: &Path) -> Result<(), SweepError> {
    let path = folder.join(PROPOSALS_FILE);
    if sweep.spec.search != Search::Tpe || !path.exists() {
        return Ok(());
    }
    let text = std::fs::read_to_string(&path).map_err(|source| SweepError::Io {
        action: "read",
        path: path.clone(),
        source,
    })?;
    let broken = |problem: String| SweepError::Proposals {
        path: path.clone(),
        problem,
    };
    let table: toml::Table = toml::from_str(&text).map_err(|e| broken(e.message().into()))?;
    let proposals = match table.get("proposal") {
        None => return Ok(()),
        Some(toml::Value::Array(proposals)) => proposals,
        Some(_) => {
            return Err(broken(
                "`proposal` is not a list of [[proposal]] tables".into(),
            ));
        }
    };
    for (n, proposal) in proposals.iter().enumerate() {
        if sweep.proposals_left() == 0 {
            return Err(broken(format!(
                "it holds more proposals than the sweep's trials = {}",
                sweep.spec.trials.unwrap_or(0)
            )));
        }
        let setting = sweep
            .spec
            .axes
            .iter()
            .map(|axis| {
                proposal
                    .get(&axis.key)
                    .map(|value| (axis.key.clone(), value.clone()))
                    .ok_or_else(|| broken(format!("proposal {} has no `{}`", n + 1, axis.key)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        sweep.add_setting(setting);
    }
    Ok(())
}

/// Writes every proposed setting of `sweep` (those past its random start).
fn write_proposals(sweep: &Sweep, folder: &Path) -> Result<(), SweepError> {
    let mut text = format!(
        "# The settings kiln's {} search proposed, in order; `kiln sweep --resume` plans them again.\n",
        sweep.spec.search.word()
    );
    let proposed: Vec<toml::Value> = sweep
        .settings()
        .into_iter()
        .skip(sweep.spec.startup_trials)
        .map(|setting| toml::Value::Table(setting.into_iter().collect()))
        .collect();
    let mut table = toml::Table::new();
    table.insert("proposal".into(), toml::Value::Array(proposed));
    text.push_str(&toml::to_string(&table).unwrap_or_default());
    let path = folder.join(PROPOSALS_FILE);
    crate::atomic_file::write_atomically(&path, text.as_bytes()).map_err(|source| SweepError::Io {
        action: "write",
        path,
        source,
    })
}

/// A sweep's plan as it grows, shared by its device workers: the trials planned so far, the
/// score of each that finished, and the next setting when the queue runs dry.
pub struct Proposer {
    sweep: Sweep,
    folder: PathBuf,
    /// The score of each trial by its place in the plan, once it finished.
    scores: Vec<Option<f64>>,
}

impl Proposer {
    /// The proposer of `sweep` in `folder`, knowing the scores of the trials that finished in
    /// the run `folders` found there.
    pub fn new(sweep: &Sweep, folder: &Path, folders: &[Option<PathBuf>]) -> Self {
        let scores = folders
            .iter()
            .map(|run| {
                let summary = RunHistory::load(run.as_deref()?).ok()?.summary?;
                trial_score(summary.outcome, &summary)
            })
            .collect();
        Self {
            sweep: sweep.clone(),
            folder: folder.to_path_buf(),
            scores,
        }
    }

    /// Settings a model-based search has yet to propose.
    pub fn proposals_left(&self) -> usize {
        self.sweep.proposals_left()
    }

    /// Settings at least one of whose seeds has a score.
    pub fn settings_with_results(&self) -> usize {
        self.observations().len()
    }

    /// Each setting with a score, its mean over the seeds that have one.
    fn observations(&self) -> Vec<Observation> {
        let seeds = self.sweep.spec.seeds.max(1);
        self.sweep
            .settings()
            .into_iter()
            .enumerate()
            .filter_map(|(i, setting)| {
                let scored: Vec<f64> = (i * seeds..(i + 1) * seeds)
                    .filter_map(|t| self.scores.get(t).copied().flatten())
                    .collect();
                (!scored.is_empty()).then(|| Observation {
                    setting,
                    score: scored.iter().sum::<f64>() / scored.len() as f64,
                })
            })
            .collect()
    }

    /// Records how trial `index` (from 1) ended.
    pub fn record(&mut self, index: usize, score: Option<f64>) {
        if self.scores.len() < index {
            self.scores.resize(index, None);
        }
        self.scores[index - 1] = score;
    }

    /// The trials of the next setting, proposed from the scores so far and kept in the
    /// folder's proposals before they run; `None` once the search has proposed all it may.
    pub fn propose(&mut self) -> Result<Option<Vec<Trial>>, SweepError> {
        if self.sweep.proposals_left() == 0 {
            return Ok(None);
        }
        let settings = self.sweep.settings();
        let observed = self.observations();
        // Seeded by the config and the place: the same results propose the same setting.
        let base_seed = self.sweep.trials.first().map_or(0, |t| t.seed);
        let seed = base_seed ^ 0x7E7E_0000 ^ ((settings.len() as u64) << 32);
        let setting = tpe::propose(&self.sweep.spec.axes, &observed, &settings, seed);
        let trials = self.sweep.add_setting(setting);
        write_proposals(&self.sweep, &self.folder)?;
        Ok(Some(trials))
    }
}
