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
//! A page has one thread, so the store is that thread's; natively it is unused but for tests.

use std::cell::RefCell;

use kiln_formats::files::MemoryFiles;

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
