//! Runs from other frameworks: a training log that `kiln import` found (Keras's or Lightning's
//! CSV, Keras's `History`, TensorBoard scalars, a plain CSV) kept as a run folder of its own, so
//! it lists, plots, overlays, exports and compares like Kiln's runs.
//!
//! ```text
//! runs/<timestamp>-<framework>-<name>/
//!   source.json   where it came from: framework, file or folder, hyperparameters, notes
//!   epochs.csv    its epochs, each figure the log does not hold left empty (unknown, not zero)
//!   train/  validation/   its epochs as TensorBoard event files, as Kiln's own runs have them
//! ```
//!
//! Such a folder has no config.toml, metrics.csv or summary.json: what Kiln did not see (the
//! device, samples per second, each step) stays unknown wherever the run is shown.

use std::path::{Path, PathBuf};

use kiln_formats::training_log::{FoundLog, LogEpoch};
use serde::{Deserialize, Serialize};

use super::tensorboard::EventFiles;
use super::{EPOCHS_FILE, EpochRow, RunArchive, timestamp};
use web_time::SystemTime;

/// The imported run's record of where it came from.
pub const SOURCE_FILE: &str = "source.json";

/// Where an imported run came from, as `source.json` keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportedSource {
    /// The run's name: the log file's stem, or its folder's (`version_3`).
    pub name: String,
    /// The framework, as the runs list and `kiln compare` name it ("Keras", "Lightning"…).
    pub framework: String,
    /// The file or folder it was read from, as it was given to `kiln import`.
    pub source: String,
    /// When it was imported, `YYYYMMDD-HHMMSS` UTC.
    pub imported_at: String,
    /// Hyperparameters the log names (Lightning's `hparams.yaml`), in its order.
    #[serde(default)]
    pub hparams: Vec<Hparam>,
    /// How the log was read: columns taken as which figure, percentages brought to fractions,
    /// what was left out.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// One hyperparameter of an imported run, flattened with dots (`optimizer.lr`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hparam {
    /// Its name.
    pub name: String,
    /// Its value, as the log wrote it.
    pub value: String,
}

impl ImportedSource {
    /// What the run list shows after the run's name: "Keras, from training.log".
    pub fn describe(&self) -> String {
        let file = Path::new(&self.source)
            .file_name()
            .map_or_else(|| self.source.clone(), |n| n.to_string_lossy().into_owned());
        format!("{}, from {file}", self.framework)
    }
}

/// What an imported log's validation series were computed on, as the person says: a script's
/// "validation" is often the test set (Keras's `validation_data=(x_test, y_test)` in the user
/// report), and a Kiln run validated on test reports it as test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogValidation {
    /// A held-out split: the figures stay validation figures.
    #[default]
    Validation,
    /// The test set: the figures become test figures, beside Kiln runs validated on test.
    Test,
}

/// The run folder a found log becomes, as an archive's files so that the disk and a page's
/// memory take it alike ([`super::import`], [`super::import_in_memory`]). The folder is named
/// `<now>-<framework>-<name>`, with what a run name may not hold replaced by `-`.
pub fn imported_run(found: &FoundLog, validation: LogValidation) -> RunArchive {
    let now = SystemTime::now();
    let stamp = timestamp(now);
    let framework = found.log.framework.name();
    let name = run_name(&format!("{}-{}", framework.to_lowercase(), found.name));
    let mut source = ImportedSource {
        name: found.name.clone(),
        framework: framework.to_owned(),
        source: found.source.display().to_string(),
        imported_at: stamp.clone(),
        hparams: found
            .log
            .hparams
            .iter()
            .map(|(name, value)| Hparam {
                name: name.clone(),
                value: value.clone(),
            })
            .collect(),
        notes: found.log.notes.clone(),
    };
    let mut rows: Vec<EpochRow> = found.log.epochs.iter().map(epoch_row).collect();
    if validation == LogValidation::Test {
        for row in &mut rows {
            row.test_loss = row.val_loss.take();
            row.test_accuracy = row.val_accuracy.take();
        }
        source.notes.push(
            "its validation series were computed on the test set, as the person said: they are its test figures".to_owned(),
        );
    }
    let mut epochs = format!("{}\n", EpochRow::HEADER);
    for row in &rows {
        epochs.push_str(&row.to_line());
    }
    // A JSON encoder of plain strings cannot fail.
    let source_json = serde_json::to_vec_pretty(&source).unwrap_or_default();
    let mut files = vec![
        (PathBuf::from(SOURCE_FILE), source_json),
        (PathBuf::from(EPOCHS_FILE), epochs.into_bytes()),
    ];
    // Event files too, so `tensorboard --logdir runs/` shows it beside Kiln's runs; one epoch
    // a second apart from the import's time, as the log keeps no times.
    let start_secs = now
        .duration_since(web_time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut events = EventFiles::new(start_secs, 0);
    for row in &rows {
        for (path, bytes) in events.epoch(row, (start_secs + row.epoch as u64) as f64) {
            match files.iter_mut().find(|(p, _)| *p == path) {
                Some((_, file)) => file.extend(bytes),
                None => files.push((path, bytes)),
            }
        }
    }
    RunArchive {
        name: format!("{stamp}-{name}"),
        files,
    }
}

/// What importing one path did: the run folders written, and a sentence for each log that was
/// left out or read only in part.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportOutcome {
    /// The run folders written, in the order their logs were found.
    pub folders: Vec<PathBuf>,
    /// Logs left out or cut short, each with why.
    pub problems: Vec<String>,
}

/// Imports what `path` holds into `runs_dir`, as `kiln import` and the window's *Import run…*
/// do: a run folder archive (`kiln archive`; by its name or its first bytes) becomes its run
/// folder again; any other file or folder is searched for training logs of other frameworks,
/// and each becomes a run folder of its own ([`imported_run`]), its series read by the
/// frameworks' conventions and as `names` names them. Fails with a sentence when nothing could
/// be imported.
#[cfg(not(target_arch = "wasm32"))]
pub fn import_path(
    path: &Path,
    runs_dir: &Path,
    names: &kiln_formats::training_log::SeriesNames,
    validation: LogValidation,
) -> Result<ImportOutcome, String> {
    use kiln_formats::files::Disk;

    if path.is_file() && is_archive(path)? {
        let bytes = std::fs::read(path).map_err(|e| format!("could not read it: {e}"))?;
        let archive = super::read_archive(&bytes).map_err(|e| e.to_string())?;
        let folder = super::import(&archive, runs_dir).map_err(|e| e.to_string())?;
        return Ok(ImportOutcome {
            folders: vec![folder],
            problems: Vec::new(),
        });
    }
    let found =
        kiln_formats::training_log::find_logs_naming(&Disk, path, names).map_err(|e| e.why)?;
    let mut outcome = ImportOutcome {
        folders: Vec::new(),
        problems: found.problems,
    };
    for log in &found.logs {
        match super::import(&imported_run(log, validation), runs_dir) {
            Ok(folder) => outcome.folders.push(folder),
            Err(e) => outcome
                .problems
                .push(format!("{} was not imported: {e}", log.source.display())),
        }
    }
    if outcome.folders.is_empty() {
        return Err(outcome.problems.join("; "));
    }
    Ok(outcome)
}

/// The series of the logs at `path` that neither a convention nor `names` makes a figure, each
/// once: what the window asks a person to name before it imports (none for an archive).
#[cfg(not(target_arch = "wasm32"))]
pub fn unnamed_series_at(
    path: &Path,
    names: &kiln_formats::training_log::SeriesNames,
) -> Vec<String> {
    use kiln_formats::files::Disk;

    if path.is_file() && is_archive(path).unwrap_or(false) {
        return Vec::new();
    }
    match kiln_formats::training_log::find_logs_naming(&Disk, path, names) {
        Ok(found) => found.unnamed_series,
        Err(error) => error.unnamed_series,
    }
}

/// Whether the file at `path` is a run folder archive: named as one (so a cut archive gets the
/// archive's sentence), or opening as gzip or a tar header does.
#[cfg(not(target_arch = "wasm32"))]
fn is_archive(path: &Path) -> Result<bool, String> {
    use std::io::Read;

    let name = path.to_string_lossy().to_lowercase();
    if [".tar", ".tar.gz", ".tgz"]
        .iter()
        .any(|end| name.ends_with(end))
    {
        return Ok(true);
    }
    let mut head = Vec::with_capacity(512);
    std::fs::File::open(path)
        .and_then(|file| file.take(512).read_to_end(&mut head))
        .map_err(|e| format!("could not read it: {e}"))?;
    Ok(head.starts_with(&[0x1f, 0x8b]) || head.get(257..262) == Some(b"ustar"))
}

/// A log's epoch as a row of `epochs.csv`: what it was evaluated on is taken as validation, and
/// what a log never holds (seconds, samples per second) is unknown.
fn epoch_row(epoch: &LogEpoch) -> EpochRow {
    EpochRow {
        epoch: epoch.epoch,
        train_loss: epoch.train_loss,
        train_accuracy: epoch.train_accuracy,
        val_loss: epoch.val_loss,
        val_accuracy: epoch.val_accuracy,
        test_loss: None,
        test_accuracy: None,
        epoch_secs: None,
        eval_secs: None,
        samples_per_sec: None,
    }
}

/// `text` as a run name: letters, digits, `-`, `_` and `.` kept, any other run of characters
/// one `-`, at most [`super::MAX_NAME_CHARS`] characters, never ending in `.`.
fn run_name(text: &str) -> String {
    let mut name = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
            name.push(c);
        } else if !name.ends_with('-') {
            name.push('-');
        }
    }
    let mut name: String = name.chars().take(super::MAX_NAME_CHARS).collect();
    while name.ends_with(['.', '-']) {
        name.pop();
    }
    if name.is_empty() {
        name.push_str("imported");
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_folder::{RunHistory, import_in_memory};
    use kiln_formats::files::{FileTree, MemoryFiles};
    use kiln_formats::training_log::{Framework, TrainingLog};

    #[test]
    fn an_imported_log_reads_back_as_a_run_with_its_source_and_unknowns_left_unknown() {
        let found = FoundLog {
            source: PathBuf::from("logs/lightning_logs/version_3"),
            name: "version_3".to_owned(),
            log: TrainingLog {
                framework: Framework::Lightning,
                epochs: vec![
                    LogEpoch {
                        epoch: 1,
                        train_loss: Some(0.9),
                        val_accuracy: Some(0.7),
                        ..LogEpoch::default()
                    },
                    LogEpoch {
                        epoch: 2,
                        train_loss: Some(0.6),
                        val_loss: Some(0.5),
                        val_accuracy: Some(0.8),
                        ..LogEpoch::default()
                    },
                ],
                hparams: vec![("lr".to_owned(), "0.01".to_owned())],
                notes: vec!["`train_loss_step` was averaged".to_owned()],
                unnamed_series: Vec::new(),
            },
        };
        let archive = imported_run(&found, LogValidation::Validation);
        assert!(
            archive.name.ends_with("-lightning-version_3"),
            "{}",
            archive.name
        );
        let mut files = MemoryFiles::new();
        let folder = import_in_memory(&archive, &mut files, Path::new("runs")).unwrap();
        let run = RunHistory::load_in(&files, &folder).unwrap();
        assert!(run.problems.is_empty(), "{:?}", run.problems);
        assert_eq!(run.name, "lightning-version_3");
        assert!(run.config.is_none() && run.summary.is_none() && run.metrics.is_empty());
        let source = run.source.expect("source.json");
        assert_eq!(source.framework, "Lightning");
        assert_eq!(source.describe(), "Lightning, from version_3");
        assert_eq!(source.hparams[0].value, "0.01");
        assert_eq!(run.epochs.len(), 2);
        let first = &run.epochs[0];
        assert_eq!(
            (first.train_loss, first.val_accuracy),
            (Some(0.9), Some(0.7))
        );
        // What the log did not hold is unknown, not zero.
        assert_eq!((first.val_loss, first.train_accuracy), (None, None));
        assert_eq!((first.samples_per_sec, first.epoch_secs), (None, None));
        // Its event files are there, beside Kiln's own runs' in `tensorboard --logdir`.
        let (train_dir, validation_dir) = (folder.join("train"), folder.join("validation"));
        assert_eq!(files.entries(&train_dir).unwrap().len(), 1);
        assert_eq!(files.entries(&validation_dir).unwrap().len(), 1);
    }

    #[test]
    fn a_run_name_keeps_what_a_folder_name_may_hold_and_joins_the_rest_into_dashes() {
        assert_eq!(run_name("keras-training"), "keras-training");
        assert_eq!(
            run_name("tensorboard-Loss/train run 2"),
            "tensorboard-Loss-train-run-2"
        );
        assert_eq!(run_name("csv-résumé.v1."), "csv-résumé.v1");
        assert_eq!(run_name("///"), "imported");
        assert_eq!(
            run_name(&"a".repeat(500)).chars().count(),
            super::super::MAX_NAME_CHARS
        );
    }
}
