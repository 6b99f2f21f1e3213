//! Labels files: image paths and their labels in a CSV (or tab-separated) file or in JSON lines,
//! as FiftyOne and spreadsheets export them, and Hugging Face's `imagefolder` convention (a folder
//! with `metadata.csv` or `metadata.jsonl`, `file_name` plus a label column).
//!
//! Paths are relative to the labels file's folder, or absolute. A header row is found (no cell
//! of the first row names an image file) or required (a column named by the caller); columns
//! are found by their usual names (`file_name`, `path`, `image`…; `label`, `class`…; `split`),
//! else the path column is the one holding image file names and the label column the one left.
//! An optional split column puts a row in train, val or test. A row that cannot be used (no
//! file, no label, listed twice, an unknown split, a missing or unreadable image) is listed with
//! its reason and left out, and the set trains on the rest, as image folders do. Labels are kept
//! exactly as written but for surrounding spaces: commas, quotes and emoji included.

use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::files::{Disk, FileTree};
use crate::folder::{Gathered, Resize, SplitFiles, assemble, has_image_extension};
use crate::{DataError, ImageDataset, SkippedFile};

/// Labels are one byte.
const MAX_CLASSES: usize = 256;
/// Largest labels file read: a million rows of long paths stay far below it.
const MAX_LABELS_FILE_BYTES: u64 = 512 << 20;
/// Usual names of the column holding image paths, compared without case.
const PATH_COLUMNS: &[&str] = &[
    "file_name",
    "filename",
    "file",
    "path",
    "filepath",
    "file_path",
    "image",
    "image_path",
    "image_file",
    "img",
];
/// Usual names of the column holding labels, compared without case.
const LABEL_COLUMNS: &[&str] = &[
    "label",
    "labels",
    "class",
    "class_name",
    "classname",
    "category",
    "target",
    "tag",
    "tags",
];
/// Usual names of the column saying which split a row belongs to, compared without case.
const SPLIT_COLUMNS: &[&str] = &["split", "subset", "partition"];
/// The file names of Hugging Face's `imagefolder` metadata, in the order they are looked for.
pub const METADATA_FILES: &[&str] = &["metadata.csv", "metadata.jsonl"];

/// Which columns of a labels file hold the image paths and the labels; `None` finds them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelColumns {
    /// The header of the column of image paths.
    pub path: Option<String>,
    /// The header of the column of labels.
    pub label: Option<String>,
    /// What parts several labels in one label cell (`cat;outdoor`); `;` when not given.
    pub separator: Option<String>,
    /// Read every image's labels as a set even where each row has one label.
    pub multi_label: bool,
}

/// The separator of several labels in one cell when none is named.
pub const DEFAULT_LABEL_SEPARATOR: &str = ";";

/// Loads the labels file `file` from the disk, every image resized to a square as `resize` says.
pub fn load_labels_file(
    file: &Path,
    resize: impl Into<Resize>,
    columns: &LabelColumns,
) -> Result<ImageDataset, DataError> {
    load_labels_file_in(&Disk, file, resize, columns)
}

/// Loads the labels file `file` of `tree`, as [`load_labels_file`] does from the disk.
pub fn load_labels_file_in(
    tree: &dyn FileTree,
    file: &Path,
    resize: impl Into<Resize>,
    columns: &LabelColumns,
) -> Result<ImageDataset, DataError> {
    let resize = resize.into();
    crate::folder::check_image_size(file, resize.side_px)?;
    let mut found = Found::default();
    found.read(tree, file, columns, None)?;
    let name = file
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.display().to_string());
    assemble(tree, file, found.into_gathered(file, name)?, resize)
}

/// The metadata files of a Hugging Face `imagefolder` at `root`, each with the split it holds
/// (`None`: the rows say, or train): `root/metadata.csv` (or `.jsonl`), else one in each of
/// `train/`, `validation/` (`val/`, `valid/`) and `test/`. Empty for a folder without any.
pub fn metadata_files(tree: &dyn FileTree, root: &Path) -> Vec<(PathBuf, Option<usize>)> {
    let in_dir = |dir: &Path| {
        METADATA_FILES
            .iter()
            .map(|name| dir.join(name))
            .find(|path| tree.is_file(path))
    };
    if let Some(file) = in_dir(root) {
        return vec![(file, None)];
    }
    let Ok(entries) = tree.entries(root) else {
        return Vec::new();
    };
    let mut found: Vec<(PathBuf, Option<usize>)> = entries
        .into_iter()
        .filter(|(_, is_dir)| *is_dir)
        .filter_map(|(name, _)| {
            let split = split_of(&name.to_string_lossy())?;
            in_dir(&root.join(&name)).map(|file| (file, Some(split)))
        })
        .collect();
    found.sort();
    found
}

/// Loads the Hugging Face `imagefolder` at `root` from its metadata `files` (as
/// [`metadata_files`] found them), each row's `file_name` relative to its metadata file.
pub fn load_metadata_folder_in(
    tree: &dyn FileTree,
    root: &Path,
    files: &[(PathBuf, Option<usize>)],
    resize: impl Into<Resize>,
) -> Result<ImageDataset, DataError> {
    let resize = resize.into();
    crate::folder::check_image_size(root, resize.side_px)?;
    let mut found = Found::default();
    for (file, split) in files {
        found.read(tree, file, &LabelColumns::default(), *split)?;
    }
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| root.display().to_string());
    let problem_file = files.first().map_or(root, |(file, _)| file.as_path());
    assemble(tree, root, found.into_gathered(problem_file, name)?, resize)
}

fn bad_labels(path: &Path, problem: impl Into<String>) -> DataError {
    DataError::BadLabels {
        path: path.to_path_buf(),
        problem: problem.into(),
    }
}

/// Train (0), validation (1) or test (2), as a split column or folder names it, in any case.
fn split_of(word: &str) -> Option<usize> {
    match word.trim().to_lowercase().as_str() {
        "train" | "training" => Some(0),
        "val" | "valid" | "validation" | "dev" => Some(1),
        "test" | "testing" => Some(2),
        _ => None,
    }
}

/// A labels file's rows, the header's names or `column 1`, `column 2`… where it has none.
#[derive(Debug, PartialEq)]
struct Table {
    columns: Vec<String>,
    has_header: bool,
    /// Each row's first line in the file, and its cells.
    rows: Vec<(usize, Vec<Cell>)>,
}

/// One cell: a text, or several labels (a JSON array), or what made its row unreadable.
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Text(String),
    Several(Vec<String>),
    Unreadable(String),
}

impl Cell {
    fn text(&self) -> &str {
        match self {
            Self::Text(text) => text,
            Self::Several(_) | Self::Unreadable(_) => "",
        }
    }
}

/// One row of a labels file as [`Found::check_row`] reads it.
#[derive(Clone, Copy)]
struct Row<'a> {
    cells: &'a [Cell],
    /// `line 7 of labels.csv`, where the row's sentences point.
    at: &'a str,
    /// The labels file.
    file: &'a Path,
    /// The folder its relative paths start from.
    base: &'a Path,
}

/// The rows of every labels file read so far, by label name.
#[derive(Default)]
struct Found {
    /// Path, labels (one, or a set in a multi-label file), split of each usable row, in file
    /// order.
    rows: Vec<(PathBuf, Vec<String>, usize)>,
    /// Whether rows give several labels each: a cell with several, 0/1 columns, or as asked.
    multi_label: bool,
    /// The labels of a file of one 0/1 column per label, in its column order: each is a
    /// label, also one no image has.
    indicator_names: Option<Vec<String>>,
    skipped: Vec<SkippedFile>,
    /// The file and line each image was first listed on.
    seen: HashMap<PathBuf, (PathBuf, usize)>,
}

impl Found {
    /// Reads one labels file's rows; `split` is the split of a metadata file's folder.
    fn read(
        &mut self,
        tree: &dyn FileTree,
        file: &Path,
        columns: &LabelColumns,
        split: Option<usize>,
    ) -> Result<(), DataError> {
        let text = read_text(tree, file)?;
        let table = if is_json_lines(file, &text) {
            json_lines(&text)
        } else {
            let delimiter = delimiter_of(file, &text);
            csv_table(file, &text, delimiter, columns)?
        };
        let chosen = choose_columns(file, &table, columns)?;
        self.multi_label |= columns.multi_label;
        if let LabelSource::Indicators(label_columns) = &chosen.label {
            self.multi_label = true;
            let names = label_columns.iter().map(|&c| table.columns[c].clone());
            self.indicator_names = Some(names.collect());
        }
        let separator = columns
            .separator
            .as_deref()
            .filter(|s| !s.is_empty())
            .unwrap_or(DEFAULT_LABEL_SEPARATOR);
        let base = file.parent().unwrap_or(Path::new(""));
        let file_name = file.file_name().map_or_else(
            || file.display().to_string(),
            |n| n.to_string_lossy().into(),
        );
        for (line, cells) in &table.rows {
            let at = format!("line {line} of {file_name}");
            let row = Row {
                cells,
                at: &at,
                file,
                base,
            };
            let (path, label, row_split) =
                match self.check_row(&row, &table, &chosen, split, separator) {
                    Ok(usable) => usable,
                    Err((path, reason)) => {
                        self.skipped.push(SkippedFile { path, reason });
                        continue;
                    }
                };
            // Recorded before the file is looked for, so a missing file listed twice says so.
            self.seen.insert(path.clone(), (file.to_path_buf(), *line));
            if !tree.is_file(&path) {
                self.skipped.push(SkippedFile {
                    path,
                    reason: format!("not found ({at})"),
                });
                continue;
            }
            self.multi_label |= label.len() != 1;
            self.rows.push((path, label, row_split));
        }
        Ok(())
    }

    /// One row's image path, label and split; or the path to name and why the row is left out.
    fn check_row(
        &self,
        row: &Row<'_>,
        table: &Table,
        chosen: &Chosen,
        split: Option<usize>,
        separator: &str,
    ) -> Result<(PathBuf, Vec<String>, usize), (PathBuf, String)> {
        let Row {
            cells,
            at,
            file,
            base,
        } = *row;
        if let Some(Cell::Unreadable(why)) = cells.first() {
            return Err((file.to_path_buf(), format!("{at}: {why}")));
        }
        if table.has_header && cells.len() != table.columns.len() {
            return Err((
                file.to_path_buf(),
                format!(
                    "{at} has {} cells where the header has {}",
                    cells.len(),
                    table.columns.len()
                ),
            ));
        }
        let cell = |index: usize| {
            cells
                .get(index)
                .cloned()
                .unwrap_or(Cell::Text(String::new()))
        };
        let written = cell(chosen.path);
        let written = written.text().trim();
        if written.is_empty() {
            return Err((file.to_path_buf(), format!("{at} names no image")));
        }
        // `./a.png` and `a.png` are one file: components() drops the inner `.`s.
        let path: PathBuf = base.join(written).components().collect();
        let label = match &chosen.label {
            LabelSource::Column(column) => {
                let labels: Vec<String> = match cell(*column) {
                    Cell::Several(labels) => labels,
                    other => other.text().split(separator).map(str::to_owned).collect(),
                };
                let mut labels: Vec<String> = labels
                    .iter()
                    .map(|l| l.trim().to_owned())
                    .filter(|l| !l.is_empty())
                    .collect();
                labels.dedup();
                if labels.is_empty() {
                    return Err((path, format!("{at} gives it no label")));
                }
                labels
            }
            LabelSource::Indicators(columns) => {
                let mut labels = Vec::new();
                for &column in columns {
                    match cell(column).text().trim() {
                        "1" => labels.push(table.columns[column].clone()),
                        "0" | "" => {}
                        other => {
                            return Err((
                                path,
                                format!(
                                    "{at} has `{other}` in the 0/1 column `{}`",
                                    table.columns[column]
                                ),
                            ));
                        }
                    }
                }
                labels
            }
        };
        let row_split = match chosen.split.map(cell) {
            Some(Cell::Text(word)) if !word.trim().is_empty() => match split_of(&word) {
                Some(split) => split,
                None => {
                    return Err((
                        path,
                        format!("{at} puts it in split `{word}`, not train, val or test"),
                    ));
                }
            },
            _ => split.unwrap_or(0),
        };
        if let Some((first_file, first_line)) = self.seen.get(&path) {
            let first = if first_file == file {
                format!("line {first_line}")
            } else {
                format!("line {first_line} of {}", first_file.display())
            };
            return Err((
                path,
                format!("{at} lists it again (first on {first}); only the first row counts"),
            ));
        }
        Ok((path, label, row_split))
    }

    /// The classes (label names in order), each row's label index, and the notes on them.
    fn into_gathered(self, file: &Path, name: String) -> Result<Gathered, DataError> {
        if self.rows.is_empty() {
            let first = self
                .skipped
                .first()
                .map(|s| format!("; the first left out: {} ({})", s.path.display(), s.reason))
                .unwrap_or_default();
            return Err(bad_labels(
                file,
                format!(
                    "no row names an image that exists ({} left out{first})",
                    self.skipped.len()
                ),
            ));
        }
        let distinct: BTreeSet<&str> = self
            .rows
            .iter()
            .flat_map(|(_, labels, _)| labels.iter().map(String::as_str))
            .collect();
        if distinct.len() > MAX_CLASSES {
            return Err(bad_labels(
                file,
                format!(
                    "it has {} different labels; Kiln trains up to {MAX_CLASSES} classes (is the label column the right one?)",
                    distinct.len()
                ),
            ));
        }
        let mut notes = Vec::new();
        let number = |label: &str| label.parse::<f64>().ok().filter(|v| v.is_finite());
        let mut class_names: Vec<String> = match &self.indicator_names {
            Some(names) => names.clone(),
            None => distinct.into_iter().map(str::to_string).collect(),
        };
        if self.indicator_names.is_none() && class_names.iter().all(|l| number(l).is_some()) {
            // Numbers in text order put 10 before 2; by value they read as the file means them.
            class_names.sort_by(|a, b| {
                number(a)
                    .unwrap_or_default()
                    .total_cmp(&number(b).unwrap_or_default())
            });
            notes.push(format!(
                "every label is a number ({} to {}): each is taken as a class name, in numeric order; write the class names into the file to see them in plots and reports",
                class_names[0],
                class_names[class_names.len() - 1]
            ));
        }
        let index: HashMap<&str, u8> = class_names
            .iter()
            .enumerate()
            .map(|(i, name)| (name.as_str(), i as u8))
            .collect();
        let mut files: SplitFiles = Default::default();
        let mut sets: [Vec<Vec<u8>>; 3] = Default::default();
        for (path, labels, split) in &self.rows {
            let mut set: Vec<u8> = labels.iter().map(|l| index[l.as_str()]).collect();
            set.sort_unstable();
            set.dedup();
            files[*split].push((path.clone(), set.first().copied().unwrap_or(0)));
            sets[*split].push(set);
        }
        Ok(Gathered {
            name,
            files,
            label_sets: self.multi_label.then_some(sets),
            skipped: self.skipped,
            notes,
            problem: |path, problem| bad_labels(path, problem),
            class_names,
        })
    }
}

/// The labels file's text, its size checked and a byte-order mark dropped.
fn read_text(tree: &dyn FileTree, file: &Path) -> Result<String, DataError> {
    let read_error = |source| DataError::Read {
        path: file.to_path_buf(),
        source,
    };
    if !tree.is_file(file) {
        return Err(bad_labels(
            file,
            "it does not exist or is not a file; pass a CSV or JSON-lines file of image paths and labels",
        ));
    }
    let (mut reader, len) = tree.open(file).map_err(read_error)?;
    if len > MAX_LABELS_FILE_BYTES {
        return Err(bad_labels(
            file,
            format!(
                "it is {} MiB, more than the {} MiB a labels file may have; is it the right file?",
                len >> 20,
                MAX_LABELS_FILE_BYTES >> 20
            ),
        ));
    }
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).map_err(read_error)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        bad_labels(
            file,
            format!(
                "it is not UTF-8 text (byte {} is not); save it as UTF-8 CSV",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    Ok(text.strip_prefix('\u{feff}').unwrap_or(&text).to_string())
}

/// JSON lines by its extension, or by a first non-blank character that opens an object.
fn is_json_lines(file: &Path, text: &str) -> bool {
    let extension = file
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    match extension.as_str() {
        "jsonl" | "ndjson" | "json" => true,
        "csv" | "tsv" => false,
        _ => text.trim_start().starts_with(OPENS_OBJECT),
    }
}

/// The character a JSON object opens with, by code point: a lone brace in a literal throws
/// brace-counting tools (the house's function-length check among them) off balance.
const OPENS_OBJECT: char = '\u{7b}';

/// Tab for `.tsv`; otherwise a comma, unless the first line has none and has semicolons or tabs
/// (spreadsheets in locales with a decimal comma write semicolons).
fn delimiter_of(file: &Path, text: &str) -> char {
    if file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("tsv"))
    {
        return '\t';
    }
    let first = text.lines().next().unwrap_or("");
    if first.contains(',') {
        ','
    } else if first.contains('\t') {
        '\t'
    } else if first.contains(';') {
        ';'
    } else {
        ','
    }
}

/// A CSV labels file as a table: its first row is the header when a column is named or when no
/// cell of it names an image file.
fn csv_table(
    file: &Path,
    text: &str,
    delimiter: char,
    columns: &LabelColumns,
) -> Result<Table, DataError> {
    let mut records = crate::csv::records(text, delimiter)
        .map_err(|opened| {
            bad_labels(
                file,
                format!("the quoted cell opened on line {opened} is never closed; close its quote"),
            )
        })?
        .into_iter();
    let Some((_, first)) = records.next() else {
        return Err(bad_labels(
            file,
            "it is empty; write one row per image: its path and its label",
        ));
    };
    let named = columns.path.is_some() || columns.label.is_some();
    let has_header = named
        || !first
            .iter()
            .any(|c| has_image_extension(Path::new(c.trim())));
    let to_cells = |cells: Vec<String>| cells.into_iter().map(Cell::Text).collect::<Vec<_>>();
    let mut rows: Vec<(usize, Vec<Cell>)> = Vec::new();
    let columns = if has_header {
        first.iter().map(|c| c.trim().to_string()).collect()
    } else {
        let names = (1..=first.len()).map(|i| format!("column {i}")).collect();
        rows.push((1, to_cells(first)));
        names
    };
    rows.extend(records.map(|(line, cells)| (line, to_cells(cells))));
    Ok(Table {
        columns,
        has_header,
        rows,
    })
}

/// JSON lines as a table: the keys of every object, in the order first met, are its columns; a
/// line that is not a JSON object is a row to leave out with its reason.
fn json_lines(text: &str) -> Table {
    let mut columns: Vec<String> = Vec::new();
    let mut objects = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(serde_json::Value::Object(object)) => {
                for key in object.keys() {
                    if !columns.contains(key) {
                        columns.push(key.clone());
                    }
                }
                objects.push((index + 1, Ok(object)));
            }
            Ok(_) => objects.push((index + 1, Err("it is not a JSON object".to_string()))),
            Err(e) => objects.push((index + 1, Err(format!("it is not JSON ({e})")))),
        }
    }
    let rows = objects
        .into_iter()
        .map(|(line, object)| {
            let cells = match object {
                Ok(object) => columns
                    .iter()
                    .map(|key| json_cell(object.get(key)))
                    .collect(),
                Err(why) => vec![Cell::Unreadable(why)],
            };
            (line, cells)
        })
        .collect();
    Table {
        columns,
        has_header: true,
        rows,
    }
}

fn json_cell(value: Option<&serde_json::Value>) -> Cell {
    use serde_json::Value;
    match value {
        None | Some(Value::Null) => Cell::Text(String::new()),
        Some(Value::String(text)) => Cell::Text(text.clone()),
        Some(Value::Array(items)) if items.len() == 1 => json_cell(items.first()),
        Some(Value::Array(items)) => Cell::Several(
            items
                .iter()
                .map(|item| match item {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                })
                .collect(),
        ),
        Some(other) => Cell::Text(other.to_string()),
    }
}

/// The columns a table's paths, labels and splits are read from.
#[derive(Debug, PartialEq)]
struct Chosen {
    path: usize,
    label: LabelSource,
    split: Option<usize>,
}

/// Where a row's labels are: one column (one label, or several parted by a separator or in a
/// JSON array), or one 0/1 column per label (multi-label).
#[derive(Debug, PartialEq)]
enum LabelSource {
    Column(usize),
    Indicators(Vec<usize>),
}

impl Table {
    /// The column names as a sentence lists them: `` `a`, `b` ``.
    fn listed(&self, columns: impl Iterator<Item = usize>) -> String {
        columns
            .map(|i| format!("`{}`", self.columns[i]))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The column a flag names: its exact name first, else the same name in another case.
    fn named(&self, file: &Path, name: &str, flag: &str) -> Result<usize, DataError> {
        let columns = &self.columns;
        columns
            .iter()
            .position(|c| c == name)
            .or_else(|| columns.iter().position(|c| c.eq_ignore_ascii_case(name)))
            .ok_or_else(|| {
                bad_labels(
                    file,
                    format!(
                        "it has no column `{name}` ({flag}); its columns are {}",
                        self.listed(0..columns.len())
                    ),
                )
            })
    }

    /// The first column, other than those `taken`, with one of the usual `names` (any case).
    fn usual(&self, names: &[&str], taken: &[usize]) -> Option<usize> {
        names.iter().find_map(|name| {
            (0..self.columns.len())
                .find(|i| !taken.contains(i) && self.columns[*i].eq_ignore_ascii_case(name))
        })
    }

    /// The cells of `column` that hold something, in row order.
    fn filled(&self, column: usize) -> impl Iterator<Item = &str> {
        self.rows
            .iter()
            .filter_map(move |(_, cells)| cells.get(column))
            .map(Cell::text)
            .filter(|t| !t.trim().is_empty())
    }

    /// Whether the first filled cells of `column` name image files.
    fn holds_images(&self, column: usize) -> bool {
        self.filled(column)
            .take(5)
            .any(|t| has_image_extension(Path::new(t.trim())))
    }

    /// Whether every filled cell of `column` (there being one) names a split.
    fn holds_splits(&self, column: usize) -> bool {
        let mut cells = self.filled(column).peekable();
        cells.peek().is_some() && cells.all(|t| split_of(t).is_some())
    }
}

/// The columns of paths, labels and (if any) splits: as named by the flags, else by their usual
/// names, else by what they hold; a question when the labels could be in several.
fn choose_columns(file: &Path, table: &Table, named: &LabelColumns) -> Result<Chosen, DataError> {
    let all = || table.listed(0..table.columns.len());
    let path = match &named.path {
        Some(name) => table.named(file, name, "--path-column")?,
        None => table
            .usual(PATH_COLUMNS, &[])
            .or_else(|| (0..table.columns.len()).find(|&i| table.holds_images(i)))
            .ok_or_else(|| {
                bad_labels(
                    file,
                    format!(
                        "none of its columns ({}) holds image file names (ending in .png, .jpg, …); name the column with --path-column",
                        all()
                    ),
                )
            })?,
    };
    let split = if table.has_header {
        table.usual(SPLIT_COLUMNS, &[path])
    } else {
        (0..table.columns.len()).find(|&i| i != path && table.holds_splits(i))
    };
    let taken: Vec<usize> = std::iter::once(path).chain(split).collect();
    let label = match &named.label {
        Some(name) => table.named(file, name, "--label-column")?,
        None => match indicator_columns(table, &taken) {
            Some(columns) => {
                return Ok(Chosen {
                    path,
                    label: LabelSource::Indicators(columns),
                    split,
                });
            }
            None => label_column(file, table, &taken)?,
        },
    };
    if label == path {
        return Err(bad_labels(
            file,
            format!(
                "its column `{}` cannot hold both the paths and the labels",
                table.columns[path]
            ),
        ));
    }
    Ok(Chosen {
        path,
        label: LabelSource::Column(label),
        split,
    })
}

/// The columns not `taken`, when there are two or more, no usual label column among them, and
/// every cell of each is 0 or 1: one column per label of a multi-label file.
fn indicator_columns(table: &Table, taken: &[usize]) -> Option<Vec<usize>> {
    if !table.has_header || table.usual(LABEL_COLUMNS, taken).is_some() {
        return None;
    }
    let rest: Vec<usize> = (0..table.columns.len())
        .filter(|i| !taken.contains(i))
        .collect();
    // Nine cells in ten 0 or 1: the others are a person's slips, each named on its row.
    let zero_or_one = |column: usize| {
        let flags = table
            .rows
            .iter()
            .filter(|(_, cells)| {
                matches!(cells.get(column), Some(Cell::Text(text)) if matches!(text.trim(), "0" | "1"))
            })
            .count();
        flags > 0 && flags * 10 >= table.rows.len() * 9
    };
    (rest.len() >= 2 && rest.iter().all(|&c| zero_or_one(c))).then_some(rest)
}

/// The label column no flag names: one with a usual name, else the only column not `taken`.
fn label_column(file: &Path, table: &Table, taken: &[usize]) -> Result<usize, DataError> {
    if let Some(label) = table.usual(LABEL_COLUMNS, taken) {
        return Ok(label);
    }
    let rest: Vec<usize> = (0..table.columns.len())
        .filter(|i| !taken.contains(i))
        .collect();
    match rest[..] {
        [only] => Ok(only),
        [] => Err(bad_labels(
            file,
            format!(
                "it has no label column (its columns are {}); add one, or train on a folder with one sub-folder per class",
                table.listed(0..table.columns.len())
            ),
        )),
        _ => Err(bad_labels(
            file,
            format!(
                "which of its columns ({}) holds the labels? name it with --label-column",
                table.listed(rest.iter().copied())
            ),
        )),
    }
}

#[cfg(test)]
mod tests;
