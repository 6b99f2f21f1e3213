//! Which data set to train on, as a config value and as a command-line word.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use super::{DataError, MAX_IMAGE_SIZE_PX};

/// Side of the square images an image folder is resized to when no size is given.
pub const DEFAULT_FOLDER_IMAGE_SIZE_PX: u32 = 32;

fn default_image_size() -> u32 {
    DEFAULT_FOLDER_IMAGE_SIZE_PX
}

/// A data set to train on: written `synthetic`, `mnist`, `fashion-mnist`, `cifar10`,
/// `folder:PATH[@SIZE]` or `csv:PATH[@SIZE]` on the command line, and as a `kind = "…"` table in
/// TOML.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum DatasetSpec {
    /// The built-in generated data set; needs no file and no network.
    #[default]
    Synthetic,
    /// MNIST handwritten digits (IDX files).
    Mnist,
    /// Fashion-MNIST clothing images (IDX files).
    FashionMnist,
    /// CIFAR-10 (binary version).
    Cifar10,
    /// A folder with one sub-folder of PNG/JPEG images per class.
    Folder {
        /// The folder.
        path: PathBuf,
        /// Images are resized to `image_size`×`image_size` pixels.
        #[serde(default = "default_image_size")]
        image_size: u32,
    },
    /// A CSV (or JSON-lines) file of image paths and their labels; `kind = "csv"` in TOML.
    #[serde(rename = "csv")]
    LabelsFile {
        /// The labels file.
        path: PathBuf,
        /// Images are resized to `image_size`×`image_size` pixels.
        #[serde(default = "default_image_size")]
        image_size: u32,
        /// The header of the column of image paths; found by its usual names when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path_column: Option<String>,
        /// The header of the column of labels; found by its usual names when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label_column: Option<String>,
        /// What parts several labels in one cell; `;` when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label_separator: Option<String>,
        /// Every image's labels read as a set, also where each row gives one.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        multi_label: bool,
    },
}

impl DatasetSpec {
    /// A labels file at `path`, its columns found, images resized to `image_size`.
    pub fn labels_file(path: impl Into<PathBuf>, image_size: u32) -> Self {
        Self::LabelsFile {
            path: path.into(),
            image_size,
            path_column: None,
            label_column: None,
            label_separator: None,
            multi_label: false,
        }
    }

    /// This set with its images resized to `side`, for the sets read from image files.
    pub fn with_image_size(mut self, side: u32) -> Self {
        if let Self::Folder { image_size, .. } | Self::LabelsFile { image_size, .. } = &mut self {
            *image_size = side;
        }
        self
    }

    /// Whether `text`, a data set as the command line writes it, gives its image size
    /// (`folder:photos@224`) rather than leaving it to the default.
    pub fn text_gives_size(text: &str) -> bool {
        split_size(text).is_some()
    }

    /// The side images are resized to, for the sets read from image files.
    pub fn image_size(&self) -> Option<u32> {
        match self {
            Self::Folder { image_size, .. } | Self::LabelsFile { image_size, .. } => {
                Some(*image_size)
            }
            _ => None,
        }
    }

    /// Names the columns of a labels file's paths and labels (`None` leaves one as it is); any
    /// other data set refuses, as it has no columns.
    pub fn set_columns(
        &mut self,
        path: Option<String>,
        label: Option<String>,
    ) -> Result<(), DataError> {
        if path.is_none() && label.is_none() {
            return Ok(());
        }
        match self {
            Self::LabelsFile {
                path_column,
                label_column,
                ..
            } => {
                *path_column = path.or(path_column.take());
                *label_column = label.or(label_column.take());
                Ok(())
            }
            other => Err(DataError::BadSpec(format!(
                "--path-column and --label-column name the columns of a labels file (csv:FILE), and the data set is {other}"
            ))),
        }
    }

    /// Says how a labels file gives several labels per image: the separator within a cell, and
    /// whether to read sets even where rows give one label; any other data set refuses.
    pub fn set_multi_label(
        &mut self,
        separator: Option<String>,
        multi: bool,
    ) -> Result<(), DataError> {
        if separator.is_none() && !multi {
            return Ok(());
        }
        match self {
            Self::LabelsFile {
                label_separator,
                multi_label,
                ..
            } => {
                *label_separator = separator.or(label_separator.take());
                *multi_label |= multi;
                Ok(())
            }
            other => Err(DataError::BadSpec(format!(
                "--label-separator and --multi-label read the labels of a labels file (csv:FILE), and the data set is {other}"
            ))),
        }
    }

    /// The folder or labels file a set of the person's own images is read from.
    pub fn own_files(&self) -> Option<&std::path::Path> {
        match self {
            Self::Folder { path, .. } | Self::LabelsFile { path, .. } => Some(path),
            _ => None,
        }
    }
}

const EXPECTED: &str =
    "expected synthetic, mnist, fashion-mnist, cifar10, folder:PATH[@SIZE] or csv:PATH[@SIZE]";

impl FromStr for DatasetSpec {
    type Err = DataError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let trimmed = text.trim();
        if let Some(rest) = trimmed.strip_prefix("folder:") {
            let (path, image_size) = path_and_size("folder", rest)?;
            return Ok(Self::Folder { path, image_size });
        }
        if let Some(rest) = trimmed.strip_prefix("csv:") {
            let (path, image_size) = path_and_size("csv", rest)?;
            return Ok(Self::labels_file(path, image_size));
        }
        // Accept the spellings people actually type, but print only the canonical one.
        match trimmed.to_ascii_lowercase().as_str() {
            "synthetic" => Ok(Self::Synthetic),
            "mnist" => Ok(Self::Mnist),
            "fashion-mnist" | "fashion_mnist" | "fashionmnist" => Ok(Self::FashionMnist),
            "cifar10" | "cifar-10" | "cifar_10" => Ok(Self::Cifar10),
            _ => Err(DataError::BadSpec(format!(
                "unknown data set `{trimmed}`; {EXPECTED}"
            ))),
        }
    }
}

/// `PATH@SIZE` split at its size. A path may itself contain '@', so only a trailing all-digit
/// `@SIZE` counts as a size.
fn split_size(text: &str) -> Option<(&str, &str)> {
    text.rsplit_once('@')
        .filter(|(_, size)| !size.is_empty() && size.bytes().all(|b| b.is_ascii_digit()))
}

/// The path and image size of `PREFIX:PATH[@SIZE]`.
fn path_and_size(prefix: &str, rest: &str) -> Result<(PathBuf, u32), DataError> {
    let (path, image_size) = match split_size(rest) {
        Some((path, size)) => {
            let image_size = size
                .parse::<u32>()
                .ok()
                .filter(|s| (1..=MAX_IMAGE_SIZE_PX).contains(s));
            match image_size {
                Some(s) => (path, s),
                None => {
                    return Err(DataError::BadSpec(format!(
                        "image size `{size}` in `{prefix}:{rest}` must be between 1 and {MAX_IMAGE_SIZE_PX} pixels"
                    )));
                }
            }
        }
        _ => (rest, DEFAULT_FOLDER_IMAGE_SIZE_PX),
    };
    if path.is_empty() {
        return Err(DataError::BadSpec(format!(
            "`{prefix}:` needs a path, e.g. {prefix}:/data/pets{}@64; {EXPECTED}",
            if prefix == "csv" { "/labels.csv" } else { "" }
        )));
    }
    Ok((PathBuf::from(path), image_size))
}

/// `PREFIX:PATH`, with `@SIZE` where the size is not the default or the path would otherwise
/// be read back as having one.
fn write_sized(
    f: &mut fmt::Formatter<'_>,
    prefix: &str,
    path: &std::path::Path,
    image_size: u32,
) -> fmt::Result {
    let path = path.to_string_lossy();
    let path_looks_sized = path
        .rsplit_once('@')
        .is_some_and(|(_, s)| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    if image_size == DEFAULT_FOLDER_IMAGE_SIZE_PX && !path_looks_sized {
        write!(f, "{prefix}:{path}")
    } else {
        write!(f, "{prefix}:{path}@{image_size}")
    }
}

impl fmt::Display for DatasetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Synthetic => f.write_str("synthetic"),
            Self::Mnist => f.write_str("mnist"),
            Self::FashionMnist => f.write_str("fashion-mnist"),
            Self::Cifar10 => f.write_str("cifar10"),
            Self::Folder { path, image_size } => write_sized(f, "folder", path, *image_size),
            // The columns live in the config; on the command line they are flags of their own.
            Self::LabelsFile {
                path, image_size, ..
            } => write_sized(f, "csv", path, *image_size),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_text_round_trips() {
        let specs = [
            DatasetSpec::Synthetic,
            DatasetSpec::Mnist,
            DatasetSpec::FashionMnist,
            DatasetSpec::Cifar10,
            DatasetSpec::Folder {
                path: "/x/pets".into(),
                image_size: 32,
            },
            DatasetSpec::Folder {
                path: "/x/pets".into(),
                image_size: 64,
            },
            DatasetSpec::Folder {
                path: "/x/me@home/pets@2".into(),
                image_size: 32,
            },
            DatasetSpec::labels_file("/x/labels.csv", 32),
            DatasetSpec::labels_file("/x/labels.jsonl", 96),
        ];
        for spec in specs {
            let text = spec.to_string();
            assert_eq!(text.parse::<DatasetSpec>().unwrap(), spec, "{text}");
        }
        assert_eq!(DatasetSpec::default(), DatasetSpec::Synthetic);
    }

    #[test]
    fn spec_parses_sizes_and_aliases() {
        assert_eq!(
            "folder:/x/pets@64".parse::<DatasetSpec>().unwrap(),
            DatasetSpec::Folder {
                path: "/x/pets".into(),
                image_size: 64
            }
        );
        assert_eq!(
            "folder:C:\\data\\pets".parse::<DatasetSpec>().unwrap(),
            DatasetSpec::Folder {
                path: "C:\\data\\pets".into(),
                image_size: 32
            }
        );
        assert_eq!(
            "Fashion_MNIST".parse::<DatasetSpec>().unwrap(),
            DatasetSpec::FashionMnist
        );
        assert_eq!(
            "cifar-10".parse::<DatasetSpec>().unwrap(),
            DatasetSpec::Cifar10
        );
        assert_eq!(DatasetSpec::FashionMnist.to_string(), "fashion-mnist");
        for bad in [
            "imagenet",
            "",
            "folder:",
            "folder:/x@0",
            "folder:/x@99999",
            "folder:@64",
            "csv:",
            "csv:/x.csv@0",
        ] {
            let err = bad.parse::<DatasetSpec>().unwrap_err();
            assert!(matches!(err, DataError::BadSpec(_)), "{bad}: {err}");
        }
    }

    #[test]
    fn spec_toml_round_trips() {
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct Cfg {
            dataset: DatasetSpec,
        }
        for dataset in [
            DatasetSpec::Synthetic,
            DatasetSpec::FashionMnist,
            DatasetSpec::Cifar10,
            DatasetSpec::Folder {
                path: "/x/pets".into(),
                image_size: 64,
            },
        ] {
            let cfg = Cfg { dataset };
            let text = toml::to_string(&cfg).unwrap();
            assert_eq!(toml::from_str::<Cfg>(&text).unwrap(), cfg, "{text}");
        }
        let labels = DatasetSpec::LabelsFile {
            path: "/p/labels.csv".into(),
            image_size: 64,
            path_column: Some("photo".into()),
            label_column: Some("breed, as \"named\"".into()),
            label_separator: Some("|".into()),
            multi_label: true,
        };
        let text = toml::to_string(&Cfg {
            dataset: labels.clone(),
        })
        .unwrap();
        assert!(text.contains("kind = \"csv\""), "{text}");
        assert_eq!(toml::from_str::<Cfg>(&text).unwrap().dataset, labels);
        let cfg: Cfg = toml::from_str("[dataset]\nkind = \"cifar10\"\n").unwrap();
        assert_eq!(cfg.dataset, DatasetSpec::Cifar10);
        let cfg: Cfg = toml::from_str("[dataset]\nkind = \"fashion-mnist\"\n").unwrap();
        assert_eq!(cfg.dataset, DatasetSpec::FashionMnist);
        let cfg: Cfg = toml::from_str("[dataset]\nkind = \"folder\"\npath = \"/p\"\n").unwrap();
        assert_eq!(
            cfg.dataset,
            DatasetSpec::Folder {
                path: "/p".into(),
                image_size: 32
            }
        );
    }
}
