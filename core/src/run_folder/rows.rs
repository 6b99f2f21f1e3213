//! One row type per CSV of a run folder, used by the writer and the reader alike: each type
//! knows its header, how it is written and how it is read back. A readback and an epoch end
//! are the loop's own events ([`MetricsRow`], [`EpochRow`]): what the loop emits is the row.

use std::collections::HashMap;
use std::path::Path;

pub use crate::train::{EpochRow, MetricsRow};

impl MetricsRow {
    /// Header of `metrics.csv`; docs/run-folder.md documents each column.
    pub const HEADER: &str = "wall_secs,epoch,step,global_step,samples_seen,train_loss,train_accuracy,samples_per_sec,step_ms,data_ms,compute_ms,sync_ms,lr";

    /// The row as a line of `metrics.csv`, newline included.
    pub fn to_line(&self) -> String {
        format!(
            "{:.3},{},{},{},{},{:.6},{:.6},{:.1},{:.4},{:.3},{:.3},{:.3},{:e}\n",
            self.wall_secs,
            self.epoch,
            self.step,
            self.global_step,
            self.samples_seen,
            self.train_loss,
            self.train_accuracy,
            self.samples_per_sec,
            self.step_ms,
            self.data_ms,
            self.compute_ms,
            self.sync_ms,
            self.lr
        )
    }

    /// Reads the row from its fields, in [`MetricsRow::HEADER`] order.
    pub(super) fn parse(v: &[&str]) -> Result<Self, String> {
        Ok(Self {
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
}

impl EpochRow {
    /// Header of `epochs.csv`; docs/run-folder.md documents each column. A run fills either the
    /// validation or (validated on test) the test columns and leaves the others empty.
    pub const HEADER: &str = "epoch,train_loss,train_accuracy,val_loss,val_accuracy,test_loss,test_accuracy,epoch_secs,eval_secs,samples_per_sec";

    /// Columns a file may lack: run folders from before validation splits have no `val_*`.
    pub(super) const OPTIONAL: &[&str] = &["val_loss", "val_accuracy"];

    /// The row as a line of `epochs.csv`, newline included; an unknown figure is an empty cell.
    pub fn to_line(&self) -> String {
        let figure = |value: Option<f64>, decimals: usize| {
            value.map(|v| format!("{v:.decimals$}")).unwrap_or_default()
        };
        format!(
            "{},{},{},{},{},{},{},{},{},{}\n",
            self.epoch,
            figure(self.train_loss, 6),
            figure(self.train_accuracy, 6),
            figure(self.val_loss, 6),
            figure(self.val_accuracy, 6),
            figure(self.test_loss, 6),
            figure(self.test_accuracy, 6),
            figure(self.epoch_secs, 3),
            figure(self.eval_secs, 3),
            figure(self.samples_per_sec, 1)
        )
    }

    /// Reads the row from its fields, in [`EpochRow::HEADER`] order.
    pub(super) fn parse(v: &[&str]) -> Result<Self, String> {
        Ok(Self {
            epoch: field(v, 0, "epoch")?,
            train_loss: optional_field(v, 1, "train_loss")?,
            train_accuracy: optional_field(v, 2, "train_accuracy")?,
            val_loss: optional_field(v, 3, "val_loss")?,
            val_accuracy: optional_field(v, 4, "val_accuracy")?,
            test_loss: optional_field(v, 5, "test_loss")?,
            test_accuracy: optional_field(v, 6, "test_accuracy")?,
            epoch_secs: optional_field(v, 7, "epoch_secs")?,
            eval_secs: optional_field(v, 8, "eval_secs")?,
            samples_per_sec: optional_field(v, 9, "samples_per_sec")?,
        })
    }
}

/// Column positions of the expected header's fields in the file's header, so files written by
/// an older or newer Kiln with columns added or reordered still read; an `optional` column
/// the file lacks reads as empty.
fn column_map(
    file_header: &str,
    expected: &str,
    optional: &[&str],
) -> Result<Vec<Option<usize>>, String> {
    let found: HashMap<&str, usize> = file_header
        .split(',')
        .enumerate()
        .map(|(i, c)| (c.trim(), i))
        .collect();
    let mut missing = Vec::new();
    let map = expected
        .split(',')
        .map(|name| {
            let index = found.get(name).copied();
            if index.is_none() && !optional.contains(&name) {
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

/// The rows of a CSV `text` read from `path`, by the names in `expected_header` (those in
/// `optional` may be absent); rows that do not read are skipped and named in `problems`, a row
/// without its line end silently.
pub(super) fn parse_csv<T>(
    text: &str,
    path: &Path,
    (expected_header, optional): (&str, &[&str]),
    parse_row: fn(&[&str]) -> Result<T, String>,
    problems: &mut Vec<String>,
) -> Vec<T> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    // After the last '\n' comes either nothing or a row the writer had not finished.
    lines.pop();
    let Some((header, rows)) = lines.split_first() else {
        return Vec::new();
    };
    let columns = match column_map(header.trim_end_matches('\r'), expected_header, optional) {
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
            .map(|&c| match c {
                Some(c) => fields.get(c).map(|f| f.trim()),
                None => Some(""),
            })
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

/// Field `index` of a row as a `T`, or a sentence naming the column.
fn field<T: std::str::FromStr>(values: &[&str], index: usize, name: &str) -> Result<T, String> {
    let text = values.get(index).copied().unwrap_or("");
    text.parse()
        .map_err(|_| format!("{name} is '{text}', not a number"))
}

/// Field `index` of a row as a number, or none when it is empty.
fn optional_field(values: &[&str], index: usize, name: &str) -> Result<Option<f64>, String> {
    match values.get(index).copied().unwrap_or("") {
        "" => Ok(None),
        _ => field(values, index, name).map(Some),
    }
}

/// One predictions.csv row: a test image's label, the class the model gave it, and how sure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PredictionRow {
    /// Position of the image in the test split.
    pub index: usize,
    /// Its true class.
    pub label: u8,
    /// The class the trained model gave it.
    pub predicted: u8,
    /// The softmax probability of that class.
    pub confidence: f32,
    /// How many classes scored above the true one; none in files from before it was kept.
    pub label_rank: Option<u8>,
}

impl PredictionRow {
    /// Header of `predictions.csv`; docs/run-folder.md documents each column.
    pub const HEADER: &str = "index,label,predicted,confidence,label_rank";

    /// Columns a file may lack: `label_rank` came later.
    pub(super) const OPTIONAL: &[&str] = &["label_rank"];

    /// The row as a line of `predictions.csv`, newline included.
    pub fn to_line(&self) -> String {
        let rank = self.label_rank.map(|r| r.to_string()).unwrap_or_default();
        format!(
            "{},{},{},{:.6},{rank}\n",
            self.index, self.label, self.predicted, self.confidence
        )
    }

    /// Reads the row from its fields, in [`PredictionRow::HEADER`] order.
    pub(super) fn parse(v: &[&str]) -> Result<Self, String> {
        let label_rank = match v.get(4).copied().unwrap_or("") {
            "" => None,
            _ => Some(field(v, 4, "label_rank")?),
        };
        Ok(Self {
            index: field(v, 0, "index")?,
            label: field(v, 1, "label")?,
            predicted: field(v, 2, "predicted")?,
            confidence: field(v, 3, "confidence")?,
            label_rank,
        })
    }
}
