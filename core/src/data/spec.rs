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

/// A data set to train on: written `synthetic`, `mnist`, `fashion-mnist`, `cifar10` or
/// `folder:PATH[@SIZE]` on the command line, and as a `kind = "…"` table in TOML.
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
}

const EXPECTED: &str = "expected synthetic, mnist, fashion-mnist, cifar10 or folder:PATH[@SIZE]";

impl FromStr for DatasetSpec {
    type Err = DataError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let trimmed = text.trim();
        if let Some(rest) = trimmed.strip_prefix("folder:") {
            return parse_folder(rest);
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

fn parse_folder(rest: &str) -> Result<DatasetSpec, DataError> {
    // A path may itself contain '@', so only a trailing all-digit `@SIZE` counts as a size.
    let (path, image_size) = match rest.rsplit_once('@') {
        Some((path, size)) if !size.is_empty() && size.bytes().all(|b| b.is_ascii_digit()) => {
            let image_size = size
                .parse::<u32>()
                .ok()
                .filter(|s| (1..=MAX_IMAGE_SIZE_PX).contains(s));
            match image_size {
                Some(s) => (path, s),
                None => {
                    return Err(DataError::BadSpec(format!(
                        "image size `{size}` in `folder:{rest}` must be between 1 and {MAX_IMAGE_SIZE_PX} pixels"
                    )));
                }
            }
        }
        _ => (rest, DEFAULT_FOLDER_IMAGE_SIZE_PX),
    };
    if path.is_empty() {
        return Err(DataError::BadSpec(format!(
            "`folder:` needs a path, e.g. folder:/data/pets@64; {EXPECTED}"
        )));
    }
    Ok(DatasetSpec::Folder {
        path: PathBuf::from(path),
        image_size,
    })
}

impl fmt::Display for DatasetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Synthetic => f.write_str("synthetic"),
            Self::Mnist => f.write_str("mnist"),
            Self::FashionMnist => f.write_str("fashion-mnist"),
            Self::Cifar10 => f.write_str("cifar10"),
            Self::Folder { path, image_size } => {
                let path = path.to_string_lossy();
                // Spell the size out when the path would otherwise be read back as having one.
                let path_looks_sized = path
                    .rsplit_once('@')
                    .is_some_and(|(_, s)| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
                if *image_size == DEFAULT_FOLDER_IMAGE_SIZE_PX && !path_looks_sized {
                    write!(f, "folder:{path}")
                } else {
                    write!(f, "folder:{path}@{image_size}")
                }
            }
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
