//! Writing a run folder as the run goes: every row is flushed as it arrives.

use kiln_formats::files::{FileTree, MemoryFiles};
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use web_time::SystemTime;

use super::tensorboard::EventFiles;
use super::{
    CONFIG_FILE, CONFUSION_FILE, EPOCHS_FILE, EpochRow, FolderError, FolderLock, METRICS_FILE,
    MetricsRow, PREDICTIONS_FILE, PredictionRow, REPORT_FILE, SUMMARY_FILE, io_err, now_secs,
    timestamp,
};
use crate::atomic_file::write_atomically;
use crate::config::Experiment;
use crate::results::multi_label::{LabelPredictions, LabelReport};
use crate::results::{ClassMetrics, ClassReport, TestPredictions};
use crate::train::{RunSummary, TrainEvent};

/// An open run folder that records [`TrainEvent`]s as they arrive: on the disk, or in a browser
/// page's memory ([`super::page_runs`]), with the same files and bytes.
#[derive(Debug)]
pub struct RunFolder {
    path: PathBuf,
    files: Files,
    /// The TensorBoard event files the rows are also written to.
    events: EventFiles,
    /// This process's hold on a folder on the disk; a page's runs have one writer by nature.
    _lock: Option<FolderLock>,
}

/// Where a [`RunFolder`]'s files are.
#[derive(Debug)]
enum Files {
    /// On the disk, the growing files open for appending: the two CSVs, and the event files
    /// once their first record comes, by their path in the folder.
    Disk {
        metrics: BufWriter<File>,
        epochs: BufWriter<File>,
        events: HashMap<PathBuf, BufWriter<File>>,
    },
    /// In the page's runs ([`super::page_runs`]).
    Page,
}

/// The name a run of `experiment` starting now gets: a UTC timestamp, so names sort by age, and
/// the run's name. Its folder's name, or in a browser page (which keeps no folders) its name.
pub fn run_stem(experiment: &Experiment) -> String {
    format!("{}-{}", timestamp(SystemTime::now()), experiment.name)
}

/// Creates `runs_dir/stem` (and `runs_dir` if missing), or `stem-2`, `stem-3`… when taken: a
/// new run or an imported one never writes into a folder that exists.
pub(crate) fn create_unique_dir(runs_dir: &Path, stem: &str) -> Result<PathBuf, FolderError> {
    fs::create_dir_all(runs_dir).map_err(io_err("create", runs_dir))?;
    let mut suffix = 1;
    loop {
        let path = nth_folder(runs_dir, stem, suffix);
        match fs::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && suffix < 1000 => suffix += 1,
            Err(e) => return Err(io_err("create", &path)(e)),
        }
    }
}

/// The `n`th name tried for a folder `stem` (from 1): `stem`, then `stem-2`, `stem-3`…
fn nth_folder(runs_dir: &Path, stem: &str, n: usize) -> PathBuf {
    match n {
        0 | 1 => runs_dir.join(stem),
        n => runs_dir.join(format!("{stem}-{n}")),
    }
}

/// The first of `stem`, `stem-2`, `stem-3`… under `runs_dir` that `files` (a page's runs in
/// memory) do not hold: [`create_unique_dir`]'s rule where there is no disk to ask.
pub(super) fn free_folder_in(files: &MemoryFiles, runs_dir: &Path, stem: &str) -> PathBuf {
    (1..)
        .map(|n| nth_folder(runs_dir, stem, n))
        .find(|path| !files.is_dir(path) && !files.is_file(path))
        .unwrap_or_else(|| runs_dir.join(stem))
}

impl RunFolder {
    /// Creates `runs_dir/<timestamp>-<name>` (with a numeric suffix if taken) and its files.
    pub fn create(runs_dir: &Path, experiment: &Experiment) -> Result<Self, FolderError> {
        let path = create_unique_dir(runs_dir, &run_stem(experiment))?;
        let lock = FolderLock::acquire(&path)?;
        let config_path = path.join(CONFIG_FILE);
        write_atomically(&config_path, experiment.to_toml().as_bytes())
            .map_err(io_err("write", &config_path))?;
        let metrics = Self::csv(&path.join(METRICS_FILE), MetricsRow::HEADER)?;
        let epochs = Self::csv(&path.join(EPOCHS_FILE), EpochRow::HEADER)?;
        Ok(Self {
            path,
            files: Files::Disk {
                metrics,
                epochs,
                events: HashMap::new(),
            },
            events: new_event_files(),
            _lock: Some(lock),
        })
    }

    /// Creates `runs_dir/<timestamp>-<name>` (with a numeric suffix if taken) among a browser
    /// page's runs ([`super::page_runs`]), with the files [`RunFolder::create`] writes.
    pub fn create_in_page(runs_dir: &Path, experiment: &Experiment) -> Result<Self, FolderError> {
        let stem = run_stem(experiment);
        let path = super::page_runs::with(|files| free_folder_in(files, runs_dir, &stem));
        let folder = Self {
            path,
            files: Files::Page,
            events: new_event_files(),
            _lock: None,
        };
        folder.write(CONFIG_FILE, experiment.to_toml().as_bytes())?;
        folder.write(METRICS_FILE, format!("{}\n", MetricsRow::HEADER).as_bytes())?;
        folder.write(EPOCHS_FILE, format!("{}\n", EpochRow::HEADER).as_bytes())?;
        Ok(folder)
    }

    /// Opens the run folder `lock` holds to go on after `epochs_completed` epochs: rows of
    /// later epochs (and a row cut short by a crash) are dropped, new rows are appended. The
    /// hold is taken first ([`FolderLock::acquire`]), before the resume reads and prepares, so a
    /// folder another process writes is refused before anything is loaded or changed.
    pub fn reopen(lock: FolderLock, epochs_completed: usize) -> Result<Self, FolderError> {
        let path = &lock.folder().to_owned();
        let metrics = Self::keep_epochs(
            &path.join(METRICS_FILE),
            MetricsRow::HEADER,
            epochs_completed,
        )?;
        let epochs =
            Self::keep_epochs(&path.join(EPOCHS_FILE), EpochRow::HEADER, epochs_completed)?;
        Ok(Self {
            path: path.to_owned(),
            files: Files::Disk {
                metrics,
                epochs,
                events: HashMap::new(),
            },
            events: new_event_files(),
            _lock: Some(lock),
        })
    }

    /// [`RunFolder::reopen`] of a page's run folder `path` among the page's runs.
    pub fn reopen_in_page(path: &Path, epochs_completed: usize) -> Result<Self, FolderError> {
        for (name, header) in [
            (METRICS_FILE, MetricsRow::HEADER),
            (EPOCHS_FILE, EpochRow::HEADER),
        ] {
            let file = path.join(name);
            super::page_runs::with_mut(|runs| {
                let text = match super::read_bytes(runs, &file) {
                    Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
                    Err(e) => return Err(e),
                };
                runs.insert(
                    &file,
                    rows_up_to(&text, header, epochs_completed).into_bytes(),
                )
            })
            .map_err(io_err("write", &file))?;
        }
        Ok(Self {
            path: path.to_owned(),
            files: Files::Page,
            events: new_event_files(),
            _lock: None,
        })
    }

    /// Rewrites the CSV at `path` with only its rows up to `last_epoch` ([`rows_up_to`]), then
    /// opens it for appending.
    fn keep_epochs(
        path: &Path,
        header: &str,
        last_epoch: usize,
    ) -> Result<BufWriter<File>, FolderError> {
        let text = match fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(io_err("read", path)(e)),
        };
        write_atomically(path, rows_up_to(&text, header, last_epoch).as_bytes())
            .map_err(io_err("write", path))?;
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(io_err("write", path))?;
        Ok(BufWriter::new(file))
    }

    fn csv(path: &Path, header: &str) -> Result<BufWriter<File>, FolderError> {
        let file = OpenOptions::new()
            .create_new(true)
            .write(true)
            .open(path)
            .map_err(io_err("write", path))?;
        let mut writer = BufWriter::new(file);
        writeln!(writer, "{header}")
            .and_then(|()| writer.flush())
            .map_err(io_err("write", path))?;
        Ok(writer)
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends what `event` adds to the files; every row is flushed so a crash keeps it.
    pub fn record(&mut self, event: &TrainEvent) -> Result<(), FolderError> {
        match event {
            TrainEvent::Progress(p) => {
                self.append(Path::new(METRICS_FILE), p.to_line().as_bytes())?;
                let records = self.events.readback(p, now_secs());
                self.append_all(records)
            }
            TrainEvent::EpochEnd(e) => {
                self.append(Path::new(EPOCHS_FILE), e.to_line().as_bytes())?;
                let records = self.events.epoch(e, now_secs());
                self.append_all(records)
            }
            TrainEvent::Predictions(predictions) => self.write_predictions(predictions),
            TrainEvent::LabelPredictions(predictions) => self.write_label_predictions(predictions),
            TrainEvent::Finished(summary) => self.write_summary(summary),
            // The test result reaches the folder with the summary.
            TrainEvent::Started(_)
            | TrainEvent::Tested(_)
            | TrainEvent::Warning(_)
            | TrainEvent::Failed(_) => Ok(()),
        }
    }

    /// Appends each (file in the folder, bytes) of `records`.
    fn append_all(&mut self, records: Vec<(PathBuf, Vec<u8>)>) -> Result<(), FolderError> {
        records
            .into_iter()
            .try_for_each(|(name, bytes)| self.append(&name, &bytes))
    }

    /// Appends `bytes` to the growing file `name` (created with its folder if new) and flushes,
    /// so a crash keeps them.
    fn append(&mut self, name: &Path, bytes: &[u8]) -> Result<(), FolderError> {
        let path = self.path.join(name);
        match &mut self.files {
            Files::Disk {
                metrics,
                epochs,
                events,
            } => {
                let writer = if name == Path::new(METRICS_FILE) {
                    metrics
                } else if name == Path::new(EPOCHS_FILE) {
                    epochs
                } else if let Some(writer) = events.get_mut(name) {
                    writer
                } else {
                    let file = path
                        .parent()
                        .map_or(Ok(()), fs::create_dir_all)
                        .and_then(|()| OpenOptions::new().create(true).append(true).open(&path))
                        .map_err(io_err("write", &path))?;
                    events
                        .entry(name.to_owned())
                        .or_insert(BufWriter::new(file))
                };
                writer
                    .write_all(bytes)
                    .and_then(|()| writer.flush())
                    .map_err(io_err("write", &path))
            }
            Files::Page => super::page_runs::with_mut(|files| files.append(&path, bytes))
                .map_err(io_err("write", &path)),
        }
    }

    /// Writes the whole file `name`, atomically on the disk.
    fn write(&self, name: &str, bytes: &[u8]) -> Result<(), FolderError> {
        let path = self.path.join(name);
        match self.files {
            Files::Disk { .. } => write_atomically(&path, bytes),
            Files::Page => super::page_runs::with_mut(|files| files.insert(&path, bytes.to_vec())),
        }
        .map_err(io_err("write", &path))
    }

    /// Writes `predictions.csv` (one row per test image), `confusion.csv` (rows: true class,
    /// columns: predicted class) and `report.csv` (precision, recall, F1 and support per class,
    /// then the averages), each atomically.
    pub fn write_predictions(&self, predictions: &TestPredictions) -> Result<(), FolderError> {
        let mut rows = format!("{}\n", PredictionRow::HEADER);
        for (index, ((&label, &predicted), &confidence)) in predictions
            .labels
            .iter()
            .zip(&predictions.predicted)
            .zip(&predictions.confidence)
            .enumerate()
        {
            let row = PredictionRow {
                index,
                label,
                predicted,
                confidence,
                label_rank: predictions.label_rank.get(index).copied(),
            };
            rows.push_str(&row.to_line());
        }
        self.write(PREDICTIONS_FILE, rows.as_bytes())?;

        let mut table = String::from("true \\ predicted");
        for name in &predictions.class_names {
            table.push(',');
            table.push_str(&quote(name));
        }
        table.push('\n');
        for (class, row) in predictions.confusion().iter().enumerate() {
            let name = predictions
                .class_names
                .get(class)
                .map_or("", String::as_str);
            table.push_str(&quote(name));
            for count in row {
                table.push_str(&format!(",{count}"));
            }
            table.push('\n');
        }
        self.write(CONFUSION_FILE, table.as_bytes())?;

        let report = report_csv(&predictions.class_names, &predictions.report(), &quote);
        self.write(REPORT_FILE, report.as_bytes())
    }

    /// Writes a multi-label run's `predictions.csv` (per test image, its file, whether it has
    /// each label as 0/1, then each label's probability) and `report.csv` (per label, then the
    /// averages, mAP, subset accuracy and Hamming loss), each atomically. Label names go in the
    /// header as `true NAME` and `p NAME`, quoted.
    pub fn write_label_predictions(
        &self,
        predictions: &LabelPredictions,
    ) -> Result<(), FolderError> {
        let names = &predictions.label_names;
        let scores = &predictions.scores;
        let mut rows = String::from("index,file");
        for prefix in ["true", "p"] {
            for name in names {
                rows.push(',');
                rows.push_str(&quote(&format!("{prefix} {name}")));
            }
        }
        rows.push('\n');
        for image in 0..scores.images() {
            let file = predictions
                .files
                .get(image)
                .map(|f| quote(&f.to_string_lossy()))
                .unwrap_or_default();
            rows.push_str(&format!("{image},{file}"));
            for label in 0..scores.labels {
                let has = scores.truth[image].contains(&(label as u8));
                rows.push_str(if has { ",1" } else { ",0" });
            }
            for label in 0..scores.labels {
                let p = scores.probabilities[image * scores.labels + label];
                rows.push_str(&format!(",{p}"));
            }
            rows.push('\n');
        }
        self.write(PREDICTIONS_FILE, rows.as_bytes())?;
        let report = label_report_csv(names, &predictions.report());
        self.write(REPORT_FILE, report.as_bytes())
    }

    /// Writes `summary.json` atomically.
    pub fn write_summary(&self, summary: &RunSummary) -> Result<(), FolderError> {
        let mut text = serde_json::to_string_pretty(summary)
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        text.push('\n');
        self.write(SUMMARY_FILE, text.as_bytes())
    }
}

/// The event files of a writer starting now: named by this second and this process.
fn new_event_files() -> EventFiles {
    #[cfg(not(target_arch = "wasm32"))]
    let pid = std::process::id();
    // A page has no process id; its runs have one writer each by nature.
    #[cfg(target_arch = "wasm32")]
    let pid = 0;
    EventFiles::new(now_secs() as u64, pid)
}

/// `name` as one CSV cell: quoted, its quotes doubled (a person chose it; it may hold commas).
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A multi-label run's `report.csv`: per label its precision, recall and F1 at its threshold,
/// its support, average precision and threshold; then the micro, macro and weighted averages
/// (the macro row's average precision is the mAP), subset accuracy and Hamming loss.
fn label_report_csv(label_names: &[String], report: &LabelReport) -> String {
    let mut text = String::from("label,precision,recall,f1,support,average_precision,threshold\n");
    let mut row = |name: String, m: &ClassMetrics, ap: Option<f64>, threshold: Option<f32>| {
        let ap = ap.map(|ap| format!("{ap:.6}")).unwrap_or_default();
        let threshold = threshold.map(|t| t.to_string()).unwrap_or_default();
        text.push_str(&format!(
            "{name},{:.6},{:.6},{:.6},{},{ap},{threshold}\n",
            m.precision, m.recall, m.f1, m.support
        ));
    };
    for (name, label) in label_names.iter().zip(&report.per_label) {
        row(
            quote(name),
            &label.at_threshold,
            label.average_precision,
            Some(label.threshold),
        );
    }
    row("micro avg".to_owned(), &report.micro_avg, None, None);
    row(
        "macro avg".to_owned(),
        &report.macro_avg,
        Some(report.mean_average_precision),
        None,
    );
    row("weighted avg".to_owned(), &report.weighted_avg, None, None);
    text.push_str(&format!(
        "subset accuracy,,,{:.6},,,\nhamming loss,,,{:.6},,,\n",
        report.subset_accuracy, report.hamming_loss
    ));
    text
}

/// `report.csv`: scikit-learn's classification report as a table, one row per class, then the
/// macro and weighted averages, accuracy and (over five classes) top-5 accuracy.
fn report_csv(
    class_names: &[String],
    report: &ClassReport,
    quote: &dyn Fn(&str) -> String,
) -> String {
    let mut text = String::from("class,precision,recall,f1,support\n");
    // Class names are quoted (a person chose them); the average rows are Kiln's own words.
    let mut row = |name: String, m: &ClassMetrics| {
        text.push_str(&format!(
            "{name},{:.6},{:.6},{:.6},{}\n",
            m.precision, m.recall, m.f1, m.support
        ));
    };
    for (name, metrics) in class_names.iter().zip(&report.classes) {
        row(quote(name), metrics);
    }
    row("macro avg".to_owned(), &report.macro_average);
    row("weighted avg".to_owned(), &report.weighted_average);
    let total = report.macro_average.support;
    text.push_str(&format!("accuracy,,,{:.6},{total}\n", report.accuracy));
    if let Some(top_5) = report.top_5_accuracy {
        text.push_str(&format!("top-5 accuracy,,,{top_5:.6},{total}\n"));
    }
    text
}

/// `text`, a run's CSV with `header`, cut to its whole rows whose `epoch` column is at most
/// `last_epoch` (counted from 1, the file's own numbering): what a resumed run keeps.
fn rows_up_to(text: &str, header: &str, last_epoch: usize) -> String {
    let epoch_column = header.split(',').position(|c| c == "epoch").unwrap_or(0);
    let columns = header.split(',').count();
    let mut kept = format!("{header}\n");
    // `lines` would keep a last row that a crash cut short; only newline-ended rows count.
    for line in text.split_inclusive('\n').skip(1) {
        let Some(row) = line.strip_suffix('\n') else {
            continue;
        };
        let cells: Vec<&str> = row.split(',').collect();
        if cells.len() == columns
            && cells
                .get(epoch_column)
                .and_then(|e| e.parse::<usize>().ok())
                .is_some_and(|e| e <= last_epoch)
        {
            kept.push_str(line);
        }
    }
    kept
}
