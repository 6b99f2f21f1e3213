//! The runs a browser page keeps: run folders held in the page's memory, under [`RUNS_DIR`],
//! written by [`super::RunFolder::create_in_page`] with the files and bytes a disk's run folder
//! gets, and read by the runs list, [`super::pack`] and [`super::RunHistory::load_in`] through
//! the same [`FileTree`](kiln_formats::files::FileTree) walk as a disk's.
//!
//! ```text
//! runs/<timestamp>-<name>/   config.toml  metrics.csv  epochs.csv  summary.json
//!                            predictions.csv  confusion.csv  report.csv
//! ```
//!
//! The page outlives a reload by keeping each run in the browser's storage as its run folder
//! archive under the folder's name ([`packed`]); a new page puts them back with [`restore`].
//! A page has one thread, so the store is that thread's; natively it is unused but for tests.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use kiln_formats::files::{FileTree, MemoryFiles};

use super::FolderError;

/// The folder a page's runs are kept under.
pub const RUNS_DIR: &str = "runs";

thread_local! {
    static RUNS: RefCell<MemoryFiles> = RefCell::new(MemoryFiles::new());
}

/// Runs `read` on the page's runs.
pub fn with<R>(read: impl FnOnce(&MemoryFiles) -> R) -> R {
    RUNS.with(|runs| read(&runs.borrow()))
}

/// Runs `change` on the page's runs.
pub fn with_mut<R>(change: impl FnOnce(&mut MemoryFiles) -> R) -> R {
    RUNS.with(|runs| change(&mut runs.borrow_mut()))
}

/// The name the browser's storage keeps `run` under: its folder's name.
pub fn stored_name(run: &Path) -> Option<String> {
    run.file_name()
        .map(|name| name.to_string_lossy().into_owned())
}

/// `run`'s folder as the archive the browser's storage keeps; `None` once the run is gone
/// from the page (deleted while its archive waited to be written).
pub fn packed(run: &Path) -> Option<Result<Vec<u8>, FolderError>> {
    with(|runs| runs.is_dir(run).then(|| super::pack(runs, run)))
}

/// What [`restore`] put back.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Restored {
    /// The runs back among the page's runs.
    pub runs: Vec<PathBuf>,
    /// One sentence per kept run that could not be read, which stays out of the list.
    pub unreadable: Vec<String>,
}

/// Puts back the runs the browser's storage kept, each a folder name and its archive; a name
/// the page already holds is left as it is (the page's copy is the newer), and an archive that
/// does not read (storage cleared half-way, another Kiln's format) is named and left out.
pub fn restore(kept: Vec<(String, Vec<u8>)>) -> Restored {
    let runs_dir = Path::new(RUNS_DIR);
    let mut restored = Restored::default();
    for (name, bytes) in kept {
        let folder = runs_dir.join(&name);
        if with(|runs| runs.is_dir(&folder)) {
            continue;
        }
        match super::read_archive(&bytes) {
            Ok(archive) if archive.name == name => {
                match with_mut(|runs| super::import_in_memory(&archive, runs, runs_dir)) {
                    Ok(path) => restored.runs.push(path),
                    Err(e) => restored.unreadable.push(format!("{name}: {e}")),
                }
            }
            Ok(archive) => restored.unreadable.push(format!(
                "{name}: its archive holds another run ({})",
                archive.name
            )),
            Err(e) => restored.unreadable.push(format!("{name}: {e}")),
        }
    }
    restored
}

/// Adds the run of a run folder archive (`bytes`, as *Archive…* or `kiln archive` wrote it)
/// to the page's runs under a free name, and hands back its folder.
pub fn import(bytes: &[u8]) -> Result<PathBuf, String> {
    let archive = super::read_archive(bytes).map_err(|e| e.to_string())?;
    with_mut(|runs| super::import_in_memory(&archive, runs, Path::new(RUNS_DIR)))
        .map_err(|e| e.to_string())
}
