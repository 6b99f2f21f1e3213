//! The files a page's visitor chose, kept for the page's life. A browser page has no disk, so
//! the loaders read these instead, under the paths the window shows: `pets/cat/1.jpg` for a
//! chosen folder `pets`, `chosen files/train-images-idx3-ubyte.gz` for loose chosen files.

use std::cell::RefCell;

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

/// Runs `read` on the chosen files.
pub fn with<R>(read: impl FnOnce(&MemoryFiles) -> R) -> R {
    CHOSEN.with(|chosen| read(&chosen.borrow()))
}
