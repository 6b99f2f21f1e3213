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
}

impl LabelColumnFlags {
    /// Names the columns in `dataset`, which must then be a labels file.
    pub(super) fn apply(self, dataset: &mut DatasetSpec) -> anyhow::Result<()> {
        Ok(dataset.set_columns(self.path_column, self.label_column)?)
    }
}
