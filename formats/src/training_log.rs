//! Other frameworks' training logs, read into one table of epochs: Keras's `CSVLogger` file and
//! `History.history` saved as JSON, Lightning's `CSVLogger` folder (`metrics.csv`, and its
//! `hparams.yaml`), TensorBoard scalars from any framework, and a plain CSV with an epoch column.
//!
//! Series are found by the names those frameworks and their users' scripts give them (`loss`,
//! `val_acc`, `train_loss_epoch`, `Loss/train`, `epoch_accuracy` in a `validation/` folder…).
//! What a log does not hold stays unknown (`None`), never zero. Accuracies logged in percent are
//! brought to fractions, and every such reading is named in the log's notes.

use std::collections::BTreeMap;

use crate::tensorboard::Scalar;

mod keras_model;
mod locate;
pub use locate::{Found, FoundLog, find_logs, find_logs_naming};

/// The framework a log came from, as the runs list and `kiln compare` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framework {
    /// Keras's `CSVLogger` or `History.history`.
    Keras,
    /// PyTorch Lightning's `CSVLogger`.
    Lightning,
    /// TensorBoard event files (Keras, PyTorch's `SummaryWriter`, Lightning's default logger).
    TensorBoard,
    /// A CSV with an epoch column, from any script.
    Csv,
}

impl Framework {
    /// The name shown for it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Keras => "Keras",
            Self::Lightning => "Lightning",
            Self::TensorBoard => "TensorBoard",
            Self::Csv => "CSV",
        }
    }
}

/// One epoch's figures as far as the log holds them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogEpoch {
    /// Counted from 1, as Kiln counts (Keras and Lightning log from 0).
    pub epoch: usize,
    /// Loss over the epoch's training batches.
    pub train_loss: Option<f64>,
    /// Accuracy (a fraction) over the epoch's training batches.
    pub train_accuracy: Option<f64>,
    /// Loss on the evaluated split.
    pub val_loss: Option<f64>,
    /// Accuracy (a fraction) on the evaluated split.
    pub val_accuracy: Option<f64>,
    /// The learning rate logged with the epoch.
    pub lr: Option<f64>,
}

/// A training log read: its epochs in order, the hyperparameters it names, and notes on how it
/// was read.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainingLog {
    /// Where it came from.
    pub framework: Framework,
    /// One per epoch, in order, each epoch once.
    pub epochs: Vec<LogEpoch>,
    /// `name = value` pairs (Lightning's `hparams.yaml`), flattened with dots.
    pub hparams: Vec<(String, String)>,
    /// Sentences on what was read how, and what was left out.
    pub notes: Vec<String>,
    /// Series it holds that are none of the figures by the conventions' names, in the order
    /// met: a person can name one as a figure ([`SeriesNames`]) to read it.
    pub unnamed_series: Vec<String>,
}

/// Why a log could not be read, with the series it holds that no convention names (a person
/// who names one as a figure may read it after all).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LogError {
    /// The reason, as a sentence's end ("it is empty").
    pub why: String,
    /// Its series that are none of the figures by their names.
    pub unnamed_series: Vec<String>,
}

impl std::fmt::Display for LogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.why)
    }
}

impl From<String> for LogError {
    fn from(why: String) -> Self {
        LogError {
            why,
            unnamed_series: Vec::new(),
        }
    }
}

impl From<&str> for LogError {
    fn from(why: &str) -> Self {
        LogError::from(why.to_owned())
    }
}

/// The figures of [`LogEpoch`] a series can fill; a person names one for a series whose name
/// the frameworks' conventions do not tell ([`SeriesNames`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Figure {
    /// The training loss (`loss`).
    TrainLoss,
    /// The training accuracy (`accuracy`).
    TrainAccuracy,
    /// The evaluated split's loss (`val_loss`).
    ValLoss,
    /// The evaluated split's accuracy (`val_accuracy`).
    ValAccuracy,
    /// The learning rate (`lr`).
    Lr,
}

impl std::str::FromStr for Figure {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(match text.trim().to_ascii_lowercase().as_str() {
            "loss" | "train_loss" => Self::TrainLoss,
            "accuracy" | "train_accuracy" => Self::TrainAccuracy,
            "val_loss" => Self::ValLoss,
            "val_accuracy" => Self::ValAccuracy,
            "lr" | "learning_rate" => Self::Lr,
            _ => {
                return Err(format!(
                    "'{text}' is not a figure; name loss, accuracy, val_loss, val_accuracy or lr"
                ));
            }
        })
    }
}

/// Series a person names as figures, for logs whose column or tag names the conventions do not
/// tell (`kiln import --series val_accuracy=holdout/top1`); a named series is read as its
/// figure before any convention is asked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SeriesNames {
    /// (series name as the log writes it, the figure it is).
    chosen: Vec<(String, Figure)>,
}

impl SeriesNames {
    /// Reads `FIGURE=SERIES` (`val_accuracy=acc/holdout`) and adds it.
    pub fn add(&mut self, spec: &str) -> Result<(), String> {
        let (figure, series) = spec.split_once('=').ok_or_else(|| {
            format!("'{spec}' names no series; write FIGURE=SERIES, e.g. val_accuracy=acc/holdout")
        })?;
        let series = series.trim();
        if series.is_empty() {
            return Err(format!("'{spec}' names no series after '='"));
        }
        self.chosen.push((series.to_owned(), figure.parse()?));
        Ok(())
    }

    /// The figure a person named `series` as.
    fn chosen(&self, series: &str) -> Option<Figure> {
        let series = series.trim();
        self.chosen
            .iter()
            .find(|(name, _)| name == series)
            .map(|&(_, figure)| figure)
    }

    /// The figure `series` stands for: the person's naming, else the conventions'.
    fn figure_of(&self, series: &str) -> Option<Figure> {
        self.chosen(series).or_else(|| Figure::of(series))
    }
}

impl Figure {
    /// Every figure, in the order a log's columns usually come.
    pub const ALL: [Figure; 5] = [
        Figure::TrainLoss,
        Figure::TrainAccuracy,
        Figure::ValLoss,
        Figure::ValAccuracy,
        Figure::Lr,
    ];

    /// Its name in a `FIGURE=SERIES` spec (`val_accuracy`), which [`str::parse`] reads back.
    pub fn key(self) -> &'static str {
        match self {
            Figure::TrainLoss => "loss",
            Figure::TrainAccuracy => "accuracy",
            Figure::ValLoss => "val_loss",
            Figure::ValAccuracy => "val_accuracy",
            Figure::Lr => "lr",
        }
    }

    /// How a person reads it: "validation accuracy".
    pub fn label(self) -> &'static str {
        match self {
            Figure::TrainLoss => "training loss",
            Figure::TrainAccuracy => "training accuracy",
            Figure::ValLoss => "validation loss",
            Figure::ValAccuracy => "validation accuracy",
            Figure::Lr => "learning rate",
        }
    }

    /// The figure a series name stands for in the logs of Keras, Lightning and PyTorch scripts.
    fn of(name: &str) -> Option<Self> {
        let name = name.trim().to_ascii_lowercase();
        let name = name
            .strip_suffix("_epoch")
            .filter(|_| !name.starts_with("epoch"))
            .unwrap_or(&name);
        Some(match name {
            "loss" | "train_loss" | "training_loss" | "loss/train" | "train/loss" => {
                Self::TrainLoss
            }
            "accuracy"
            | "acc"
            | "train_acc"
            | "train_accuracy"
            | "training_accuracy"
            | "sparse_categorical_accuracy"
            | "categorical_accuracy"
            | "accuracy/train"
            | "acc/train"
            | "train/acc"
            | "train/accuracy" => Self::TrainAccuracy,
            "val_loss" | "validation_loss" | "valid_loss" | "test_loss" | "loss/val"
            | "loss/validation" | "loss/test" | "val/loss" => Self::ValLoss,
            "val_accuracy"
            | "val_acc"
            | "validation_accuracy"
            | "valid_acc"
            | "test_acc"
            | "test_accuracy"
            | "val_sparse_categorical_accuracy"
            | "val_categorical_accuracy"
            | "accuracy/val"
            | "accuracy/validation"
            | "accuracy/test"
            | "acc/val"
            | "acc/test"
            | "val/acc"
            | "val/accuracy" => Self::ValAccuracy,
            "lr" | "learning_rate" => Self::Lr,
            other if other.starts_with("lr-") || other.starts_with("lr_") => Self::Lr,
            _ => return None,
        })
    }

    /// Puts `value` in the field of `epoch` this figure fills.
    fn set(self, epoch: &mut LogEpoch, value: f64) {
        let slot = match self {
            Self::TrainLoss => &mut epoch.train_loss,
            Self::TrainAccuracy => &mut epoch.train_accuracy,
            Self::ValLoss => &mut epoch.val_loss,
            Self::ValAccuracy => &mut epoch.val_accuracy,
            Self::Lr => &mut epoch.lr,
        };
        *slot = Some(value);
    }
}

/// Values gathered per (figure, epoch from 0) before they become [`LogEpoch`]s: a figure logged
/// several times in one epoch (Lightning's per-step logging) is averaged.
#[derive(Default)]
struct Gathered {
    values: BTreeMap<(Figure, usize), Vec<f64>>,
    /// The series each figure was read from, for the notes.
    sources: BTreeMap<Figure, String>,
    /// Series that are none of the figures, in the order first met: said, not silently lost.
    unknown: Vec<String>,
    notes: Vec<String>,
}

impl Gathered {
    /// Notes a series that is none of the figures; counters and per-step twins of per-epoch
    /// series (`train_loss_step` beside `train_loss_epoch`) go unsaid.
    fn unknown(&mut self, name: &str) {
        let name = name.trim();
        let lower = name.to_ascii_lowercase();
        let bookkeeping = matches!(
            lower.as_str(),
            "epoch" | "step" | "global_step" | "hp_metric"
        ) || lower.ends_with("_step")
            || name.is_empty();
        if !bookkeeping && !self.unknown.iter().any(|n| n == name) {
            self.unknown.push(name.to_owned());
        }
    }

    fn add(&mut self, figure: Figure, source: &str, epoch: usize, value: f64) {
        self.sources
            .entry(figure)
            .or_insert_with(|| source.to_owned());
        if self.sources[&figure] == source {
            self.values.entry((figure, epoch)).or_default().push(value);
        }
    }

    /// The epochs, each figure averaged over its values in the epoch, accuracies logged in
    /// percent made fractions.
    fn into_log(mut self, framework: Framework) -> Result<TrainingLog, LogError> {
        let unknown = self
            .unknown
            .iter()
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ");
        if self.values.is_empty() {
            let held = match unknown.is_empty() {
                true => String::new(),
                false => format!("; it holds {unknown}"),
            };
            return Err(LogError {
                why: format!(
                    "it holds no loss or accuracy by epoch (looked for columns or tags such as loss, accuracy, val_loss, val_accuracy, train_loss, val_acc{held}; name a series as a figure to read it: val_accuracy=SERIES)"
                ),
                unnamed_series: self.unknown,
            });
        }
        if !unknown.is_empty() {
            self.notes.push(format!(
                "{unknown} left out: neither a loss, an accuracy nor the learning rate by their names (name one as a figure to read it: val_accuracy=SERIES)"
            ));
        }
        for (figure, source) in &self.sources {
            let several = self
                .values
                .iter()
                .filter(|((f, _), v)| f == figure && v.len() > 1)
                .map(|(_, v)| v.len())
                .max();
            if let Some(most) = several {
                self.notes.push(format!(
                    "`{source}` was logged up to {most} times an epoch; each epoch shows their mean"
                ));
            }
        }
        for accuracy in [Figure::TrainAccuracy, Figure::ValAccuracy] {
            let of_accuracy =
                |((figure, _), _): &(&(Figure, usize), &Vec<f64>)| *figure == accuracy;
            let values: Vec<f64> = self
                .values
                .iter()
                .filter(of_accuracy)
                .flat_map(|(_, v)| v.iter().copied())
                .collect();
            let in_percent =
                values.iter().any(|&v| v > 1.0) && values.iter().all(|v| (0.0..=100.0).contains(v));
            if in_percent {
                for ((figure, _), v) in &mut self.values {
                    if *figure == accuracy {
                        v.iter_mut().for_each(|v| *v /= 100.0);
                    }
                }
                self.notes.push(format!(
                    "`{}` is in percent; it is shown as a fraction like Kiln's",
                    self.sources[&accuracy]
                ));
            }
        }
        let mut epochs: BTreeMap<usize, LogEpoch> = BTreeMap::new();
        for ((figure, epoch), values) in &self.values {
            let row = epochs.entry(*epoch).or_insert_with(|| LogEpoch {
                epoch: epoch.saturating_add(1),
                ..LogEpoch::default()
            });
            figure.set(row, values.iter().sum::<f64>() / values.len() as f64);
        }
        Ok(TrainingLog {
            framework,
            epochs: epochs.into_values().collect(),
            hparams: Vec::new(),
            notes: self.notes,
            unnamed_series: self.unknown,
        })
    }
}

/// Reads a CSV of one row per epoch: Keras's `CSVLogger` file (an `epoch` column from 0, then
/// its metrics) or any script's (`epoch` from 0 or 1; the others by name). Rows without an
/// epoch number are left out and counted.
pub fn read_epoch_csv(text: &str, framework: Framework) -> Result<TrainingLog, String> {
    read_epoch_csv_naming(text, framework, &SeriesNames::default()).map_err(|e| e.why)
}

/// [`read_epoch_csv`], with the person's names for series.
pub(crate) fn read_epoch_csv_naming(
    text: &str,
    framework: Framework,
    names: &SeriesNames,
) -> Result<TrainingLog, LogError> {
    let table = crate::csv::records(text.strip_prefix('\u{feff}').unwrap_or(text), ',')
        .map_err(|line| format!("a quoted cell opened on line {line} is never closed"))?;
    let Some(((_, header), rows)) = table.split_first() else {
        return Err("it is empty".into());
    };
    let epoch_column = header
        .iter()
        .position(|c| c.trim().eq_ignore_ascii_case("epoch"))
        .ok_or_else(|| {
            format!(
                "it has no `epoch` column (its columns are {})",
                header.join(", ")
            )
        })?;
    let mut parsed = Vec::new();
    let mut unreadable = Vec::new();
    for (line, cells) in rows {
        match cells
            .get(epoch_column)
            .and_then(|c| c.trim().parse::<f64>().ok())
        {
            Some(epoch) if epoch >= 0.0 && epoch.fract() == 0.0 && epoch < 1e7 => {
                parsed.push((epoch as usize, cells));
            }
            _ => unreadable.push(*line),
        }
    }
    // Keras and Lightning count from 0; a script that counts from 1 starts at 1.
    let offset = usize::from(!parsed.iter().any(|(epoch, _)| *epoch == 0));
    let mut gathered = Gathered::default();
    for (epoch, cells) in &parsed {
        for (column, name) in header.iter().enumerate() {
            let Some(figure) = names.figure_of(name) else {
                if column != epoch_column {
                    gathered.unknown(name);
                }
                continue;
            };
            if let Some(value) = cells.get(column).and_then(|c| c.trim().parse::<f64>().ok()) {
                gathered.add(figure, name.trim(), epoch - offset, value);
            }
        }
    }
    if !unreadable.is_empty() {
        gathered.notes.push(format!(
            "{} rows have no epoch number and are left out (first on line {})",
            unreadable.len(),
            unreadable[0]
        ));
    }
    gathered.into_log(framework)
}

/// Reads Keras's `History.history` saved as JSON: `{"loss": [..], "val_accuracy": [..], …}`,
/// one value per epoch.
pub fn read_keras_history(text: &str) -> Result<TrainingLog, String> {
    read_keras_history_naming(text, &SeriesNames::default()).map_err(|e| e.why)
}

/// [`read_keras_history`], with the person's names for series.
pub(crate) fn read_keras_history_naming(
    text: &str,
    names: &SeriesNames,
) -> Result<TrainingLog, LogError> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("it is not JSON ({e})"))?;
    let object = value
        .as_object()
        .ok_or("it is not a JSON object of metric names and lists, as Keras's History.history")?;
    let mut gathered = Gathered::default();
    for (name, values) in object {
        let (Some(figure), Some(values)) = (names.figure_of(name), values.as_array()) else {
            gathered.unknown(name);
            continue;
        };
        for (epoch, value) in values.iter().enumerate() {
            if let Some(value) = value.as_f64() {
                gathered.add(figure, name, epoch, value);
            }
        }
    }
    gathered.into_log(Framework::Keras)
}

/// Reads Lightning's `CSVLogger` output: `metrics.csv` (an `epoch` and a `step` column, a row
/// per logging call with the cells of other calls empty), and its `hparams.yaml` where given.
pub fn read_lightning(
    metrics_csv: &str,
    hparams_yaml: Option<&str>,
) -> Result<TrainingLog, String> {
    read_lightning_naming(metrics_csv, hparams_yaml, &SeriesNames::default()).map_err(|e| e.why)
}

/// [`read_lightning`], with the person's names for series.
pub(crate) fn read_lightning_naming(
    metrics_csv: &str,
    hparams_yaml: Option<&str>,
    names: &SeriesNames,
) -> Result<TrainingLog, LogError> {
    let mut log = read_epoch_csv_naming(metrics_csv, Framework::Lightning, names)?;
    if let Some(yaml) = hparams_yaml {
        log.hparams = flat_yaml(yaml);
    }
    Ok(log)
}

/// Reads TensorBoard scalars: `train` and `validation` are the scalars of a run's two folders
/// (Keras's layout, where `epoch_loss` means the training loss in one and the validation loss
/// in the other), or all in `train` for a single folder (PyTorch's and Lightning's, where tags
/// say which). `epoch_*` tags are logged at the epoch from 0; other tags at steps, turned into
/// epochs through an `epoch` tag where the log has one (Lightning logs it), else taken as
/// epochs.
pub fn read_scalars(train: &[Scalar], validation: &[Scalar]) -> Result<TrainingLog, String> {
    read_scalars_naming(train, validation, &SeriesNames::default()).map_err(|e| e.why)
}

/// [`read_scalars`], with the person's names for series: a named tag is its figure in either
/// folder.
pub(crate) fn read_scalars_naming(
    train: &[Scalar],
    validation: &[Scalar],
    names: &SeriesNames,
) -> Result<TrainingLog, LogError> {
    let mut gathered = Gathered::default();
    let epoch_at = epoch_of_step(train);
    for (scalars, evaluated) in [(train, false), (validation, true)] {
        for scalar in scalars {
            let keras_tag = scalar.tag.strip_prefix("epoch_");
            let figure = match (keras_tag, evaluated) {
                _ if names.chosen(&scalar.tag).is_some() => names.chosen(&scalar.tag),
                (Some("loss"), false) => Some(Figure::TrainLoss),
                (Some("loss"), true) => Some(Figure::ValLoss),
                (Some("accuracy" | "acc" | "sparse_categorical_accuracy"), false) => {
                    Some(Figure::TrainAccuracy)
                }
                (Some("accuracy" | "acc" | "sparse_categorical_accuracy"), true) => {
                    Some(Figure::ValAccuracy)
                }
                (Some("learning_rate" | "lr"), _) => Some(Figure::Lr),
                _ => Figure::of(&scalar.tag),
            };
            let Some(figure) = figure else {
                gathered.unknown(&scalar.tag);
                continue;
            };
            let epoch = match (keras_tag, &epoch_at) {
                (Some(_), _) | (None, None) => scalar.step,
                (None, Some(at)) => at(scalar.step),
            };
            if let Ok(epoch) = usize::try_from(epoch) {
                gathered.add(figure, &scalar.tag, epoch, scalar.value);
            }
        }
    }
    gathered.into_log(Framework::TensorBoard)
}

/// Lightning logs an `epoch` scalar at each logging step: the epoch of a step is that of the
/// last `epoch` logged at or before it.
fn epoch_of_step(scalars: &[Scalar]) -> Option<impl Fn(i64) -> i64> {
    let mut marks: Vec<(i64, i64)> = scalars
        .iter()
        .filter(|s| s.tag == "epoch" && s.value.is_finite() && s.value >= 0.0)
        .map(|s| (s.step, s.value as i64))
        .collect();
    if marks.is_empty() {
        return None;
    }
    marks.sort();
    Some(move |step: i64| {
        let at = marks.partition_point(|&(s, _)| s <= step);
        marks[at.saturating_sub(1)].1
    })
}

/// `key: value` lines of a YAML file, nested keys joined with dots, lists joined with commas:
/// enough for the hyperparameters Lightning writes, and never an error.
fn flat_yaml(text: &str) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut path: Vec<(usize, String)> = Vec::new();
    for line in text.lines() {
        let content = line.trim_end();
        let trimmed = content.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed == "---" {
            continue;
        }
        let indent = content.len() - trimmed.len();
        if let Some(item) = trimmed.strip_prefix("- ") {
            if let Some((_, value)) = pairs.last_mut() {
                if !value.is_empty() {
                    value.push_str(", ");
                }
                value.push_str(item.trim());
            }
            continue;
        }
        let Some((key, value)) = trimmed.split_once(':') else {
            continue;
        };
        path.retain(|(level, _)| *level < indent);
        let value = value.trim().trim_matches(|c| c == '\'' || c == '"');
        if value.is_empty() {
            path.push((indent, key.trim().to_owned()));
            pairs.push((dotted(&path), String::new()));
            continue;
        }
        let mut full: Vec<&str> = path.iter().map(|(_, k)| k.as_str()).collect();
        full.push(key.trim());
        pairs.push((full.join("."), value.to_owned()));
    }
    pairs.retain(|(_, value)| !value.is_empty());
    pairs
}

/// The keys of `path` joined with dots: `optimizer.betas`.
fn dotted(path: &[(usize, String)]) -> String {
    path.iter()
        .map(|(_, k)| k.as_str())
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests;
