//! Run folders read back: the runs list, overlays and exports all start from a [`RunHistory`].
//!
//! Reading is forgiving because a run folder may be cut short by a crash or still be written to:
//! a row without its line end is one a crash (or the live writer) left unfinished and is skipped
//! silently; any other unreadable row is skipped and named in [`RunHistory::problems`].

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use kiln_formats::files::{Disk, FileTree};

use super::manage::timestamp_prefix;
use super::rows::parse_csv;
use super::{
    CONFIG_FILE, CONFUSION_FILE, EPOCHS_FILE, EpochRow, FolderError, ImportedSource, METRICS_FILE,
    MetricsRow, PREDICTIONS_FILE, PredictionRow, SOURCE_FILE, SUMMARY_FILE, check_run_folder,
    check_run_folder_in, folder_name_of,
};
use crate::config::{ExperimentDraft, Validation};
use crate::results::TestPredictions;
use crate::selection::ValidatedOn;
use crate::train::RunSummary;

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
    /// source.json of a run imported from another framework's log; none for Kiln's own runs.
    pub source: Option<ImportedSource>,
    /// Sentences about anything skipped (bad rows, unreadable config...).
    pub problems: Vec<String>,
}

impl RunHistory {
    /// Reads a run folder; fails only if it is missing or has neither config.toml nor metrics.csv.
    pub fn load(folder: &Path) -> Result<RunHistory, FolderError> {
        check_run_folder(folder)?;
        Ok(Self::read_files(&Disk, folder))
    }

    /// [`RunHistory::load`] of a run folder in `tree`: the disk, or a page's files in memory.
    pub fn load_in(tree: &dyn FileTree, folder: &Path) -> Result<RunHistory, FolderError> {
        check_run_folder_in(tree, folder)?;
        Ok(Self::read_files(tree, folder))
    }

    /// Reads the files of a folder known to hold a run; what cannot be read becomes a problem.
    fn read_files(tree: &dyn FileTree, folder: &Path) -> RunHistory {
        let mut history = RunHistory {
            path: folder.to_owned(),
            ..RunHistory::default()
        };

        let source_path = folder.join(SOURCE_FILE);
        history.source = read_json::<ImportedSource>(
            tree,
            &source_path,
            "the imported run is shown without its source",
            &mut history.problems,
        );
        let imported = tree.is_file(&source_path);

        let config_path = folder.join(CONFIG_FILE);
        match read_text(tree, &config_path) {
            Ok(text) => {
                match ExperimentDraft::from_run_config(&text, &config_path.display().to_string()) {
                    Ok(draft) => history.config = Some(draft),
                    Err(e) => history
                        .problems
                        .push(format!("{e}; the run is shown without its settings.")),
                }
            }
            // An imported run never has one: Kiln did not run it.
            Err(e) if e.kind() == io::ErrorKind::NotFound && imported => {}
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
            // An imported run's name is its folder's, so a rename shows.
            _ if imported => {
                let folder_name = folder_name_of(folder);
                match timestamp_prefix(&folder_name) {
                    Some(stamp) => folder_name[stamp.len()..]
                        .trim_start_matches('-')
                        .to_owned(),
                    None => folder_name,
                }
            }
            _ => folder_name_of(folder),
        };

        if let Some(text) = read_optional(tree, &folder.join(METRICS_FILE), &mut history.problems) {
            history.metrics = parse_csv(
                &text,
                &folder.join(METRICS_FILE),
                (MetricsRow::HEADER, &[]),
                MetricsRow::parse,
                &mut history.problems,
            );
        }
        if let Some(text) = read_optional(tree, &folder.join(EPOCHS_FILE), &mut history.problems) {
            history.epochs = parse_csv(
                &text,
                &folder.join(EPOCHS_FILE),
                (EpochRow::HEADER, EpochRow::OPTIONAL),
                EpochRow::parse,
                &mut history.problems,
            );
        }

        // Absent while running and after a crash: not a problem.
        history.summary = read_json::<RunSummary>(
            tree,
            &folder.join(SUMMARY_FILE),
            "the run's totals are not shown",
            &mut history.problems,
        );
        history
    }

    /// What the run's epochs were evaluated on: as its summary says, else as its epoch rows or
    /// its config show; a run from before validation splits was validated on test.
    pub fn validated_on(&self) -> ValidatedOn {
        if let Some(summary) = &self.summary {
            return summary.validated_on;
        }
        if let Some(row) = self.epochs.first() {
            return match (row.val_accuracy, row.test_accuracy) {
                (Some(_), _) => ValidatedOn::Validation,
                (None, Some(_)) => ValidatedOn::Test,
                (None, None) => ValidatedOn::Nothing,
            };
        }
        match &self.config {
            Some(c) if c.validation == Validation::Test => ValidatedOn::Test,
            Some(c) if c.val_split == 0.0 => ValidatedOn::Nothing,
            _ => ValidatedOn::Validation,
        }
    }

    /// The last component of [`RunHistory::path`], the name the runs list shows next to the date.
    pub fn folder_name(&self) -> String {
        folder_name_of(&self.path)
    }
}

/// The whole file at `path` of `tree`.
pub(crate) fn read_bytes(tree: &dyn FileTree, path: &Path) -> io::Result<Vec<u8>> {
    let (mut reader, len) = tree.open(path)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    reader.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The JSON file at `path` of `tree`; none when it is absent, and when it cannot be read or
/// parsed, with a problem that ends in `consequence`.
fn read_json<T: serde::de::DeserializeOwned>(
    tree: &dyn FileTree,
    path: &Path,
    consequence: &str,
    problems: &mut Vec<String>,
) -> Option<T> {
    match read_text(tree, path) {
        Ok(text) => match serde_json::from_str::<T>(&text) {
            Ok(value) => Some(value),
            Err(e) => {
                problems.push(format!(
                    "{} could not be read ({e}); {consequence}.",
                    path.display()
                ));
                None
            }
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => {
            problems.push(format!(
                "could not read {}: {e}; {consequence}.",
                path.display()
            ));
            None
        }
    }
}

/// The file at `path` of `tree` as UTF-8 text.
fn read_text(tree: &dyn FileTree, path: &Path) -> io::Result<String> {
    String::from_utf8(read_bytes(tree, path)?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// A file's text, or `None` if absent; bytes that are not UTF-8 become bad rows, not an error.
fn read_optional(tree: &dyn FileTree, path: &Path, problems: &mut Vec<String>) -> Option<String> {
    match read_bytes(tree, path) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => {
            problems.push(format!("could not read {}: {e}.", path.display()));
            None
        }
    }
}

/// The per-image predictions a completed run wrote (`predictions.csv`), with the class names
/// from its `confusion.csv`; `None` when the run has none (it did not complete). Past runs keep
/// no pixels, so the gallery is empty.
pub fn load_predictions(folder: &Path) -> Result<Option<TestPredictions>, FolderError> {
    load_predictions_in(&Disk, folder)
}

/// [`load_predictions`] of a run folder in `tree`.
pub fn load_predictions_in(
    tree: &dyn FileTree,
    folder: &Path,
) -> Result<Option<TestPredictions>, FolderError> {
    let read = |name: &str| {
        let path = folder.join(name);
        match read_text(tree, &path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(FolderError::Io {
                action: "read",
                path,
                source,
            }),
        }
    };
    let (Some(rows), Some(confusion)) = (read(PREDICTIONS_FILE)?, read(CONFUSION_FILE)?) else {
        return Ok(None);
    };
    let bad = |what: String| FolderError::Io {
        action: "read",
        path: folder.join(PREDICTIONS_FILE),
        source: io::Error::new(io::ErrorKind::InvalidData, what),
    };
    // Class names may hold commas and quotes: the header is read as the CSV it was written as.
    let header = confusion.lines().next().unwrap_or("");
    let class_names: Vec<String> = kiln_formats::csv::line_cells(header)
        .ok_or_else(|| {
            bad(format!(
                "the header of {CONFUSION_FILE} has an unclosed quote"
            ))
        })?
        .into_iter()
        .skip(1)
        .collect();
    let mut problems = Vec::new();
    let parsed = parse_csv(
        &rows,
        &folder.join(PREDICTIONS_FILE),
        (PredictionRow::HEADER, PredictionRow::OPTIONAL),
        PredictionRow::parse,
        &mut problems,
    );
    // Predictions are all or nothing: a confusion matrix of some images would mislead.
    if let Some(problem) = problems.into_iter().next() {
        return Err(bad(problem));
    }
    let ranks: Option<Vec<u8>> = parsed.iter().map(|row| row.label_rank).collect();
    Ok(Some(TestPredictions {
        class_names,
        labels: parsed.iter().map(|row| row.label).collect(),
        predicted: parsed.iter().map(|row| row.predicted).collect(),
        confidence: parsed.iter().map(|row| row.confidence).collect(),
        label_rank: ranks.unwrap_or_default(),
        gallery: Vec::new(),
    }))
}
