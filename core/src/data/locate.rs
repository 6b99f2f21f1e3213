//! Where named data sets live on disk, and finding them.

use std::path::{Path, PathBuf};

use super::DataError;
use super::cifar::CIFAR10_FILES;
use super::fetch::RemoteDataset;
use super::idx::{IDX_FILES, find_idx_file_in};
use kiln_formats::files::FileTree;

/// Environment variable naming a folder that holds data sets (or one data set's files).
pub const DATA_DIR_ENV: &str = "KILN_DATA_DIR";

/// Debian's package `dataset-fashion-mnist` installs the gzip IDX files here.
const DEBIAN_FASHION_MNIST: &str = "/usr/share/datasets/fashion-mnist";

/// The per-user folder Kiln downloads data sets into (`<user data folder>/kiln`).
pub fn default_data_root() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("kiln"))
}

/// The roots searched, in order: `data_dir`, `$KILN_DATA_DIR`, [`default_data_root`].
pub fn data_roots(data_dir: Option<&Path>) -> Vec<PathBuf> {
    let env_dir = std::env::var_os(DATA_DIR_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    data_dir
        .map(Path::to_path_buf)
        .into_iter()
        .chain(env_dir)
        .chain(default_data_root())
        .collect()
}

/// Every folder that may hold `which`, in the order [`locate`] tries them.
///
/// Each root (`data_dir`, then `$KILN_DATA_DIR`, then [`default_data_root`]) is tried first as
/// the folder holding the files directly, then as a parent holding `mnist/`, `fashion-mnist/`
/// or `cifar-10-batches-bin/`. Later roots are fallbacks, not overrides: the files are validated
/// when loaded, so finding the same data set elsewhere is harmless. Fashion-MNIST also tries
/// Debian's `/usr/share/datasets/fashion-mnist`.
pub fn search_dirs(which: RemoteDataset, data_dir: Option<&Path>) -> Vec<PathBuf> {
    candidates(which, &data_roots(data_dir))
}

fn candidates(which: RemoteDataset, roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for root in roots {
        // MNIST and Fashion-MNIST share file names; a folder named after the other set is
        // that set, so it is not taken as this one.
        let named_as_other = RemoteDataset::ALL.iter().any(|&other| {
            other != which && root.file_name().is_some_and(|n| n == other.dir_name())
        });
        if !named_as_other {
            out.push(root.clone());
        }
        out.push(root.join(which.dir_name()));
    }
    if which == RemoteDataset::FashionMnist {
        out.push(PathBuf::from(DEBIAN_FASHION_MNIST));
    }
    let mut seen = Vec::new();
    out.retain(|p| {
        let fresh = !seen.contains(p);
        if fresh {
            seen.push(p.clone());
        }
        fresh
    });
    out
}

/// The files of `which` that `dir` lacks (empty when it holds a complete copy).
fn missing_files(tree: &dyn FileTree, which: RemoteDataset, dir: &Path) -> Vec<String> {
    match which {
        RemoteDataset::Mnist | RemoteDataset::FashionMnist => IDX_FILES
            .iter()
            .filter(|(stem, kind)| find_idx_file_in(tree, dir, stem, kind).is_none())
            .map(|(stem, kind)| format!("{stem}-{kind}-ubyte"))
            .collect(),
        RemoteDataset::Cifar10 => CIFAR10_FILES
            .iter()
            .filter(|name| !tree.is_file(&dir.join(name)))
            .map(|name| name.to_string())
            .collect(),
    }
}

/// The first folder of [`search_dirs`] that holds every file of `which`; the error lists every
/// folder tried. Natively the folders are this computer's; in a browser page, the visitor's
/// chosen files ([`super::chosen`]).
pub fn locate(which: RemoteDataset, data_dir: Option<&Path>) -> Result<PathBuf, DataError> {
    super::with_files(|tree| locate_in(tree, which, &search_dirs(which, data_dir)))
}

/// The first of `dirs` in `tree` that holds every file of `which`.
pub(crate) fn locate_in(
    tree: &dyn FileTree,
    which: RemoteDataset,
    dirs: &[PathBuf],
) -> Result<PathBuf, DataError> {
    let mut looked_in = Vec::with_capacity(dirs.len());
    let total = match which {
        RemoteDataset::Cifar10 => CIFAR10_FILES.len(),
        _ => IDX_FILES.len(),
    };
    for dir in dirs {
        let missing = if tree.is_dir(dir) {
            missing_files(tree, which, dir)
        } else {
            vec![String::new(); total]
        };
        if missing.is_empty() {
            return Ok(dir.clone());
        }
        if missing.len() < total {
            looked_in.push(format!(
                "{} (incomplete: no {})",
                dir.display(),
                missing.join(", ")
            ));
        } else {
            looked_in.push(dir.display().to_string());
        }
    }
    Err(DataError::NotFound {
        name: which.display_name(),
        fetch_name: which.cli_name(),
        looked_in,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::fixtures::write_idx_set;
    use crate::data::{DatasetSpec, load, test_dir};
    use kiln_formats::files::Disk;

    #[test]
    fn data_dir_direct_and_parent_forms() {
        let parent = test_dir("locate-forms");
        let mnist = parent.join("mnist");
        std::fs::create_dir_all(&mnist).unwrap();
        write_idx_set(&mnist, true);
        // Parent form.
        assert_eq!(locate(RemoteDataset::Mnist, Some(&parent)).unwrap(), mnist);
        // Direct form.
        assert_eq!(locate(RemoteDataset::Mnist, Some(&mnist)).unwrap(), mnist);
        let ds = load(&DatasetSpec::Mnist, Some(&parent), Default::default()).unwrap();
        assert_eq!(ds.name, "MNIST");
        assert_eq!(ds.class_names.len(), 10);
        // A folder named `mnist` is not mistaken for Fashion-MNIST.
        let cands = candidates(RemoteDataset::FashionMnist, std::slice::from_ref(&mnist));
        assert!(!cands.contains(&mnist));
        std::fs::remove_dir_all(&parent).unwrap();
    }

    #[test]
    fn not_found_lists_every_place() {
        let root = test_dir("locate-missing");
        let a = root.join("a");
        let b = root.join("b");
        std::fs::create_dir_all(b.join("cifar-10-batches-bin")).unwrap();
        std::fs::write(
            b.join("cifar-10-batches-bin").join("test_batch.bin"),
            [0u8; 3073],
        )
        .unwrap();
        let dirs = candidates(RemoteDataset::Cifar10, &[a.clone(), b.clone()]);
        let err = locate_in(&Disk, RemoteDataset::Cifar10, &dirs).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("CIFAR-10 was not found. Looked in: "),
            "{msg}"
        );
        for d in [&a, &a.join("cifar-10-batches-bin"), &b] {
            assert!(msg.contains(&d.display().to_string()), "{msg}");
        }
        assert!(msg.contains("(incomplete: no data_batch_1.bin"), "{msg}");
        assert!(
            msg.ends_with("Run `kiln data fetch cifar10` or pass --data-dir"),
            "{msg}"
        );
        let fashion = candidates(RemoteDataset::FashionMnist, std::slice::from_ref(&a));
        assert_eq!(fashion.last().unwrap(), Path::new(DEBIAN_FASHION_MNIST));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
