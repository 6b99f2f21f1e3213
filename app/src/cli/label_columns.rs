//! The flags that name a labels file's columns, shared by `kiln train` and `kiln data inspect`.

use clap::Args;
use kiln_core::data::DatasetSpec;

/// Which columns of a `csv:FILE` data set hold the image paths and the labels.
#[derive(Debug, Args)]
pub(super) struct LabelColumnFlags {
    /// The header of the labels file's column of image paths (found by its usual names, such as
    /// file_name, path or image, when not given).
    #[arg(long, value_name = "HEADER")]
    path_column: Option<String>,
    /// The header of the labels file's column of labels (found by its usual names, such as
    /// label or class, or as the one column left, when not given).
    #[arg(long, value_name = "HEADER")]
    label_column: Option<String>,
    /// What parts several labels in one cell of the labels column (`cat;outdoor`): a cell
    /// holding more than one makes each image's labels a set (multi-label). Default `;`.
    #[arg(long, value_name = "TEXT")]
    label_separator: Option<String>,
    /// Read each image's labels as a set (multi-label) even where every row gives one. A file
    /// of one 0/1 column per label, or with several labels in a cell, is read so by itself.
    #[arg(long)]
    multi_label: bool,
}

impl LabelColumnFlags {
    /// Names the columns in `dataset`, which must then be a labels file.
    pub(super) fn apply(self, dataset: &mut DatasetSpec) -> anyhow::Result<()> {
        dataset.set_columns(self.path_column, self.label_column)?;
        Ok(dataset.set_multi_label(self.label_separator, self.multi_label)?)
    }
}
