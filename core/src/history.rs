//! Run folders read back: the runs list, overlays and exports all start from a [`RunHistory`].
//!
//! Reading is forgiving because a run folder may be cut short by a crash or still be written to:
//! a row without its line end is one a crash (or the live writer) left unfinished and is skipped
//! silently; any other unreadable row is skipped and named in [`RunHistory::problems`].

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::config::ExperimentDraft;
use crate::run::{self, EPOCHS_HEADER, METRICS_HEADER};
use crate::train::{EpochSummary, Progress, RunSummary};

/// Longest run name [`rename_run`] accepts; folder names stay readable in a file manager.
pub const MAX_NAME_CHARS: usize = 64;

/// One metrics.csv row (one readback). `epoch` is 1-based as in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsRow {
    /// Seconds since the run started (after data loading).
    pub wall_secs: f64,
    /// 1-based epoch.
    pub epoch: usize,
    /// Steps done in this epoch.
    pub step: usize,
    /// Steps done in the whole run.
    pub global_step: usize,
    /// Images seen in the whole run.
    pub samples_seen: u64,
    /// Mean loss over the images of this epoch so far.
    pub train_loss: f64,
    /// Fraction of this epoch's images so far classified correctly.
    pub train_accuracy: f64,
    /// Images per second since the previous readback.
    pub samples_per_sec: f64,
    /// Mean wall milliseconds per step since the previous readback.
    pub step_ms: f64,
    /// Milliseconds of that window spent preparing batches.
    pub data_ms: f64,
    /// Milliseconds of that window spent recording device work.
    pub compute_ms: f64,
    /// Milliseconds of that window spent waiting for the device.
    pub sync_ms: f64,
    /// Learning rate of the last step.
    pub lr: f64,
}

impl From<&Progress> for MetricsRow {
    fn from(p: &Progress) -> Self {
        Self {
            wall_secs: p.wall_secs,
            epoch: p.epoch + 1,
            step: p.step_in_epoch,
            global_step: p.global_step,
            samples_seen: p.samples_seen,
            train_loss: p.train_loss,
            train_accuracy: p.train_accuracy,
            samples_per_sec: p.samples_per_sec,
            step_ms: p.step_ms,
            data_ms: p.data_ms,
            compute_ms: p.compute_ms,
            sync_ms: p.sync_ms,
            lr: p.lr,
        }
    }
}

/// One epochs.csv row. `epoch` is 1-based.
#[derive(Debug, Clone, PartialEq)]
pub struct EpochRow {
    /// 1-based epoch.
    pub epoch: usize,
    /// Mean training loss over every image of the epoch.
    pub train_loss: f64,
    /// Training accuracy over every image of the epoch.
    pub train_accuracy: f64,
    /// Mean test loss over every test image.
    pub test_loss: f64,
    /// Test accuracy over every test image.
    pub test_accuracy: f64,
    /// Wall seconds of the training part of the epoch.
    pub epoch_secs: f64,
    /// Wall seconds of the evaluation.
    pub eval_secs: f64,
    /// Training images per second over the epoch.
    pub samples_per_sec: f64,
}

impl From<&EpochSummary> for EpochRow {
    fn from(e: &EpochSummary) -> Self {
        Self {
            epoch: e.epoch + 1,
            train_loss: e.train_loss,
            train_accuracy: e.train_accuracy,
            test_loss: e.test_loss,
            test_accuracy: e.test_accuracy,
            epoch_secs: e.train_secs,
            eval_secs: e.eval_secs,
            samples_per_sec: e.samples_per_sec,
        }
    }
}

/// A run as read from its folder (or, in the GUI, as built from live events).
#[derive(Debug, Clone, Default)]
pub struct RunHistory {
    /// The run folder.
    pub path: PathBuf,
    /// The config's name, else the folder's name.
    pub name: String,
    /// The experiment, if config.toml could be read.
    pub config: Option<ExperimentDraft>,
    /// metrics.csv, in file order.
    pub metrics: Vec<MetricsRow>,
    /// epochs.csv, in file order.
    pub epochs: Vec<EpochRow>,
    /// summary.json; absent while the run goes on or after a crash.
    pub summary: Option<RunSummary>,
    /// Sentences about anything skipped (bad rows, unreadable config...).
    pub problems: Vec<String>,
}

/// Why a run folder could not be read, renamed or deleted; each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The folder does not exist.
    #[error("{} does not exist; check the path of the run folder", path.display())]
    NotFound {
        /// The path asked for.
        path: PathBuf,
    },
    /// The path exists but is not a run folder.
    #[error(
        "{} is not a Kiln run folder (it has neither config.toml nor metrics.csv); pick a folder that `kiln train` created",
        path.display()
    )]
    NotARun {
        /// The path asked for.
        path: PathBuf,
    },
    /// The new name cannot be used.
    #[error("'{name}' cannot name a run: {reason}")]
    BadName {
        /// The refused name.
        name: String,
        /// What is wrong and what would be accepted.
        reason: String,
    },
    /// The rename target is taken.
    #[error("{} already exists; choose another name", path.display())]
    Exists {
        /// The folder that is in the way.
        path: PathBuf,
    },
    /// config.toml could not be parsed, so its name cannot be rewritten.
    #[error(
        "{} is not a readable Kiln configuration ({message}); fix or restore it, then rename the run again",
        path.display()
    )]
    Config {
        /// The config file.
        path: PathBuf,
        /// What the parser said.
        message: String,
    },
    /// The file system refused.
    #[error("could not {action} {}: {source}; check that it exists and that you may change it", path.display())]
    Io {
        /// What was being done: "read", "rename", "delete"...
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
}

fn io_err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> HistoryError + 'a {
    move |source| HistoryError::Io {
        action,
        path: path.to_owned(),
        source,
    }
}

fn is_run_folder(folder: &Path) -> bool {
    folder.join("config.toml").is_file() || folder.join("metrics.csv").is_file()
}

/// Checks that `folder` is a directory (or a link to one) holding a run. A link is acted on
/// itself: `remove_dir_all` and `rename` never follow it, so a delete stays in the runs folder.
fn check_run_folder(folder: &Path) -> Result<(), HistoryError> {
    match fs::symlink_metadata(folder) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(HistoryError::NotFound {
            path: folder.to_owned(),
        }),
        Err(e) => Err(io_err("read", folder)(e)),
        Ok(meta)
            if (meta.is_dir() || (meta.file_type().is_symlink() && folder.is_dir()))
                && is_run_folder(folder) =>
        {
            Ok(())
        }
        Ok(_) => Err(HistoryError::NotARun {
            path: folder.to_owned(),
        }),
    }
}

fn folder_name_of(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

impl RunHistory {
    /// Reads a run folder; fails only if it is missing or has neither config.toml nor metrics.csv.
    pub fn load(folder: &Path) -> Result<RunHistory, HistoryError> {
        check_run_folder(folder)?;
        let mut history = RunHistory {
            path: folder.to_owned(),
            ..RunHistory::default()
        };

        let config_path = folder.join("config.toml");
        match fs::read_to_string(&config_path) {
            Ok(text) => {
                match ExperimentDraft::from_toml(&text, &config_path.display().to_string()) {
                    Ok(draft) => history.config = Some(draft),
                    Err(e) => history
                        .problems
                        .push(format!("{e}; the run is shown without its settings.")),
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => history.problems.push(format!(
                "{} is missing; the run is shown without its settings.",
                config_path.display()
            )),
            Err(e) => history.problems.push(format!(
                "could not read {}: {e}; the run is shown without its settings.",
                config_path.display()
            )),
        }
        history.name = match &history.config {
            Some(c) if !c.name.trim().is_empty() => c.name.clone(),
            _ => folder_name_of(folder),
        };

        if let Some(text) = read_optional(&folder.join("metrics.csv"), &mut history.problems) {
            history.metrics = parse_csv(
                &text,
                &folder.join("metrics.csv"),
                METRICS_HEADER,
                parse_metrics_row,
                &mut history.problems,
            );
        }
        if let Some(text) = read_optional(&folder.join("epochs.csv"), &mut history.problems) {
            history.epochs = parse_csv(
                &text,
                &folder.join("epochs.csv"),
                EPOCHS_HEADER,
                parse_epoch_row,
                &mut history.problems,
            );
        }

        let summary_path = folder.join("summary.json");
        match fs::read_to_string(&summary_path) {
            Ok(text) => match serde_json::from_str::<RunSummary>(&text) {
                Ok(summary) => history.summary = Some(summary),
                Err(e) => history.problems.push(format!(
                    "{} could not be read ({e}); the run's totals are not shown.",
                    summary_path.display()
                )),
            },
            // Absent while running and after a crash: not a problem.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => history.problems.push(format!(
                "could not read {}: {e}; the run's totals are not shown.",
                summary_path.display()
            )),
        }
        Ok(history)
    }

    /// The last component of [`RunHistory::path`], the name the runs list shows next to the date.
    pub fn folder_name(&self) -> String {
        folder_name_of(&self.path)
    }
}

/// A file's text, or `None` if absent; bytes that are not UTF-8 become bad rows, not an error.
fn read_optional(path: &Path, problems: &mut Vec<String>) -> Option<String> {
    match fs::read(path) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => {
            problems.push(format!("could not read {}: {e}.", path.display()));
            None
        }
    }
}

/// Column positions of the expected header's fields in the file's header, so files written by
/// an older or newer Kiln with columns added or reordered still read.
fn column_map(file_header: &str, expected: &str) -> Result<Vec<usize>, String> {
    let found: HashMap<&str, usize> = file_header
        .split(',')
        .enumerate()
        .map(|(i, c)| (c.trim(), i))
        .collect();
    let mut missing = Vec::new();
    let map = expected
        .split(',')
        .filter_map(|name| {
            let index = found.get(name).copied();
            if index.is_none() {
                missing.push(name);
            }
            index
        })
        .collect();
    if missing.is_empty() {
        Ok(map)
    } else {
        Err(missing.join(", "))
    }
}

fn parse_csv<T>(
    text: &str,
    path: &Path,
    expected_header: &str,
    parse_row: fn(&[&str]) -> Result<T, String>,
    problems: &mut Vec<String>,
) -> Vec<T> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    // After the last '\n' comes either nothing or a row the writer had not finished.
    lines.pop();
    let Some((header, rows)) = lines.split_first() else {
        return Vec::new();
    };
    let columns = match column_map(header.trim_end_matches('\r'), expected_header) {
        Ok(c) => c,
        Err(missing) => {
            problems.push(format!(
                "{} has no column {missing} in its header; its rows are not shown.",
                path.display()
            ));
            return Vec::new();
        }
    };
    let mut out = Vec::with_capacity(rows.len());
    for (i, line) in rows.iter().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').collect();
        let picked: Option<Vec<&str>> = columns
            .iter()
            .map(|&c| fields.get(c).map(|f| f.trim()))
            .collect();
        let result = match picked {
            Some(values) => parse_row(&values),
            None => Err(format!(
                "it has {} fields where the header has more",
                fields.len()
            )),
        };
        match result {
            Ok(row) => out.push(row),
            // Line 1 is the header.
            Err(why) => problems.push(format!(
                "{} line {}: {why}; the row was skipped.",
                path.display(),
                i + 2
            )),
        }
    }
    out
}

fn field<T: std::str::FromStr>(values: &[&str], index: usize, name: &str) -> Result<T, String> {
    let text = values.get(index).copied().unwrap_or("");
    text.parse()
        .map_err(|_| format!("{name} is '{text}', not a number"))
}

fn parse_metrics_row(v: &[&str]) -> Result<MetricsRow, String> {
    Ok(MetricsRow {
        wall_secs: field(v, 0, "wall_secs")?,
        epoch: field(v, 1, "epoch")?,
        step: field(v, 2, "step")?,
        global_step: field(v, 3, "global_step")?,
        samples_seen: field(v, 4, "samples_seen")?,
        train_loss: field(v, 5, "train_loss")?,
        train_accuracy: field(v, 6, "train_accuracy")?,
        samples_per_sec: field(v, 7, "samples_per_sec")?,
        step_ms: field(v, 8, "step_ms")?,
        data_ms: field(v, 9, "data_ms")?,
        compute_ms: field(v, 10, "compute_ms")?,
        sync_ms: field(v, 11, "sync_ms")?,
        lr: field(v, 12, "lr")?,
    })
}

fn parse_epoch_row(v: &[&str]) -> Result<EpochRow, String> {
    Ok(EpochRow {
        epoch: field(v, 0, "epoch")?,
        train_loss: field(v, 1, "train_loss")?,
        train_accuracy: field(v, 2, "train_accuracy")?,
        test_loss: field(v, 3, "test_loss")?,
        test_accuracy: field(v, 4, "test_accuracy")?,
        epoch_secs: field(v, 5, "epoch_secs")?,
        eval_secs: field(v, 6, "eval_secs")?,
        samples_per_sec: field(v, 7, "samples_per_sec")?,
    })
}

/// The per-image predictions a completed run wrote (`predictions.csv`), with the class names
/// from its `confusion.csv`; `None` when the run has none (it did not complete). Past runs keep
/// no pixels, so the gallery is empty.
pub fn load_predictions(
    folder: &Path,
) -> Result<Option<crate::train::TestPredictions>, HistoryError> {
    let read = |name: &str| {
        let path = folder.join(name);
        match fs::read_to_string(&path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(HistoryError::Io {
                action: "read",
                path,
                source,
            }),
        }
    };
    let (Some(rows), Some(confusion)) = (read("predictions.csv")?, read("confusion.csv")?) else {
        return Ok(None);
    };
    let bad = |what: String| HistoryError::Io {
        action: "read",
        path: folder.join("predictions.csv"),
        source: io::Error::new(io::ErrorKind::InvalidData, what),
    };
    let class_names: Vec<String> = confusion
        .lines()
        .next()
        .unwrap_or("")
        .split(',')
        .skip(1)
        .map(|name| name.trim().trim_matches('"').replace("\"\"", "\""))
        .collect();
    let mut predictions = crate::train::TestPredictions {
        class_names,
        labels: Vec::new(),
        predicted: Vec::new(),
        confidence: Vec::new(),
        gallery: Vec::new(),
    };
    for (number, line) in rows.lines().enumerate().skip(1) {
        let fields: Vec<&str> = line.split(',').collect();
        let parsed = match fields.as_slice() {
            [_, label, predicted, confidence] => (
                label.parse::<u8>(),
                predicted.parse::<u8>(),
                confidence.parse::<f32>(),
            ),
            _ => return Err(bad(format!("line {} does not have 4 fields", number + 1))),
        };
        match parsed {
            (Ok(label), Ok(predicted), Ok(confidence)) => {
                predictions.labels.push(label);
                predictions.predicted.push(predicted);
                predictions.confidence.push(confidence);
            }
            _ => {
                return Err(bad(format!(
                    "line {} is not label,predicted,confidence",
                    number + 1
                )));
            }
        }
    }
    Ok(Some(predictions))
}

/// Run folders under `runs_dir` (direct children holding config.toml or metrics.csv), newest
/// first. A missing runs_dir is an empty list, not an error.
pub fn list_runs(runs_dir: &Path) -> Result<Vec<PathBuf>, HistoryError> {
    let entries = match fs::read_dir(runs_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err("list", runs_dir)(e)),
    };
    let mut runs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir() && is_run_folder(path))
        .collect();
    // Folder names start with a UTC timestamp, so name order is age order.
    runs.sort_by(|a, b| b.file_name().cmp(&a.file_name()));
    Ok(runs)
}

/// The `YYYYMMDD-HHMMSS` prefix [`run::RunFolder`] gives every folder, if this one has it.
fn timestamp_prefix(folder_name: &str) -> Option<&str> {
    let prefix = folder_name.get(..15)?;
    let bytes = prefix.as_bytes();
    let shape_ok = bytes.iter().enumerate().all(|(i, b)| {
        if i == 8 {
            *b == b'-'
        } else {
            b.is_ascii_digit()
        }
    });
    let rest_ok = matches!(folder_name.as_bytes().get(15), None | Some(b'-'));
    (shape_ok && rest_ok).then_some(prefix)
}

/// Checks a new run name; a subset of what [`ExperimentDraft::validate`] allows, so a renamed
/// run's config.toml still validates and reruns.
pub fn check_run_name(name: &str) -> Result<(), HistoryError> {
    let bad = |reason: &str| HistoryError::BadName {
        name: name.to_owned(),
        reason: reason.to_owned(),
    };
    if name.is_empty() {
        return Err(bad("give the run a name"));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(bad(&format!(
            "a run name may have at most {MAX_NAME_CHARS} characters"
        )));
    }
    if !name
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(bad(
            "use only letters, digits, '-', '_' and '.' (it becomes part of a folder name)",
        ));
    }
    if name.ends_with('.') {
        // Windows drops a trailing dot from folder names, so the folder would not match.
        return Err(bad("a run name may not end with '.'"));
    }
    Ok(())
}

/// Renames the run: the folder becomes `<timestamp part of old name>-<new_name>` in the same
/// parent (just `<new_name>` if the old name has no timestamp) and config.toml's `name` is
/// rewritten atomically. Refuses if the target exists. Returns the new path.
///
/// A run still being trained must not be renamed: its writer holds the old path.
pub fn rename_run(folder: &Path, new_name: &str) -> Result<PathBuf, HistoryError> {
    check_run_name(new_name)?;
    check_run_folder(folder)?;
    let old_name = folder_name_of(folder);
    let new_folder_name = match timestamp_prefix(&old_name) {
        Some(ts) => format!("{ts}-{new_name}"),
        None => new_name.to_owned(),
    };
    let target = folder.with_file_name(&new_folder_name);

    // Everything that can be refused is checked before anything changes.
    let config_path = folder.join("config.toml");
    let old_config = match fs::read_to_string(&config_path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_err("read", &config_path)(e)),
    };
    let new_config = match &old_config {
        Some(text) => {
            let mut draft = ExperimentDraft::from_toml(text, &config_path.display().to_string())
                .map_err(|e| HistoryError::Config {
                    path: config_path.clone(),
                    message: e.to_string(),
                })?;
            draft.name = new_name.to_owned();
            Some(draft.to_toml())
        }
        None => None,
    };
    if target != folder && fs::symlink_metadata(&target).is_ok() {
        return Err(HistoryError::Exists { path: target });
    }

    if let Some(text) = &new_config {
        run::write_atomically(&config_path, text.as_bytes())
            .map_err(io_err("write", &config_path))?;
    }
    if target != folder
        && let Err(e) = fs::rename(folder, &target)
    {
        if let Some(text) = &old_config {
            // Put the old name back so folder and config still agree; the rename error is
            // the one to report.
            let _ = run::write_atomically(&config_path, text.as_bytes());
        }
        return Err(io_err("rename", folder)(e));
    }
    Ok(target)
}

/// Deletes the run folder, refusing anything that is not a run folder (no config.toml and no
/// metrics.csv) so a wrong path can never wipe unrelated files.
pub fn delete_run(folder: &Path) -> Result<(), HistoryError> {
    check_run_folder(folder)?;
    fs::remove_dir_all(folder).map_err(io_err("delete", folder))
}

/// The settings a legend may name, as `(label, value)`, in the order a person reads them.
/// A run's settings as (name, value) pairs, in the order a legend names them.
pub(crate) type Settings = Vec<(&'static str, Option<String>)>;

/// The settings a legend may name, most often varied first; `None` where a setting does not
/// apply to a run (momentum of Adam) or is not known (device `auto`), so it never makes two runs
/// look different.
pub(crate) fn describe(draft: &ExperimentDraft) -> Settings {
    use crate::config::OptimizerSpec;
    use crate::device::DeviceChoice;
    let (momentum, nesterov, epsilon, weight_decay) = match &draft.optimizer {
        OptimizerSpec::Sgd {
            momentum,
            nesterov,
            weight_decay,
        } => (
            Some(momentum.to_string()),
            nesterov.then(|| "on".to_owned()),
            None,
            weight_decay,
        ),
        OptimizerSpec::Adam {
            epsilon,
            weight_decay,
            ..
        }
        | OptimizerSpec::AdamW {
            epsilon,
            weight_decay,
            ..
        } => (None, None, Some(epsilon.to_string()), weight_decay),
    };
    let device = match draft.device {
        DeviceChoice::Auto => None,
        other => Some(other.to_string()),
    };
    vec![
        ("lr", Some(draft.lr.to_string())),
        ("optimizer", Some(draft.optimizer.name().to_owned())),
        ("momentum", momentum),
        ("nesterov", nesterov),
        ("batch", Some(draft.batch_size.to_string())),
        ("schedule", Some(draft.schedule.to_string())),
        ("weight decay", Some(weight_decay.to_string())),
        ("model", Some(draft.model.to_string())),
        ("dataset", Some(draft.dataset.to_string())),
        ("scaling", Some(draft.input_scaling.to_string())),
        ("init", Some(draft.init.to_string())),
        ("loss", Some(draft.loss.to_string())),
        ("epsilon", epsilon),
        ("seed", Some(draft.seed.to_string())),
        ("epochs", Some(draft.epochs.to_string())),
        ("device", device),
        ("precision", Some(draft.precision.to_string())),
        ("crop padding", Some(draft.crop_padding.to_string())),
        (
            "flip",
            Some(if draft.flip { "on" } else { "off" }.to_owned()),
        ),
    ]
}

/// One legend label per run naming what differs between them ("lr 0.01" vs "lr 0.1"); falls
/// back to the run name (and the folder name where names clash). One run → its name.
pub fn legend_labels(runs: &[&RunHistory]) -> Vec<String> {
    if runs.len() == 1 {
        return vec![runs[0].name.clone()];
    }
    let described: Vec<Option<Settings>> = runs
        .iter()
        .map(|r| r.config.as_ref().map(describe))
        .collect();
    let with_config: Vec<&Settings> = described.iter().flatten().collect();
    let field_count = with_config.first().map_or(0, |d| d.len());
    // A field differs when the runs that have it hold more than one value between them.
    let differing: Vec<usize> = if with_config.len() > 1 {
        (0..field_count)
            .filter(|&i| {
                let mut values: Vec<&String> =
                    with_config.iter().filter_map(|d| d[i].1.as_ref()).collect();
                values.sort();
                values.dedup();
                values.len() > 1
            })
            .collect()
    } else {
        Vec::new()
    };
    // (label, came from settings)
    let mut labels: Vec<(String, bool)> = runs
        .iter()
        .zip(&described)
        .map(|(run, d)| match d {
            Some(fields) if !differing.is_empty() => {
                let text = differing
                    .iter()
                    .filter_map(|&i| {
                        let (key, value) = &fields[i];
                        value.as_ref().map(|value| format!("{key} {value}"))
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                if text.is_empty() {
                    (run.name.clone(), false)
                } else {
                    (text, true)
                }
            }
            _ => (run.name.clone(), false),
        })
        .collect();
    let counts = |labels: &[(String, bool)]| {
        let mut counts: HashMap<String, usize> = HashMap::new();
        for (label, _) in labels {
            *counts.entry(label.clone()).or_default() += 1;
        }
        counts
    };
    let seen = counts(&labels);
    for (run, (label, from_settings)) in runs.iter().zip(labels.iter_mut()) {
        if seen.get(label.as_str()).copied().unwrap_or(0) > 1 {
            *label = if *from_settings {
                format!("{label} ({})", run.folder_name())
            } else {
                run.folder_name()
            };
        }
    }
    labels.into_iter().map(|(label, _)| label).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::test_dir;
    use crate::run::RunFolder;
    use crate::train::{RunOutcome, TrainEvent};

    fn progress(epoch: usize, step: usize, loss: f64) -> Progress {
        Progress {
            wall_secs: step as f64 * 0.5,
            epoch,
            step_in_epoch: step,
            global_step: epoch * 10 + step,
            samples_seen: (epoch * 10 + step) as u64 * 32,
            train_loss: loss,
            train_accuracy: 0.5,
            samples_per_sec: 1000.0,
            step_ms: 2.5,
            data_ms: 0.1,
            compute_ms: 2.0,
            sync_ms: 0.4,
            lr: 1e-3,
        }
    }

    fn epoch_end(epoch: usize) -> EpochSummary {
        EpochSummary {
            epoch,
            train_loss: 1.0,
            train_accuracy: 0.6,
            test_loss: 1.1,
            test_accuracy: 0.55,
            train_secs: 5.0,
            eval_secs: 0.5,
            samples_per_sec: 900.0,
        }
    }

    /// A run folder written by the real writer: two epochs of five readbacks each.
    fn write_run(runs_dir: &Path, name: &str, lr: f64) -> PathBuf {
        let draft = ExperimentDraft {
            name: name.to_owned(),
            lr,
            ..ExperimentDraft::default()
        };
        let experiment = draft.validate().unwrap();
        let mut folder = RunFolder::create(runs_dir, &experiment).unwrap();
        for epoch in 0..2 {
            for step in 1..=5 {
                folder
                    .record(&TrainEvent::Progress(progress(
                        epoch,
                        step,
                        2.0 / step as f64,
                    )))
                    .unwrap();
            }
            folder
                .record(&TrainEvent::EpochEnd(epoch_end(epoch)))
                .unwrap();
        }
        let mut summary = RunSummary::new("cpu", 100, 0.1, 0.0);
        summary.epochs_completed = 2;
        folder
            .record(&TrainEvent::Finished(Box::new(summary)))
            .unwrap();
        folder.path().to_owned()
    }

    #[test]
    fn a_folder_written_by_run_folder_reads_back() {
        let dir = test_dir("history-load");
        let path = write_run(&dir, "first", 0.01);
        let run = RunHistory::load(&path).unwrap();
        assert!(run.problems.is_empty(), "{:?}", run.problems);
        assert_eq!(run.name, "first");
        // config.toml round-trips the whole draft, an absent data_dir included.
        let expected = ExperimentDraft {
            name: "first".to_owned(),
            lr: 0.01,
            ..ExperimentDraft::default()
        };
        assert_eq!(run.config.as_ref(), Some(&expected));
        assert_eq!(run.metrics.len(), 10);
        assert_eq!(run.epochs.len(), 2);
        let first = &run.metrics[0];
        assert_eq!(first, &MetricsRow::from(&progress(0, 1, 2.0)));
        assert_eq!(run.metrics[9].epoch, 2);
        assert_eq!(run.epochs[1], EpochRow::from(&epoch_end(1)));
        assert_eq!(run.summary.as_ref().unwrap().outcome, RunOutcome::Completed);
        assert!(run.folder_name().ends_with("-first"));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_truncated_last_row_is_skipped_silently() {
        let dir = test_dir("history-truncated");
        let path = write_run(&dir, "cut", 0.01);
        fs::remove_file(path.join("summary.json")).unwrap();
        let mut metrics = fs::read_to_string(path.join("metrics.csv")).unwrap();
        metrics.push_str("3.000,3,1,21,672,0.9");
        fs::write(path.join("metrics.csv"), metrics).unwrap();
        let run = RunHistory::load(&path).unwrap();
        assert!(run.problems.is_empty(), "{:?}", run.problems);
        assert_eq!(run.metrics.len(), 10);
        assert!(run.summary.is_none());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn garbage_rows_are_skipped_and_named() {
        let dir = test_dir("history-garbage");
        let path = write_run(&dir, "garbage", 0.01);
        let text = fs::read_to_string(path.join("epochs.csv")).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        lines.insert(2, "2,oops,0.5,1,0.5,1,1,1");
        fs::write(path.join("epochs.csv"), lines.join("\n") + "\n").unwrap();
        fs::write(path.join("summary.json"), "{ not json").unwrap();
        let run = RunHistory::load(&path).unwrap();
        assert_eq!(run.epochs.len(), 2);
        assert_eq!(run.problems.len(), 2, "{:?}", run.problems);
        assert!(
            run.problems[0].contains("epochs.csv line 3") && run.problems[0].contains("oops"),
            "{:?}",
            run.problems
        );
        assert!(
            run.problems[1].contains("summary.json"),
            "{:?}",
            run.problems
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn hand_written_files_and_a_bad_config_still_load() {
        let dir = test_dir("history-hand");
        let path = dir.join("20260101-000000-hand");
        fs::create_dir_all(&path).unwrap();
        fs::write(path.join("config.toml"), "batch = 3\n").unwrap();
        // Columns reordered and one added, CRLF line ends, NaN loss.
        fs::write(
            path.join("metrics.csv"),
            "epoch,wall_secs,step,global_step,samples_seen,train_loss,train_accuracy,samples_per_sec,step_ms,data_ms,compute_ms,sync_ms,lr,extra\r\n\
             1,0.5,1,1,32,NaN,0.1,100,1,0,1,0,0.1,x\r\n",
        )
        .unwrap();
        let run = RunHistory::load(&path).unwrap();
        assert_eq!(run.name, "20260101-000000-hand");
        assert!(run.config.is_none());
        assert_eq!(run.problems.len(), 1, "{:?}", run.problems);
        assert!(run.problems[0].contains("config.toml"));
        assert_eq!(run.metrics.len(), 1);
        assert_eq!(run.metrics[0].epoch, 1);
        assert_eq!(run.metrics[0].wall_secs, 0.5);
        assert!(run.metrics[0].train_loss.is_nan());
        assert!(run.epochs.is_empty());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn missing_and_non_run_folders_are_errors() {
        let dir = test_dir("history-missing");
        let err = RunHistory::load(&dir.join("nope")).unwrap_err();
        assert!(matches!(err, HistoryError::NotFound { .. }), "{err}");
        assert!(err.to_string().contains("nope"), "{err}");
        let err = RunHistory::load(&dir).unwrap_err();
        assert!(matches!(err, HistoryError::NotARun { .. }), "{err}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn runs_are_listed_newest_first() {
        let dir = test_dir("history-list");
        assert!(list_runs(&dir.join("missing")).unwrap().is_empty());
        for name in [
            "20260102-000000-b",
            "20260103-000000-c",
            "20260101-000000-a",
        ] {
            fs::create_dir_all(dir.join(name)).unwrap();
            fs::write(dir.join(name).join("metrics.csv"), METRICS_HEADER).unwrap();
        }
        fs::create_dir_all(dir.join("20270101-000000-not-a-run")).unwrap();
        fs::write(dir.join("20280101-000000-file"), "x").unwrap();
        let names: Vec<String> = list_runs(&dir)
            .unwrap()
            .iter()
            .map(|p| folder_name_of(p))
            .collect();
        assert_eq!(
            names,
            [
                "20260103-000000-c",
                "20260102-000000-b",
                "20260101-000000-a"
            ]
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn rename_moves_the_folder_and_rewrites_the_config() {
        let dir = test_dir("history-rename");
        let path = write_run(&dir, "old", 0.01);
        let stamp = folder_name_of(&path)[..15].to_owned();
        let renamed = rename_run(&path, "new_name-2.b").unwrap();
        assert_eq!(folder_name_of(&renamed), format!("{stamp}-new_name-2.b"));
        assert!(!path.exists());
        let run = RunHistory::load(&renamed).unwrap();
        assert_eq!(run.name, "new_name-2.b");
        assert!(run.problems.is_empty(), "{:?}", run.problems);
        assert_eq!(run.metrics.len(), 10);
        // The renamed config still validates, so the run can be rerun from it.
        run.config.unwrap().validate().unwrap();
        // Renaming to the same name is a no-op, not "already exists".
        assert_eq!(rename_run(&renamed, "new_name-2.b").unwrap(), renamed);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn rename_refuses_bad_names_and_taken_targets() {
        let dir = test_dir("history-rename-refused");
        let path = write_run(&dir, "one", 0.01);
        for bad in ["", "a/b", "a b", "..\\x", "x.", &"n".repeat(65)] {
            let err = rename_run(&path, bad).unwrap_err();
            assert!(matches!(err, HistoryError::BadName { .. }), "{bad}: {err}");
        }
        let stamp = folder_name_of(&path)[..15].to_owned();
        fs::create_dir_all(dir.join(format!("{stamp}-taken"))).unwrap();
        let err = rename_run(&path, "taken").unwrap_err();
        assert!(matches!(err, HistoryError::Exists { .. }), "{err}");
        assert!(err.to_string().contains("taken"), "{err}");
        let err = rename_run(&dir.join("nothing"), "x").unwrap_err();
        assert!(matches!(err, HistoryError::NotFound { .. }), "{err}");
        let plain = dir.join("plain");
        fs::create_dir_all(&plain).unwrap();
        let err = rename_run(&plain, "x").unwrap_err();
        assert!(matches!(err, HistoryError::NotARun { .. }), "{err}");
        // Nothing changed.
        assert_eq!(RunHistory::load(&path).unwrap().name, "one");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn delete_refuses_what_is_not_a_run() {
        let dir = test_dir("history-delete");
        let other = dir.join("photos");
        fs::create_dir_all(&other).unwrap();
        fs::write(other.join("cat.png"), "meow").unwrap();
        let err = delete_run(&other).unwrap_err();
        assert!(matches!(err, HistoryError::NotARun { .. }), "{err}");
        assert!(other.join("cat.png").exists());
        let err = delete_run(&other.join("cat.png")).unwrap_err();
        assert!(matches!(err, HistoryError::NotARun { .. }), "{err}");
        let path = write_run(&dir, "doomed", 0.01);
        #[cfg(unix)]
        {
            // Deleting a link to a run removes the link, never the run it points to.
            let link = dir.join("link");
            std::os::unix::fs::symlink(&path, &link).unwrap();
            delete_run(&link).unwrap();
            assert!(!link.exists() && path.join("metrics.csv").exists());
        }
        delete_run(&path).unwrap();
        assert!(!path.exists());
        assert!(matches!(
            delete_run(&path).unwrap_err(),
            HistoryError::NotFound { .. }
        ));
        let _ = fs::remove_dir_all(&dir);
    }

    fn history(name: &str, folder: &str, config: Option<ExperimentDraft>) -> RunHistory {
        RunHistory {
            path: PathBuf::from("runs").join(folder),
            name: name.to_owned(),
            config,
            ..RunHistory::default()
        }
    }

    fn draft(lr: f64, batch_size: usize) -> Option<ExperimentDraft> {
        Some(ExperimentDraft {
            lr,
            batch_size,
            ..ExperimentDraft::default()
        })
    }

    #[test]
    fn legend_labels_name_what_differs() {
        let a = history("a", "1-a", draft(0.01, 64));
        let b = history("b", "2-b", draft(0.1, 64));
        assert_eq!(legend_labels(&[&a, &b]), ["lr 0.01", "lr 0.1"]);

        let c = history("c", "3-c", draft(0.1, 32));
        assert_eq!(
            legend_labels(&[&a, &b, &c]),
            ["lr 0.01, batch 64", "lr 0.1, batch 64", "lr 0.1, batch 32"]
        );

        let mut sgd = draft(0.01, 64);
        if let Some(d) = &mut sgd {
            d.optimizer = crate::config::OptimizerSpec::Sgd {
                momentum: 0.9,
                nesterov: false,
                weight_decay: 0.0,
            };
        }
        let s = history("s", "4-s", sgd);
        assert_eq!(
            legend_labels(&[&a, &s]),
            ["optimizer adam", "optimizer sgd"]
        );

        // Momentum is named only between SGD runs, where it means something.
        let mut plain = sgd_draft(0.0);
        let heavy = sgd_draft(0.9);
        assert_eq!(
            legend_labels(&[
                &history("p", "5-p", plain.clone()),
                &history("h", "6-h", heavy)
            ]),
            ["momentum 0", "momentum 0.9"]
        );

        // `auto` is not a device: it never makes two runs look different.
        if let Some(d) = &mut plain {
            d.device = crate::device::DeviceChoice::Cpu;
            d.lr = 0.5;
        }
        let auto = sgd_draft(0.0);
        assert_eq!(
            legend_labels(&[&history("c", "7-c", plain), &history("u", "8-u", auto)]),
            ["lr 0.5", "lr 0.01"]
        );
    }

    fn sgd_draft(momentum: f64) -> Option<ExperimentDraft> {
        let mut d = draft(0.01, 64);
        if let Some(d) = &mut d {
            d.optimizer = crate::config::OptimizerSpec::Sgd {
                momentum,
                nesterov: false,
                weight_decay: 0.0,
            };
        }
        d
    }

    #[test]
    fn legend_labels_fall_back_to_names_then_folders() {
        let one = history("solo", "1-solo", draft(0.01, 64));
        assert_eq!(legend_labels(&[&one]), ["solo"]);
        assert!(legend_labels(&[]).is_empty());

        // Same settings: the names tell them apart.
        let a = history("a", "1-a", draft(0.01, 64));
        let b = history("b", "2-b", draft(0.01, 64));
        assert_eq!(legend_labels(&[&a, &b]), ["a", "b"]);

        // Same settings and names: the folders do.
        let b2 = history("a", "2-a", draft(0.01, 64));
        assert_eq!(legend_labels(&[&a, &b2]), ["1-a", "2-a"]);

        // No configs at all.
        let x = history("x", "1-x", None);
        let y = history("y", "2-y", None);
        assert_eq!(legend_labels(&[&x, &y]), ["x", "y"]);

        // Two identical settings among different ones get their folder added.
        let c = history("c", "3-c", draft(0.1, 64));
        assert_eq!(
            legend_labels(&[&a, &b2, &c]),
            ["lr 0.01 (1-a)", "lr 0.01 (2-a)", "lr 0.1"]
        );

        // A run without a config keeps its name next to runs that have one.
        assert_eq!(legend_labels(&[&a, &c, &x]), ["lr 0.01", "lr 0.1", "x"]);
    }
}
