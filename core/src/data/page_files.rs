//! The files a page's visitor chose, kept for the page's life. A browser page has no disk, so
//! the loaders read these instead, under the paths the window shows: `pets/cat/1.jpg` for a
//! chosen folder `pets`, `chosen files/train-images-idx3-ubyte.gz` for loose chosen files, `chosen weights/…` for
//! the one pretrained weights file.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use kiln_formats::files::MemoryFiles;

thread_local! {
    // A page runs on one thread, so its chosen files are that thread's.
    static CHOSEN: RefCell<MemoryFiles> = RefCell::new(MemoryFiles::new());
}

/// Keeps `files` (paths whose first name is the chosen folder's, and their bytes), replacing
/// what was chosen under the same folders before; a path that cannot be a file refuses them all.
pub fn keep(files: Vec<(String, Vec<u8>)>) -> Result<(), String> {
    let mut incoming = MemoryFiles::new();
    for (path, bytes) in files {
        incoming
            .insert(&path, bytes)
            .map_err(|e| format!("{path} could not be kept: {e}"))?;
    }
    CHOSEN.with(|chosen| chosen.borrow_mut().replace_with(incoming));
    Ok(())
}

/// The folder a chosen weights file is kept under, apart from the data: one file at a time.
pub const WEIGHTS_FOLDER: &str = "chosen weights";

/// Keeps a chosen weights file in place of the one chosen before, and answers the path a run
/// names it by.
pub fn keep_weights(name: &str, bytes: Vec<u8>) -> Result<PathBuf, String> {
    let file_name = Path::new(name)
        .file_name()
        .ok_or_else(|| format!("{name} is not a file's name; choose the weights file itself"))?;
    let path = Path::new(WEIGHTS_FOLDER).join(file_name);
    keep(vec![(path.to_string_lossy().into_owned(), bytes)])?;
    Ok(path)
}

/// Runs `read` on the chosen files.
pub fn with<R>(read: impl FnOnce(&MemoryFiles) -> R) -> R {
    CHOSEN.with(|chosen| read(&chosen.borrow()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &Path) -> Option<Vec<u8>> {
        with(|files| crate::run_folder::read_bytes(files, path).ok())
    }

    #[test]
    fn a_chosen_weights_file_replaces_the_last_one_and_leaves_the_data_alone() {
        keep(vec![("pets/cat/1.png".to_owned(), vec![1, 2, 3])]).expect("kept");
        let first = keep_weights("resnet18.safetensors", vec![7; 10]).expect("kept");
        assert_eq!(first, Path::new("chosen weights/resnet18.safetensors"));
        let second = keep_weights("tuned.safetensors", vec![8; 4]).expect("kept");
        assert_eq!(read(&second), Some(vec![8; 4]));
        assert_eq!(read(&first), None);
        assert_eq!(read(Path::new("pets/cat/1.png")), Some(vec![1, 2, 3]));
        assert!(keep_weights("..", vec![1]).is_err());
    }
}
