//! A multi-label run's `predictions.csv` read back: each test image's file, its labels as 0/1
//! columns (`true NAME`) and its probability per label (`p NAME`), with the thresholds its
//! `summary.json` reports, so a past run's results show as the live run's do.

use std::io;
use std::path::{Path, PathBuf};

use kiln_formats::files::FileTree;

use super::{FolderError, PREDICTIONS_FILE, SUMMARY_FILE};
use crate::results::multi_label::{LabelPredictions, LabelScores};
use crate::train::RunSummary;

/// The label predictions a completed multi-label run wrote; `None` when the folder has no
/// predictions or they are of one class per image.
pub fn load_label_predictions_in(
    tree: &dyn FileTree,
    folder: &Path,
) -> Result<Option<LabelPredictions>, FolderError> {
    let path = folder.join(PREDICTIONS_FILE);
    let text = match super::read_bytes(tree, &path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(FolderError::Io {
                action: "read",
                path,
                source,
            });
        }
    };
    let bad = |what: String| FolderError::Io {
        action: "read",
        path: path.clone(),
        source: io::Error::new(io::ErrorKind::InvalidData, what),
    };
    let records = kiln_formats::csv::records(&text, ',')
        .map_err(|line| bad(format!("line {line} opens a quote it never closes")))?;
    let Some(((_, header), rows)) = records.split_first() else {
        return Ok(None);
    };
    let names: Vec<String> = header
        .iter()
        .filter_map(|cell| cell.strip_prefix("true ").map(str::to_owned))
        .collect();
    if header.get(..2) != Some(&["index".to_owned(), "file".to_owned()][..]) || names.is_empty() {
        return Ok(None);
    }
    let labels = names.len();
    let (mut files, mut truth, mut probabilities) = (Vec::new(), Vec::new(), Vec::new());
    for (line, cells) in rows {
        if cells.len() != 2 + 2 * labels {
            return Err(bad(format!(
                "line {line} has {} cells where the header has {}",
                cells.len(),
                2 + 2 * labels
            )));
        }
        if !cells[1].is_empty() {
            files.push(PathBuf::from(&cells[1]));
        }
        let set: Vec<u8> = (0..labels)
            .filter(|&label| cells[2 + label] == "1")
            .filter_map(|label| u8::try_from(label).ok())
            .collect();
        truth.push(set);
        for cell in &cells[2 + labels..] {
            let p: f32 = cell
                .parse()
                .map_err(|_| bad(format!("line {line}: `{cell}` is not a probability")))?;
            probabilities.push(p);
        }
    }
    if files.len() != truth.len() {
        files.clear();
    }
    let thresholds = super::read_bytes(tree, &folder.join(SUMMARY_FILE))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<RunSummary>(&bytes).ok())
        .and_then(|summary| summary.label_report)
        .map(|report| report.per_label.iter().map(|l| l.threshold).collect())
        .filter(|thresholds: &Vec<f32>| thresholds.len() == labels)
        .unwrap_or_else(|| vec![0.5; labels]);
    Ok(Some(LabelPredictions {
        label_names: names,
        scores: LabelScores {
            labels,
            probabilities,
            truth,
        },
        thresholds,
        files,
    }))
}
