//! Where the logs are: the path a person hands `kiln import` (a file, one run's folder, or a
//! folder of several runs, as `lightning_logs/` or a TensorBoard log directory) found to be one
//! log or several, each read.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{
    Framework, LogError, SeriesNames, TrainingLog, read_epoch_csv_naming,
    read_keras_history_naming, read_lightning_naming, read_scalars_naming,
};
use crate::files::FileTree;
use crate::tensorboard::{Scalar, is_event_file_name, read_event_file};

/// The largest log file read: years of per-step scalars stay far below it.
const MAX_LOG_BYTES: u64 = 256 << 20;
/// How many folders deep a folder of runs is searched.
const MAX_DEPTH: usize = 4;
/// Lightning's `CSVLogger` file.
const LIGHTNING_METRICS: &str = "metrics.csv";
/// Lightning's hyperparameters, beside its metrics.
const LIGHTNING_HPARAMS: &str = "hparams.yaml";
/// The pairs of files that make a folder one of Kiln's own runs, which is a run already and no
/// log to import: a run's config and readbacks, or an imported run's source and epochs. (Its
/// `metrics.csv` would otherwise pass for Lightning's, its event files for Keras's.)
const KILN_RUN_FILES: [[&str; 2]; 2] = [
    ["config.toml", "metrics.csv"],
    ["source.json", "epochs.csv"],
];

/// One log found and read.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundLog {
    /// The file or folder it was read from.
    pub source: PathBuf,
    /// A name for its run: the file's stem, or its folder's name (`version_3`).
    pub name: String,
    /// What it holds.
    pub log: TrainingLog,
}

/// What a path held: the logs read, and a sentence for each file left out or cut short.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    /// Every log read, in name order.
    pub logs: Vec<FoundLog>,
    /// Files that could not be read, or whose reading stopped early, each with why.
    pub problems: Vec<String>,
    /// Kiln's own run folders met on the way, left out: they are runs already.
    pub kiln_runs: Vec<PathBuf>,
    /// Series of the logs read or refused that are none of the figures by their names, each
    /// once, in the order met: what a person may name as a figure ([`SeriesNames`]).
    pub unnamed_series: Vec<String>,
}

impl Found {
    /// Keeps `log` as read from `source` under the run name `name`.
    fn push(&mut self, source: &Path, name: String, log: TrainingLog) {
        self.note_unnamed(&log.unnamed_series);
        self.logs.push(FoundLog {
            source: source.to_owned(),
            name,
            log,
        });
    }

    /// Names why `file` was not read, and keeps the series it holds that no convention names.
    fn refused(&mut self, file: &Path, error: LogError) {
        self.note_unnamed(&error.unnamed_series);
        self.problems.push(format!("{}: {error}", file.display()));
    }

    fn note_unnamed(&mut self, series: &[String]) {
        for name in series {
            if !self.unnamed_series.contains(name) {
                self.unnamed_series.push(name.clone());
            }
        }
    }
}

/// Finds and reads every training log at `path`: a Keras `CSVLogger` file (any extension, its
/// default is `training.log`), a `History.history` JSON, a plain CSV, an event file, a Keras
/// TensorBoard folder (`train/`, `validation/`), a folder of event files, a Lightning folder
/// (`metrics.csv`, `hparams.yaml`); or a folder holding several of those, searched a few levels
/// deep. Fails with a sentence when nothing there is a log.
pub fn find_logs(tree: &dyn FileTree, path: &Path) -> Result<Found, String> {
    find_logs_naming(tree, path, &SeriesNames::default()).map_err(|e| e.why)
}

/// [`find_logs`], reading the series a person named (`names`) as the figures they named them;
/// a failure keeps the series no convention names, which a person may name to read the log.
pub fn find_logs_naming(
    tree: &dyn FileTree,
    path: &Path,
    names: &SeriesNames,
) -> Result<Found, LogError> {
    let mut found = Found::default();
    if tree.is_file(path) {
        read_file_log(tree, path, names, &mut found);
    } else if tree.is_dir(path) {
        search(tree, path, 0, names, &mut found);
    } else {
        return Err(format!("{} does not exist; check the path", path.display()).into());
    }
    if found.logs.is_empty() && !found.kiln_runs.is_empty() && found.problems.is_empty() {
        return Err(format!(
            "{} holds Kiln run folders only ({}), which are runs already: open that runs folder in the window, or `kiln archive` one to carry it to another",
            path.display(),
            found.kiln_runs.len()
        )
        .into());
    }
    if found.logs.is_empty() {
        let why = match found.problems.is_empty() {
            true => "looked for Keras CSVLogger or History files, Lightning metrics.csv folders, TensorBoard event files and CSVs with an epoch column".to_owned(),
            false => found.problems.join("; "),
        };
        return Err(LogError {
            why: format!("found no training log in {} ({why})", path.display()),
            unnamed_series: found.unnamed_series,
        });
    }
    found.logs.sort_by(|a, b| a.source.cmp(&b.source));
    Ok(found)
}

/// Reads `dir` as one run's log if it is one, else searches its folders.
fn search(tree: &dyn FileTree, dir: &Path, depth: usize, names: &SeriesNames, found: &mut Found) {
    if is_kiln_run(tree, dir) {
        found.kiln_runs.push(dir.to_owned());
        return;
    }
    if read_folder_log(tree, dir, names, found) || depth >= MAX_DEPTH {
        return;
    }
    let (files, folders) = entries(tree, dir);
    if depth == 0 {
        // A folder given directly may hold log files side by side (several CSVLogger files).
        for file in files.iter().filter(|f| looks_like_log_file(f)) {
            read_file_log(tree, file, names, found);
        }
    }
    for folder in folders {
        search(tree, &folder, depth + 1, names, found);
    }
}

/// Whether `dir` is one of Kiln's own run folders ([`KILN_RUN_FILES`]).
fn is_kiln_run(tree: &dyn FileTree, dir: &Path) -> bool {
    KILN_RUN_FILES
        .iter()
        .any(|pair| pair.iter().all(|file| tree.is_file(&dir.join(file))))
}

/// The files and folders directly in `dir`, each in name order.
fn entries(tree: &dyn FileTree, dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut entries = tree.entries(dir).unwrap_or_default();
    entries.sort();
    let (folders, files): (Vec<_>, Vec<_>) = entries.into_iter().partition(|(_, is_dir)| *is_dir);
    let paths = |list: Vec<(std::ffi::OsString, bool)>| -> Vec<PathBuf> {
        list.into_iter().map(|(name, _)| dir.join(name)).collect()
    };
    (paths(files), paths(folders))
}

/// Whether a file in a folder of several logs is worth reading as one.
fn looks_like_log_file(file: &Path) -> bool {
    let name = file_name(file).to_ascii_lowercase();
    is_event_file_name(&name)
        || [".csv", ".log", ".json", ".tsv"]
            .iter()
            .any(|ext| name.ends_with(ext))
}

/// Reads `dir` if it is one run's log (Lightning's, Keras's TensorBoard layout, or a folder of
/// event files); whether it was.
fn read_folder_log(
    tree: &dyn FileTree,
    dir: &Path,
    names: &SeriesNames,
    found: &mut Found,
) -> bool {
    let metrics = dir.join(LIGHTNING_METRICS);
    if tree.is_file(&metrics) {
        let hparams = dir.join(LIGHTNING_HPARAMS);
        let hparams = tree
            .is_file(&hparams)
            .then(|| read_text(tree, &hparams).ok())
            .flatten();
        match read_text(tree, &metrics)
            .map_err(LogError::from)
            .and_then(|text| read_lightning_naming(&text, hparams.as_deref(), names))
        {
            Ok(log) => found.push(dir, file_name(dir), log),
            Err(error) => found.refused(&metrics, error),
        }
        return true;
    }
    let (train, validation) = (dir.join("train"), dir.join("validation"));
    let keras_layout = [&train, &validation]
        .iter()
        .any(|series| event_files(tree, series).next().is_some());
    let (train_scalars, validation_scalars) = if keras_layout {
        (
            folder_scalars(tree, &train, found),
            folder_scalars(tree, &validation, found),
        )
    } else if event_files(tree, dir).next().is_some() {
        (folder_scalars(tree, dir, found), Vec::new())
    } else {
        return false;
    };
    match read_scalars_naming(&train_scalars, &validation_scalars, names) {
        Ok(log) => found.push(dir, file_name(dir), log),
        Err(error) => found.refused(dir, error),
    }
    true
}

/// The event files directly in `dir`, in name order (TensorBoard's, which is time order).
fn event_files<'a>(tree: &dyn FileTree, dir: &'a Path) -> impl Iterator<Item = PathBuf> + 'a {
    let (files, _) = entries(tree, dir);
    files
        .into_iter()
        .filter(|f| is_event_file_name(&file_name(f)))
}

/// Every scalar of the event files in `dir`; a tag logged twice at one step (a resumed run)
/// keeps the later value.
fn folder_scalars(tree: &dyn FileTree, dir: &Path, found: &mut Found) -> Vec<Scalar> {
    let mut scalars: Vec<Scalar> = Vec::new();
    for file in event_files(tree, dir) {
        scalars.extend(file_scalars(tree, &file, found));
    }
    let mut seen = std::collections::HashSet::new();
    let mut kept: Vec<Scalar> = scalars
        .into_iter()
        .rev()
        .filter(|s| seen.insert((s.tag.clone(), s.step)))
        .collect();
    kept.reverse();
    kept
}

/// Reads one file as the log its name and contents say it is.
fn read_file_log(tree: &dyn FileTree, file: &Path, names: &SeriesNames, found: &mut Found) {
    let name = file_name(file);
    let read = if is_event_file_name(&name) {
        let scalars = file_scalars(tree, file, found);
        read_scalars_naming(&scalars, &[], names)
    } else {
        read_text(tree, file)
            .map_err(LogError::from)
            .and_then(|text| {
                let lower = name.to_ascii_lowercase();
                if lower.ends_with(".json") {
                    read_keras_history_naming(&text, names)
                } else if lower == LIGHTNING_METRICS {
                    read_lightning_naming(&text, None, names)
                } else {
                    read_epoch_csv_naming(&text, framework_of_csv(&text), names)
                }
            })
    };
    match read {
        Ok(mut log) => {
            if log.framework == Framework::Keras && log.hparams.is_empty() {
                with_keras_model(tree, file, &mut log);
            }
            found.push(file, run_name_of_file(file), log);
        }
        Err(error) => found.refused(file, error),
    }
}

/// Takes a Keras log's hyperparameters from the model saved beside it, where there is one.
fn with_keras_model(tree: &dyn FileTree, file: &Path, log: &mut TrainingLog) {
    let dir = match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let (files, _) = entries(tree, dir);
    if let Some((model, hparams)) = super::keras_model::hparams_beside(tree, file, &files) {
        log.notes.push(format!(
            "its hyperparameters are read from {}, the model saved beside it",
            file_name(&model)
        ));
        log.hparams = hparams;
    }
}

/// The scalars of one event file; where its reading stopped and records that hold no event
/// become problems.
fn file_scalars(tree: &dyn FileTree, file: &Path, found: &mut Found) -> Vec<Scalar> {
    let bytes = match read_bytes(tree, file) {
        Ok(bytes) => bytes,
        Err(why) => {
            found.problems.push(format!("{}: {why}", file.display()));
            return Vec::new();
        }
    };
    let log = read_event_file(&bytes);
    if let Some(stop) = &log.stop {
        found.problems.push(format!(
            "{}: {stop}; the {} values before it are kept",
            file.display(),
            log.scalars.len()
        ));
    }
    for problem in &log.problems {
        found
            .problems
            .push(format!("{}: {problem}", file.display()));
    }
    log.scalars
}

/// Keras's `CSVLogger` writes `epoch` first, from 0, with Keras's metric names; anything else
/// is a script's own CSV.
fn framework_of_csv(text: &str) -> Framework {
    let mut lines = text.lines();
    let header = lines.next().unwrap_or("").trim_start_matches('\u{feff}');
    let keras_names = header.starts_with("epoch,")
        && header.split(',').any(|c| c == "loss")
        && lines.next().is_some_and(|row| row.starts_with("0,"));
    if keras_names {
        Framework::Keras
    } else {
        Framework::Csv
    }
}

/// The name of a run read from a file: its stem (`training` for `training.log`), or for
/// Lightning's `metrics.csv` its folder's name (`version_3`).
fn run_name_of_file(file: &Path) -> String {
    let name = file_name(file);
    if name.eq_ignore_ascii_case(LIGHTNING_METRICS)
        && let Some(folder) = file.parent().filter(|p| !p.as_os_str().is_empty())
    {
        return file_name(folder);
    }
    file.file_stem()
        .map_or(name, |stem| stem.to_string_lossy().into_owned())
}

/// The last component of `path`, as text.
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// A file's bytes, refused past [`MAX_LOG_BYTES`] before any is read.
fn read_bytes(tree: &dyn FileTree, file: &Path) -> Result<Vec<u8>, String> {
    let (reader, len) = tree
        .open(file)
        .map_err(|e| format!("could not read it ({e})"))?;
    if len > MAX_LOG_BYTES {
        return Err(format!(
            "it is {} MB, more than the {} MB a training log is read up to",
            len >> 20,
            MAX_LOG_BYTES >> 20
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    reader
        .take(MAX_LOG_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("could not read it ({e})"))?;
    Ok(bytes)
}

/// A file's text; bytes that are not UTF-8 are replaced, so a stray byte costs one cell.
fn read_text(tree: &dyn FileTree, file: &Path) -> Result<String, String> {
    read_bytes(tree, file).map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}
