//! Running a sweep: its folder, and its trials as a queue over devices, one trial per device at
//! a time. A sweep folder holds `sweep.toml` (the config as given) and one normal run folder per
//! trial; it is written by one process at a time ([`FolderLock`]). Run again on the same folder,
//! a sweep goes on where it stopped: a finished trial is not redone, and a trial cut mid-way
//! resumes from its last checkpoint.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::device::DeviceChoice;
use crate::run::{self, ResumeError, RunError};
use crate::run_folder::{FolderLock, RunHistory};
use crate::train::{Control, RunOutcome, RunSummary};

use super::plan::{PlanError, Sweep, Trial};
use super::proposals::{Proposer, read_proposals, trial_score};
use super::pruning::{PruneBoard, TrialJudge};

/// The config a sweep folder was started from, read again to resume it.
pub const SWEEP_CONFIG_FILE: &str = "sweep.toml";

/// Why a sweep could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// Its config does not plan.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// Its folder could not be made, read, or held.
    #[error(transparent)]
    Folder(#[from] crate::run_folder::FolderError),
    /// Its proposals file is not one Kiln wrote.
    #[error("{} cannot be read as a sweep's proposals: {problem}; move it away to propose afresh", .path.display())]
    Proposals {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// A file of it could not be read or written.
    #[error("could not {action} {}: {source}", .path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

/// What happened to a trial, as the sweep goes.
#[derive(Debug, Clone, PartialEq)]
pub enum SweepEvent {
    /// It had finished before this start of the sweep.
    AlreadyDone {
        /// Its place in the plan.
        index: usize,
    },
    /// It started (or went on from its checkpoint) on `device`.
    Started {
        /// Its place in the plan.
        index: usize,
        /// The device it trains on.
        device: DeviceChoice,
        /// The run folder it goes on in, when it resumes.
        resumed: Option<PathBuf>,
    },
    /// It ended; its folder holds the rest.
    Ended {
        /// Its place in the plan.
        index: usize,
        /// Its run folder.
        folder: PathBuf,
        /// How it ended.
        outcome: RunOutcome,
        /// Its figures.
        summary: Box<RunSummary>,
    },
    /// A model-based search planned a new setting from the results so far.
    Proposed {
        /// Its trials, one per seed.
        trials: Vec<Trial>,
        /// Settings with results it was proposed from.
        from_results: usize,
    },
    /// It could not run (its data, its device); the sweep goes on with the others.
    Failed {
        /// Its place in the plan.
        index: usize,
        /// Why, in a sentence.
        reason: String,
    },
}

impl SweepEvent {
    /// One line on what happened to a trial of `sweep`: its place, its setting and seed, and
    /// its start, its end (its figures, or the rule that pruned it), or why it could not run.
    pub fn describe(&self, sweep: &Sweep) -> String {
        let index = match self {
            Self::AlreadyDone { index }
            | Self::Started { index, .. }
            | Self::Ended { index, .. }
            | Self::Failed { index, .. } => *index,
            Self::Proposed {
                trials,
                from_results,
            } => {
                let indices: Vec<String> = trials.iter().map(|t| t.index.to_string()).collect();
                return format!(
                    "proposed by {} from {from_results} setting(s) with results: {} (trial {})",
                    sweep.spec.search.word(),
                    trials.first().map(|t| t.setting_text()).unwrap_or_default(),
                    indices.join(", ")
                );
            }
        };
        let Some(trial) = sweep.trials.get(index - 1) else {
            return format!("trial {index}");
        };
        let planned = sweep.trials.len() + sweep.proposals_left() * sweep.spec.seeds;
        let what = format!(
            "trial {index}/{planned} ({}, seed {})",
            trial.setting_text(),
            trial.seed
        );
        match self {
            Self::AlreadyDone { .. } => format!("{what}: done before, kept"),
            Self::Started {
                device, resumed, ..
            } => match resumed {
                Some(folder) => format!(
                    "{what}: resuming {} on {device}",
                    folder.file_name().unwrap_or_default().to_string_lossy()
                ),
                None => format!("{what}: started on {device}"),
            },
            Self::Ended {
                outcome, summary, ..
            } => {
                let figure = |label: &str, value: Option<f64>| {
                    value.map_or(String::new(), |v| format!(", {label} {:.2} %", 100.0 * v))
                };
                let ended = match &summary.pruned {
                    Some(pruned) => pruned.to_string(),
                    None => format!("{outcome:?}").to_lowercase(),
                };
                format!(
                    "{what}: {ended}{}{}, {:.2} s/epoch",
                    figure("validation", summary.final_val_accuracy),
                    figure("test", summary.final_test_accuracy),
                    summary.mean_epoch_train_secs
                )
            }
            Self::Failed { reason, .. } => format!("{what}: could not run: {reason}"),
            Self::Proposed { .. } => what,
        }
    }
}

/// How a sweep's trials stand after a start of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SweepTally {
    /// Trials finished before this start.
    pub already_done: usize,
    /// Trials finished by this start.
    pub finished: usize,
    /// Trials cancelled part-way (a next start resumes them).
    pub cancelled: usize,
    /// Trials that could not run or failed.
    pub failed: usize,
    /// Trials not started because the sweep was cancelled.
    pub not_started: usize,
}

/// Makes a new sweep folder `sweeps_dir/<timestamp>-<name>` holding the config `text` as
/// `sweep.toml`, once the config plans.
pub fn create_sweep_folder(
    sweeps_dir: &Path,
    sweep: &Sweep,
    text: &str,
) -> Result<PathBuf, SweepError> {
    let stem = format!(
        "{}-{}-sweep",
        crate::run_folder::timestamp(std::time::SystemTime::now()),
        sweep.name
    );
    let folder = crate::run_folder::create_unique_dir(sweeps_dir, &stem)?;
    let config = folder.join(SWEEP_CONFIG_FILE);
    crate::atomic_file::write_atomically(&config, text.as_bytes()).map_err(|source| {
        SweepError::Io {
            action: "write",
            path: config,
            source,
        }
    })?;
    Ok(folder)
}

/// Reads the sweep a folder was started from, with the settings its search proposed so far.
pub fn open_sweep_folder(folder: &Path) -> Result<Sweep, SweepError> {
    let config = folder.join(SWEEP_CONFIG_FILE);
    let text = std::fs::read_to_string(&config).map_err(|source| SweepError::Io {
        action: "read",
        path: config.clone(),
        source,
    })?;
    let mut sweep = Sweep::from_toml(&text, &config.display().to_string())?;
    read_proposals(&mut sweep, folder)?;
    Ok(sweep)
}

/// The run folder of each trial in a sweep folder (the newest, where a trial was started more
/// than once), by its place in the plan.
pub fn trial_folders(sweep: &Sweep, folder: &Path) -> Vec<Option<PathBuf>> {
    let mut found: Vec<Option<PathBuf>> = vec![None; sweep.trials.len()];
    let Ok(entries) = std::fs::read_dir(folder) else {
        return found;
    };
    let mut runs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join(crate::run_folder::CONFIG_FILE).is_file())
        .collect();
    // Folder names start with their timestamp: the last one of a trial is its newest.
    runs.sort();
    for run in runs {
        let Ok(text) = std::fs::read_to_string(run.join(crate::run_folder::CONFIG_FILE)) else {
            continue;
        };
        let Ok(draft) = crate::config::ExperimentDraft::from_toml(&text, "config.toml") else {
            continue;
        };
        if let Some(trial) = sweep
            .trials
            .iter()
            .find(|t| sweep.trial_name(t) == draft.name)
        {
            found[trial.index - 1] = Some(run);
        }
    }
    found
}

/// A sweep folder found beside others, and how far its trials got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepFolder {
    /// The folder.
    pub folder: PathBuf,
    /// The sweep's name.
    pub name: String,
    /// Its trials that finished.
    pub finished: usize,
    /// Its trials planned so far (a TPE sweep plans more as it goes).
    pub planned: usize,
}

impl SweepFolder {
    /// Whether trials are left to run.
    pub fn unfinished(&self) -> bool {
        self.finished < self.planned
    }
}

/// The sweep folders directly in `sweeps_dir`, newest first, each with how far it got; a
/// folder whose `sweep.toml` no longer plans is left out.
pub fn sweep_folders(sweeps_dir: &Path) -> Vec<SweepFolder> {
    let Ok(entries) = std::fs::read_dir(sweeps_dir) else {
        return Vec::new();
    };
    let mut folders: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join(SWEEP_CONFIG_FILE).is_file())
        .collect();
    // Folder names start with their timestamp.
    folders.sort();
    folders.reverse();
    folders
        .into_iter()
        .filter_map(|folder| {
            let sweep = open_sweep_folder(&folder).ok()?;
            let finished = trial_folders(&sweep, &folder)
                .iter()
                .filter(|run| run.as_deref().is_some_and(is_finished))
                .count();
            Some(SweepFolder {
                name: sweep.name.clone(),
                planned: sweep.trials.len(),
                finished,
                folder,
            })
        })
        .collect()
}

/// Whether a trial's run folder holds a finished trial: completed, diverged, or stopped early.
fn is_finished(folder: &Path) -> bool {
    let Ok(history) = RunHistory::load(folder) else {
        return false;
    };
    match history.summary.map(|s| s.outcome) {
        Some(RunOutcome::Completed | RunOutcome::Diverged) => true,
        _ => matches!(
            run::resume_plan(folder, None),
            Err(ResumeError::Finished { .. }
                | ResumeError::StoppedEarly { .. }
                | ResumeError::Completed { .. })
        ),
    }
}

/// Runs every trial of `sweep` not yet finished in `folder`, as a queue over `devices` (each
/// device one trial at a time, a device listed twice counted once); cancelling `control` lets
/// running trials stop at their next step and starts no more.
pub fn run_sweep(
    sweep: &Sweep,
    folder: &Path,
    devices: &[DeviceChoice],
    control: &Arc<Control>,
    on_event: &(dyn Fn(SweepEvent) + Sync),
) -> Result<SweepTally, SweepError> {
    let _hold = FolderLock::acquire(folder)?;
    // Proposals a run of this folder made before are planned again, whatever `sweep` knew.
    let mut sweep = sweep.clone();
    read_proposals(&mut sweep, folder)?;
    let sweep = &sweep;
    let mut unique: Vec<DeviceChoice> = Vec::new();
    for device in devices {
        if !unique.contains(device) {
            unique.push(device.clone());
        }
    }
    let mut tally = SweepTally::default();
    let mut queue = VecDeque::new();
    let folders = trial_folders(sweep, folder);
    for (trial, run) in sweep.trials.iter().zip(&folders) {
        match run {
            Some(run) if is_finished(run) => {
                tally.already_done += 1;
                on_event(SweepEvent::AlreadyDone { index: trial.index });
            }
            run => queue.push_back((trial.clone(), run.clone())),
        }
    }
    let queue = Mutex::new(queue);
    let tally = Mutex::new(tally);
    let proposer = Mutex::new(Proposer::new(sweep, folder, &folders));
    let board = Arc::new(Mutex::new(PruneBoard::read(&folders)));
    let proposal_failed: Mutex<Option<SweepError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for device in &unique {
            let (queue, tally, proposer, proposal_failed, board) =
                (&queue, &tally, &proposer, &proposal_failed, &board);
            scope.spawn(move || {
                loop {
                    if control.is_cancelled() {
                        break;
                    }
                    let next = queue.lock().map(|mut q| q.pop_front()).ok().flatten();
                    let next = match next {
                        Some(next) => Some(next),
                        None => match next_proposal(proposer, queue, on_event) {
                            Ok(next) => next,
                            Err(e) => {
                                if let Ok(mut failed) = proposal_failed.lock() {
                                    *failed = Some(e);
                                }
                                None
                            }
                        },
                    };
                    let Some((trial, run)) = next else {
                        break;
                    };
                    let judge = sweep.spec.prune.map(|rule| TrialJudge {
                        rule,
                        trial: trial.index,
                        board: Arc::clone(board),
                    });
                    let place = TrialPlace { folder, device };
                    let ended = run_trial(sweep, &trial, run, place, judge, control, on_event);
                    if let Ok(mut proposer) = proposer.lock() {
                        proposer.record(trial.index, ended.and_then(|(_, score)| score));
                    }
                    if let Ok(mut tally) = tally.lock() {
                        match ended.map(|(outcome, _)| outcome) {
                            Some(RunOutcome::Completed | RunOutcome::Diverged) => {
                                tally.finished += 1;
                            }
                            Some(RunOutcome::Cancelled) => tally.cancelled += 1,
                            Some(RunOutcome::Failed) | None => tally.failed += 1,
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = proposal_failed.into_inner().ok().flatten() {
        return Err(e);
    }
    let mut tally = tally.into_inner().unwrap_or_default();
    tally.not_started = queue.into_inner().map(|q| q.len()).unwrap_or(0);
    tally.not_started += proposer
        .into_inner()
        .map(|p| p.proposals_left() * sweep.spec.seeds)
        .unwrap_or(0);
    Ok(tally)
}

/// Where a trial runs: the sweep folder its run folder goes in, and its device.
#[derive(Clone, Copy)]
struct TrialPlace<'a> {
    folder: &'a Path,
    device: &'a DeviceChoice,
}

/// A queued trial and the run folder it resumes, if any.
type Queued = (Trial, Option<PathBuf>);

/// The first trial of the next proposed setting (its other seeds queued behind it), once the
/// plan's own trials are all taken; `None` when the search proposes no more.
fn next_proposal(
    proposer: &Mutex<Proposer>,
    queue: &Mutex<VecDeque<Queued>>,
    on_event: &(dyn Fn(SweepEvent) + Sync),
) -> Result<Option<Queued>, SweepError> {
    let Ok(mut proposer) = proposer.lock() else {
        return Ok(None);
    };
    let from_results = proposer.settings_with_results();
    let Some(trials) = proposer.propose()? else {
        return Ok(None);
    };
    on_event(SweepEvent::Proposed {
        trials: trials.clone(),
        from_results,
    });
    let mut trials = trials.into_iter().map(|trial| (trial, None));
    let first = trials.next();
    if let Ok(mut queue) = queue.lock() {
        queue.extend(trials);
    }
    Ok(first)
}

/// Runs (or resumes, from `run`) one trial on `device`; its outcome and score, or `None` when
/// it could not run at all.
fn run_trial(
    sweep: &Sweep,
    trial: &Trial,
    run: Option<PathBuf>,
    TrialPlace { folder, device }: TrialPlace,
    judge: Option<TrialJudge>,
    control: &Arc<Control>,
    on_event: &(dyn Fn(SweepEvent) + Sync),
) -> Option<(RunOutcome, Option<f64>)> {
    let board = judge.as_ref().map(|j| Arc::clone(&j.board));
    let judge = judge.map(|j| Box::new(j) as Box<dyn crate::train::EpochJudge>);
    let failed = |reason: String| {
        on_event(SweepEvent::Failed {
            index: trial.index,
            reason,
        });
        None
    };
    // A trial cut before its first checkpoint has nothing to resume: it starts again.
    let resumable = run.filter(|run| run::resume_plan(run, None).is_ok());
    on_event(SweepEvent::Started {
        index: trial.index,
        device: device.clone(),
        resumed: resumable.clone(),
    });
    let mut on_stage = |_| {};
    let mut on_train_event = |_: &crate::train::TrainEvent| {};
    let record: Result<run::RunRecord, RunError> = match resumable {
        Some(run) => run::resume_judged(
            &run,
            Some(vec![device.clone()]),
            control,
            judge,
            &mut on_stage,
            &mut on_train_event,
        ),
        None => {
            let mut draft = match sweep.draft(trial) {
                Ok(draft) => draft,
                Err(e) => return failed(e.to_string()),
            };
            draft.set_devices(vec![device.clone()]);
            let experiment = match draft.validate() {
                Ok(experiment) => experiment,
                Err(e) => return failed(e.to_string()),
            };
            run::execute_judged(
                &experiment,
                folder,
                control,
                judge,
                &mut on_stage,
                &mut on_train_event,
            )
        }
    };
    match record {
        Ok(record) => {
            let outcome = record.summary.outcome;
            let score = trial_score(outcome, &record.summary);
            if let Some(mut board) = board.as_ref().and_then(|b| b.lock().ok()) {
                let whole = outcome == RunOutcome::Completed && record.summary.pruned.is_none();
                board.finish(trial.index, whole);
            }
            on_event(SweepEvent::Ended {
                index: trial.index,
                folder: record.path,
                outcome,
                summary: Box::new(record.summary),
            });
            Some((outcome, score))
        }
        Err(e) => failed(e.to_string()),
    }
}
